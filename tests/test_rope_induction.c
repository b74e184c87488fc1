/* Tests for chapter 13's rope_induction: chapter 12's model trained with RoPE instead of
 * pos_emb.
 *
 * rope_induction.c is included with TESTING defined. The turn of a layer's heads,
 * rope_turn_heads, is held forward and back to a double-precision loop: the turn back
 * undoes the turn and is its transpose. The whole turning model is held to central
 * differences of a double reference (chapter 12's, with no pos_emb and q and k turned in
 * double after the projections), with one, two and three layers. Then the program: a
 * short run, its files (no pos_emb), the same bits a second time, --load of what it
 * wrote, the same starting weights as induction's from the same --seed, and a refusal.
 * The trained model make writes is tests/test_rope_induction_models.c's.
 *
 * Every call into rope_rotate (Exercise 13.6), forward_keep's passes (Exercise 6.7) or
 * gqa_backward's (Exercise 11.6) sits inside STUDENT(...), so that in a handout a test
 * that reaches a stub fails, or is skipped, under that exercise's name. */
#define TESTING
#include "rope_induction.c"
#include "tap.h"
#include "run.h"
#include "reference.h"
#include "induction_cases.h"
#include <sys/stat.h>

/* ---- the turn, in double --------------------------------------------------------------- */

/* Pair i of a head of hd numbers at position t, (x[i], x[i + hd/2]), turned by
 * sign * t * 10000^(-2i/hd), all in double: row (hd) in place. */
static void ref_turn(double *row, int t, int hd, int sign) {
    for (int i = 0; i < hd / 2; i++) {
        double a = sign * t * pow(10000.0, -2.0 * i / hd), x1 = row[i], x2 = row[i + hd / 2];
        row[i] = x1 * cos(a) - x2 * sin(a);
        row[i + hd / 2] = x2 * cos(a) + x1 * sin(a);
    }
}

/* The largest |a - b| over n numbers, NaN counted as infinite. */
static double max_diff(const float *a, const double *b, long n) {
    double worst = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        worst = isnan(d) ? INFINITY : fmax(worst, d);
    }
    return worst;
}

static void test_turn_heads(void) {
    int B = 2, H = 3, G = 1, T = 9, hd = 8;
    long nq = (long)B * H * T * hd, nk = (long)B * G * T * hd;
    Tensor q = tensor_new(4, (int[]){ B, H, T, hd }), k = tensor_new(4, (int[]){ B, G, T, hd });
    Rng r;
    rng_seed(&r, 1301);
    rand_uniform(q.data, nq, -1.0f, 1.0f, &r);
    rand_uniform(k.data, nk, -1.0f, 1.0f, &r);
    double *wq = ref_doubles(q.data, nq), *wk = ref_doubles(k.data, nk);
    double *x0 = ref_doubles(q.data, nq);
    for (long row = 0; row < nq / hd; row++) ref_turn(wq + row * hd, (int)(row % T), hd, 1);
    for (long row = 0; row < nk / hd; row++) ref_turn(wk + row * hd, (int)(row % T), hd, 1);
    STUDENT(rope_turn_heads(q.data, k.data, B, H, G, T, hd, 0));
    double fwd = fmax(max_diff(q.data, wq, nq), max_diff(k.data, wk, nk));
    ok(fwd <= 1e-5, "rope_turn_heads turns pair (i, i + hd/2) of every query and key head at position t by "
       "t 10000^(-2i/hd), as a double loop does, within 1e-5 (%.2g), every sequence at positions 0 .. T-1", fwd);
    /* the transpose: <R x, y> = <x, R^T y> for y drawn afresh, R^T y from the turn back */
    Tensor y = tensor_new(4, (int[]){ B, H, T, hd }), none = tensor_new(4, (int[]){ B, G, T, hd });
    rand_uniform(y.data, nq, -1.0f, 1.0f, &r);
    double *wy = ref_doubles(y.data, nq), left = 0, right = 0;
    STUDENT(rope_turn_heads(y.data, none.data, B, H, G, T, hd, 1));
    for (long i = 0; i < nq; i++) left += (double)q.data[i] * wy[i], right += x0[i] * (double)y.data[i];
    for (long row = 0; row < nq / hd; row++) ref_turn(wy + row * hd, (int)(row % T), hd, -1);
    double back = max_diff(y.data, wy, nq);
    ok(back <= 1e-5 && fabs(left - right) <= 1e-5 * nq, "the turn back (back = 1) is the turn by minus each angle "
       "(%.2g), the transpose of the turn: <R x, y> = <x, R^T y> (%.9g, %.9g)", back, left, right);
    /* the turn back undoes the turn */
    STUDENT(rope_turn_heads(q.data, k.data, B, H, G, T, hd, 1));
    double undo = max_diff(q.data, x0, nq);
    ok(undo <= 1e-6, "turning back what was turned gives the heads back, to float rounding (%.2g)", undo);
    free(wq); free(wk); free(wy); free(x0);
    tensor_free(&q); tensor_free(&k); tensor_free(&y); tensor_free(&none);
}

/* ---- finite differences through the turning model ----------------------------------- */

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
        r.p[i] = ref_doubles(w[i]->data, w[i]->size);
    }
    return r;
}

/* The turning model's loss on bt, in double: tok_emb alone, then each layer the
 * reference's causal attention with q and k turned by ref_turn after the projections,
 * added to the stream; the unembedding; the mean cross-entropy of the counted guesses. */
static double ref_loss(const Ref *r, const Batch *bt) {
    int B = bt->B, T = r->T, D = r->D, H = r->H, hd = D / H, V = r->V;
    long BT = (long)B * T, N = 0;
    RefAttn a = { .B = B, .T = T, .H = H, .hd = hd, .causal = 1 };
    double *x = ref_new(BT * D), *q = ref_new(BT * D), *k = ref_new(BT * D), *v = ref_new(BT * D);
    double *att = ref_new(BT * H * T), *merged = ref_new(BT * D), *out = ref_new(BT * D);
    double *z = ref_new(BT * V), loss = 0;
    for (long bt_ = 0; bt_ < BT; bt_++)
        for (int d = 0; d < D; d++) x[bt_ * D + d] = r->p[0][bt->tok[bt_ / T * (T + 1) + bt_ % T] * D + d];
    for (int l = 0; l < r->L; l++) {
        double *const *p = r->p + 1 + 8 * l;     /* q_w q_b k_w k_b v_w v_b o_w o_b */
        ref_linear64(q, x, p[0], p[1], BT, D, D);
        ref_linear64(k, x, p[2], p[3], BT, D, D);
        ref_linear64(v, x, p[4], p[5], BT, D, D);
        for (long bt_ = 0; bt_ < BT; bt_++)
            for (int h = 0; h < H; h++) {
                ref_turn(q + bt_ * D + h * hd, (int)(bt_ % T), hd, 1);
                ref_turn(k + bt_ * D + h * hd, (int)(bt_ % T), hd, 1);
            }
        ref_scores(att, q, k, &a);
        ref_softmax(att, &a);
        ref_mix(merged, att, v, &a);
        ref_linear64(out, merged, p[6], p[7], BT, D, D);
        for (long i = 0; i < BT * D; i++) x[i] += out[i];
    }
    ref_linear64(z, x, r->p[1 + 8 * r->L], r->p[2 + 8 * r->L], BT, D, V);
    for (long i = 0; i < BT; i++) {
        if (bt->counted[i] == 0.0f) continue;
        double top = z[i * V], sum = 0;
        for (int c = 1; c < V; c++) top = fmax(top, z[i * V + c]);
        for (int c = 0; c < V; c++) sum += exp(z[i * V + c] - top);
        loss += top + log(sum) - z[i * V + bt->tok[i / T * (T + 1) + i % T + 1]], N++;
    }
    free(x); free(q); free(k); free(v); free(att); free(merged); free(out); free(z);
    return N ? loss / (double)N : 0.0;
}

#define FD_STEP 1e-5

/* Every entry of every weight's float gradient against central differences of ref_loss,
 * each tensor's error over its largest difference (a bias over its layer's), as
 * tests/test_induction.c measures it. */
static void check_differences(const char *what, Model *m, const Batch *bt) {
    Model grad;
    Pass f = {0};
    Tensor causal = causal_mask(m->seq), dz = tensor_new3(bt->B, bt->T, m->vocab), *g[MAX_PARAMS];
    char name[MAX_PARAMS][40];
    int right, total;
    float loss = NAN;
    model_like(&grad, m);
    STUDENT(f = model_forward(m, bt->tok, bt->B, &causal));
    if (f.logits.data) {
        loss = cross_entropy(dz.data, &right, &total, f.logits.data, bt, m->vocab);
        STUDENT(model_backward(&grad, &f, m, bt->tok, dz.data, &causal));
    }
    int n = model_params(&grad, g, name), at = 0;
    Ref r = ref_of(m);
    double worst = 0, *fd[MAX_PARAMS];
    for (int i = 0; i < n; i++) {
        fd[i] = ref_new(r.size[i]);
        for (long j = 0; j < r.size[i]; j++) {
            double keep = r.p[i][j];
            r.p[i][j] = keep + FD_STEP;
            double up = ref_loss(&r, bt);
            r.p[i][j] = keep - FD_STEP;
            double down = ref_loss(&r, bt);
            r.p[i][j] = keep;
            fd[i][j] = (up - down) / (2 * FD_STEP);
        }
    }
    for (int i = 0; i < n; i++) {
        int first = strstr(name[i], "bias") ? i - 1 : i;
        double scale = 0, diff = 0;
        for (int l = first; l <= i; l++)
            for (long j = 0; j < r.size[l]; j++) scale = fmax(scale, fabs(fd[l][j]));
        diff = max_diff(g[i]->data, fd[i], r.size[i]);
        double err = scale > 0 ? diff / scale : diff;
        if (!(err <= worst)) worst = err, at = i;
    }
    double want = ref_loss(&r, bt);
    ok(worst <= 1e-3 && fabs(loss - want) <= 1e-5 * want && strcmp(name[1], "pos_emb.weight"),
       "%s: no pos_emb; the loss is the double reference's (%.6f, %.6f), and every entry of the %d weights' "
       "gradients matches its central differences within 1e-3 of each tensor's largest (worst %.2g, %s.grad)",
       what, (double)loss, want, n, worst, name[at]);
    for (int i = 0; i < n; i++) free(fd[i]), free(r.p[i]);
    pass_free(&f, m->layers);
    model_free(&grad);
    tensor_free(&causal), tensor_free(&dz);
}

static void test_against_differences(void) {
    static const struct { int B, T, D, H, L; float sharpen; const char *what; } cases[] = {
        { 2, 6, 8, 2, 2, 1.0f, "(B, T, D, H, L) = (2, 6, 8, 2, 2), turning" },
        { 2, 6, 8, 2, 1, 1.0f, "L = 1, turning" },
        { 3, 7, 12, 2, 3, 3.0f, "(3, 7, 12, 2, 3), q and k weights x3 (sharper maps), turning" },
    };
    for (int c = 0; c < 3; c++) {
        Model m = model_new(cases[c].T, cases[c].D, cases[c].H, cases[c].L, 1320 + c, cases[c].sharpen);
        model_turn(&m);
        Batch bt = batch_new(cases[c].B, cases[c].T);
        Rng r;
        rng_seed(&r, 1330 + c);
        make_batch(&bt, &r, 0);
        check_differences(cases[c].what, &m, &bt);
        batch_free(&bt);
        model_free(&m);
    }
}

/* ---- the program --------------------------------------------------------------------- */

static const char *held_out(const char *out) {
    const char *at = strstr(out, "held-out:");
    return at ? at : "";
}

static void test_program(const char *tmp) {
    char a[600], b[600], c[600], l[600], path[700], out_a[16384];
    snprintf(a, sizeof a, "%s/a", tmp), snprintf(b, sizeof b, "%s/b", tmp);
    snprintf(c, sizeof c, "%s/c", tmp), snprintf(l, sizeof l, "%s/l", tmp);
    int status = run("rope_induction", ARGS("--steps", "12", "--every", "4", "--dump", a));
    snprintf(out_a, sizeof out_a, "%s", run_out);
    snprintf(path, sizeof path, "%s/pos_emb.weight.npy", a);
    int no_pos = !file_exists(path);
    snprintf(path, sizeof path, "%s/layers.1.q_proj.weight.npy", a);
    ok(status == 0 && no_pos && file_exists(path) && strstr(out_a, "step    12  loss ") &&
       strstr(out_a, "layer 1 head 1 "), "rope_induction --steps 12 --every 4 prints induction's progress lines "
       "and scores, and --dump writes every weight but pos_emb.weight, which it has not");
    int again = run("rope_induction", ARGS("--steps", "12", "--every", "4", "--dump", b));
    ok(status == 0 && again == 0 && !strcmp(run_out, out_a) && same_npy(a, b, "layers.0.q_proj.weight") &&
       same_npy(a, b, "history") && same_npy(a, b, "attn"),
       "a second run prints the same and dumps the same weights, history and maps, byte for byte");
    mkdir(a, 0777);
    status = run("rope_induction", ARGS("--load", a, "--heads", "2", "--steps", "0", "--dump", c));
    ok(status == 0 && held_out(out_a)[0] && !strcmp(held_out(run_out), held_out(out_a)) && same_npy(a, c, "attn"),
       "--load of that dump with --heads 2 --steps 0 prints the same held-out scores and dumps the same attn.npy");
    status = run("rope_induction", ARGS("--steps", "0", "--seed", "5", "--quiet", "--dump", c));
    int learned = run("induction", ARGS("--steps", "0", "--seed", "5", "--quiet", "--dump", l));
    ok(status == 0 && learned == 0 && same_npy(c, l, "tok_emb.weight") && same_npy(c, l, "layers.1.k_proj.weight")
       && same_npy(c, l, "unembed.bias"), "from the same --seed, rope_induction starts from induction's weights, "
       "byte for byte: the two models differ in their positions only");
    refuses(program_path("rope_induction"), ARGS("--dim", "6", "--heads", "2", "--steps", "1"), "even",
            "--dim 6 --heads 2 (heads of 3 numbers) is refused: RoPE turns pairs");
}

int main(void) {
    char tmp[] = "/tmp/abh-rope-induction-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    (void)train_step; (void)progress; (void)report; (void)dump_example; (void)model_dump; (void)model_load;
    (void)silence_head; (void)layers_in; (void)evaluate;
    TEST_GROUP(test_turn_heads());
    TEST_GROUP(test_against_differences());
    TEST_GROUP(test_program(tmp));
    remove_tree(tmp);
    done_testing();
    return exit_status();
}
