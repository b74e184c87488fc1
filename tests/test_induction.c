/* Tests for chapter 12: the attention-only transformer trained in C (induction).
 *
 * induction.c is included with TESTING defined. The reference is the whole model
 * in double precision, in plain loops (the attention tests/reference.h's): the
 * embedding lookup plus the positions, L layers of causal multi-head attention
 * added to the residual stream, the unembedding, and the cross-entropy averaged
 * over the counted positions.
 * Central differences of that loss, for every entry of every weight, are what the
 * float gradients of cross_entropy's dz and model_backward must match. Other tests
 * check cross_entropy's loss and dz, make_batch's sequences, silence_head, and the
 * program's refusals. Adam (Exercise 12.4) and a short training run are
 * tests/test_induction_train.c's; the two models `make` trains,
 * tests/test_induction_models.c's.
 *
 * Every call into forward_keep (Exercise 6.7's passes) or gqa_backward (Exercise
 * 11.6's softmax_backward) sits inside STUDENT(...), so that in a handout each test
 * fails, or is skipped, under its own name. */
#define TESTING
#include "induction.c"
#include "tap.h"
#include "run.h"
#include "reference.h"
#include "induction_cases.h"

/* ---- an independent reference, in double precision -------------------------------- */

/* The weights of a model in double, in model_params's order. */
typedef struct Ref {
    int V, T, D, H, L, n;
    double *p[MAX_PARAMS];
    long size[MAX_PARAMS];
    char name[MAX_PARAMS][40];
} Ref;

static Ref ref_of(Model *m) {
    Tensor *w[MAX_PARAMS];
    Ref r = { .V = m->vocab, .T = m->seq, .D = m->dim, .H = m->heads, .L = m->layers };
    r.n = model_params(m, w, r.name);
    for (int i = 0; i < r.n; i++) {
        r.size[i] = w[i]->size;
        r.p[i] = malloc(sizeof(double) * (size_t)w[i]->size);
        for (long j = 0; j < w[i]->size; j++) r.p[i][j] = w[i]->data[j];
    }
    return r;
}

static void ref_free(Ref *r) {
    for (int i = 0; i < r->n; i++) free(r->p[i]);
}

/* The model's logits (B, T, V) for tok (B, T + 1), reading tok[.., 0..T-1]: each
 * layer tests/reference.h's causal attention with the weights in double, added to
 * the residual stream. Head quiet_h of layer quiet_l (-1: none) has its part of the
 * merged heads set to 0. */
static void ref_logits(double *logits, const Ref *r, const int *tok, int B, int quiet_l, int quiet_h) {
    int T = r->T, D = r->D, H = r->H, hd = D / H, V = r->V;
    long BT = (long)B * T;
    const double *tok_emb = r->p[0], *pos_emb = r->p[1];
    RefAttn a = { .B = B, .T = T, .H = H, .hd = hd, .causal = 1 };     /* keys 0..t */
    double *x = ref_new(BT * D), *q = ref_new(BT * D), *k = ref_new(BT * D), *v = ref_new(BT * D);
    double *att = ref_new(BT * H * T), *merged = ref_new(BT * D), *out = ref_new(BT * D);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++)
                x[((long)b * T + t) * D + d] = tok_emb[tok[(long)b * (T + 1) + t] * D + d] + pos_emb[t * D + d];
    for (int l = 0; l < r->L; l++) {
        double *const *p = r->p + 2 + 8 * l;     /* q_w q_b k_w k_b v_w v_b o_w o_b */
        ref_linear64(q, x, p[0], p[1], BT, D, D);
        ref_linear64(k, x, p[2], p[3], BT, D, D);
        ref_linear64(v, x, p[4], p[5], BT, D, D);
        ref_scores(att, q, k, &a);
        ref_softmax(att, &a);
        ref_mix(merged, att, v, &a);
        for (long bt = 0; l == quiet_l && bt < BT; bt++)
            for (int i = 0; i < hd; i++) merged[bt * D + quiet_h * hd + i] = 0.0;
        ref_linear64(out, merged, p[6], p[7], BT, D, D);
        for (long i = 0; i < BT * D; i++) x[i] += out[i];                /* the residual stream */
    }
    ref_linear64(logits, x, r->p[2 + 8 * r->L], r->p[3 + 8 * r->L], BT, D, V);
    free(x); free(q); free(k); free(v); free(att); free(merged); free(out);
}

/* The mean of -log softmax(z)[y] over the counted positions of bt, in double. */
static double ref_cross_entropy(const double *logits, const Batch *bt, int V) {
    double loss = 0;
    long N = 0;
    for (int b = 0; b < bt->B; b++)
        for (int t = 0; t < bt->T; t++) {
            long i = (long)b * bt->T + t;
            if (bt->counted[i] == 0.0f) continue;
            const double *z = logits + i * V;
            double top = z[0], sum = 0;
            for (int c = 1; c < V; c++) top = fmax(top, z[c]);
            for (int c = 0; c < V; c++) sum += exp(z[c] - top);
            loss += top + log(sum) - z[bt->tok[(long)b * (bt->T + 1) + t + 1]];
            N++;
        }
    return N ? loss / (double)N : 0.0;
}

static double ref_loss(const Ref *r, const Batch *bt) {
    double *logits = malloc(sizeof(double) * (size_t)bt->B * bt->T * r->V);
    ref_logits(logits, r, bt->tok, bt->B, -1, -1);
    double loss = ref_cross_entropy(logits, bt, r->V);
    free(logits);
    return loss;
}

/* The step of the central differences. The loss is about log 32 and smooth: at
 * h = 1e-5 the truncation error (h^2 times a third derivative of order 1) and the
 * rounding error (1e-16 |L| / h) are both near 1e-10, far below float's gradients. */
#define FD_STEP 1e-5

/* ---- finite differences through the whole model ----------------------------------- */

/* The float gradients of one batch: model_forward, cross_entropy's dz, model_backward.
 * Both passes are a student's (Exercises 6.7 and 11.6): in a handout a stub leaves the
 * gradients at zero, and the tests reading them fail or are skipped by name. */
static void float_gradients(Model *grad, float *loss, const Model *m, const Batch *bt, const Tensor *causal) {
    Pass f = {0};
    int right, total;
    Tensor dz = tensor_new3(bt->B, bt->T, m->vocab);
    model_like(grad, m);
    *loss = NAN;
    STUDENT(f = model_forward(m, bt->tok, bt->B, causal));
    if (f.logits.data) {
        *loss = cross_entropy(dz.data, &right, &total, f.logits.data, bt, m->vocab);
        STUDENT(model_backward(grad, &f, m, bt->tok, dz.data, causal));
    }
    pass_free(&f, m->layers);
    tensor_free(&dz);
}

/* One test: every entry of every weight's gradient against central differences of the
 * double reference's loss. Each tensor's error is its largest |float - difference|
 * over its largest |difference|; a bias is measured against its layer's largest (its
 * weight's and its own: k_proj.bias's gradient is 0 on paper). Returns the worst. */
static double check_differences(const char *what, Model *m, const Batch *bt) {
    Model grad;
    Tensor causal = causal_mask(m->seq), *g[MAX_PARAMS];
    char name[MAX_PARAMS][40];
    float loss;
    float_gradients(&grad, &loss, m, bt, &causal);
    int n = model_params(&grad, g, name);
    Ref r = ref_of(m);
    double worst = 0, err[MAX_PARAMS], *fd[MAX_PARAMS];
    int at = 0;
    long entries = 0;
    for (int i = 0; i < n; i++) {
        fd[i] = malloc(sizeof(double) * (size_t)r.size[i]);
        for (long j = 0; j < r.size[i]; j++) {
            double keep = r.p[i][j];
            r.p[i][j] = keep + FD_STEP;
            double up = ref_loss(&r, bt);
            r.p[i][j] = keep - FD_STEP;
            double down = ref_loss(&r, bt);
            r.p[i][j] = keep;
            fd[i][j] = (up - down) / (2 * FD_STEP);
        }
        entries += r.size[i];
    }
    for (int i = 0; i < n; i++) {
        int first = strstr(name[i], "bias") ? i - 1 : i;
        double scale = 0, diff = 0;
        for (int l = first; l <= i; l++)
            for (long j = 0; j < r.size[l]; j++) scale = fmax(scale, fabs(fd[l][j]));
        for (long j = 0; j < r.size[i]; j++) {
            double d = fabs(g[i]->data[j] - fd[i][j]);
            diff = isnan(d) ? INFINITY : fmax(diff, d);
        }
        err[i] = scale > 0 ? diff / scale : diff;
        if (!(err[i] <= worst)) worst = err[i], at = i;
    }
    double limit = 1e-3, want = ref_loss(&r, bt);
    if (ok(worst <= limit && fabs(loss - want) <= 1e-5 * want,
           "%s: the loss is the double reference's (%.6f), and all %ld entries of the %d weights' gradients match "
           "its central differences within %g of each tensor's largest", what, want, entries, n, limit))
        printf("#   worst relative error %.2g (%s.grad)\n", worst, name[at]);
    else if (!tap_stub[0]) {                    /* after a stub the test was skipped, or failed by it */
        diag("  loss %.9g, reference %.9g", (double)loss, want);
        for (int i = 0; i < n; i++) diag("  %-24s relative error %.3g", name[i], err[i]);
    }
    for (int i = 0; i < n; i++) free(fd[i]);
    ref_free(&r);
    model_free(&grad);
    tensor_free(&causal);
    return worst;
}

static void test_against_differences(void) {
    static const struct { int B, T, D, H, L; float sharpen; const char *what; } cases[] = {
        { 2, 6, 8, 2, 2, 1.0f, "(B, T, D, H, L) = (2, 6, 8, 2, 2), a batch from make_batch" },
        { 2, 6, 8, 2, 1, 1.0f, "L = 1" },
        { 3, 7, 12, 3, 3, 3.0f, "(3, 7, 12, 3, 3), q and k weights x3 (sharper maps)" },
    };
    double worst = 0;
    for (int c = 0; c < 3; c++) {
        Model m = model_new(cases[c].T, cases[c].D, cases[c].H, cases[c].L, 300 + c, cases[c].sharpen);
        Batch bt = batch_new(cases[c].B, cases[c].T);
        Rng r;
        rng_seed(&r, 400 + c);
        make_batch(&bt, &r, 0);
        worst = fmax(worst, check_differences(cases[c].what, &m, &bt));
        batch_free(&bt);
        model_free(&m);
    }
    /* Tokens chosen by hand: token 5 is read four times in sequence 0 and twice in
     * sequence 1, token 9 once in each, and the other 29 tokens never. */
    int B = 2, T = 6, D = 8, H = 2, L = 2;
    static const int tokens[2][7] = { { 5, 9, 5, 5, 30, 5, 9 }, { 9, 5, 1, 5, 30, 30, 5 } };
    static const float counted[2][6] = { { 0, 1, 1, 0, 1, 1 }, { 1, 0, 0, 1, 1, 0 } };
    Model m = model_new(T, D, H, L, 310, 2.0f);
    Batch bt = batch_new(B, T);
    memcpy(bt.tok, tokens, sizeof tokens);
    memcpy(bt.counted, counted, sizeof counted);
    worst = fmax(worst, check_differences("a batch whose tokens repeat (token 5 read 6 times, 9 and 30 twice each): "
                                          "their tok_emb rows collect the sum", &m, &bt));
    Model grad;
    Tensor causal = causal_mask(T);
    float loss;
    float_gradients(&grad, &loss, &m, &bt, &causal);
    int zero = 1, read = 1;
    for (int v = 0; v < VOCAB; v++) {
        int seen = v == 5 || v == 9 || v == 30 || v == 1;
        if (seen) read &= written(grad.tok.data + v * D, D);
        else for (int d = 0; d < D; d++) zero &= grad.tok.data[v * D + d] == 0.0f;
    }
    ok(read && zero, "tok_emb.weight.grad is exactly 0 in the 28 rows of tokens the batch never reads, and not 0 "
       "in the 4 rows it does");
    model_free(&grad);
    tensor_free(&causal);
    batch_free(&bt);
    model_free(&m);
    if (!tap_stub[0]) printf("#   worst over the 4 cases: %.2g (limit 1e-3)\n", worst);
}

/* ---- cross_entropy ------------------------------------------------------------------- */

/* Logits uniform in [-4, 4) for a batch from make_batch: the loss against the double
 * reference, the counts, and what dz is where it is counted and where it is not. */
static void test_cross_entropy(void) {
    int B = 4, T = 10, V = VOCAB;
    Batch bt = batch_new(B, T);
    Rng r;
    rng_seed(&r, 51);
    make_batch(&bt, &r, 0);
    Tensor z = tensor_new3(B, T, V), dz = tensor_new3(B, T, V);
    rand_uniform(z.data, z.size, -4.0f, 4.0f, &r);
    double *zd = malloc(sizeof(double) * (size_t)z.size);
    for (long i = 0; i < z.size; i++) zd[i] = z.data[i];
    int right, total, want_right = 0, want_total = 0;
    for (long i = 0; i < (long)B * T; i++) {
        int best = 0, y = bt.tok[i / T * (T + 1) + i % T + 1];
        for (int c = 1; c < V; c++) if (z.data[i * V + c] > z.data[i * V + best]) best = c;
        want_total += bt.counted[i] != 0.0f;
        want_right += bt.counted[i] != 0.0f && best == y;
    }
    float loss = cross_entropy(dz.data, &right, &total, z.data, &bt, V);
    double want = ref_cross_entropy(zd, &bt, V);
    ok(fabs(loss - want) <= 1e-6 * want && total == want_total && right == want_right,
       "cross_entropy's loss over the %d counted positions of 4 sequences is the double reference's within 1e-6 "
       "(%.7f, %.7f), and it counts %d of them right, as the largest logits say", want_total, (double)loss, want,
       want_right);
    double worst = 0;
    long nonzero = 0;
    for (long i = 0; i < (long)B * T; i++) {
        double sum = 0;
        for (int c = 0; c < V; c++) sum += dz.data[i * V + c], nonzero += bt.counted[i] == 0.0f && dz.data[i * V + c] != 0.0f;
        if (bt.counted[i] != 0.0f) worst = fmax(worst, fabs(sum));
    }
    ok(worst <= 1e-7 && nonzero == 0, "dz: each counted row sums to 0 within 1e-7 (%.2g), and every entry of the %d "
       "rows not counted is exactly 0", worst, B * T - want_total);
    int right2, total2;
    float again = cross_entropy(NULL, &right2, &total2, z.data, &bt, V);
    ok(again == loss && right2 == right && total2 == total, "with dz NULL (as evaluate calls it) the loss and the "
       "counts are the same");
    free(zd);
    tensor_free(&z); tensor_free(&dz);
    batch_free(&bt);
}

/* One sequence of T = 3 over V = 4 tokens, worked by hand: positions 0 and 2 count
 * (N = 2), position 1 does not. dz = (softmax(z) - onehot(y)) / N, entry by entry. */
static void test_cross_entropy_by_hand(void) {
    enum { V = 4 };
    int tok[4] = { 2, 0, 3, 2 };                 /* guesses: 0 at t = 0, 3 at t = 1, 2 at t = 2 */
    float counted[3] = { 1, 0, 1 }, z[3 * V] = { 1, 2, 3, 4, 0, 0, 0, 0, -1, 0.5f, 2, 0 }, dz[3 * V];
    Batch bt = { .B = 1, .T = 3, .tok = tok, .counted = counted };
    double want[3 * V], loss = 0;
    for (int t = 0; t < 3; t++) {
        double sum = 0;
        for (int c = 0; c < V; c++) sum += exp(z[t * V + c]);
        for (int c = 0; c < V; c++)
            want[t * V + c] = counted[t] ? (exp(z[t * V + c]) / sum - (c == tok[t + 1])) / 2 : 0.0;
        if (counted[t]) loss += (log(sum) - z[t * V + tok[t + 1]]) / 2;
    }
    int right, total;
    float got = cross_entropy(dz, &right, &total, z, &bt, V);
    close_ok(dz, want, 3 * V, 1e-7, 0, "a hand-made case (V = 4, T = 3, N = 2): dz is (softmax - onehot) / 2 at the "
             "counted positions and 0 at the other, entry by entry");
    ok(fabs(got - loss) <= 1e-6 && total == 2 && right == 1, "its loss is (3.4402 + 0.3424) / 2 = %.4f (got %.4f), "
       "and 1 of its 2 guesses is right (position 2's largest logit is token 2)", loss, (double)got);
    float big[3 * V] = { 1000, 990, 0, -1000, 0, 0, 0, 0, 500, 500, 500, 499 };
    got = cross_entropy(dz, &right, &total, big, &bt, V);
    int finite = isfinite(got);
    for (int i = 0; i < 3 * V; i++) finite &= isfinite(dz[i]) != 0;
    double e = log(1 + exp(-10.0)), f = log(3 + exp(-1.0));          /* -log p_y of positions 0 and 2 */
    ok(finite && fabs(got - (e + f) / 2) <= 1e-3, "logits of 1000 and -1000 give a finite loss (%.3f, reference "
       "%.3f) and a finite dz: the largest logit is subtracted first", (double)got, (e + f) / 2);
}

/* ---- make_batch ---------------------------------------------------------------------- */

/* What make_batch promises of one batch: *bad counts the sequences that break each rule. */
typedef struct BatchCheck { long copied, bounds, counted, range; } BatchCheck;

static void check_batch(BatchCheck *k, const Batch *bt, int least, int most) {
    int T = bt->T;
    float *want = malloc(sizeof(float) * T);
    for (int b = 0; b < bt->B; b++) {
        const int *x = bt->tok + (long)b * (T + 1);
        Copy c = bt->copy[b];
        int in = c.len >= least && c.len <= most && c.src >= 0 && c.src + c.len <= c.dst && c.dst + c.len <= T + 1;
        k->bounds += !in;
        if (!in) continue;
        int same = 1, range = 1;
        for (int i = 0; i < c.len; i++) same &= x[c.dst + i] == x[c.src + i];
        for (int t = 0; t <= T; t++) range &= x[t] >= 0 && x[t] < VOCAB;
        k->copied += !same, k->range += !range;
        for (int t = 0; t < T; t++) want[t] = 0;
        for (int p = c.dst + 1; p < c.dst + c.len; p++) want[p - 1] = 1;   /* token p is guessed at p - 1 */
        k->counted += memcmp(want, bt->counted + (long)b * T, sizeof(float) * T) != 0;
    }
    free(want);
}

static void test_make_batch(void) {
    static const struct { int B, T, least, most; } sizes[] = {
        { 300, 32, 4, 12 }, { 100, 6, 3, 3 }, { 20, 3, 2, 2 }, { 200, 60, 4, 12 }, { 100, 9, 4, 5 },
    };
    BatchCheck k = {0};
    long sequences = 0;
    int lengths[13] = {0}, touch_end = 0, no_gap = 0;
    for (int s = 0; s < 5; s++) {
        Batch bt = batch_new(sizes[s].B, sizes[s].T);
        Rng r;
        rng_seed(&r, 70 + s);
        make_batch(&bt, &r, 0);
        check_batch(&k, &bt, sizes[s].least, sizes[s].most);
        sequences += bt.B;
        for (int b = 0; s == 0 && b < bt.B; b++) {
            Copy c = bt.copy[b];
            if (c.len >= 0 && c.len <= 12) lengths[c.len]++;
            touch_end += c.dst + c.len == bt.T + 1, no_gap += c.dst == c.src + c.len;
        }
        batch_free(&bt);
    }
    ok(k.bounds == 0, "make_batch: in all %ld sequences (T = 32, 6, 3, 60, 9) len is from min(4, most) to most = "
       "min((T + 1) / 2, 12), src + len <= dst and dst + len <= T + 1: the copy fits, after its source", sequences);
    ok(k.copied == 0 && k.range == 0 && k.bounds == 0, "every copy equals its source, token for token, and every "
       "token is from 0 to 31");
    ok(k.counted == 0 && k.bounds == 0, "counted marks exactly the guesses of the copied tokens after the first: "
       "position t where dst < t + 1 < dst + len");
    int every = 1;
    for (int len = 4; len <= 12; len++) every &= lengths[len] > 0;
    ok(every && touch_end > 0 && no_gap > 0, "over 300 sequences of T = 32 every length from 4 to 12 occurs, some "
       "copies follow their source at once (%d), and some end at the last token (%d)", no_gap, touch_end);
    /* --fixed-copy: the first half copied to the second */
    int fixed = 1;
    for (int T = 3; T <= 32; T += 29) {
        Batch bt = batch_new(6, T);
        Rng r;
        rng_seed(&r, 80);
        make_batch(&bt, &r, 1);
        int half = (T + 1) / 2;
        for (int b = 0; b < bt.B; b++)
            fixed &= bt.copy[b].src == 0 && bt.copy[b].dst == half && bt.copy[b].len == half;
        BatchCheck f = {0};
        check_batch(&f, &bt, half, half);
        fixed &= f.copied == 0 && f.counted == 0 && f.bounds == 0;
        batch_free(&bt);
    }
    ok(fixed, "with fixed (--fixed-copy) every sequence copies tokens 0 .. (T + 1) / 2 - 1 to (T + 1) / 2 .. T, "
       "and counts the guesses of that copy after its first token (T = 3 and 32)");
    Batch a = batch_new(16, 32), b = batch_new(16, 32), c = batch_new(16, 32);
    Rng ra, rb, rc;
    rng_seed(&ra, 12345), rng_seed(&rb, 12345), rng_seed(&rc, 12346);
    make_batch(&a, &ra, 0), make_batch(&b, &rb, 0), make_batch(&c, &rc, 0);
    ok(!memcmp(a.tok, b.tok, sizeof(int) * 16 * 33) && !memcmp(a.counted, b.counted, sizeof(float) * 16 * 32) &&
       !memcmp(a.copy, b.copy, sizeof(Copy) * 16) && memcmp(a.tok, c.tok, sizeof(int) * 16 * 33),
       "the same Rng seed gives the same batch (tokens, counted, copies), and the next seed another");
    batch_free(&a), batch_free(&b), batch_free(&c);
}

/* ---- silence_head ---------------------------------------------------------------------- */

static void test_silence_head(void) {
    int B = 2, T = 7, D = 12, H = 3, L = 2, hd = 4;
    Model m = model_new(T, D, H, L, 90, 2.0f);
    Batch bt = batch_new(B, T);
    Rng r;
    rng_seed(&r, 91);
    make_batch(&bt, &r, 0);
    Tensor causal = causal_mask(T);
    Ref ref = ref_of(&m);
    double *logits = malloc(sizeof(double) * (size_t)B * T * VOCAB), *plain = malloc(sizeof(double) * (size_t)B * T * VOCAB);
    ref_logits(plain, &ref, bt.tok, B, -1, -1);
    Pass before = {0};
    STUDENT(before = model_forward(&m, bt.tok, B, &causal));
    static const struct { int l, h; const char *which; } heads[] = { { 1, 2, "1.2" }, { 0, 1, "0.1" } };
    for (int k = 0; k < 2; k++) {
        int l = heads[k].l, h = heads[k].h;
        Model q;
        Tensor *p[MAX_PARAMS], *s[MAX_PARAMS];
        char name[MAX_PARAMS][40];
        model_like(&q, &m);
        int n = model_params(&m, p, name);
        model_params(&q, s, name);
        for (int i = 0; i < n; i++) memcpy(s[i]->data, p[i]->data, sizeof(float) * (size_t)p[i]->size);
        silence_head(&q, heads[k].which);
        int exact = 1;
        for (int i = 0; i < n; i++)
            for (long j = 0; j < p[i]->size; j++) {
                int col = (int)(j % D), gone = p[i] == &m.layer[l].o_w && col >= h * hd && col < h * hd + hd;
                exact &= gone ? s[i]->data[j] == 0.0f : s[i]->data[j] == p[i]->data[j];
            }
        ok(exact, "silence_head(\"%s\") zeroes exactly head %d's %d columns of layers.%d.o_proj.weight, in every row, "
           "and leaves every other number of the model as it was", heads[k].which, h, hd, l);
        Pass f = {0};
        STUDENT(f = model_forward(&q, bt.tok, B, &causal));
        ref_logits(logits, &ref, bt.tok, B, l, h);
        double apart = 0;
        for (long i = 0; i < (long)B * T * VOCAB; i++) apart = fmax(apart, fabs(logits[i] - plain[i]));
        if (f.logits.data) close_ok(f.logits.data, logits, f.logits.size, 1e-5, 1e-5, "the silenced model's logits "
                                    "are the double reference's with head %d's part of layer %d's merged heads set "
                                    "to 0 (which moves them by up to %.2g)", h, l, apart);
        else ok(0, "the silenced model's logits are the double reference's with head %d's part of layer %d's merged "
                "heads set to 0", h, l);
        int same = f.att[l].data && before.att[l].data;
        for (long i = 0; same && i < f.att[l].size; i++) same &= f.att[l].data[i] == before.att[l].data[i];
        ok(same && written(f.att[l].data, f.att[l].size), "head %d of layer %d still attends as before: layer %d's "
           "weights are the unsilenced model's, bit for bit; only what the head reads is lost", h, l, l);
        pass_free(&f, L);
        model_free(&q);
    }
    pass_free(&before, L);
    free(logits), free(plain);
    ref_free(&ref);
    tensor_free(&causal);
    batch_free(&bt);
    model_free(&m);
}

static void refused(const char *never, const char *const *args, const char *part, const char *what) {
    char out[8192], err[8192];
    int status = run_program(program_path("induction"), args, out, sizeof out, err, sizeof err);
    int lines = 0;
    for (const char *p = err; *p; p++) lines += *p == '\n';
    int good = status == 1 && out[0] == '\0' && lines == 1 && strstr(err, part) && !file_exists(never);
    if (!ok(good, "%s is refused: exit 1, one line naming the problem, nothing written", what) && !tap_stub[0])
        diag("exit %d; stdout '%s'; stderr '%s'; wanted one line containing '%s'%s", status, out, err, part,
             file_exists(never) ? "; and the --dump directory was made" : "");
}

/* Refusals come before any training step: no exercise is needed for them. */
static void test_refusals(const char *tmp) {
    char never[600], one[600], bad[600], empty[600], wrong[700];
    snprintf(never, sizeof never, "%s/never", tmp);
    snprintf(one, sizeof one, "%s/one-layer", tmp);
    snprintf(bad, sizeof bad, "%s/bad-shape", tmp);
    snprintf(empty, sizeof empty, "%s/empty", tmp);
    mkdir(empty, 0777);
    int status = run("induction", ARGS("--layers", "1", "--steps", "0", "--quiet", "--dump", one));
    ok(status == 0 && layers_in(one) == 1, "induction --layers 1 --steps 0 dumps an untrained model of 1 layer");
    char name[MAX_PARAMS][40];
    int n = weight_names(1, name);
    mkdir(bad, 0777);
    for (int i = 0; status == 0 && i < n; i++) copy_npy(one, name[i], bad, name[i]);
    Tensor narrow = tensor_new2(32, 31);
    save_npy(bad, "layers.0.v_proj.weight", &narrow);
    tensor_free(&narrow);
    snprintf(wrong, sizeof wrong, "%s/layers.0.v_proj.weight.npy: shape (32, 31), expected (32, 32)", bad);
    refused(never, ARGS("--steps", "-1", "--dump", never), "--steps -1: must be from 0 to", "--steps -1");
    refused(never, ARGS("--lr", "0", "--dump", never), "--lr 0: must be above 0 and at most 1", "--lr 0");
    refused(never, ARGS("--lr", "2", "--dump", never), "--lr 2: must be above 0 and at most 1", "--lr 2");
    refused(never, ARGS("--layers", "5", "--dump", never), "--layers 5: at most 4", "--layers 5 (at most 4)");
    refused(never, ARGS("--ablate", "3.0", "--steps", "0", "--dump", never), "--ablate 3.0: give layer.head, from 0.0 "
            "to 1.1", "--ablate 3.0 (no layer 3)");
    refused(never, ARGS("--ablate", "x", "--steps", "0", "--dump", never), "--ablate x: give layer.head",
            "--ablate x");
    refused(never, ARGS("--ablate", "0.0", "--steps", "5", "--dump", never),
            "--ablate 0.0: a silenced head would train back", "--ablate with training steps");
    refused(never, ARGS("--ablate", "1.2", "--steps", "0", "--dump", never), "--ablate 1.2: give layer.head",
            "--ablate 1.2 (no head 2 of 2)");
    refused(never, ARGS("--load", empty, "--heads", "2", "--dump", never), "no layers.0.q_proj.weight.npy",
            "--load of a directory with no model in it");
    refused(never, ARGS("--load", one, "--heads", "2", "--layers", "2", "--dump", never), "--layers 2, but",
            "--load of a 1-layer model with --layers 2");
    refused(never, ARGS("--load", bad, "--heads", "2", "--steps", "0", "--dump", never), wrong,
            "--load of a model whose layers.0.v_proj.weight.npy is (32, 31)");
    refused(never, ARGS("--seq", "2", "--dump", never), "--seq 2: a copy needs at least 3 positions", "--seq 2");
}

int main(void) {
    char tmp[] = "/tmp/abh-induction-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    (void)train_step; (void)progress; (void)report; (void)dump_example; (void)model_dump;   /* through the program */
    (void)model_load;                       /* through the program, and tests/test_induction_models.c */

    TEST_GROUP(test_against_differences());
    TEST_GROUP(test_cross_entropy());
    TEST_GROUP(test_cross_entropy_by_hand());
    TEST_GROUP(test_make_batch());
    TEST_GROUP(test_silence_head());
    TEST_GROUP(test_refusals(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
