/* Tests for chapter 11: the backward pass of GroupedQueryAttention (mha_backward).
 *
 * mha_backward.c is included with TESTING defined. The reference is the forward
 * pass of tests/reference.h with the weights in double, one query head at a time
 * (head h reads key/value head h / (H/G), as repeat_interleave pairs them; a
 * hidden key is left out of its row's softmax), and the loss L = sum(out * dout). Central
 * differences of L in double, for every entry of every parameter and of X, are
 * what the float gradients of gqa_backward must match. Other tests check what
 * the chapter says of the gradients without any reference (rows of dscores sum
 * to 0, k_proj's bias learns nothing, a shared head's gradient is the sum over
 * its group), the fully hidden row under -inf, the lean pass, the program as a
 * reader runs it, and its figure's case.
 *
 * Exercise 11.6 is the body of softmax_backward: every test that goes through it
 * sits in EXERCISE("11.6", ...), each call into gqa_backward (and into
 * forward_keep, whose passes 3-6 are Exercise 6.7's) inside STUDENT(...), so
 * that in a handout each test fails, or is skipped, under its own name. */
#define TESTING
#include "mha_backward.c"
#include "tap.h"
#include "run.h"
#define MODULE_GQA
#include "reference.h"

/* ---- cases: a module and its input, as gqa makes them from a seed --------------- */

/* A module and X drawn from a seed by tests/reference.h's make_module (its
 * free_module frees a module's weights, and the gradients made below). */
static void make_case(GQA *m, Tensor *x, int B, int T, int D, int H, int G, uint64_t seed) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .kv_heads = G, .seed = seed };
    make_module(m, x, &a);
}

/* Zeroed gradients, one tensor the shape of each weight of m (as lean_difference makes them). */
static void new_grads(GQA *grad, GQA *m) {
    Tensor *w[8], *g[8];
    *grad = (GQA){ .dim = m->dim, .heads = m->heads, .kv_heads = m->kv_heads };
    gqa_weights(m, w);
    gqa_weights(grad, g);
    for (int i = 0; i < 8; i++) *g[i] = tensor_new(w[i]->ndim, w[i]->shape);
}

/* dout (B, T, D), uniform in [-1, 1), as the program draws it. */
static Tensor make_dout(int B, int T, int D, uint64_t seed) {
    Tensor d = tensor_new3(B, T, D);
    Rng r;
    rng_seed(&r, seed);
    rand_uniform(d.data, d.size, -1.0f, 1.0f, &r);
    return d;
}

/* (B, 1, 1, T): sequence b sees its first len[b] keys. */
static Tensor padding(int B, int T, const int *len) {
    Tensor pad = tensor_new(4, (int[]){ B, 1, 1, T });
    for (int b = 0; b < B; b++)
        for (int s = 0; s < T; s++) pad.data[b * T + s] = s < len[b];
    return pad;
}

/* vis (B, H, T, T) from a mask of any shape that broadcasts to it (NULL: all 1). */
static void expand(float *vis, const Tensor *mask, int B, int H, int T) {
    ref_expand(vis, mask, 4, (int[]){ B, H, T, T });
}

/* 1 if any of the n numbers is not 0: a pass stopped at a stub (in a handout) leaves
 * its outputs zero, and two such runs agree to no purpose. */
static int written(const float *a, long n) {
    for (long i = 0; i < n; i++) if (a[i] != 0.0f) return 1;
    return 0;
}

static int same_floats(const float *a, const float *b, long n) { return memcmp(a, b, (size_t)n * sizeof(float)) == 0; }

/* |a - b| <= atol for each of n numbers. */
static int same_close(const float *a, const float *b, long n, double atol) {
    for (long i = 0; i < n; i++) if (!(fabs((double)a[i] - b[i]) <= atol)) return 0;
    return 1;
}

/* ---- an independent reference, in double precision ------------------------------ */

/* The nine tensors a loss depends on, in GQA's order, then X; p[i] holds n[i] numbers. */
enum { NPARAM = 9 };
static const char *const param_names[NPARAM] = {
    "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias", "v_proj.weight",
    "v_proj.bias", "o_proj.weight", "o_proj.bias", "X",
};
typedef struct Params { double *p[NPARAM]; long n[NPARAM]; } Params;

static Params params_of(GQA *m, const Tensor *x) {
    Tensor *w[8];
    Params P;
    gqa_weights(m, w);
    for (int i = 0; i < NPARAM; i++) {
        const Tensor *t = i < 8 ? w[i] : x;
        P.n[i] = t->size;
        P.p[i] = malloc(sizeof(double) * (size_t)t->size);
        for (long j = 0; j < t->size; j++) P.p[i][j] = t->data[j];
    }
    return P;
}

static void params_free(Params *P) {
    for (int i = 0; i < NPARAM; i++) free(P->p[i]);
}

/* GQA in double, by tests/reference.h's steps with the weights in double: out
 * (B, T, D). vis (B, H, T, T): 0 hides a key; a row that sees no key gets NaN, as
 * -inf makes it. If lse is not NULL, each row's log-sum-exp (B, H, T) of its
 * visible scaled scores (NaN for a row with none). */
static void ref_forward(double *out, double *lse, const Params *P, const float *vis, int B, int T, int D, int H,
                        int G) {
    int hd = D / H, W = G * hd;
    long BT = (long)B * T;
    RefAttn a = { .B = B, .T = T, .H = H, .G = G, .hd = hd, .vis = vis, .hide = REF_FILL_INF };
    double *q = ref_new(BT * D), *k = ref_new(BT * W), *v = ref_new(BT * W), *mixed = ref_new(BT * D);
    double *att = ref_new(BT * H * T);
    ref_linear64(q, P->p[8], P->p[0], P->p[1], BT, D, D);
    ref_linear64(k, P->p[8], P->p[2], P->p[3], BT, D, W);
    ref_linear64(v, P->p[8], P->p[4], P->p[5], BT, D, W);
    ref_scores(att, q, k, &a);
    for (long r = 0; lse && r < BT * H; r++) {            /* torch.logsumexp over the visible keys */
        double top = -INFINITY, sum = 0;
        for (int s = 0; s < T; s++) if (vis[r * T + s]) top = fmax(top, att[r * T + s]);
        for (int s = 0; s < T; s++) if (vis[r * T + s]) sum += exp(att[r * T + s] - top);
        lse[r] = top == -INFINITY ? NAN : top + log(sum);
    }
    ref_softmax(att, &a);
    ref_mix(mixed, att, v, &a);
    ref_linear64(out, mixed, P->p[6], P->p[7], BT, D, D);
    free(q); free(k); free(v); free(mixed); free(att);
}

/* L = sum(out * dout), in double. */
static double ref_loss(const Params *P, const float *vis, const float *dout, int B, int T, int D, int H, int G) {
    long n = (long)B * T * D;
    double *out = malloc(sizeof(double) * n), L = 0;
    ref_forward(out, NULL, P, vis, B, T, D, H, G);
    for (long i = 0; i < n; i++) L += out[i] * dout[i];
    free(out);
    return L;
}

/* The step of the central differences: the truncation error falls as h^2, the
 * rounding error grows as 1e-16 |L| / h; at h = 1e-4 both are near 1e-9 of the
 * largest gradient (tests/test_backward64.c measures the steps around it against the
 * double kernels), a thousandth of what float's gradients are allowed here. */
#define FD_STEP 1e-4

/* fd[i] (P->n[i] each): dL/dp by central differences, for every entry of every tensor. */
static void differences(double *fd[NPARAM], Params *P, const float *vis, const float *dout, int B, int T, int D,
                        int H, int G) {
    for (int i = 0; i < NPARAM; i++) {
        fd[i] = malloc(sizeof(double) * (size_t)P->n[i]);
        for (long j = 0; j < P->n[i]; j++) {
            double keep = P->p[i][j];
            P->p[i][j] = keep + FD_STEP;
            double up = ref_loss(P, vis, dout, B, T, D, H, G);
            P->p[i][j] = keep - FD_STEP;
            double down = ref_loss(P, vis, dout, B, T, D, H, G);
            P->p[i][j] = keep;
            fd[i][j] = (up - down) / (2 * FD_STEP);
        }
    }
}

/* The float gradients of a run, in the order of param_names. */
static void grads_of(const float *g[NPARAM], GQA *grad, const Tensor *dx) {
    Tensor *w[8];
    gqa_weights(grad, w);
    for (int i = 0; i < 8; i++) g[i] = w[i]->data;
    g[8] = dx->data;
}

/* The largest |got - want| of tensor i over the largest |want| of its layer (a weight
 * and its bias are one layer; X is one alone), so that a gradient that is 0 on paper
 * (k_proj.bias) is measured against its weight's. NaN counts as infinitely far. */
static double relative_error(const float *got, const double *want[NPARAM], const long n[NPARAM], int i) {
    double scale = 0, worst = 0;
    int first = i < 8 ? i & ~1 : 8, last = i < 8 ? first + 1 : 8;
    for (int l = first; l <= last; l++)
        for (long j = 0; j < n[l]; j++) scale = fmax(scale, fabs(want[l][j]));
    for (long j = 0; j < n[i]; j++) {
        double d = fabs(got[j] - want[i][j]);
        worst = isnan(d) ? INFINITY : fmax(worst, d);
    }
    return scale > 0 ? worst / scale : worst;
}

/* ---- running the passes ------------------------------------------------------------ */

/* One run of the plain pass: the forward pass keeping att, then gqa_backward. */
typedef struct Run {
    GQA grad;                         /* every weight's gradient */
    Tensor dx, ds, att, out;          /* (B, T, D), (B, H, T, T), (B, H, T, T), (B, T, D) */
} Run;

/* Both calls are a student's (Exercise 6.7 in forward_keep, 11.6 in gqa_backward): in a
 * handout a stub leaves the gradients at zero, and the tests that read them fail by name. */
static Run run_plain(GQA *m, const Tensor *x, const Tensor *dout, const Tensor *mask, int B, int T) {
    int D = m->dim, H = m->heads;
    Run r = { .dx = tensor_new3(B, T, D), .ds = tensor_new(4, (int[]){ B, H, T, T }),
              .att = tensor_new(4, (int[]){ B, H, T, T }), .out = tensor_new3(B, T, D) };
    Saved s = {0};
    new_grads(&r.grad, m);
    STUDENT(s = forward_keep(r.out.data, r.att.data, m, x->data, mask, B, T));
    if (s.merged.data)
        STUDENT(gqa_backward(&r.grad, r.dx.data, r.ds.data, m, &s, x->data, dout->data, mask, B, T));
    saved_free(&s);
    return r;
}

/* The lean pass: forward_keep without att (each row's lse instead), then gqa_backward. */
static Run run_lean(GQA *m, const Tensor *x, const Tensor *dout, const Tensor *mask, int B, int T) {
    int D = m->dim;
    Run r = { .dx = tensor_new3(B, T, D), .out = tensor_new3(B, T, D) };
    new_grads(&r.grad, m);
    Saved s = forward_keep(r.out.data, NULL, m, x->data, mask, B, T);
    gqa_backward(&r.grad, r.dx.data, NULL, m, &s, x->data, dout->data, mask, B, T);
    saved_free(&s);
    return r;
}

static void run_free(Run *r) {
    free_module(&r->grad);
    tensor_free(&r->dx); tensor_free(&r->ds); tensor_free(&r->att); tensor_free(&r->out);
}

/* The largest |entry| of every gradient of a run (its weights' and X's). */
static double largest_gradient(Run *r) {
    const float *g[NPARAM];
    Tensor *w[8];
    double most = 0;
    grads_of(g, &r->grad, &r->dx);
    gqa_weights(&r->grad, w);
    for (int i = 0; i < NPARAM; i++)
        for (long j = 0; j < (i < 8 ? w[i]->size : r->dx.size); j++) most = fmax(most, fabs(g[i][j]));
    return most;
}

/* ---- finite differences ------------------------------------------------------------- */

/* One test: every gradient of run r against central differences of the reference.
 * Returns the worst relative error. */
static double check_differences(const char *what, Run *r, GQA *m, const Tensor *x, const Tensor *dout,
                                const Tensor *mask, int B, int T, double limit) {
    int D = m->dim, H = m->heads, G = m->kv_heads;
    float *vis = malloc(sizeof(float) * (size_t)B * H * T * T);
    expand(vis, mask, B, H, T);
    Params P = params_of(m, x);
    double *fd[NPARAM], err[NPARAM], worst = 0;
    const float *g[NPARAM];
    differences(fd, &P, vis, dout->data, B, T, D, H, G);
    grads_of(g, &r->grad, &r->dx);
    int at = 0;
    long entries = 0;
    for (int i = 0; i < NPARAM; i++) {
        err[i] = relative_error(g[i], (const double **)fd, P.n, i);
        if (err[i] > worst || isnan(err[i])) worst = err[i], at = i;
        entries += P.n[i];
    }
    if (ok(worst <= limit, "%s: all %ld entries of the 8 parameters' and X's gradients match central differences of "
           "a double reference within %g of the largest of their layer", what, entries, limit))
        printf("#   worst relative error %.2g (%s.grad)\n", worst, param_names[at]);
    else if (!tap_stub[0])                      /* after a stub the test was skipped, or failed by it */
        for (int i = 0; i < NPARAM; i++) diag("  %-14s relative error %.3g", param_names[i], err[i]);
    for (int i = 0; i < NPARAM; i++) free(fd[i]);
    params_free(&P);
    free(vis);
    return worst;
}

/* T = 5 against H = 4: with T = H, split_heads and merge_heads are the same move, and
 * passes 7 and 2 back could take either one unseen. */
static const struct FdCase { int B, T, D, H, G, mask; const char *what; } fd_cases[] = {
    { 2, 5, 8, 4, 1, 0, "(B, T, D, H) = (2, 5, 8, 4), G = 1 (MQA), no mask" },
    { 2, 5, 8, 4, 2, 0, "G = 2, no mask" },
    { 2, 5, 8, 4, 4, 0, "G = 4 (MHA), no mask" },
    { 2, 5, 8, 4, 1, 1, "G = 1, causal" },
    { 2, 5, 8, 4, 2, 1, "G = 2, causal" },
    { 2, 5, 8, 4, 4, 1, "G = 4, causal" },
    { 2, 5, 8, 4, 1, 2, "G = 1, a (B, 1, 1, T) padding mask, lengths 5 and 2" },
    { 2, 5, 8, 4, 2, 2, "G = 2, padding" },
    { 2, 5, 8, 4, 4, 2, "G = 4, padding" },
    { 2, 5, 12, 6, 2, 3, "(2, 5, 12), H = 6, G = 2, a scattered (B, 1, T, T) mask" },
};

/* The mask of a case: none, causal (T, T), padding (B, 1, 1, T), or scattered
 * (B, 1, T, T) with each query seeing at least itself. */
static Tensor case_mask(int kind, int B, int T, unsigned salt) {
    Tensor mask = {0};
    if (kind == 1) mask_final(&mask, 1, T, T);
    if (kind == 2) mask = padding(B, T, (int[]){ T, 2, 3, 1 });
    if (kind == 3) {
        mask = tensor_new(4, (int[]){ B, 1, T, T });
        for (long i = 0; i < mask.size; i++) mask.data[i] = ref_pattern(i, salt);
        for (long r = 0; r < mask.size / T; r++) mask.data[r * T + r % T] = 1;
    }
    return mask;
}

static void test_against_differences(void) {
    int n = (int)(sizeof fd_cases / sizeof fd_cases[0]);
    double worst = 0;
    for (int c = 0; c < n; c++) {
        const struct FdCase *k = &fd_cases[c];
        GQA m = {0};
        Tensor x, dout = make_dout(k->B, k->T, k->D, 500 + c), mask = case_mask(k->mask, k->B, k->T, 7 + c);
        make_case(&m, &x, k->B, k->T, k->D, k->H, k->G, 100 + c);
        const Tensor *mk = mask.data ? &mask : NULL;
        Run r = run_plain(&m, &x, &dout, mk, k->B, k->T);
        worst = fmax(worst, check_differences(k->what, &r, &m, &x, &dout, mk, k->B, k->T, 1e-3));
        run_free(&r);
        tensor_free(&x); tensor_free(&dout); tensor_free(&mask);
        free_module(&m);
    }
    if (!tap_stub[0]) printf("#   worst over the %d cases: %.2g (limit 1e-3)\n", n, worst);
}

/* ---- what the gradients must be, with no reference --------------------------------- */

/* Three tests per case (two without a mask): the rows of scores.grad sum to 0, hidden
 * scores get exactly 0, and k_proj.bias.grad is 0 to rounding.
 *
 * Why k_proj's bias learns nothing: the key of position s is k_s = W_k x_s + b_k, so
 * the score of query t against it is alpha q_t . W_k x_s + alpha q_t . b_k, and the
 * second term is the same for every key s of row t. The softmax does not change when a
 * whole row moves by one number, so neither does anything after it: L does not depend
 * on b_k at all. In the backward pass that is dk_b = sum_s dk_s =
 * alpha sum_t q_t sum_s dscores[t][s], which is 0 because each row of dscores sums to 0.
 * (A hidden key's score is -inf whatever b_k adds, so masks change nothing.) */
static void check_properties(const char *what, int mask_kind, int G, uint64_t seed) {
    int B = 2, T = 5, D = 12, H = 6;
    GQA m = {0};
    Tensor x, dout = make_dout(B, T, D, seed + 1), mask = case_mask(mask_kind, B, T, 3);
    make_case(&m, &x, B, T, D, H, G, seed);
    const Tensor *mk = mask.data ? &mask : NULL;
    Run r = run_plain(&m, &x, &dout, mk, B, T);
    long rows = (long)B * H * T, leaked = 0, hidden = 0;
    float *vis = malloc(sizeof(float) * (size_t)rows * T);
    expand(vis, mk, B, H, T);
    double worst = 0, largest = 0;
    for (long row = 0; row < rows; row++) {
        double sum = 0;
        for (int s = 0; s < T; s++) {
            float d = r.ds.data[row * T + s];
            sum += d, largest = fmax(largest, fabs(d));
            if (!vis[row * T + s]) hidden++, leaked += d != 0.0f;
        }
        worst = fmax(worst, fabs(sum));
    }
    ok(largest > 0 && worst <= 1e-6, "%s: each of the %ld rows of scores.grad sums to 0 within 1e-6 (worst %.2g, "
       "largest entry %.3g)", what, rows, worst, largest);
    if (mk) {
        ok(largest > 0 && leaked == 0, "%s: all %ld hidden scores get exactly 0 gradient", what, hidden);
        if (leaked) diag("%ld hidden scores got a gradient", leaked);
    }
    double kb = 0, kw = 0;
    for (long i = 0; i < r.grad.k_b.size; i++) kb = fmax(kb, fabs(r.grad.k_b.data[i]));
    for (long i = 0; i < r.grad.k_w.size; i++) kw = fmax(kw, fabs(r.grad.k_w.data[i]));
    ok(kw > 0 && kb <= 1e-5 * kw, "%s: k_proj.bias.grad is 0 to rounding: largest %.2g, at most 1e-5 of "
       "k_proj.weight.grad's largest %.3g", what, kb, kw);
    free(vis);
    run_free(&r);
    tensor_free(&x); tensor_free(&dout); tensor_free(&mask);
    free_module(&m);
}

/* GQA's key and value heads are shared: their gradients must be the sums, over each
 * group, of the gradients the R copies would get if repeat_interleave had made them
 * (an MHA with G' = H): checked by running gqa_backward on both, no reference. */
static void test_group_sums(void) {
    int B = 2, T = 5, D = 12, H = 6, G = 2, hd = 2, R = 3;
    GQA m = {0}, rep = { .dim = D, .heads = H, .kv_heads = H };
    Tensor x, dout = make_dout(B, T, D, 77), causal = {0};
    make_case(&m, &x, B, T, D, H, G, 12);
    mask_final(&causal, 1, T, T);
    rep.q_w = tensor_new2(D, D); rep.q_b = tensor_new1(D); rep.o_w = tensor_new2(D, D); rep.o_b = tensor_new1(D);
    memcpy(rep.q_w.data, m.q_w.data, sizeof(float) * D * D); memcpy(rep.q_b.data, m.q_b.data, sizeof(float) * D);
    memcpy(rep.o_w.data, m.o_w.data, sizeof(float) * D * D); memcpy(rep.o_b.data, m.o_b.data, sizeof(float) * D);
    rep.k_w = tensor_new2(D, D); rep.k_b = tensor_new1(D); rep.v_w = tensor_new2(D, D); rep.v_b = tensor_new1(D);
    for (int h = 0; h < H; h++) {                              /* head h <- kv head h / R */
        int g = h / R;
        memcpy(rep.k_w.data + h * hd * D, m.k_w.data + g * hd * D, sizeof(float) * hd * D);
        memcpy(rep.v_w.data + h * hd * D, m.v_w.data + g * hd * D, sizeof(float) * hd * D);
        memcpy(rep.k_b.data + h * hd, m.k_b.data + g * hd, sizeof(float) * hd);
        memcpy(rep.v_b.data + h * hd, m.v_b.data + g * hd, sizeof(float) * hd);
    }
    Run a = run_plain(&m, &x, &dout, &causal, B, T), b = run_plain(&rep, &x, &dout, &causal, B, T);
    /* the copies' gradients, summed over each group: (G*hd, D) and (G*hd) */
    Tensor kw = tensor_new2(G * hd, D), kb = tensor_new1(G * hd), vw = tensor_new2(G * hd, D), vb = tensor_new1(G * hd);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < hd; i++) {
            int to = (h / R) * hd + i, from = h * hd + i;
            kb.data[to] += b.grad.k_b.data[from];
            vb.data[to] += b.grad.v_b.data[from];
            for (int j = 0; j < D; j++) {
                kw.data[to * D + j] += b.grad.k_w.data[from * D + j];
                vw.data[to * D + j] += b.grad.v_w.data[from * D + j];
            }
        }
    double scale = largest_gradient(&a);
    close_ok(a.grad.k_w.data, kw.data, kw.size, 1e-6 * scale, 0, "k_proj.weight.grad of G = 2 is the sum "
                     "over each group of its R = 3 copies' in the repeat_interleaved G = H = 6 (to 1e-6 of the "
                     "largest gradient)");
    close_ok(a.grad.k_b.data, kb.data, kb.size, 1e-6 * scale, 0, "k_proj.bias.grad: the same sum");
    close_ok(a.grad.v_w.data, vw.data, vw.size, 1e-6 * scale, 0, "v_proj.weight.grad: the same sum");
    close_ok(a.grad.v_b.data, vb.data, vb.size, 1e-6 * scale, 0, "v_proj.bias.grad: the same sum");
    ok(written(a.dx.data, a.dx.size) && same_close(a.grad.q_w.data, b.grad.q_w.data, a.grad.q_w.size, 1e-6 * scale) &&
       same_close(a.grad.q_b.data, b.grad.q_b.data, a.grad.q_b.size, 1e-6 * scale) &&
       same_close(a.grad.o_w.data, b.grad.o_w.data, a.grad.o_w.size, 1e-6 * scale) &&
       same_close(a.grad.o_b.data, b.grad.o_b.data, a.grad.o_b.size, 1e-6 * scale) &&
       same_close(a.dx.data, b.dx.data, a.dx.size, 1e-6 * scale),
       "q_proj's, o_proj's and X's gradients are the repeat_interleaved module's (to 1e-6 of the largest)");
    tensor_free(&kw); tensor_free(&kb); tensor_free(&vw); tensor_free(&vb);
    run_free(&a); run_free(&b);
    tensor_free(&x); tensor_free(&dout); tensor_free(&causal);
    free_module(&m); free_module(&rep);
}

/* ---- a row that sees no key, under -inf ----------------------------------------------- */

/* In the (B, H, T, T) mask below, query 3 of head 2 in sequence 1 sees nothing: its
 * weights are NaN (0/0), as PyTorch's. What each gradient then holds, as the chapter's
 * pass 4 back says and tests/pytorch/mha_backward.py checks against autograd. */
enum { HB = 1, HH = 2, HT = 3 };            /* the hidden row: sequence, head, query */

static Tensor hidden_row_mask(int B, int H, int T) {
    Tensor mask = tensor_new(4, (int[]){ B, H, T, T });
    for (long i = 0; i < mask.size; i++) mask.data[i] = 1;
    for (int s = 0; s < T; s++) mask.data[(((long)HB * H + HH) * T + HT) * T + s] = 0;
    return mask;
}

static int all_finite(const float *a, long n) {
    for (long i = 0; i < n; i++) if (!isfinite(a[i])) return 0;
    return 1;
}

/* w (rows, cols) is NaN exactly where rows [r0, r1) and columns [c0, c1) meet. */
static int nan_exactly(const Tensor *w, int r0, int r1, int c0, int c1) {
    int rows = w->ndim == 2 ? w->shape[0] : (int)w->size, cols = w->ndim == 2 ? w->shape[1] : 1;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            if ((isnan(w->data[(long)r * cols + c]) != 0) != (r >= r0 && r < r1 && c >= c0 && c < c1)) return 0;
    return 1;
}

static void test_fully_hidden_row(void) {
    int B = 2, T = 4, D = 8, H = 4, G = 2, hd = 2, g = HH / (H / G);
    GQA m = {0};
    Tensor x, dout = make_dout(B, T, D, 31), mask = hidden_row_mask(B, H, T);
    make_case(&m, &x, B, T, D, H, G, 30);
    Run r = run_plain(&m, &x, &dout, &mask, B, T);
    int zero = 1, finite = 1;
    for (long i = 0; i < r.ds.size; i++) {
        long row = i / T;
        if (row == ((long)HB * H + HH) * T + HT) zero &= r.ds.data[i] == 0.0f;
        else finite &= isfinite(r.ds.data[i]) != 0;
    }
    ok(written(r.ds.data, r.ds.size) && zero && finite, "a row that sees no key (sequence 1, head 2, query 3) under "
       "-inf: its scores.grad is exactly 0, not NaN (pass 4 back), and every other entry is finite");
    ok(written(r.grad.q_w.data, r.grad.q_w.size) && all_finite(r.grad.q_w.data, r.grad.q_w.size) &&
       all_finite(r.grad.q_b.data, r.grad.q_b.size) && all_finite(r.grad.k_w.data, r.grad.k_w.size) &&
       all_finite(r.grad.k_b.data, r.grad.k_b.size),
       "q_proj's and k_proj's gradients are finite: through the scores the row passes back nothing");
    ok(written(r.grad.v_w.data, r.grad.v_w.size) && nan_exactly(&r.grad.v_w, g * hd, g * hd + hd, 0, D) &&
       nan_exactly(&r.grad.v_b, g * hd, g * hd + hd, 0, 1),
       "v_proj.weight.grad and .bias.grad are NaN in the %d rows of key/value head %d, the row's group, and "
       "finite in the other group's: the NaN weights reach dv in pass 6 back", hd, g);
    ok(written(r.grad.o_w.data, r.grad.o_w.size) && nan_exactly(&r.grad.o_w, 0, D, HH * hd, HH * hd + hd) &&
       all_finite(r.grad.o_b.data, r.grad.o_b.size),
       "o_proj.weight.grad is NaN in the %d columns of head %d (o_proj's input, merged, is NaN there) and only "
       "there; o_proj.bias.grad is finite", hd, HH);
    int nan_seq = 1, other = 1;
    for (long i = 0; i < r.dx.size; i++) {
        if (i / ((long)T * D) == HB) nan_seq &= isnan(r.dx.data[i]) != 0;
        else other &= isfinite(r.dx.data[i]) != 0;
    }
    ok(nan_seq && other, "X.grad is NaN in all %d entries of sequence %d (through v_proj) and finite in the other "
       "sequence", T * D, HB);
    /* sequence 0 alone: its X.grad is computed from its own rows only */
    Tensor x0 = tensor_new3(1, T, D), d0 = tensor_new3(1, T, D), m0 = tensor_new(4, (int[]){ 1, H, T, T });
    memcpy(x0.data, x.data, sizeof(float) * x0.size);
    memcpy(d0.data, dout.data, sizeof(float) * d0.size);
    memcpy(m0.data, mask.data, sizeof(float) * m0.size);
    Run alone = run_plain(&m, &x0, &d0, &m0, 1, T);
    ok(written(alone.dx.data, alone.dx.size) && same_floats(alone.dx.data, r.dx.data, alone.dx.size),
       "the other sequence's X.grad is exactly what that sequence alone gives, bit for bit: the NaN stays in its "
       "own sequence");
    run_free(&alone);
    tensor_free(&x0); tensor_free(&d0); tensor_free(&m0);
    run_free(&r);
    tensor_free(&x); tensor_free(&dout); tensor_free(&mask);
    free_module(&m);
}

/* ---- the lean pass --------------------------------------------------------------------- */

/* The lean forward pass alone (no softmax_backward in it): what it keeps, its output,
 * and each row's log-sum-exp, against the double reference. */
static void test_lean_forward(void) {
    int B = 2, T = 5, D = 12, H = 6, G = 3;
    GQA m = {0};
    Tensor x, causal = {0}, out = tensor_new3(B, T, D);
    make_case(&m, &x, B, T, D, H, G, 61);
    mask_final(&causal, 1, T, T);
    Saved s = forward_keep(out.data, NULL, &m, x.data, &causal, B, T);
    ok(s.merged.data && !s.att && s.lse.ndim == 3 && s.lse.shape[0] == B && s.lse.shape[1] == H &&
       s.lse.shape[2] == T && s.lse.size == (long)B * H * T,
       "the lean forward pass keeps no att, and lse (B, H, T): %d numbers where att has %d", B * H * T, B * H * T * T);
    float *vis = malloc(sizeof(float) * (size_t)B * H * T * T);
    expand(vis, &causal, B, H, T);
    Params P = params_of(&m, &x);
    double *rout = malloc(sizeof(double) * out.size), *rlse = malloc(sizeof(double) * B * H * T);
    ref_forward(rout, rlse, &P, vis, B, T, D, H, G);
    close_ok(out.data, rout, out.size, 1e-5, 0, "its output matches the double reference, causal, H = 6, G = 3");
    if (s.lse.data) close_ok(s.lse.data, rlse, s.lse.size, 1e-5, 0, "each row's lse is the log-sum-exp of the row's "
                             "visible scaled scores (double reference)");
    else ok(0, "each row's lse is the log-sum-exp of the row's visible scaled scores (double reference)");
    free(rout); free(rlse); free(vis);
    params_free(&P);
    saved_free(&s);
    tensor_free(&x); tensor_free(&causal); tensor_free(&out);
    free_module(&m);
}

/* The lean backward pass computes every weight again, with no softmax_backward: it is
 * checked against the differences on its own, then for the fully hidden row. */
static void test_lean_backward(void) {
    const int picks[] = { 7, 9, 3 };
    for (int i = 0; i < 3; i++) {
        const struct FdCase *k = &fd_cases[picks[i]];
        char what[200];
        GQA m = {0};
        Tensor x, dout = make_dout(k->B, k->T, k->D, 700 + i), mask = case_mask(k->mask, k->B, k->T, 11 + i);
        make_case(&m, &x, k->B, k->T, k->D, k->H, k->G, 200 + i);
        const Tensor *mk = mask.data ? &mask : NULL;
        Run r = run_lean(&m, &x, &dout, mk, k->B, k->T);
        snprintf(what, sizeof what, "the lean pass, %s", k->what);
        check_differences(what, &r, &m, &x, &dout, mk, k->B, k->T, 1e-3);
        run_free(&r);
        tensor_free(&x); tensor_free(&dout); tensor_free(&mask);
        free_module(&m);
    }
    int B = 2, T = 4, D = 8, H = 4, G = 2, hd = 2;
    GQA m = {0};
    Tensor x, dout = make_dout(B, T, D, 31), mask = hidden_row_mask(B, H, T);
    make_case(&m, &x, B, T, D, H, G, 30);
    Run r = run_lean(&m, &x, &dout, &mask, B, T);
    ok(written(r.dx.data, r.dx.size) && all_finite(r.grad.q_w.data, r.grad.q_w.size) &&
       all_finite(r.grad.q_b.data, r.grad.q_b.size) && all_finite(r.grad.k_w.data, r.grad.k_w.size) &&
       all_finite(r.grad.k_b.data, r.grad.k_b.size) && all_finite(r.grad.v_w.data, r.grad.v_w.size) &&
       all_finite(r.grad.v_b.data, r.grad.v_b.size) && all_finite(r.dx.data, r.dx.size),
       "the lean pass skips the row that sees no key: the gradients of q_proj, k_proj, v_proj and X are all finite");
    ok(nan_exactly(&r.grad.o_w, 0, D, HH * hd, HH * hd + hd) && all_finite(r.grad.o_b.data, r.grad.o_b.size),
       "the lean pass's o_proj.weight.grad is still NaN in head %d's columns: the row's output, o_proj's input, "
       "is NaN in the forward pass", HH);
    run_free(&r);
    tensor_free(&x); tensor_free(&dout); tensor_free(&mask);
    free_module(&m);
}

/* The lean pass against the plain one, through the program's own lean_difference. */
static void test_lean_against_plain(void) {
    static const struct { int B, T, D, H, G, mask; const char *what; } cases[] = {
        { 1, 4, 8, 4, 2, 0, "the default case, H = 4, G = 2" },
        { 2, 5, 12, 6, 3, 1, "(2, 5, 12), H = 6, G = 3, causal" },
        { 2, 6, 16, 4, 1, 2, "G = 1 (MQA), padding" },
        { 3, 5, 16, 4, 4, 3, "G = H = 4 (MHA), a scattered (B, 1, T, T) mask" },
        { 2, 7, 24, 8, 2, 1, "H = 8, G = 2, causal" },
    };
    for (int c = 0; c < 5; c++) {
        GQA m = {0};
        Tensor x, dout = make_dout(cases[c].B, cases[c].T, cases[c].D, 900 + c);
        Tensor mask = case_mask(cases[c].mask, cases[c].B, cases[c].T, 20 + c);
        make_case(&m, &x, cases[c].B, cases[c].T, cases[c].D, cases[c].H, cases[c].G, 40 + c);
        const Tensor *mk = mask.data ? &mask : NULL;
        Run r = run_plain(&m, &x, &dout, mk, cases[c].B, cases[c].T);
        double largest = largest_gradient(&r);
        double diff = lean_difference(&m, &r.grad, &r.dx, x.data, dout.data, mk, cases[c].B, cases[c].T);
        ok(largest > 0 && diff <= 1e-5 * largest, "%s: the lean pass's gradients are the plain pass's within 1e-5 of "
           "the largest (%.2g of %.3g)", cases[c].what, diff, largest);
        run_free(&r);
        tensor_free(&x); tensor_free(&dout); tensor_free(&mask);
        free_module(&m);
    }
}

/* ---- the program, as a reader runs it ---------------------------------------------------- */

/* Every file --dump writes beside gqa's, with its shape for the case below:
 * (B, T, D, H, G) = (2, 5, 12, 6, 3), hd = 2. */
static const Written grad_files[] = {
    { "q_proj.weight.grad", 2, { 12, 12 } }, { "q_proj.bias.grad", 1, { 12 } },
    { "k_proj.weight.grad", 2, { 6, 12 } },  { "k_proj.bias.grad", 1, { 6 } },
    { "v_proj.weight.grad", 2, { 6, 12 } },  { "v_proj.bias.grad", 1, { 6 } },
    { "o_proj.weight.grad", 2, { 12, 12 } }, { "o_proj.bias.grad", 1, { 12 } },
    { "X.grad", 3, { 2, 5, 12 } },           { "scores.grad", 4, { 2, 6, 5, 5 } },
    { "dout", 3, { 2, 5, 12 } },
};
enum { NGRAD_FILES = sizeof grad_files / sizeof grad_files[0] };
#define CASE_FLAGS "--batch", "2", "--seq", "5", "--dim", "12", "--heads", "6", "--kv-heads", "3"



/* A case's weights and X, written by the test itself into dir (gqa's file names): a
 * directory to --load that no run of the program had to make. */
static void write_case(const char *dir, int B, int T, int D, int H, int G, uint64_t seed) {
    GQA m = {0};
    Tensor x, *w[8];
    make_case(&m, &x, B, T, D, H, G, seed);
    mkdir(dir, 0777);
    gqa_weights(&m, w);
    for (int i = 0; i < 8; i++) save_npy(dir, param_names[i], w[i]);
    save_npy(dir, "X", &x);
    tensor_free(&x);
    free_module(&m);
}

/* Refusals come before any backward step: no exercise is needed for them. */
static void test_refusals(const char *tmp) {
    char dir[600], never[600];
    snprintf(dir, sizeof dir, "%s/refused", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    write_case(dir, 2, 5, 12, 6, 3, 5);
    Tensor narrow = tensor_new3(2, 5, 11), flat = tensor_new2(10, 12);
    save_npy(dir, "dout", &narrow);
    refuses(program_path("mha_backward"), ARGS("--load", dir, "--heads", "6", "--kv-heads", "3", "--dump", never),
            "dout.npy: dout must be (2, 5, 12), the shape of out, got (2, 5, 11)",
            "a dout.npy of shape (2, 5, 11) is refused with one line naming both shapes");
    save_npy(dir, "dout", &flat);
    refuses(program_path("mha_backward"), ARGS("--load", dir, "--heads", "6", "--kv-heads", "3", "--dump", never),
            "dout.npy: dout must be (2, 5, 12), the shape of out, got (10, 12)",
            "a dout.npy of out's 120 numbers in another shape, (10, 12), is refused too");
    ok(!file_exists(never), "neither refused run wrote anything: the --dump directory was never made");
    refuses(program_path("mha_backward"), ARGS("--load", dir, "--heads", "6", "--dump", never), "--load needs --kv-heads",
            "--load without --kv-heads is refused: k_proj's rows do not say G without H");
    tensor_free(&narrow); tensor_free(&flat);
}

/* The last number printed after `label` in text, or NAN. */
static double number_after(const char *text, const char *label) {
    const char *at = strstr(text, label);
    return at ? strtod(at + strlen(label), NULL) : NAN;
}

static void test_program(const char *tmp) {
    char d1[600], d2[600], d3[600], d4[600], d5[600];
    snprintf(d1, sizeof d1, "%s/one", tmp);
    snprintf(d2, sizeof d2, "%s/two", tmp);
    snprintf(d3, sizeof d3, "%s/no-dout", tmp);
    snprintf(d4, sizeof d4, "%s/drawn", tmp);
    snprintf(d5, sizeof d5, "%s/drawn-again", tmp);
    int status = run("mha_backward", ARGS(CASE_FLAGS, "--causal", "--dump", d1));
    /* kept: qh 120, kh 60, vh 60, merged 120 floats = 1440 bytes; att 300 floats; lse 60 */
    ok(status == 0 && strstr(run_out, "backward of GroupedQueryAttention(dim=12, heads=6, kv_heads=3), "
                                      "loss = (out * dout).sum()") &&
       strstr(run_out, "kept for the backward pass: 2640 bytes, 1200 of them att; the lean pass: 1680"),
       "mha_backward runs and prints what the forward pass kept: qh, kh, vh, merged and att, 2640 bytes, or 1680 "
       "with lse instead of att");
    double lean = number_after(run_out, "lean pass against the plain one: largest difference ");
    ok(status == 0 && lean <= 1e-5, "it prints the lean pass's largest difference from the plain one, under 1e-5 "
       "(%.3g)", lean);
    int shapes = wrote_shapes(d1, grad_files, NGRAD_FILES);
    ok(status == 0 && shapes, "--dump writes dout.npy, scores.grad.npy (B, H, T, T) and one KEY.grad.npy per "
       "parameter and for X, each of its tensor's shape (k_proj.weight.grad (6, 12))");
    mkdir(d1, 0777);                  /* there even after a stub, for the files written below */
    status = run("mha_backward", ARGS("--load", d1, "--heads", "6", "--kv-heads", "3", "--dump", d2, "--quiet"));
    int same = status == 0 && same_npy(d1, d2, "out") && same_npy(d1, d2, "attn");
    for (int i = 0; i < NGRAD_FILES; i++) same &= status == 0 && same_npy(d1, d2, grad_files[i].name);
    ok(same, "--load of that dump, with its dout.npy and its causal mask, gives the same out, attn, dout and "
       "gradients, byte for byte");
    /* the same case without dout.npy: dout is drawn from --seed */
    const char *inputs[] = { "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias", "v_proj.weight",
                             "v_proj.bias", "o_proj.weight", "o_proj.bias", "X", "attention_mask" };
    for (int i = 0; i < 10; i++) {
        Tensor t = load_written(d1, inputs[i]);
        if (t.data) { mkdir(d3, 0777); save_npy(d3, inputs[i], &t); }
        tensor_free(&t);
    }
    status = run("mha_backward", ARGS("--load", d3, "--heads", "6", "--kv-heads", "3", "--dump", d4, "--quiet"));
    Tensor dout = load_written(d4, "dout"), g = load_written(d4, "X.grad");
    int in_range = dout.data != NULL && written(dout.data, dout.size);
    for (long i = 0; in_range && i < dout.size; i++) in_range = dout.data[i] >= -1.0f && dout.data[i] < 1.0f;
    ok(status == 0 && same_shape(&dout, 3, (int[]){ 2, 5, 12 }) && in_range && same_shape(&g, 3, (int[]){ 2, 5, 12 }),
       "without dout.npy in --load's directory the run works: it draws dout (2, 5, 12) in [-1, 1) and writes it");
    status |= run("mha_backward", ARGS("--load", d3, "--heads", "6", "--kv-heads", "3", "--dump", d5, "--quiet"));
    ok(status == 0 && dout.data && same_npy(d4, d5, "dout") && same_npy(d4, d5, "X.grad"),
       "the drawn dout comes from --seed: a second run draws the same dout.npy and gets the same X.grad");
    tensor_free(&dout); tensor_free(&g);
}

/* ---- the chapter's figure: mha_backward --example four-heads ---------------------------- */

/* Its case (chapter 1's sentence, "the cat saw the dog saw the cat"), as the chapter
 * describes it, and where its score gradient goes. */
static void test_four_heads(const char *tmp) {
    char dir[600];
    snprintf(dir, sizeof dir, "%s/four-heads", tmp);
    int status = run("mha_backward", ARGS("--example", "four-heads", "--quiet", "--dump", dir));
    ok(status == 0, "--example four-heads runs and dumps its case");
    Tensor att = load_written(dir, "attn"), ds = load_written(dir, "scores.grad");       /* (1, 4, T, T) */
    int T = sentence_length(SENTENCE), good = status == 0 && att.size == 4 * T * T && ds.size == 4 * T * T;
    double least = good ? 1 : 0, most[4] = {0}, worst_sum = good ? 0 : 1;
    int cats = good;
    for (int t = 1; good && t < T; t++) least = fmin(least, att.data[t * T + t - 1]);
    for (int h = 0; good && h < 4; h++)
        for (int t = 0; t < T; t++) {
            const float *row = ds.data + (h * T + t) * T;
            double sum = 0;
            for (int s = 0; s < T; s++) {
                most[h] = fmax(most[h], fabs(row[s]));
                sum += row[s];
                int cat = s == 1 || s == 7;                     /* keys 1 and 7 hold "cat" */
                if (h == 1 || h == 3) cats &= cat ? row[s] > 0 : row[s] <= 0;
            }
            worst_sum = fmax(worst_sum, fabs(sum));
        }
    ok(good && least >= 0.99, "four-heads: head 0 (the token before, sharp) puts at least 0.99 on key t - 1 in every "
       "row t >= 1 (%.4f)", least);
    double brightest = fmax(fmax(most[0], most[1]), fmax(most[2], most[3]));
    ok(good && most[1] == brightest && fmax(most[0], most[2]) <= 0.025 * brightest &&
       fmax(most[0], most[2]) <= most[3] / 16,
       "four-heads: heads 0 and 2 pass back almost nothing: their largest |scores.grad| (%.2g, %.2g) is at most "
       "2.5%% of the figure's brightest, head 1's (%.3g), and 1/16 of head 3's (%.3g)", most[0], most[2], most[1],
       most[3]);
    int head3 = good;
    for (int t = 0; good && t < T; t++) {
        const float *row = ds.data + (3 * T + t) * T;
        head3 &= fabs(row[1] - row[7]) <= 1e-6;
        for (int s = 0; s < T; s++) head3 &= s == 1 || s == 7 || row[s] < fmin(row[1], row[7]);
    }
    ok(head3, "four-heads: head 3 (all words alike) has its largest score gradient at keys 1 and 7, the cats, in "
       "every row");
    ok(good && cats, "four-heads: heads 1 and 3, the undecided ones, push every row up at the cats (keys 1 and 7) "
       "and down (or not at all) at every other key");
    ok(good && worst_sum <= 1e-6, "four-heads: each of the 32 rows of scores.grad sums to 0 within 1e-6 (%.2g)",
       worst_sum);
    tensor_free(&att); tensor_free(&ds);
}

int main(void) {
    char tmp[] = "/tmp/abh-mha-backward-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    (void)backward_tensors; (void)read_dout; (void)backward_print;     /* tested through the program */

    /* Exercise 11.6 (the body of softmax_backward): every test whose gradients go
     * through it */
    EXERCISE("11.6", 10, test_against_differences());
    EXERCISE("11.6", 2, check_properties("no mask, G = 3", 0, 3, 81));
    EXERCISE("11.6", 3, check_properties("causal, G = 2", 1, 2, 82));
    EXERCISE("11.6", 3, check_properties("padding, G = 1", 2, 1, 83));
    EXERCISE("11.6", 5, test_group_sums());
    EXERCISE("11.6", 6, test_fully_hidden_row());
    EXERCISE("11.6", 5, test_lean_against_plain());
    EXERCISE("11.6", 6, test_program(tmp));
    EXERCISE("11.6", 6, test_four_heads(tmp));
    /* the lean pass, which never calls softmax_backward, and the refusals */
    TEST_GROUP(test_lean_forward());
    TEST_GROUP(test_lean_backward());
    TEST_GROUP(test_refusals(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
