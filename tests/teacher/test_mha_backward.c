/* Hidden tests for teachers: Exercise 11.6 in mha_backward (the body of
 * softmax_backward: dscores = att * (datt - rowsum(datt * att))).
 *
 * A student handout leaves this folder out, so a solution cannot be tuned to these
 * cases; `make test` and `make grade` run it like tests/test_mha_backward.c. The
 * cases are ones the public tests do not use: softmax rows with hidden entries
 * (p = 0 exactly, as -inf makes them) and one-hot rows, against the explicit Jacobian
 * diag(p) - p p^T built here in double; and the whole backward pass on an odd shape,
 * heads of two numbers in three groups of two, with padding and a causal mask and
 * sharpened weights, against central differences of tests/reference.h's double
 * reference; and one position, where the softmax has one key and q and k learn
 * nothing. */
#define TESTING
#include "mha_backward.c"
#include "tap.h"
#include "run.h"
#include "reference.h"

/* 1 if any of the n numbers is not 0: a pass stopped at a stub leaves its outputs zero. */
static int written(const float *a, long n) {
    for (long i = 0; i < n; i++) if (a[i] != 0.0f) return 1;
    return 0;
}

/* ---- softmax_backward against its Jacobian ---------------------------------------------- */

/* rows of n: p from scores (hidden[j] hides entry j of every row: p = 0 there), dp. */
static void check_jacobian(const char *what, const float *p, const float *dp, int rows, int n) {
    float *ds = calloc((size_t)rows * n, sizeof(float));
    double *want = calloc((size_t)rows * n, sizeof(double)), most = 0;
    STUDENT(softmax_backward(ds, p, dp, rows, n));
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++)                 /* J[i][j] = d p_j / d s_i = p_j (delta_ij - p_i) */
                want[r * n + i] += (double)p[r * n + j] * ((i == j) - (double)p[r * n + i]) * dp[r * n + j];
            most = fmax(most, fabs(want[r * n + i]));
        }
    int zero_where_hidden = 1;
    for (int i = 0; i < rows * n; i++) zero_where_hidden &= p[i] != 0.0f || ds[i] == 0.0f;
    /* a float32 pass of ds_j = p_j (dp_j - sum_k p_k dp_k), in any order and form (the row's
     * sum first, ds as scratch, the Jacobian applied term by term), is within
     * gamma(n + 3) p_j (|dp_j| + 2 A) of it, A = sum_k p_k |dp_k| (tests/test_backward64.c) */
    double *bound = calloc((size_t)rows * n, sizeof(double)), g = ref_gamma(n + 3);
    for (int r = 0; r < rows; r++) {
        double A = 0;
        for (int j = 0; j < n; j++) A += (double)p[r * n + j] * fabs(dp[r * n + j]);
        for (int j = 0; j < n; j++) bound[r * n + j] = g * p[r * n + j] * (fabs(dp[r * n + j]) + 2 * A) + 1e-300;
    }
    (void)most;
    within_ok(ds, want, bound, (long)rows * n, "%s: dscores equal the explicit Jacobian diag(p) - p p^T applied to "
              "datt (double), within what float32 rounding allows", what);
    free(bound);
    ok(zero_where_hidden, "%s: every entry with weight exactly 0 gets exactly 0", what);
    free(ds); free(want);
}

static void test_hidden_entries(void) {
    enum { ROWS = 5, N = 6 };
    float p[ROWS * N], dp[ROWS * N];
    Rng r;
    rng_seed(&r, 4401);
    for (int row = 0; row < ROWS; row++) {                /* row r hides keys r, r+1 (mod N), and row 4 all but one */
        double e[N], sum = 0;
        for (int j = 0; j < N; j++) {
            int hidden = j == row || j == (row + 1) % N || (row == 4 && j != 2);
            e[j] = hidden ? 0.0 : exp(4.0 * rng_uniform(&r) - 2.0);
            sum += e[j];
        }
        for (int j = 0; j < N; j++) p[row * N + j] = (float)(e[j] / sum), dp[row * N + j] = 2 * rng_uniform(&r) - 1;
    }
    check_jacobian("5 rows of 6 with hidden keys (weight 0), the last row seeing one key", p, dp, ROWS, N);
}

static void test_one_hot(void) {
    enum { ROWS = 4, N = 5 };
    float p[ROWS * N] = {0}, dp[ROWS * N];
    Rng r;
    rng_seed(&r, 4402);
    for (int row = 0; row < ROWS; row++) {
        p[row * N + (3 * row + 1) % N] = 1.0f;
        for (int j = 0; j < N; j++) dp[row * N + j] = 10 * rng_uniform(&r) - 5;
    }
    check_jacobian("4 one-hot rows of 5 (a saturated softmax)", p, dp, ROWS, N);
    float ds[ROWS * N];
    for (int i = 0; i < ROWS * N; i++) ds[i] = 7.0f;                 /* must be written over */
    STUDENT(softmax_backward(ds, p, dp, ROWS, N));
    double worst = 0;
    for (int i = 0; i < ROWS * N; i++) worst = fmax(worst, fabs(ds[i]));
    ok(worst <= 1e-6, "one-hot rows pass back nothing: every entry of dscores is 0 within 1e-6 (%.2g), whatever "
       "was in it before", worst);
}

/* ---- the whole pass against differences, in double ----------------------------------------- */

typedef struct Ref { int B, T, D, H, G; const float *vis; double *p[9]; long n[9]; const float *dout; } Ref;

/* sum(out * dout) of GQA in double, by tests/reference.h's steps with the weights in
 * double: one query head at a time, head h on key head h / R, vis (B, H, T, T) (or
 * NULL) hiding keys as -inf does. */
static double loss(const Ref *c) {
    int B = c->B, T = c->T, D = c->D, H = c->H, hd = D / H, W = c->G * hd;
    long BT = (long)B * T;
    RefAttn a = { .B = B, .T = T, .H = H, .G = c->G, .hd = hd, .vis = c->vis, .hide = REF_FILL_INF };
    double *q = ref_new(BT * D), *k = ref_new(BT * W), *v = ref_new(BT * W), *att = ref_new(BT * H * T);
    double *cat = ref_new(BT * D), *out = ref_new(BT * D), L = 0;
    ref_linear64(q, c->p[8], c->p[0], c->p[1], BT, D, D);
    ref_linear64(k, c->p[8], c->p[2], c->p[3], BT, D, W);
    ref_linear64(v, c->p[8], c->p[4], c->p[5], BT, D, W);
    ref_scores(att, q, k, &a);
    ref_softmax(att, &a);
    ref_mix(cat, att, v, &a);
    ref_linear64(out, cat, c->p[6], c->p[7], BT, D, D);
    for (long i = 0; i < BT * D; i++) L += out[i] * c->dout[i];
    free(q); free(k); free(v); free(att); free(cat); free(out);
    return L;
}

/* A module and X as gqa makes them from a seed (q and k weights times sharpen), dout
 * in [-1, 1); gqa_backward's gradients against central differences (h = 1e-4) of
 * the loss. Returns through worst[9] each tensor's error relative to its layer's
 * largest difference, and through abs_qk the largest |gradient| of q_proj and k_proj. */
static void run_case(double worst[9], double *abs_qk, int B, int T, int D, int H, int G, uint64_t seed, float sharpen,
                     const Tensor *mask) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .kv_heads = G, .seed = seed };
    GQA m = {0}, grad = {0};
    Tensors list = {0};
    Tensor x, none, att, out, *w[8], *gw[8];
    gqa_tensors(&list, &m, &x, &none, &att, &out);
    tensors_open(&list, &a);
    m.dim = D, m.heads = H, m.kv_heads = G;
    gqa_weights(&m, w);
    gqa_weights(&grad, gw);
    for (long i = 0; i < m.q_w.size; i++) m.q_w.data[i] *= sharpen;
    for (long i = 0; i < m.k_w.size; i++) m.k_w.data[i] *= sharpen;
    for (int i = 0; i < 8; i++) *gw[i] = tensor_new(w[i]->ndim, w[i]->shape);
    Tensor dout = tensor_new3(B, T, D), dx = tensor_new3(B, T, D), ds = tensor_new(4, (int[]){ B, H, T, T });
    Rng r;
    rng_stream(&r, a.seed, "dout");
    rand_uniform(dout.data, dout.size, -1.0f, 1.0f, &r);
    Saved s = {0};
    STUDENT(s = forward_keep(out.data, att.data, &m, x.data, mask, B, T));
    if (s.merged.data) STUDENT(gqa_backward(&grad, dx.data, ds.data, &m, &s, x.data, dout.data, mask, B, T));
    float *vis = ref_visible(mask, 4, (int[]){ B, H, T, T });
    Ref c = { B, T, D, H, G, vis, .dout = dout.data };
    for (int i = 0; i < 9; i++) {
        const Tensor *t = i < 8 ? w[i] : &x;
        c.n[i] = t->size;
        c.p[i] = malloc(sizeof(double) * (size_t)t->size);
        for (long j = 0; j < t->size; j++) c.p[i][j] = t->data[j];
    }
    double *fd[9], h = 1e-4;
    for (int i = 0; i < 9; i++) {
        fd[i] = malloc(sizeof(double) * (size_t)c.n[i]);
        for (long j = 0; j < c.n[i]; j++) {
            double keep = c.p[i][j];
            c.p[i][j] = keep + h;
            double up = loss(&c);
            c.p[i][j] = keep - h;
            double down = loss(&c);
            c.p[i][j] = keep;
            fd[i][j] = (up - down) / (2 * h);
        }
    }
    *abs_qk = 0;
    for (int i = 0; i < 9; i++) {
        const float *got = i < 8 ? gw[i]->data : dx.data;
        int first = i < 8 ? i & ~1 : 8, last = i < 8 ? first + 1 : 8;
        double scale = 0, err = 0;
        for (int l = first; l <= last; l++)
            for (long j = 0; j < c.n[l]; j++) scale = fmax(scale, fabs(fd[l][j]));
        for (long j = 0; j < c.n[i]; j++) {
            double d = fabs(got[j] - fd[i][j]);
            err = isnan(d) ? INFINITY : fmax(err, d);
            if (i < 4) *abs_qk = fmax(*abs_qk, fabs(got[j]));
        }
        worst[i] = scale > 0 ? err / scale : err;
        if (i == 8 && !written(got, c.n[i])) worst[i] = INFINITY;      /* a stub's zeros */
    }
    for (int i = 0; i < 9; i++) free(c.p[i]), free(fd[i]);
    free(vis);
    saved_free(&s);
    for (int i = 0; i < 8; i++) tensor_free(gw[i]);
    tensor_free(&dout); tensor_free(&dx); tensor_free(&ds);
    tensors_close(&list, &(Args){0});
}

static const char *const names[9] = { "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                                      "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias", "X" };

/* Heads of two numbers, three groups of two query heads, padding of lengths 5, 3 with
 * --causal on top, q and k weights x3 (maps far from uniform). */
static void test_odd_shape(void) {
    int B = 2, T = 5, len[2] = { 5, 3 };
    Tensor pad = tensor_new(4, (int[]){ B, 1, 1, T });
    for (int b = 0; b < B; b++)
        for (int s = 0; s < T; s++) pad.data[b * T + s] = s < len[b];
    mask_final(&pad, 1, T, T);                                  /* (B, 1, T, T) */
    double worst[9], qk, most = 0;
    int at = 0;
    run_case(worst, &qk, B, T, 12, 6, 3, 4403, 3.0f, &pad);
    for (int i = 0; i < 9; i++) if (!(worst[i] <= most)) most = worst[i], at = i;
    ok(most <= 1e-3, "(B, T, D, H, G) = (2, 5, 12, 6, 3), padding and --causal, q and k weights x3: every gradient "
       "matches central differences of a double reference within 1e-3 of its layer's largest (%.2g, %s)", most,
       names[at]);
    tensor_free(&pad);
}

/* One position: each softmax has one key, weight 1 whatever its score, so q_proj and
 * k_proj learn nothing, and v_proj, o_proj and X learn as from a plain linear map. */
static void test_one_position(void) {
    double worst[9], qk, most = 0;
    int at = 4;
    run_case(worst, &qk, 3, 1, 8, 4, 2, 4404, 1.0f, NULL);
    for (int i = 4; i < 9; i++) if (!(worst[i] <= most)) most = worst[i], at = i;
    ok(most <= 1e-3, "(B, T, D, H, G) = (3, 1, 8, 4, 2): v_proj's, o_proj's and X's gradients match central "
       "differences within 1e-3 of their layer's largest (%.2g, %s)", most, names[at]);
    ok(qk <= 1e-7, "one position: every gradient of q_proj and k_proj is 0 within 1e-7 (%.2g): a softmax over one "
       "key passes nothing back", qk);
}

int main(void) {
    (void)backward_tensors; (void)read_dout; (void)backward_print; (void)lean_difference;
    EXERCISE("11.6", 2, test_hidden_entries());
    EXERCISE("11.6", 3, test_one_hot());
    EXERCISE("11.6", 1, test_odd_shape());
    EXERCISE("11.6", 2, test_one_position());
    done_testing();
    return exit_status();
}
