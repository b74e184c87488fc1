/* Tests for chapter 11's backward steps in double precision (build/src/backward64.h).
 *
 * backward64.h holds the chapter's four "Differentiate ..." chunks with real =
 * double, so that the derivation itself is checked without float's rounding in
 * the way: each step alone, and the whole backward pass of a tiny grouped-query
 * attention, against central differences of its loss. The forward pass and the
 * glue between the steps (projections, heads, scores, mask, softmax, weighted sum,
 * output projection, and the index arithmetic of split_heads and merge_heads) are
 * this file's own, written one head at a time: head h reads key/value head
 * h / (H/G), so the steps are called per head and a shared head's gradients add up
 * over its group through the steps' +=. The loss is L = sum(out * dout), and every
 * gradient must match the differences within 1e-7 of the largest of its tensor.
 *
 * softmax_backward is Exercise 11.6: the tests that reach it are grouped under
 * EXERCISE("11.6", ...), each call inside STUDENT(...), so that in a handout (its
 * body a stub) they fail by name. */
#include "backward64.h"
#include "tap.h"
#include "run.h"
#include "reference.h"

/* Central differences with this step: the truncation error falls as h^2 and the
 * rounding error (about 1e-16 |L| / h, against gradients as small as 1e-2) grows as
 * 1/h; at h = 1e-4 both are near 1e-9 of the largest gradient. test_fd_step measures
 * the steps around it. */
#define FD_STEP 1e-4
#define LIMIT 1e-7

/* n numbers uniform in [lo, hi), from r. */
static double *draw(long n, double lo, double hi, Rng *r) {
    double *a = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++) a[i] = lo + (hi - lo) * rng_uniform(r);
    return a;
}

/* 1 if any of the n numbers is not 0: a step stopped at a stub (in a handout) leaves
 * its output zero. */
static int written(const double *a, long n) {
    for (long i = 0; i < n; i++) if (a[i] != 0) return 1;
    return 0;
}

static double *zeros(long n) { return calloc((size_t)n, sizeof(double)); }

/* The largest |got - want| over the largest |want| (over `scale`'s n_scale numbers,
 * if given: a bias measured against its layer's weight). */
static double rel_error(const double *got, const double *want, long n, const double *scale, long n_scale) {
    double worst = 0, most = 0;
    if (!scale) scale = want, n_scale = n;
    for (long i = 0; i < n_scale; i++) most = fmax(most, fabs(scale[i]));
    for (long i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        worst = isnan(d) ? INFINITY : fmax(worst, d);
    }
    return most > 0 ? worst / most : worst;
}

/* ---- a loss and its differences ---------------------------------------------------- */

/* A loss of some tensors, each a pointer to n[i] doubles; ctx is the loss's own. */
typedef struct Loss {
    double (*f)(void *ctx);
    void *ctx;
    int count;
    double *p[10];
    long n[10];
} Loss;

/* fd (n[i] numbers): dL/dp[i] by central differences. */
static double *differences(const Loss *L, int i, double h) {
    double *fd = malloc(sizeof(double) * (size_t)L->n[i]);
    for (long j = 0; j < L->n[i]; j++) {
        double keep = L->p[i][j];
        L->p[i][j] = keep + h;
        double up = L->f(L->ctx);
        L->p[i][j] = keep - h;
        double down = L->f(L->ctx);
        L->p[i][j] = keep;
        fd[j] = (up - down) / (2 * h);
    }
    return fd;
}

/* ---- linear_backward alone ------------------------------------------------------------- */

typedef struct LinearCase { int N, in, out; double *x, *w, *b, *dy; } LinearCase;

/* sum(dy * (x w^T + b)) */
static double linear_loss(void *ctx) {
    LinearCase *c = ctx;
    double L = 0;
    for (int n = 0; n < c->N; n++)
        for (int o = 0; o < c->out; o++) {
            double y = c->b[o];
            for (int i = 0; i < c->in; i++) y += c->x[n * c->in + i] * c->w[o * c->in + i];
            L += c->dy[n * c->out + o] * y;
        }
    return L;
}

/* Every gradient starts at 1, and must end at 1 + the differences: the step adds. */
static void test_linear(void) {
    Rng r;
    rng_seed(&r, 11);
    LinearCase c = { .N = 5, .in = 4, .out = 3 };
    c.x = draw(c.N * c.in, -1, 1, &r), c.w = draw(c.out * c.in, -1, 1, &r), c.b = draw(c.out, -1, 1, &r);
    c.dy = draw(c.N * c.out, -1, 1, &r);
    double *dx = malloc(sizeof(double) * c.N * c.in), *dw = malloc(sizeof(double) * c.out * c.in);
    double *db = malloc(sizeof(double) * c.out), *dw2 = zeros(c.out * c.in), *db2 = zeros(c.out);
    for (int i = 0; i < c.N * c.in; i++) dx[i] = 1;
    for (int i = 0; i < c.out * c.in; i++) dw[i] = 1;
    for (int i = 0; i < c.out; i++) db[i] = 1;
    linear_backward(dx, dw, db, c.dy, c.x, c.w, c.N, c.in, c.out);
    for (int i = 0; i < c.N * c.in; i++) dx[i] -= 1;
    for (int i = 0; i < c.out * c.in; i++) dw[i] -= 1;
    for (int i = 0; i < c.out; i++) db[i] -= 1;
    Loss L = { linear_loss, &c, 3, { c.w, c.b, c.x }, { c.out * c.in, c.out, c.N * c.in } };
    double *fw = differences(&L, 0, FD_STEP), *fb = differences(&L, 1, FD_STEP), *fx = differences(&L, 2, FD_STEP);
    double ew = rel_error(dw, fw, L.n[0], NULL, 0), eb = rel_error(db, fb, L.n[1], NULL, 0);
    double ex = rel_error(dx, fx, L.n[2], NULL, 0);
    ok(fmax(ew, fmax(eb, ex)) <= LIMIT, "linear_backward: dw, db and dx match central differences within %g "
       "(%.2g, %.2g, %.2g), each added to what was there", LIMIT, ew, eb, ex);
    linear_backward(NULL, dw2, db2, c.dy, c.x, c.w, c.N, c.in, c.out);
    ok(!memcmp(dw2, dw, sizeof(double) * c.out * c.in) || rel_error(dw2, fw, L.n[0], NULL, 0) <= LIMIT,
       "linear_backward with dx NULL still fills dw and db");
    free(fw); free(fb); free(fx);
    free(c.x); free(c.w); free(c.b); free(c.dy); free(dx); free(dw); free(db); free(dw2); free(db2);
}

/* ---- weighted_sum_backward alone --------------------------------------------------------- */

typedef struct MixCase { int rows, S, hd; double *att, *v, *dmixed; } MixCase;

/* sum(dmixed * (att @ v)); att any numbers, not only weights */
static double mix_loss(void *ctx) {
    MixCase *c = ctx;
    double L = 0;
    for (int t = 0; t < c->rows; t++)
        for (int d = 0; d < c->hd; d++) {
            double o = 0;
            for (int s = 0; s < c->S; s++) o += c->att[t * c->S + s] * c->v[s * c->hd + d];
            L += c->dmixed[t * c->hd + d] * o;
        }
    return L;
}

static void test_weighted_sum(void) {
    Rng r;
    rng_seed(&r, 12);
    MixCase c = { .rows = 6, .S = 3, .hd = 2 };
    c.att = draw(c.rows * c.S, 0, 1, &r), c.v = draw(c.S * c.hd, -1, 1, &r), c.dmixed = draw(c.rows * c.hd, -1, 1, &r);
    double *datt = malloc(sizeof(double) * c.rows * c.S), *dv = malloc(sizeof(double) * c.S * c.hd);
    for (int i = 0; i < c.rows * c.S; i++) datt[i] = 5;          /* written over */
    for (int i = 0; i < c.S * c.hd; i++) dv[i] = 1;              /* added to */
    weighted_sum_backward(datt, dv, c.dmixed, c.att, c.v, c.rows, c.S, c.hd);
    for (int i = 0; i < c.S * c.hd; i++) dv[i] -= 1;
    Loss L = { mix_loss, &c, 2, { c.att, c.v }, { c.rows * c.S, c.S * c.hd } };
    double *fa = differences(&L, 0, FD_STEP), *fv = differences(&L, 1, FD_STEP);
    double ea = rel_error(datt, fa, L.n[0], NULL, 0), ev = rel_error(dv, fv, L.n[1], NULL, 0);
    ok(fmax(ea, ev) <= LIMIT, "weighted_sum_backward: datt (written) and dv (added to) match central differences "
       "within %g (%.2g, %.2g), 6 rows against 3 keys", LIMIT, ea, ev);
    free(fa); free(fv);
    free(c.att); free(c.v); free(c.dmixed); free(datt); free(dv);
}

/* ---- scores_backward alone ----------------------------------------------------------------- */

typedef struct ScoreCase { int rows, S, hd; double scale, *q, *k, *ds; } ScoreCase;

/* sum(ds * scale q k^T) */
static double score_loss(void *ctx) {
    ScoreCase *c = ctx;
    double L = 0;
    for (int t = 0; t < c->rows; t++)
        for (int s = 0; s < c->S; s++) {
            double dot = 0;
            for (int d = 0; d < c->hd; d++) dot += c->q[t * c->hd + d] * c->k[s * c->hd + d];
            L += c->ds[t * c->S + s] * c->scale * dot;
        }
    return L;
}

static void test_scores(void) {
    Rng r;
    rng_seed(&r, 13);
    ScoreCase c = { .rows = 6, .S = 3, .hd = 4, .scale = 0.5 };
    c.q = draw(c.rows * c.hd, -1, 1, &r), c.k = draw(c.S * c.hd, -1, 1, &r), c.ds = draw(c.rows * c.S, -1, 1, &r);
    double *dq = malloc(sizeof(double) * c.rows * c.hd), *dk = malloc(sizeof(double) * c.S * c.hd);
    for (int i = 0; i < c.rows * c.hd; i++) dq[i] = 1;
    for (int i = 0; i < c.S * c.hd; i++) dk[i] = 1;
    scores_backward(dq, dk, c.ds, c.q, c.k, c.rows, c.S, c.hd, c.scale);
    for (int i = 0; i < c.rows * c.hd; i++) dq[i] -= 1;
    for (int i = 0; i < c.S * c.hd; i++) dk[i] -= 1;
    Loss L = { score_loss, &c, 2, { c.q, c.k }, { c.rows * c.hd, c.S * c.hd } };
    double *fq = differences(&L, 0, FD_STEP), *fk = differences(&L, 1, FD_STEP);
    double eq = rel_error(dq, fq, L.n[0], NULL, 0), ek = rel_error(dk, fk, L.n[1], NULL, 0);
    ok(fmax(eq, ek) <= LIMIT, "scores_backward: dq and dk (both added to) match central differences within %g "
       "(%.2g, %.2g), scale 1/2 included", LIMIT, eq, ek);
    free(fq); free(fk);
    free(c.q); free(c.k); free(c.ds); free(dq); free(dk);
}

/* ---- softmax_backward alone (Exercise 11.6) ------------------------------------------------- */

/* p (n) = softmax(s (n)) */
static void softmax_row(double *p, const double *s, int n) {
    double top = -INFINITY, sum = 0;
    for (int j = 0; j < n; j++) top = fmax(top, s[j]);
    for (int j = 0; j < n; j++) sum += p[j] = exp(s[j] - top);
    for (int j = 0; j < n; j++) p[j] /= sum;
}

typedef struct SoftCase { int rows, n; double *s, *dp; } SoftCase;

/* sum(dp * softmax(s)), row by row */
static double soft_loss(void *ctx) {
    SoftCase *c = ctx;
    double L = 0, *p = malloc(sizeof(double) * c->n);
    for (int r = 0; r < c->rows; r++) {
        softmax_row(p, c->s + r * c->n, c->n);
        for (int j = 0; j < c->n; j++) L += c->dp[r * c->n + j] * p[j];
    }
    free(p);
    return L;
}

/* What is wrong with ds, rows of n, from p and dp: the mistakes of the chapter's list,
 * each computed here in double and compared with ds. */
static void explain_softmax_backward(const double *ds, const double *p, const double *dp, int rows, int n) {
    static const char *const what[] = {
        "ds = p * dp: the row's sum is missing, as if each weight depended on its own score only",
        "ds = p (1 - p) dp: only the Jacobian's diagonal; every weight also depends on the other scores",
        "the row's sum is of dp alone: it must be sum_j dp_j p_j, each dp weighted by its p",
        "the row's sum is of the weights alone (always 1): it must be sum_j dp_j p_j",
        "ds = dp - sum: the leading p_j is missing",
        "the sign is turned: ds = p (sum - dp), where p (dp - sum) belongs",
        "the row's last entry is left out of its sum",
        "each ds_j was taken with the sum so far: the row's sum must be complete before any ds_j",
        "the row's sum is of dp * dp: the weights' gradient where the weights belong",
        "one sum is carried from row to row: it must start at 0 for every row",
    };
    int kinds = (int)(sizeof what / sizeof what[0]);
    double *alt = malloc(sizeof(double) * (size_t)rows * n), carried = 0;
    for (int k = 0; k < kinds; k++) {
        carried = 0;
        for (int r = 0; r < rows; r++) {
            const double *pr = p + r * n, *dpr = dp + r * n;
            double sum = k == 9 ? carried : 0;
            for (int j = 0; j < n - (k == 6); j++)
                sum += k == 2 ? dpr[j] : k == 3 ? pr[j] : k == 8 ? dpr[j] * dpr[j] : dpr[j] * pr[j];
            carried = sum;
            double so_far = 0;
            for (int j = 0; j < n; j++) {
                so_far += dpr[j] * pr[j];
                double *a = &alt[r * n + j];
                *a = k == 0 ? pr[j] * dpr[j] : k == 1 ? pr[j] * (1 - pr[j]) * dpr[j] : k == 4 ? dpr[j] - sum
                   : k == 5 ? pr[j] * (sum - dpr[j]) : k == 7 ? pr[j] * (dpr[j] - so_far) : pr[j] * (dpr[j] - sum);
            }
        }
        double worst = 0;
        for (long i = 0; i < (long)rows * n; i++) worst = fmax(worst, fabs(ds[i] - alt[i]));
        if (worst <= 1e-12) {
            what_is_wrong("%s", what[k]);
            free(alt);
            return;
        }
    }
    double worst = 0;                                  /* the right formula, but only to float's precision */
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        for (int j = 0; j < n; j++) sum += dp[r * n + j] * p[r * n + j];
        for (int j = 0; j < n; j++) worst = fmax(worst, fabs(ds[r * n + j] - p[r * n + j] * (dp[r * n + j] - sum)));
    }
    if (worst > 0 && worst <= 1e-6)
        what_is_wrong("ds is right to about %.1g, float's precision, and no closer: is a sum kept in a float where "
                      "real (here double) belongs?", worst);
    free(alt);
}

static void test_softmax(void) {
    Rng r;
    rng_seed(&r, 14);
    SoftCase c = { .rows = 6, .n = 7 };
    c.s = draw(c.rows * c.n, -3, 3, &r), c.dp = draw(c.rows * c.n, -1, 1, &r);
    long N = (long)c.rows * c.n;
    double *p = malloc(sizeof(double) * N), *ds = zeros(N), *jac = zeros(N);
    for (int row = 0; row < c.rows; row++) softmax_row(p + row * c.n, c.s + row * c.n, c.n);
    STUDENT(softmax_backward(ds, p, c.dp, c.rows, c.n));
    Loss L = { soft_loss, &c, 1, { c.s }, { N } };
    double *fs = differences(&L, 0, FD_STEP);
    double es = rel_error(ds, fs, N, NULL, 0);
    int near = ok(es <= LIMIT, "softmax_backward: dscores of 6 rows of 7 match central differences of sum(dp * "
                  "softmax(s)) within %g (%.2g)", LIMIT, es);
    /* the Jacobian, built: J[i][j] = dp_j/ds_i = p_j (delta_ij - p_i); ds = J dp */
    for (int row = 0; row < c.rows; row++) {
        const double *pr = p + row * c.n, *dpr = c.dp + row * c.n;
        for (int i = 0; i < c.n; i++)
            for (int j = 0; j < c.n; j++) jac[row * c.n + i] += ((i == j ? pr[j] : 0) - pr[i] * pr[j]) * dpr[j];
    }
    /* How far a double pass of ds_j = p_j (dp_j - sum_k p_k dp_k) may be from the exact one,
     * in any order and form (tests/reference.h's reasoning, u = 2^-53): the row sum is
     * within gamma(n) A, A = sum_k p_k |dp_k|; dp_j minus it, and the product by p_j, two
     * roundings more; the Jacobian applied term by term, sum_i p_j (delta_ij - p_i) dp_i,
     * within gamma(n + 3) p_j (|dp_j| + A). So each ds_j is within
     * gamma(n + 3) p_j (|dp_j| + 2 A), and so is the test's own Jacobian product. */
    double u = 0x1p-53, worst_j = 0, worst_row = 0, *bound = zeros(N);
    for (int row = 0; row < c.rows; row++) {
        const double *pr = p + row * c.n, *dpr = c.dp + row * c.n;
        double A = 0;
        for (int j = 0; j < c.n; j++) A += pr[j] * fabs(dpr[j]);
        for (int j = 0; j < c.n; j++) bound[row * c.n + j] = (c.n + 3) * u / (1 - (c.n + 3) * u) * pr[j] * (fabs(dpr[j]) + 2 * A);
    }
    for (long i = 0; i < N; i++) worst_j = fmax(worst_j, fabs(ds[i] - jac[i]) / (2 * bound[i]));
    ok(worst_j <= 1, "softmax_backward: dscores equal the explicit Jacobian, diag(p) - p p^T, applied to dp, within "
       "what double rounding allows (%.2g of the bound)", worst_j);
    for (int row = 0; row < c.rows; row++) {   /* sum_j p_j (dp_j - S) = S (1 - sum_j p_j): 0 when the p sum to 1 */
        double sum = 0, allowed = 0, S = 0, total = 0;
        for (int j = 0; j < c.n; j++) S += p[row * c.n + j] * c.dp[row * c.n + j], total += p[row * c.n + j];
        for (int j = 0; j < c.n; j++) sum += ds[row * c.n + j], allowed += bound[row * c.n + j];
        allowed += fabs(S) * fabs(1 - total);
        allowed += c.n * u / (1 - c.n * u) * allowed + 1e-300;   /* and this sum's own rounding, to first order */
        worst_row = fmax(worst_row, fabs(sum) / allowed);
    }
    near &= ok(written(ds, N) && worst_row <= 1, "softmax_backward: each row of dscores sums to 0, within what double "
               "rounding allows (%.2g of the bound)", worst_row);
    if (!(near && worst_j <= 1) && !tap_stub[0]) explain_softmax_backward(ds, p, c.dp, c.rows, c.n);
    free(bound);
    free(fs); free(c.s); free(c.dp); free(p); free(ds); free(jac);
}

/* ---- the whole backward pass of a tiny grouped-query attention -------------------------------- */

typedef struct Attn {
    int B, T, D, H, G, hd, W, R;        /* W = G*hd, R = H/G */
    const int *hidden;                  /* (B, H, T, T): 1 hides a key, or NULL */
    double *p[9];                       /* q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, X */
    long n[9];
    double *dout;                       /* (B, T, D) */
} Attn;
static const char *const names[9] = { "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                                      "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias", "X" };

/* What the forward pass keeps: heads, weights, merged, out. */
typedef struct Kept { double *q, *k, *v, *qh, *kh, *vh, *att, *merged, *out; } Kept;

static int is_hidden(const Attn *a, int b, int h, int t, int s) {
    return a->hidden && a->hidden[(((long)b * a->H + h) * a->T + t) * a->T + s];
}

static Kept forward(const Attn *a) {
    int B = a->B, T = a->T, D = a->D, H = a->H, hd = a->hd, W = a->W;
    long BT = (long)B * T;
    Kept k = { zeros(BT * D), zeros(BT * W), zeros(BT * W), zeros(BT * D), zeros(BT * W), zeros(BT * W),
               zeros((long)B * H * T * T), zeros(BT * D), zeros(BT * D) };
    ref_linear64(k.q, a->p[8], a->p[0], a->p[1], BT, D, D);             /* pass 1 */
    ref_linear64(k.k, a->p[8], a->p[2], a->p[3], BT, D, W);
    ref_linear64(k.v, a->p[8], a->p[4], a->p[5], BT, D, W);
    for (int b = 0; b < B; b++)                                         /* pass 2: (B, H, T, hd), (B, G, T, hd) */
        for (int t = 0; t < T; t++)
            for (int c = 0; c < D; c++) {
                k.qh[(((long)b * H + c / hd) * T + t) * hd + c % hd] = k.q[(b * T + t) * D + c];
                if (c < W) {
                    k.kh[(((long)b * a->G + c / hd) * T + t) * hd + c % hd] = k.k[(b * T + t) * W + c];
                    k.vh[(((long)b * a->G + c / hd) * T + t) * hd + c % hd] = k.v[(b * T + t) * W + c];
                }
            }
    double *mixed = zeros(BT * D);                                      /* (B, H, T, hd) */
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const double *qh = k.qh + ((long)b * H + h) * T * hd;
            const double *kh = k.kh + ((long)b * a->G + h / a->R) * T * hd, *vh = k.vh + ((long)b * a->G + h / a->R) * T * hd;
            for (int t = 0; t < T; t++) {
                double *row = k.att + (((long)b * H + h) * T + t) * T;
                for (int s = 0; s < T; s++) {                           /* passes 3 and 4 */
                    double dot = 0;
                    for (int d = 0; d < hd; d++) dot += qh[t * hd + d] * kh[s * hd + d];
                    row[s] = is_hidden(a, b, h, t, s) ? -INFINITY : dot / sqrt((double)hd);
                }
                double copy[64];
                memcpy(copy, row, sizeof(double) * T);
                softmax_row(row, copy, T);                              /* pass 5 */
                for (int d = 0; d < hd; d++)                            /* pass 6 */
                    for (int s = 0; s < T; s++) mixed[(((long)b * H + h) * T + t) * hd + d] += row[s] * vh[s * hd + d];
            }
        }
    for (int b = 0; b < B; b++)                                         /* pass 7 */
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++)
                for (int d = 0; d < hd; d++)
                    k.merged[(b * T + t) * D + h * hd + d] = mixed[(((long)b * H + h) * T + t) * hd + d];
    ref_linear64(k.out, k.merged, a->p[6], a->p[7], BT, D, D);          /* pass 8 */
    free(mixed);
    return k;
}

static void kept_free(Kept *k) {
    free(k->q); free(k->k); free(k->v); free(k->qh); free(k->kh); free(k->vh);
    free(k->att); free(k->merged); free(k->out);
}

static double attn_loss(void *ctx) {
    const Attn *a = ctx;
    Kept k = forward(a);
    double L = 0;
    for (long i = 0; i < (long)a->B * a->T * a->D; i++) L += k.out[i] * a->dout[i];
    kept_free(&k);
    return L;
}

/* g[i] (n[i] each): every gradient, by the chapter's four steps and this file's glue. */
static void backward(double *g[9], const Attn *a) {
    int B = a->B, T = a->T, D = a->D, H = a->H, G = a->G, hd = a->hd, W = a->W;
    long BT = (long)B * T;
    Kept k = forward(a);
    for (int i = 0; i < 9; i++) g[i] = zeros(a->n[i]);
    double *dmerged = zeros(BT * D), *dmixed = zeros(BT * D), *datt = zeros((long)B * H * T * T);
    double *ds = zeros((long)B * H * T * T), *dqh = zeros(BT * D), *dkh = zeros(BT * W), *dvh = zeros(BT * W);
    double *dq = zeros(BT * D), *dk = zeros(BT * W), *dv = zeros(BT * W);
    linear_backward(dmerged, g[6], g[7], a->dout, k.merged, a->p[6], BT, D, D);       /* pass 8 back */
    for (int b = 0; b < B; b++)                                                        /* pass 7 back */
        for (int t = 0; t < T; t++)
            for (int c = 0; c < D; c++) dmixed[(((long)b * H + c / hd) * T + t) * hd + c % hd] = dmerged[(b * T + t) * D + c];
    for (int b = 0; b < B; b++)                                                        /* pass 6 back, head by head */
        for (int h = 0; h < H; h++) {
            long bh = (long)b * H + h, bg = (long)b * G + h / a->R;
            weighted_sum_backward(datt + bh * T * T, dvh + bg * T * hd, dmixed + bh * T * hd, k.att + bh * T * T,
                                  k.vh + bg * T * hd, T, T, hd);
        }
    STUDENT(softmax_backward(ds, k.att, datt, (long)B * H * T, T));                   /* pass 5 back */
    for (int b = 0; b < B; b++)                                                        /* pass 4 back */
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++)
                for (int s = 0; s < T; s++)
                    if (is_hidden(a, b, h, t, s)) ds[(((long)b * H + h) * T + t) * T + s] = 0;
    for (int b = 0; b < B; b++)                                                        /* pass 3 back */
        for (int h = 0; h < H; h++) {
            long bh = (long)b * H + h, bg = (long)b * G + h / a->R;
            scores_backward(dqh + bh * T * hd, dkh + bg * T * hd, ds + bh * T * T, k.qh + bh * T * hd,
                            k.kh + bg * T * hd, T, T, hd, 1.0 / sqrt((double)hd));
        }
    for (int b = 0; b < B; b++)                                                        /* pass 2 back */
        for (int t = 0; t < T; t++)
            for (int c = 0; c < D; c++) {
                dq[(b * T + t) * D + c] = dqh[(((long)b * H + c / hd) * T + t) * hd + c % hd];
                if (c < W) {
                    dk[(b * T + t) * W + c] = dkh[(((long)b * G + c / hd) * T + t) * hd + c % hd];
                    dv[(b * T + t) * W + c] = dvh[(((long)b * G + c / hd) * T + t) * hd + c % hd];
                }
            }
    linear_backward(g[8], g[0], g[1], dq, a->p[8], a->p[0], BT, D, D);                  /* pass 1 back */
    linear_backward(g[8], g[2], g[3], dk, a->p[8], a->p[2], BT, D, W);
    linear_backward(g[8], g[4], g[5], dv, a->p[8], a->p[4], BT, D, W);
    free(dmerged); free(dmixed); free(datt); free(ds); free(dqh); free(dkh); free(dvh);
    free(dq); free(dk); free(dv);
    kept_free(&k);
}

/* A case: weights like nn.Linear's default, X in [0, 1), dout in [-1, 1). */
static Attn make_attn(int B, int T, int D, int H, int G, const int *hidden, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    int hd = D / H, W = G * hd;
    double bound = 1 / sqrt((double)D);
    Attn a = { B, T, D, H, G, hd, W, H / G, hidden, .n = { (long)D * D, D, (long)W * D, W, (long)W * D, W,
                                                          (long)D * D, D, (long)B * T * D } };
    for (int i = 0; i < 8; i++) a.p[i] = draw(a.n[i], -bound, bound, &r);
    a.p[8] = draw(a.n[8], 0, 1, &r);
    a.dout = draw((long)B * T * D, -1, 1, &r);
    return a;
}

static void attn_free(Attn *a) {
    for (int i = 0; i < 9; i++) free(a->p[i]);
    free(a->dout);
}

/* err[i]: gradient i of g against the differences fd, relative to the largest
 * difference of its layer (a weight and its bias; X alone), so that a gradient that is
 * 0 on paper (k_proj.bias) is measured against its weight's. The worst, and where. */
static double layer_errors(double err[9], int *at, double *const g[9], double *const fd[9], const Attn *a) {
    double worst = 0;
    for (int i = 0; i < 9; i++) {
        int w = i < 8 ? i & ~1 : 8;
        double scale = 0;
        for (int l = w; l <= (i < 8 ? w + 1 : 8); l++)
            for (long j = 0; j < a->n[l]; j++) scale = fmax(scale, fabs(fd[l][j]));
        err[i] = rel_error(g[i], fd[i], a->n[i], &scale, 1);
        if (!(err[i] <= worst)) worst = err[i], *at = i;
    }
    return worst;
}

static Loss attn_loss_of(Attn *a) {
    Loss L = { attn_loss, a, 9, {0}, {0} };
    for (int i = 0; i < 9; i++) L.p[i] = a->p[i], L.n[i] = a->n[i];
    return L;
}

/* One test: every gradient of a case against the differences. */
static void check_attn(const char *what, Attn *a) {
    double *g[9], *fd[9], err[9];
    int at = 0;
    long entries = 0;
    backward(g, a);
    Loss L = attn_loss_of(a);
    for (int i = 0; i < 9; i++) fd[i] = differences(&L, i, FD_STEP), entries += a->n[i];
    double worst = layer_errors(err, &at, g, fd, a);
    ok(worst <= LIMIT, "%s: all %ld entries of the 8 parameters' and X's gradients match central differences within "
       "%g of the largest of their layer (worst %.2g, %s)", what, entries, LIMIT, worst, names[at]);
    if (!(worst <= LIMIT) && !tap_stub[0])      /* after a stub the test failed by it */
        for (int i = 0; i < 9; i++) diag("  %-14s relative error %.3g", names[i], err[i]);
    for (int i = 0; i < 9; i++) free(g[i]), free(fd[i]);
}

static void test_attention(void) {
    int B = 2, T = 4, H = 4, causal[2 * 4 * 4 * 4];
    for (int i = 0; i < B * H * T * T; i++) causal[i] = i % T > i / T % T;      /* key s > query t */
    Attn a = make_attn(B, T, 8, H, 2, NULL, 21);
    check_attn("(B, T, D, H, G) = (2, 4, 8, 4, 2), no mask", &a);
    attn_free(&a);
    a = make_attn(B, T, 8, H, 1, causal, 22);
    check_attn("(2, 4, 8, 4, 1), causal", &a);
    attn_free(&a);
    int scattered[2 * 6 * 5 * 5];
    for (int i = 0; i < 2 * 6 * 5 * 5; i++) scattered[i] = (i * 7 + i / 25) % 3 == 0 && i % 5 != i / 5 % 5;
    a = make_attn(2, 5, 12, 6, 3, scattered, 23);
    check_attn("(2, 5, 12, 6, 3), a scattered mask, each query sees itself", &a);
    attn_free(&a);
}

/* ---- the step of the differences ----------------------------------------------------------- */

/* How far central differences with h = 1e-3 .. 1e-7 are from the double backward pass
 * of a tiny case: the error falls as h^2 down to h = 1e-4, then grows as rounding takes
 * over. One test: FD_STEP is the best of those steps, and within 1e-8. */
static void test_fd_step(void) {
    Attn a = make_attn(2, 4, 8, 4, 2, NULL, 21);
    double *g[9], err[9], at_step = 1, best = 1;
    int at = 0;
    char line[400] = "";
    backward(g, &a);
    Loss L = attn_loss_of(&a);
    for (int e = 3; e <= 7; e++) {
        double h = pow(10, -e), *fd[9];
        for (int i = 0; i < 9; i++) fd[i] = differences(&L, i, h);
        double worst = layer_errors(err, &at, g, fd, &a);
        if (fabs(h / FD_STEP - 1) < 1e-9) at_step = worst;
        best = fmin(best, worst);
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s1e-%d: %.1e", e > 3 ? ", " : " ", e, worst);
        for (int i = 0; i < 9; i++) free(fd[i]);
    }
    ok(written(g[0], a.n[0]) && at_step <= 1e-8 && at_step == best, "central differences with h = %g are within 1e-8 "
       "of the backward pass, closer than with any other power of 10: %.2g (by step:%s)", FD_STEP, at_step, line);
    for (int i = 0; i < 9; i++) free(g[i]);
    attn_free(&a);
}

int main(void) {
    TEST_GROUP(test_linear());
    TEST_GROUP(test_weighted_sum());
    TEST_GROUP(test_scores());
    EXERCISE("11.6", 3, test_softmax());
    EXERCISE("11.6", 3, test_attention());
    EXERCISE("11.6", 1, test_fd_step());
    done_testing();
    return exit_status();
}
