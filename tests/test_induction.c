/* Tests for chapter 12: the attention-only transformer trained in C (induction).
 *
 * induction.c is included with TESTING defined. The reference is the whole model
 * in double precision, in plain loops (the attention tests/reference.h's): the
 * embedding lookup plus the positions, L layers of causal multi-head attention
 * added to the residual stream, the unembedding, and the cross-entropy averaged
 * over the counted positions.
 * Central differences of that loss, for every entry of every weight, are what the
 * float gradients of cross_entropy's dz and model_backward must match. Other tests
 * check cross_entropy's loss and dz, adam_update against torch.optim.Adam's formula
 * (Exercise 12.4), make_batch's sequences, silence_head, the program as a reader
 * runs it (determinism, --load, refusals), and the two models `make` trains
 * ($ABH_MODELS: two-layers/ and one-layer/): what their heads learned.
 *
 * Every test whose result goes through adam_update (a trained model, a run with
 * --steps) sits in EXERCISE("12.4", ...); every call into forward_keep (Exercise
 * 6.7's passes) or gqa_backward (Exercise 11.6's softmax_backward) inside
 * STUDENT(...), so that in a handout each test fails, or is skipped, under its own
 * name. */
#define TESTING
#include "induction.c"
#include "tap.h"
#include "run.h"
#include "reference.h"

/* ---- cases ------------------------------------------------------------------------ */

/* (T, T): ones where key s <= query t, as main makes it. */
static Tensor causal_mask(int T) {
    Tensor c = tensor_new2(T, T);
    for (int t = 0; t < T; t++)
        for (int s = 0; s <= t; s++) c.data[t * T + s] = 1.0f;
    return c;
}

static Batch batch_new(int B, int T) {
    Batch bt = { .B = B, .T = T, .tok = calloc((size_t)B * (T + 1), sizeof(int)),
                 .counted = calloc((size_t)B * T, sizeof(float)), .copy = calloc((size_t)B, sizeof(Copy)) };
    if (!bt.tok || !bt.counted || !bt.copy) { perror("calloc"); exit(2); }
    return bt;
}

static void batch_free(Batch *bt) {
    free(bt->tok); free(bt->counted); free(bt->copy);
}

/* A model drawn as the program draws one from --seed; q_proj's and k_proj's weights
 * times sharpen (maps further from uniform). */
static Model model_new(int T, int D, int H, int L, uint64_t seed, float sharpen) {
    Model m;
    Rng r;
    rng_seed(&r, seed);
    model_init(&m, T, D, H, L, &r);
    for (int l = 0; l < L; l++) {
        for (long i = 0; i < m.layer[l].q_w.size; i++) m.layer[l].q_w.data[i] *= sharpen;
        for (long i = 0; i < m.layer[l].k_w.size; i++) m.layer[l].k_w.data[i] *= sharpen;
    }
    return m;
}

/* The names of a model's weights, in model_params's order, for L layers. */
static int weight_names(int L, char name[MAX_PARAMS][40]) {
    Model m = { .layers = L };
    Tensor *p[MAX_PARAMS];
    return model_params(&m, p, name);
}

/* 1 if any of the n numbers is not 0: a pass stopped at a stub leaves its outputs zero. */
static int written(const float *a, long n) {
    for (long i = 0; a && i < n; i++) if (a[i] != 0.0f) return 1;
    return 0;
}

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

/* ---- Adam (Exercise 12.4) ---------------------------------------------------------------- */

/* One step of torch.optim.Adam (torch/optim/adam.py, _single_tensor_adam) in double:
 * m.lerp_(g, 1 - b1); v.mul_(b2).addcmul_(g, g, 1 - b2); c1 = 1 - b1^t, c2 = 1 - b2^t;
 * w.addcdiv_(m, v.sqrt() / sqrt(c2) + eps, value = -lr / c1). */
static void torch_adam(double *w, double *m, double *v, const float *g, long n, double lr, double b1, double b2,
                       double eps, int t) {
    double c1 = 1 - pow(b1, t), c2 = 1 - pow(b2, t);
    for (long i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * (double)g[i] * g[i];
        w[i] -= lr / c1 * m[i] / (sqrt(v[i]) / sqrt(c2) + eps);
    }
}

/* Gradients of every size from 1e-6 to 1e2, of both signs: each entry i is
 * u * 10^(i mod 9 - 6), u in [-1, 1) (near eps, where it matters, and far above). */
static void draw_gradient(float *g, long n, Rng *r) {
    for (long i = 0; i < n; i++) g[i] = (2 * rng_uniform(r) - 1) * powf(10.0f, (float)(i % 9 - 6));
}

static void test_adam_against_torch(void) {
    enum { N = 45, STEPS = 8 };
    float w[N], m[N] = {0}, v[N] = {0}, g[N];
    double wd[N], md[N] = {0}, vd[N] = {0};
    Rng r;
    rng_seed(&r, 61);
    rand_uniform(w, N, -1.0f, 1.0f, &r);
    for (int i = 0; i < N; i++) wd[i] = w[i];
    Adam o = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    for (int t = 1; t <= STEPS; t++) {
        draw_gradient(g, N, &r);
        if (t == 4) for (int i = 0; i < N; i++) g[i] = -g[i] * 3;     /* a gradient that turns */
        o.t = t;
        STUDENT(adam_update(w, m, v, g, N, &o));
        torch_adam(wd, md, vd, g, N, o.lr, o.beta1, o.beta2, o.eps, t);
    }
    close_ok(w, wd, N, 2e-6, 0, "adam_update: after %d steps with changing gradients (1e-6 to 1e2, one step turning "
             "them around), the %d weights are torch.optim.Adam's (double) within 2e-6", STEPS, N);
    close_ok(m, md, N, 0, 1e-5, "the running mean m (exp_avg) is torch's within 1e-5 of itself");
    close_ok(v, vd, N, 0, 1e-5, "the running mean of squares v (exp_avg_sq) is torch's within 1e-5 of itself");
}

/* The first step, worked by hand: m = (1 - b1) g and v = (1 - b2) g^2, so m / c1 = g and
 * sqrt(v / c2) = |g|: every weight moves by lr * sign(g), whatever |g| (well above eps). */
static void test_adam_first_step(void) {
    enum { N = 40 };
    float w[N], w0[N], m[N] = {0}, v[N] = {0}, g[N], want[N];
    Rng r;
    rng_seed(&r, 62);
    rand_uniform(w, N, -1.0f, 1.0f, &r);
    memcpy(w0, w, sizeof w);
    for (int i = 0; i < N; i++) {
        g[i] = (i % 2 ? -1.0f : 1.0f) * powf(10.0f, (float)(i % 5 - 2)) * (1 + rng_uniform(&r));   /* 1e-2 .. 2e2 */
        want[i] = w0[i] - 0.05f * (g[i] > 0 ? 1.0f : -1.0f);
    }
    Adam o = { .lr = 0.05f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .t = 1 };
    STUDENT(adam_update(w, m, v, g, N, &o));
    close_ok(w, want, N, 1e-6, 0, "adam_update's first step (t = 1, lr 0.05) moves every weight by lr * sign(g) "
             "within 1e-6, for gradients from 1e-2 to 2e2: the bias corrections undo the zero start");
    double worst = 0, a1 = 1 - (double)o.beta1, a2 = 1 - (double)o.beta2;    /* 0.1 and 0.001, as floats hold them */
    for (int i = 0; i < N; i++)
        worst = fmax(worst, fmax(fabs(m[i] - a1 * g[i]) / fabs(a1 * g[i]),
                                 fabs(v[i] - a2 * g[i] * g[i]) / (a2 * g[i] * g[i])));
    ok(written(m, N) && worst <= 1e-5, "after it m = (1 - beta1) g and v = (1 - beta2) g^2, within 1e-5 of "
       "themselves (%.2g)", worst);
}

/* A zero gradient from a zero start: m and v stay 0, and so the step is 0 / (0 + eps). */
static void test_adam_zero_gradient(void) {
    enum { N = 12 };
    float w[N], w0[N], m[N] = {0}, v[N] = {0}, g[N] = {0};
    Rng r;
    rng_seed(&r, 63);
    rand_uniform(w, N, -1.0f, 1.0f, &r);
    memcpy(w0, w, sizeof w);
    for (int i = 0; i < N; i += 3) g[i] = 0.5f;                      /* a third of them move */
    Adam o = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .t = 1 };
    STUDENT(adam_update(w, m, v, g, N, &o));
    int kept = 1, moved = 1;
    for (int i = 0; i < N; i++) {
        if (i % 3) kept &= w[i] == w0[i] && m[i] == 0.0f && v[i] == 0.0f;
        else moved &= w[i] != w0[i];
    }
    ok(kept && moved, "a weight whose gradient is 0 (from m = v = 0) is left exactly as it was, m and v with it, "
       "while the weights beside it with a gradient move");
}

/* adam_step: every weight of a model takes its first step, lr * sign(grad), and the
 * gradients are cleared for the next batch. */
static void test_adam_step(void) {
    Model m = model_new(5, 8, 2, 2, 64, 1.0f), before, grad, mean, square;
    Tensor *w[MAX_PARAMS], *b[MAX_PARAMS], *g[MAX_PARAMS];
    char name[MAX_PARAMS][40];
    model_like(&before, &m), model_like(&grad, &m), model_like(&mean, &m), model_like(&square, &m);
    int n = model_params(&m, w, name);
    model_params(&before, b, name), model_params(&grad, g, name);
    Rng r;
    rng_seed(&r, 65);
    for (int i = 0; i < n; i++) {
        memcpy(b[i]->data, w[i]->data, sizeof(float) * (size_t)w[i]->size);
        rand_uniform(g[i]->data, g[i]->size, -1.0f, 1.0f, &r);
    }
    Adam o = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    STUDENT(adam_step(&m, &grad, &mean, &square, &o));
    int cleared = 1;
    double worst = 0;
    long entries = 0;
    for (int i = 0; i < n; i++)
        for (long j = 0; j < w[i]->size; j++, entries++) {
            cleared &= g[i]->data[j] == 0.0f;
            worst = fmax(worst, fabs(fabs(w[i]->data[j] - b[i]->data[j]) - 0.01));
        }
    ok(o.t == 1 && worst <= 1e-6, "adam_step moves all %ld weights of a 2-layer model by lr = 0.01 on its first "
       "step (within %.2g), and counts the step", entries, worst);
    ok(cleared, "it clears every gradient for the next batch, as optimizer.zero_grad()");
    model_free(&m), model_free(&before), model_free(&grad), model_free(&mean), model_free(&square);
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

/* ---- the program, as a reader runs it ------------------------------------------------- */

/* Every file a run of `--steps 30 --every 10` dumps with the default sizes
 * (B = 16, T = 32, D = 32, H = 2, L = 2), and its shape. */
static const Written run_files[] = {
    { "history", 2, { 3, 6 } },        { "losses", 1, { 30 } },          { "tokens", 3, { 30, 16, 33 } },
    { "counted", 3, { 30, 16, 32 } },  { "example", 2, { 2, 33 } },      { "attn", 4, { 2, 2, 32, 32 } },
    { "tok_emb.weight", 2, { 32, 32 } }, { "pos_emb.weight", 2, { 32, 32 } },
    { "layers.1.k_proj.weight", 2, { 32, 32 } }, { "unembed.bias", 1, { 32 } },
};
enum { NRUN_FILES = sizeof run_files / sizeof run_files[0] };



/* Every file of a dump of L layers (weights, and `extra` of run_files' others) the same. */
static int same_dump(const char *d1, const char *d2, int L, int extra) {
    char name[MAX_PARAMS][40];
    int n = weight_names(L, name), same = 1;
    for (int i = 0; i < n; i++) same &= same_npy(d1, d2, name[i]);
    for (int i = 0; i < extra; i++) same &= same_npy(d1, d2, run_files[i].name);
    return same;
}

/* The lines from "held-out:" to the end of a run's printout, or "" if none. */
static const char *held_out(const char *out) {
    const char *at = strstr(out, "held-out:");
    return at ? at : "";
}

static void test_program(const char *tmp) {
    char a[600], b[600], c[600], out_a[16384];
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(b, sizeof b, "%s/b", tmp);
    snprintf(c, sizeof c, "%s/c", tmp);
    int status = run("induction", ARGS("--steps", "30", "--every", "10", "--dump", a));
    snprintf(out_a, sizeof out_a, "%s", run_out);
    int lines = 0;
    for (const char *p = run_out; (p = strstr(p, "step ")); p++) lines++;
    ok(status == 0 && lines == 3 && strstr(run_out, "step    10  loss ") && strstr(run_out, "step    30  loss ") &&
       strstr(run_out, "held-out: loss ") && strstr(run_out, "layer 1 head 1 "),
       "induction --steps 30 --every 10 prints a progress line at steps 10, 20 and 30, then the held-out scores of "
       "every head");
    int shapes = wrote_shapes(a, run_files, NRUN_FILES);
    ok(status == 0 && shapes, "--dump writes history (3, 6), losses (30), tokens (30, 16, 33), counted (30, 16, 32), "
       "example (2, 33), attn (2, 2, 32, 32) and every weight under its state_dict name");
    Tensor history = load_written(a, "history"), losses = load_written(a, "losses");
    int rows = history.data && losses.data && history.size == 18 && losses.size == 30;
    for (int k = 0; rows && k < 3; k++)
        rows &= history.data[k * 6] == 10.0f * (k + 1) && history.data[k * 6 + 1] == losses.data[10 * k + 9];
    ok(rows, "history.npy's rows are steps 10, 20 and 30, each with the training loss losses.npy holds for its step");
    tensor_free(&history), tensor_free(&losses);
    int again = run("induction", ARGS("--steps", "30", "--every", "10", "--dump", b));
    ok(status == 0 && again == 0 && !strcmp(run_out, out_a) && same_dump(a, b, 2, NRUN_FILES),
       "a second run prints the same and dumps the same files, byte for byte: training is deterministic");
    mkdir(a, 0777);                         /* there even after a stub, for --load to read */
    status = run("induction", ARGS("--load", a, "--heads", "2", "--steps", "0", "--dump", c));
    ok(status == 0 && held_out(out_a)[0] && !strcmp(held_out(run_out), held_out(out_a)),
       "--load of that dump with --heads 2 --steps 0 prints the same held-out loss, accuracy and head scores");
    ok(status == 0 && same_dump(a, c, 2, 0) && same_npy(a, c, "attn") && same_npy(a, c, "example"),
       "and dumps the same weights, example.npy and attn.npy, byte for byte (--steps 0 trains nothing)");
}

/* A refused run: exit status 1, nothing on stdout, one line on stderr containing
 * part, and its --dump directory (`never`) not made. */
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

/* ---- the trained models ------------------------------------------------------------------ */

/* $ABH_MODELS/NAME, or build/induction/NAME. */
static const char *model_dir(char *dir, size_t n, const char *name) {
    const char *top = getenv("ABH_MODELS");
    snprintf(dir, n, "%s/%s", top && *top ? top : "build/induction", name);
    return dir;
}

/* Read up to n - 1 bytes of path into buf (its end, if longer); "" if it cannot be read. */
static void read_tail(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "rb");
    buf[0] = '\0';
    if (!f) return;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        fseek(f, size > (long)n - 1 ? size - (long)n + 1 : 0, SEEK_SET);
    }
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

/* Load the model make trained into $ABH_MODELS/NAME (T = 32, D = 32, H = 2). If it is
 * not there, NAME.err says why: a stub stopped the training (noted, as run.h notes a
 * run's: the tests that need the model fail under that exercise, or are skipped), or
 * make has not been run. Returns 1 with the model loaded, else 0. */
static int load_model(Model *m, const char *name, int L) {
    char dir[1200], path[1300], err[4096];
    model_dir(dir, sizeof dir, name);
    snprintf(path, sizeof path, "%s/unembed.bias.npy", dir);
    if (!file_exists(path) || layers_in(dir) != L) {
        snprintf(path, sizeof path, "%s.err", dir);
        read_tail(path, err, sizeof err);
        tap_note_stub(err, 3);
        if (!tap_stub[0]) diag("%s: no trained model of %d layers here: run make first", dir, L);
        return 0;
    }
    Rng r;
    rng_seed(&r, 1);
    model_init(m, 32, 32, 2, L, &r);
    model_load(m, dir);
    return 1;
}

/* The held-out batch the program measures on: 128 sequences from seed 12345. */
static Batch held_out_batch(void) {
    Batch held = batch_new(128, 32);
    Rng r;
    rng_seed(&r, 12345);
    make_batch(&held, &r, 0);
    return held;
}

static Score score(const Model *m, const Batch *held, const Tensor *causal) {
    Score s = {0};
    STUDENT(s = evaluate(m, held, causal));
    return s;
}

/* A copy of m with head `which` ("1.0") silenced, scored. */
static Score score_silenced(Model *m, const char *which, const Batch *held, const Tensor *causal) {
    Model q;
    Tensor *p[MAX_PARAMS], *s[MAX_PARAMS];
    char name[MAX_PARAMS][40];
    model_like(&q, m);
    int n = model_params(m, p, name);
    model_params(&q, s, name);
    for (int i = 0; i < n; i++) memcpy(s[i]->data, p[i]->data, sizeof(float) * (size_t)p[i]->size);
    silence_head(&q, which);
    Score sc = score(&q, held, causal);
    model_free(&q);
    return sc;
}

/* The last "held-out: loss X, accuracy Y" of $ABH_MODELS/NAME.txt, or NAN. */
static double printed_accuracy(const char *name) {
    char dir[1200], path[1300], text[4096];
    snprintf(path, sizeof path, "%s.txt", model_dir(dir, sizeof dir, name));
    read_tail(path, text, sizeof text);
    const char *at = strstr(text, "held-out: loss ");
    at = at ? strstr(at, "accuracy ") : NULL;
    return at ? strtod(at + strlen("accuracy "), NULL) : NAN;
}

static void test_models(void) {
    Model two, one;
    int have_two = load_model(&two, "two-layers", 2), have_one = load_model(&one, "one-layer", 1);
    Batch held = held_out_batch();
    Tensor causal = causal_mask(32);
    Score s2 = {0}, s1 = {0}, no_ind = {0}, no_prev = {0};
    int H = 2, ind_head = 0, prev_head = 0;
    if (have_two) {
        s2 = score(&two, &held, &causal);
        for (int h = 1; h < H; h++) {
            if (s2.induction[H + h] > s2.induction[H + ind_head]) ind_head = h;
            if (s2.prev[h] > s2.prev[prev_head]) prev_head = h;
        }
        char which[16];
        snprintf(which, sizeof which, "1.%d", ind_head);
        no_ind = score_silenced(&two, which, &held, &causal);
        snprintf(which, sizeof which, "0.%d", prev_head);
        no_prev = score_silenced(&two, which, &held, &causal);
    }
    if (have_one) s1 = score(&one, &held, &causal);
    double printed = printed_accuracy("two-layers");
    ok(have_two && s2.total > 0 && fabs(s2.accuracy - printed) <= 5e-4, "the two-layer model make trained loads with "
       "model_load and scores on the 128 held-out sequences (seed 12345) the accuracy its training printed (%.3f, "
       "%.3f)", (double)s2.accuracy, printed);
    ok(have_two && s2.accuracy >= 0.85, "the two-layer model guesses at least 85%% of the %d counted copied tokens "
       "(%.3f)", s2.total, (double)s2.accuracy);
    ok(have_two && s2.prev[prev_head] >= 0.6, "a head of its layer 0 is a previous-token head: head %d's "
       "previous-token score is at least 0.6 (%.2f)", prev_head, (double)s2.prev[prev_head]);
    ok(have_two && s2.induction[H + ind_head] >= 0.6, "a head of its layer 1 is an induction head: head %d's "
       "induction score is at least 0.6 (%.2f)", ind_head, (double)s2.induction[H + ind_head]);
    ok(have_two && s2.accuracy - no_ind.accuracy >= 0.1, "silencing that induction head (--ablate 1.%d) costs at "
       "least 0.1 of accuracy (%.3f -> %.3f)", ind_head, (double)s2.accuracy, (double)no_ind.accuracy);
    ok(have_two && s2.accuracy - no_prev.accuracy >= 0.5, "silencing the previous-token head (--ablate 0.%d), which "
       "the induction head reads through, costs at least 0.5 (%.3f -> %.3f)", prev_head, (double)s2.accuracy,
       (double)no_prev.accuracy);
    ok(have_one && s1.total > 0 && s1.accuracy <= 0.5, "the one-layer model, trained as long, guesses at most half "
       "of the copied tokens (%.3f): one layer cannot hold the circuit", (double)s1.accuracy);
    ok(have_one && s1.total > 0 && fmaxf(s1.induction[0], s1.induction[1]) <= 0.3, "and neither of its heads is "
       "an induction head: both induction scores are at most 0.3 (%.2f, %.2f)", (double)s1.induction[0],
       (double)s1.induction[1]);
    if (have_two) model_free(&two);
    if (have_one) model_free(&one);
    tensor_free(&causal);
    batch_free(&held);
}

int main(void) {
    char tmp[] = "/tmp/abh-induction-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    (void)train_step; (void)progress; (void)report; (void)dump_example; (void)model_dump;   /* through the program */

    /* through forward_keep and gqa_backward, not adam_update */
    TEST_GROUP(test_against_differences());
    TEST_GROUP(test_cross_entropy());
    TEST_GROUP(test_cross_entropy_by_hand());
    TEST_GROUP(test_make_batch());
    TEST_GROUP(test_silence_head());
    TEST_GROUP(test_refusals(tmp));
    /* Exercise 12.4 (adam_update): the optimizer itself, and every test of a model
     * it trained */
    EXERCISE("12.4", 3, test_adam_against_torch());
    EXERCISE("12.4", 2, test_adam_first_step());
    EXERCISE("12.4", 1, test_adam_zero_gradient());
    EXERCISE("12.4", 2, test_adam_step());
    EXERCISE("12.4", 6, test_program(tmp));
    EXERCISE("12.4", 8, test_models());

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
