/* Tests for chapter 0: the tensor helper, build/src/tensor.c.
 *
 * Each kernel is compared with a plain double-precision loop written here,
 * separately from the chapter; the mask with an index computed another way;
 * the generator with splitmix64's published outputs. Every refusal runs in a
 * child process (dies_with), which must exit non-zero, without crashing,
 * printing exactly one line on stderr that says what is wrong. */
#include "tensor.h"
#include "tap.h"
#include "run.h"       /* STUDENT: the softmax, Exercise 0.7, may still be a stub */

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char tmp[64];   /* a fresh directory for this run's files */

/* ---- small helpers ---------------------------------------------------------- */

/* tmp/name into buf. */
static const char *in_tmp(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

/* Numbers in [lo, hi) from the chapter's generator (itself tested below). */
static float *random_floats(long n, float lo, float hi, uint64_t seed) {
    Rng r;
    float *x = malloc((size_t)n * sizeof *x);
    rng_seed(&r, seed);
    rand_uniform(x, n, lo, hi, &r);
    return x;
}

/* What tensor_print writes, as a string (free it). */
static char *printed(const char *label, const Tensor *t) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tensor_print(f, label, t);
    fclose(f);
    return text;
}

/* A tensor of the given shape holding the given values. */
static Tensor tensor_of(int ndim, const int *shape, const float *values) {
    Tensor t = tensor_new(ndim, shape);
    memcpy(t.data, values, (size_t)t.size * sizeof(float));
    return t;
}

/* The bytes of a file (free them); *n gets the length. */
static unsigned char *file_bytes(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *b = malloc(1 << 20);
    *n = f ? (long)fread(b, 1, 1 << 20, f) : -1;
    if (f) fclose(f);
    return b;
}

/* Entries of directory dir other than . and .., and whether one contains part. */
static int count_entries(const char *dir, const char *part, int *found) {
    DIR *d = opendir(dir);
    int n = 0;
    *found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        n++;
        if (strstr(e->d_name, part)) *found = 1;
    }
    if (d) closedir(d);
    return n;
}

/* ---- independent references, in double ------------------------------------ */

static void ref_linear(double *out, const float *x, const float *w, const float *b, long N, int in, int outf) {
    for (long n = 0; n < N; n++)
        for (int o = 0; o < outf; o++) {
            double s = b ? b[o] : 0.0;
            for (int i = 0; i < in; i++) s += (double)x[n * in + i] * w[(long)o * in + i];
            out[n * outf + o] = s;
        }
}

/* out[z][m][n] = alpha * sum_k a[z][m][k] * (transpose_b ? b[z][n][k] : b[z][k][n]) */
static void ref_matmul(double *out, const float *a, const float *b, int batch, int M, int N, int K, double alpha,
                       int transpose_b) {
    for (int z = 0; z < batch; z++)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double s = 0;
                for (int k = 0; k < K; k++) {
                    double bv = transpose_b ? b[((long)z * N + n) * K + k] : b[((long)z * K + k) * N + n];
                    s += (double)a[((long)z * M + m) * K + k] * bv;
                }
                out[((long)z * M + m) * N + n] = alpha * s;
            }
}

static void ref_softmax(double *out, const float *x, long rows, int n) {
    for (long r = 0; r < rows; r++) {
        double max = x[r * n], sum = 0;
        for (int j = 1; j < n; j++) max = fmax(max, x[r * n + j]);
        for (int j = 0; j < n; j++) sum += exp((double)x[r * n + j] - max);
        for (int j = 0; j < n; j++) out[r * n + j] = exp((double)x[r * n + j] - max) / sum;
    }
}

/* ---- tensors and errors ----------------------------------------------------- */

static void make_5d(void *arg) { (void)arg; tensor_new(5, (int[]){ 1, 1, 1, 1, 1 }); }
static void make_zero_dim(void *arg) { (void)arg; tensor_new3(2, 0, 3); }
static void make_negative_dim(void *arg) { (void)arg; tensor_new2(4, -2); }
static void make_huge(void *arg) { (void)arg; tensor_new(4, (int[]){ 65536, 65536, 65536, 65536 }); }
static void call_die_at(void *arg) { (void)arg; program_name = "attention"; die_at("x.md", 12, "bad %s %d", "value", 7); }
static void call_die(void *arg) { (void)arg; program_name = "attention"; tensor_new1(0); }

static void test_tensors(void) {
    Tensor t = tensor_new3(3, 2, 4);
    int zeros = 1;
    for (long i = 0; i < t.size; i++) zeros &= t.data[i] == 0.0f;
    ok(t.ndim == 3 && t.shape[0] == 3 && t.shape[1] == 2 && t.shape[2] == 4 && t.size == 24,
       "tensor_new3(3, 2, 4) has shape (3, 2, 4) and 24 elements");
    ok(zeros, "a new tensor is all zeros, like torch.zeros");
    tensor_free(&t);
    ok(t.data == NULL && t.ndim == 0 && t.size == 0, "tensor_free zeroes the struct");
    tensor_free(&t);
    ok(1, "freeing a freed tensor is harmless");

    Tensor s = tensor_new(0, NULL);
    ok(s.ndim == 0 && s.size == 1 && s.data[0] == 0.0f, "a tensor of no dimensions is a scalar: one element");
    tensor_free(&s);
    Tensor t4 = tensor_new(4, (int[]){ 2, 4, 3, 5 });
    ok(t4.size == 120 && t4.shape[3] == 5, "a four-dimensional tensor (B, H, T, S) = (2, 4, 3, 5) has 120 elements");
    tensor_free(&t4);

    char buf[64];
    shape_str(buf, sizeof buf, 3, (int[]){ 3, 2, 4 });
    is_str(buf, "(3, 2, 4)", "shape_str writes (3, 2, 4)");
    shape_str(buf, sizeof buf, 1, (int[]){ 5 });
    is_str(buf, "(5)", "shape_str writes a one-dimensional shape as (5)");
    shape_str(buf, sizeof buf, 0, NULL);
    is_str(buf, "()", "shape_str writes a scalar's shape as ()");
    shape_str(buf, 5, 3, (int[]){ 3, 2, 4 });
    is_str(buf, "(3, ", "shape_str cuts a long shape to fit the buffer and terminates it");

    dies_with(make_5d, NULL, "a tensor of 5 dimensions: at most 4", "tensor_new refuses five dimensions");
    dies_with(make_zero_dim, NULL, "shape (2, 0, 3): every dimension must be at least 1", "tensor_new refuses a dimension of 0");
    dies_with(make_negative_dim, NULL, "shape (4, -2): every dimension", "tensor_new refuses a negative dimension");
    dies_with(make_huge, NULL, "shape (65536, 65536, 65536, 65536): more than", "tensor_new refuses a size that would overflow");

    TapChild c = run_child(call_die_at, NULL);
    ok(c.status == 1 && !strcmp(c.err, "attention: x.md:12: bad value 7\n") && c.out[0] == '\0',
       "die_at prints 'program: file:line: message' as one line and exits 1");
    if (c.status != 1) diag("status %d, stderr '%s'", c.status, c.err);
    c = run_child(call_die, NULL);
    like(c.err, "attention: chapters/00-tensors.md:", "an error from the helper names the chapter's Markdown line");
}

/* ---- random numbers --------------------------------------------------------- */

static void test_rng(void) {
    Rng r;
    rng_seed(&r, 0);
    float u0 = rng_uniform(&r), u1 = rng_uniform(&r), u2 = rng_uniform(&r);
    /* splitmix64 from seed 0 gives 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
     * 0x06C45D188009454F (Vigna's reference); the float is the top 24 bits / 2^24. */
    ok(u0 == 0xE220A8 / 16777216.0f && u1 == 0x6E789E / 16777216.0f && u2 == 0x06C45D / 16777216.0f,
       "seed 0 gives splitmix64's published first outputs, top 24 bits over 2^24");

    enum { N = 1000000 };
    float *a = random_floats(N, 0, 1, 42), *b = random_floats(N, 0, 1, 42), *c = random_floats(N, 0, 1, 43);
    ok(!memcmp(a, b, N * sizeof(float)), "the same seed gives the same million numbers");
    ok(memcmp(a, c, N * sizeof(float)) != 0, "seeds 42 and 43 give different numbers");
    double sum = 0, lo = 1, hi = 0;
    long off_grid = 0;
    for (long i = 0; i < N; i++) {
        sum += a[i];
        lo = fmin(lo, a[i]);
        hi = fmax(hi, a[i]);
        double k = a[i] * 16777216.0;
        off_grid += k != floor(k);
    }
    ok(lo >= 0 && hi < 1, "a million draws lie in [0, 1)");
    ok(lo < 1e-4 && hi > 1 - 1e-4, "a million draws reach both ends of [0, 1)");
    ok(off_grid == 0, "every draw is a multiple of 2^-24");
    double mean = sum / N, sd = sqrt(1.0 / 12 / N);
    ok(fabs(mean - 0.5) < 5 * sd, "the mean of a million draws, %.6f, is 0.5 within five standard errors of %.6f", mean, sd);

    float *x = random_floats(1000, -3, 5, 7);
    Rng r2;
    rng_seed(&r2, 7);
    long mismatched = 0, outside = 0;
    for (long i = 0; i < 1000; i++) {
        mismatched += x[i] != -3.0f + 8.0f * rng_uniform(&r2);
        outside += x[i] < -3.0f || x[i] > 5.0f;
    }
    ok(mismatched == 0, "rand_uniform draws one number per element, in memory order, as lo + (hi - lo) * u");
    ok(outside == 0, "rand_uniform(-3, 5) stays in [-3, 5]");
    free(a); free(b); free(c); free(x);
}

/* splitmix64 and FNV-1a written again from their definitions, checked against their
 * published values: the reference for rng_stream. */
static uint64_t ref_splitmix(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t ref_fnv1a(const char *s) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001B3ull;
    return h;
}

static void test_rng_stream(void) {
    uint64_t zero = 0;
    ok(ref_splitmix(&zero) == 0xE220A8397B1DCDAFull && ref_fnv1a("a") == 0xAF63DC4C8601EC8Cull &&
       ref_fnv1a("") == 0xCBF29CE484222325ull, "the reference's splitmix64 and FNV-1a give their published values");
    const char *names[] = { "X", "query_proj.weight", "attention_mask", "dropout" };
    long wrong = 0;
    for (int n = 0; n < 4; n++) {
        uint64_t mix = 42;                                  /* the seed scrambled, the name mixed in */
        mix = ref_splitmix(&mix) ^ ref_fnv1a(names[n]);
        uint64_t state = ref_splitmix(&mix);                /* the pair scrambled again */
        Rng r;
        rng_stream(&r, 42, names[n]);
        for (int i = 0; i < 100; i++) wrong += rng_uniform(&r) != (float)(ref_splitmix(&state) >> 40) / 16777216.0f;
    }
    ok(wrong == 0, "rng_stream(42, name) draws what splitmix64 draws from the seed scrambled, FNV-1a(name) mixed "
       "in and scrambled again: 400 draws of 4 names");
    Rng a, b, c, d;
    rng_stream(&a, 42, "X"), rng_stream(&b, 42, "X"), rng_stream(&c, 42, "Y"), rng_stream(&d, 43, "X");
    long same_ab = 0, same_ac = 0, same_ad = 0;
    for (int i = 0; i < 1000; i++) {
        float ua = rng_uniform(&a);
        same_ab += ua == rng_uniform(&b), same_ac += ua == rng_uniform(&c), same_ad += ua == rng_uniform(&d);
    }
    ok(same_ab == 1000 && same_ac < 5 && same_ad < 5, "the same seed and name give the same 1000 numbers; another "
       "name, or another seed, others (%ld and %ld of 1000 equal by chance)", same_ac, same_ad);

    /* two lists of the same tensors in opposite orders draw the same numbers */
    Tensor w1, b1, x1, w2, b2, x2;
    Tensors one = {0}, two = {0};
    tensors_linear(&one, "proj", &w1, &b1, "D D");
    tensors_add(&one, KIND_INPUT, "X", &x1, "B T D");
    tensors_add(&two, KIND_INPUT, "X", &x2, "B T D");
    tensors_linear(&two, "proj", &w2, &b2, "D D");
    Args args = { .batch = 2, .seq = 3, .dim = 4, .seed = 7 };
    tensors_open(&one, &args);
    tensors_open(&two, &args);
    ok(!memcmp(w1.data, w2.data, 16 * sizeof(float)) && !memcmp(b1.data, b2.data, 4 * sizeof(float)) &&
       !memcmp(x1.data, x2.data, 24 * sizeof(float)), "tensors_open draws each tensor from its own stream: "
       "listing X before or after proj changes no number");
    Rng r;
    rng_stream(&r, 7, "X");
    long off = 0;
    for (int i = 0; i < 24; i++) off += x1.data[i] != rng_uniform(&r);
    ok(off == 0, "X (2, 3, 4) is the stream named X of --seed 7, like torch.rand, in memory order");
    tensors_close(&one, &(Args){0});
    tensors_close(&two, &(Args){0});
}

static void test_init_linear(void) {
    Rng r, again;
    Tensor w, b;
    rng_seed(&r, 5);
    init_linear(&w, &b, 64, 16, &r);
    float bound = 1.0f / sqrtf(16.0f);
    double wmax = 0, wsum = 0, bmax = 0;
    for (long i = 0; i < w.size; i++) wmax = fmax(wmax, fabsf(w.data[i])), wsum += w.data[i];
    for (long i = 0; i < b.size; i++) bmax = fmax(bmax, fabsf(b.data[i]));
    ok(w.ndim == 2 && w.shape[0] == 64 && w.shape[1] == 16 && b.ndim == 1 && b.shape[0] == 64,
       "init_linear(out 64, in 16) makes w (64, 16) and b (64), PyTorch's layout");
    ok(wmax <= bound && bmax <= bound, "every weight and bias lies within 1/sqrt(in) = 0.25");
    ok(wmax > 0.99 * bound, "the weights fill the interval: the largest is within 1%% of the bound");
    ok(fabs(wsum / w.size) < 0.05, "the weights average close to 0");

    float *expect = malloc((64 * 16 + 64) * sizeof(float));
    rng_seed(&again, 5);
    rand_uniform(expect, 64 * 16 + 64, -bound, bound, &again);
    ok(!memcmp(w.data, expect, 64 * 16 * sizeof(float)) && !memcmp(b.data, expect + 64 * 16, 64 * sizeof(float)),
       "init_linear draws the weight row by row first, then the bias");

    Tensor w2;
    rng_seed(&r, 5);
    init_linear(&w2, NULL, 64, 16, &r);
    ok(!memcmp(w2.data, w.data, 64 * 16 * sizeof(float)), "init_linear takes a NULL bias and draws the same weight");
    rng_seed(&again, 5);
    for (int i = 0; i < 64 * 16; i++) rng_uniform(&again);
    ok(r.state == again.state, "without a bias, init_linear draws only the weight");
    tensor_free(&w); tensor_free(&b); tensor_free(&w2);
    free(expect);
}

/* ---- the kernels ------------------------------------------------------------ */

static void test_linear(void) {
    static const int cases[][3] = { { 1, 1, 1 }, { 6, 4, 4 }, { 5, 7, 3 }, { 33, 64, 17 }, { 2, 128, 3 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int N = cases[c][0], in = cases[c][1], outf = cases[c][2];
        float *x = random_floats((long)N * in, -1, 1, 10 + c), *w = random_floats((long)outf * in, -1, 1, 20 + c);
        float *b = random_floats(outf, -1, 1, 30 + c), *out = malloc((size_t)N * outf * sizeof(float));
        double *want = malloc((size_t)N * outf * sizeof(double));
        linear(out, x, w, b, N, in, outf);
        ref_linear(want, x, w, b, N, in, outf);
        close_ok(out, want, (long)N * outf, 1e-5, 1e-5, "linear matches a double loop for x (%d, %d), w (%d, %d)",
                 N, in, outf, in);
        linear(out, x, w, NULL, N, in, outf);
        ref_linear(want, x, w, NULL, N, in, outf);
        close_ok(out, want, (long)N * outf, 1e-5, 1e-5, "linear without bias matches for x (%d, %d)", N, in);
        free(x); free(w); free(b); free(out); free(want);
    }
    float x[2] = { 1, 2 }, w[6] = { 1, 0, 0, 1, 1, 1 }, b[3] = { 0.5f, -0.5f, 0 }, out[3];
    linear(out, x, w, b, 1, 2, 3);
    ok(out[0] == 1.5f && out[1] == 1.5f && out[2] == 3.0f, "linear by hand: [1, 2] @ [[1, 0], [0, 1], [1, 1]].T + b");
}

static void test_matmuls(void) {
    static const int cases[][4] = { { 1, 1, 1, 1 }, { 3, 2, 2, 4 }, { 2, 5, 7, 3 }, { 4, 16, 9, 64 }, { 6, 8, 8, 16 } };
    static const float alphas[] = { 1.0f, 0.5f, 0.3f, 0.125f, -2.0f };   /* any scale, 1 among them */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int batch = cases[c][0], M = cases[c][1], N = cases[c][2], K = cases[c][3];
        float *a = random_floats((long)batch * M * K, -1, 1, 40 + c), *b = random_floats((long)batch * N * K, -1, 1, 50 + c);
        float *out = malloc((size_t)batch * M * N * sizeof(float));
        double *want = malloc((size_t)batch * M * N * sizeof(double));
        float alpha = alphas[c];
        matmul_bt(out, a, b, batch, M, N, K, alpha);
        ref_matmul(want, a, b, batch, M, N, K, alpha, 1);
        close_ok(out, want, (long)batch * M * N, 1e-5, 1e-5,
                 "matmul_bt matches a double loop for (%d, %d, %d) @ (%d, %d, %d)^T, alpha %g", batch, M, K,
                 batch, N, K, (double)alpha);
        matmul(out, a, b, batch, M, N, K);   /* b read as (batch, K, N) */
        ref_matmul(want, a, b, batch, M, N, K, 1.0, 0);
        close_ok(out, want, (long)batch * M * N, 1e-5, 1e-5, "matmul matches a double loop for (%d, %d, %d) @ (%d, %d, %d)",
                 batch, M, K, batch, K, N);
        free(a); free(b); free(out); free(want);
    }
    float a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 }, bt[4] = { 5, 7, 6, 8 }, out[4], out_bt[4];
    matmul(out, a, b, 1, 2, 2, 2);
    matmul_bt(out_bt, a, bt, 1, 2, 2, 2, 1.0f);
    ok(out[0] == 19 && out[1] == 22 && out[2] == 43 && out[3] == 50, "matmul by hand: [[1, 2], [3, 4]] @ [[5, 6], [7, 8]]");
    ok(!memcmp(out, out_bt, sizeof out), "matmul_bt of the transposed matrix gives the same product");
}

/* ---- softmax ---------------------------------------------------------------- */

/* Exercise 0.7 (the body of softmax_lastdim): the cases worked by hand, the
 * overflow the maximum prevents, and the two ways a whole row can be hidden. */
/* What is wrong with softmax_lastdim's weights (rows of n) against ref: NaN, rows that do
 * not sum to 1, rows left as they were. */
static void explain_softmax(const float *got, const double *ref, long rows, int n) {
    if (tap_stub[0]) return;
    for (long r = 0; r < rows; r++) {
        double sum = 0, worst = 0;
        int nan = 0;
        for (int j = 0; j < n; j++) sum += got[r * n + j], nan |= isnan(got[r * n + j]),
                                    worst = fmax(worst, fabs(got[r * n + j] - ref[r * n + j]));
        if (nan) {
            what_is_wrong("row %ld holds NaN: exp of a large score overflowed (is each row's maximum subtracted "
                          "first, its own row's, starting from -INFINITY?)", r);
            return;
        }
        if (fabs(sum - 1) > 1e-3) {
            what_is_wrong("row %ld's weights sum to %.4g, not 1: %s", r, sum, r == rows - 1 && sum > 1.5
                          ? "it looks untouched, still scores: does the loop reach the last row?"
                          : "is each row divided by its own sum of exponentials, reset for every row?");
            return;
        }
        if (worst > 1e-3) {
            what_is_wrong("row %ld sums to 1 but is not the softmax of its scores (off by %.2g): the exponentials "
                          "must be of x_j - max, stored, then divided by their sum", r, worst);
            return;
        }
    }
}

/* How far a float32 softmax of each row of x (rows of n) may be from p, the exact one,
 * in any order of its sum and form (tests/reference.h's reasoning): each weight within
 * p_j (u |x_j - max| + gamma(n + 5)) + FLT_MIN, u = 2^-24: the shift by the row's
 * maximum rounds once, expf within one unit in the last place, the sum of n terms, the
 * division (or the reciprocal and the product). shift adds what x itself carries:
 * each score within shift of the one meant. */
static void softmax_bound(double *bound, const double *p, const float *x, long rows, int n, double shift) {
    double u = 0x1p-24, g = (n + 5) * u / (1 - (n + 5) * u);
    for (long r = 0; r < rows; r++) {
        float top = -INFINITY;
        for (int j = 0; j < n; j++) top = fmaxf(top, x[r * n + j]);
        for (int j = 0; j < n; j++) {
            double t = isfinite(x[r * n + j]) && isfinite(top) ? fabs((double)x[r * n + j] - top) : 0;
            double pj = isnan(p[r * n + j]) ? 0 : p[r * n + j];
            bound[r * n + j] = pj * (u * t + g + 2 * shift) + 0x1p-126;
        }
    }
}

static void test_softmax_by_hand(void) {
    float x[4] = { 1, 2, 3, 3 };
    double e = exp(1.0), want[4] = { 1 / (1 + e), e / (1 + e), 0.5, 0.5 }, bound[7];
    softmax_bound(bound, want, x, 2, 2, 0);
    STUDENT(softmax_lastdim(x, 2, 2));
    within_ok(x, want, bound, 4, "softmax by hand: [1, 2] -> [1/(1+e), e/(1+e)], [3, 3] -> [0.5, 0.5]");

    float q[2] = { 0, logf(3) };
    double quarters[2] = { 1 / (1 + exp((double)q[1])), 1 - 1 / (1 + exp((double)q[1])) };   /* of ln 3 as a float */
    softmax_bound(bound, quarters, q, 1, 2, 0);
    STUDENT(softmax_lastdim(q, 1, 2));
    within_ok(q, quarters, bound, 2, "softmax of [0, ln 3] is [1/4, 3/4]");

    float big[2] = { 1000, 1000 };
    STUDENT(softmax_lastdim(big, 1, 2));
    if (!ok(big[0] == 0.5f && big[1] == 0.5f, "softmax of [1000, 1000] is [0.5, 0.5], no NaN: the max is subtracted") &&
        !tap_stub[0])
        what_is_wrong("[1000, 1000] gives [%g, %g]: e^1000 overflows a float; subtract the row's maximum before "
                      "exp, so that the largest exponential is e^0 = 1", big[0], big[1]);

    float ninety[2] = { 90, 89 };
    double ninety_want[2] = { 1 / (1 + exp(-1.0)), 1 - 1 / (1 + exp(-1.0)) };
    softmax_bound(bound, ninety_want, ninety, 1, 2, 0);
    STUDENT(softmax_lastdim(ninety, 1, 2));
    within_ok(ninety, ninety_want, bound, 2,
             "softmax of [90, 89], where exp(90) overflows a float, is [0.7311, 0.2689]");

    /* one call, two rows 1000 apart: a maximum kept from the first row (or one for
     * the whole tensor) leaves the second row's exponentials 0, and 0 / 0 */
    float apart[4] = { 1000, 1001, 0, 1 };
    double apart_want[4] = { 1 / (1 + e), e / (1 + e), 1 / (1 + e), e / (1 + e) };
    softmax_bound(bound, apart_want, apart, 2, 2, 0);
    STUDENT(softmax_lastdim(apart, 2, 2));
    int second_wrong = !(fabs(apart[2] - apart_want[2]) <= bound[2] && fabs(apart[3] - apart_want[3]) <= bound[3]) &&
                       fabs(apart[0] - apart_want[0]) <= bound[0];
    within_ok(apart, apart_want, bound, 4,
             "rows [1000, 1001] and [0, 1] in one call: each row subtracts its own maximum");
    if (second_wrong)
        what_is_wrong("the row [0, 1] after the row [1000, 1001] gives [%g, %g]: the second row must subtract its "
                      "own maximum, found afresh from -INFINITY, with its own sum", apart[2], apart[3]);

    float dead[2] = { -INFINITY, -INFINITY };
    STUDENT(softmax_lastdim(dead, 1, 2));
    if (!ok(isnan(dead[0]) && isnan(dead[1]), "a row of -inf only gives NaN, as torch.softmax does") && !tap_stub[0])
        what_is_wrong("a row of -inf gives [%g, %g]: torch.softmax gives NaN there (e^(-inf - -inf) is e^NaN); no "
                      "special case for it", dead[0], dead[1]);

    float masked[7] = { -1e20f, 0, -1e20f, -INFINITY, 2, -1e20f, -1e20f };
    STUDENT(softmax_lastdim(masked, 1, 3));
    STUDENT(softmax_lastdim(masked + 3, 1, 2));
    STUDENT(softmax_lastdim(masked + 5, 1, 2));
    if (!close_ok(masked, ((double[]){ 0, 1, 0, 0, 1, 0.5, 0.5 }), 7, 0, 0,
                  "scores filled with -1e20 or -inf get weight 0; a row all -1e20 becomes uniform") &&
        (isnan(masked[5]) || isnan(masked[6])))
        what_is_wrong("a row of -1e20 scores gives [%g, %g]: its maximum must be -1e20, found from -INFINITY (not "
                      "from 0), so that its largest exponential is e^0 = 1", masked[5], masked[6]);

    float one[1] = { 5 };
    STUDENT(softmax_lastdim(one, 1, 1));
    if (!ok(one[0] == 1.0f, "the softmax of a single score is 1"))
        what_is_wrong("the softmax of [5] gives %g: the maximum must be taken over every score of the row, the first "
                      "one included", one[0]);
}

/* Exercise 0.7: many rows at once against the double-precision loop above. GCC 12 for
 * arm64 stops with an internal error when it vectorizes this function (in
 * vect_transform_reduction, at -O2, with rows of 13): a test need not be vectorized. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
static void test_softmax_reference(void) {
    enum { R = 7, C = 13 };
    float *r = random_floats(R * C, -10, 10, 60), *shifted = malloc(R * C * sizeof(float));
    double ref[R * C], ones[R], sums[R];
    for (int i = 0; i < R * C; i++) shifted[i] = r[i] + 100;
    double bound[R * C], shifted_bound[R * C];
    ref_softmax(ref, r, R, C);
    softmax_bound(bound, ref, r, R, C, 0);
    softmax_bound(shifted_bound, ref, shifted, R, C, 0x1p-24 * 110);   /* r + 100 rounds by up to 110 u */
    STUDENT(softmax_lastdim(r, R, C));
    STUDENT(softmax_lastdim(shifted, R, C));
    int good = within_ok(r, ref, bound, R * C, "softmax of (7, 13) scores in [-10, 10] matches a double reference, "
                         "within what float32 rounding allows");
    within_ok(shifted, ref, shifted_bound, R * C, "adding 100 to every score leaves the softmax unchanged");
    if (!good) explain_softmax(r, ref, R, C);
    double row_bound[R];
    for (int i = 0; i < R; i++) {
        double sum = 0, most = 0;        /* the row's sum, and the bound of that sum */
        for (int j = 0; j < C; j++) sum += r[i * C + j], most += bound[i * C + j];
        ones[i] = 1, sums[i] = sum, row_bound[i] = most;
    }
    within_ok(sums, ones, row_bound, R, "every row of weights sums to 1");
    free(r); free(shifted);
}

/* ---- masks and broadcasting ------------------------------------------------- */

/* Fill x (filled copy of scores) by hand: element [a][b][c][d] of x, padded to 4
 * dims, is hidden where mask[a'][b'][c'][d'] == 0, with each coordinate 0 where
 * the padded mask has size 1. Returns how many elements of got differ. */
static long mask_mismatches(const Tensor *got, const Tensor *scores, const Tensor *mask, float value) {
    int xs[4], ms[4];
    for (int i = 0; i < 4; i++) {
        xs[i] = i < 4 - scores->ndim ? 1 : scores->shape[i - (4 - scores->ndim)];
        ms[i] = i < 4 - mask->ndim ? 1 : mask->shape[i - (4 - mask->ndim)];
    }
    long bad = 0;
    for (int a = 0; a < xs[0]; a++)
        for (int b = 0; b < xs[1]; b++)
            for (int c = 0; c < xs[2]; c++)
                for (int d = 0; d < xs[3]; d++) {
                    long xi = (((long)a * xs[1] + b) * xs[2] + c) * xs[3] + d;
                    int ma = ms[0] == 1 ? 0 : a, mb = ms[1] == 1 ? 0 : b, mc = ms[2] == 1 ? 0 : c, md = ms[3] == 1 ? 0 : d;
                    long mi = (((long)ma * ms[1] + mb) * ms[2] + mc) * ms[3] + md;
                    float want = mask->data[mi] == 0.0f ? value : scores->data[xi];
                    bad += got->data[xi] != want;
                }
    return bad;
}

/* Scores of shape sshape, a random 0/1/2/-1 mask of shape mshape: masked_fill
 * must agree with mask_mismatches' independent index, element by element. */
static void check_legal_mask(int sndim, const int *sshape, int mndim, const int *mshape, const char *what) {
    char ss[64], ms[64];
    shape_str(ss, sizeof ss, sndim, sshape);
    shape_str(ms, sizeof ms, mndim, mshape);
    Tensor scores = tensor_new(sndim, sshape), mask = tensor_new(mndim, mshape), x = tensor_new(sndim, sshape);
    Rng r;
    rng_seed(&r, 70);
    rand_uniform(scores.data, scores.size, -3, 3, &r);
    for (long i = 0; i < mask.size; i++) {
        float u = rng_uniform(&r);
        mask.data[i] = u < 0.4f ? 0.0f : u < 0.8f ? 1.0f : u < 0.9f ? 2.0f : -1.0f;
    }
    memcpy(x.data, scores.data, (size_t)x.size * sizeof(float));
    ok(broadcastable(mshape, mndim, sshape, sndim), "a %s mask broadcasts to %s scores (%s)", ms, ss, what);
    masked_fill(&x, &mask, -1e20f);
    long bad = mask_mismatches(&x, &scores, &mask, -1e20f);
    ok(bad == 0, "masked_fill with a %s mask on %s scores hides exactly the scores under a 0", ms, ss);
    if (bad) diag("%ld of %ld elements differ from the independent index", bad, x.size);
    tensor_free(&scores); tensor_free(&mask); tensor_free(&x);
}

typedef struct FillCase { int sndim, mndim; int sshape[4], mshape[4]; } FillCase;

static void fill_illegal(void *arg) {
    FillCase *c = arg;
    Tensor x = tensor_new(c->sndim, c->sshape), m = tensor_new(c->mndim, c->mshape);
    masked_fill(&x, &m, -1e20f);
}

static void check_illegal_mask(FillCase c, const char *what) {
    char ss[64], ms[64], part[200];
    shape_str(ss, sizeof ss, c.sndim, c.sshape);
    shape_str(ms, sizeof ms, c.mndim, c.mshape);
    ok(!broadcastable(c.mshape, c.mndim, c.sshape, c.sndim), "a %s mask does not broadcast to %s scores (%s)", ms, ss, what);
    snprintf(part, sizeof part, "a mask of shape %s does not broadcast to scores of shape %s", ms, ss);
    dies_with(fill_illegal, &c, part, "masked_fill refuses a %s mask on %s scores, naming both shapes", ms, ss);
}

static void test_masks(void) {
    int s3[] = { 2, 3, 5 }, s4[] = { 2, 4, 3, 5 };   /* (B, T, S) and (B, H, T, S) */
    check_legal_mask(3, s3, 1, (int[]){ 5 }, "(S): the same keys hidden everywhere");
    check_legal_mask(3, s3, 2, (int[]){ 1, 5 }, "(1, S)");
    check_legal_mask(3, s3, 2, (int[]){ 3, 5 }, "(T, S): one pattern, e.g. causal");
    check_legal_mask(3, s3, 2, (int[]){ 3, 1 }, "(T, 1): whole queries hidden");
    check_legal_mask(3, s3, 3, (int[]){ 2, 1, 5 }, "(B, 1, S): padding per sequence");
    check_legal_mask(3, s3, 3, (int[]){ 2, 3, 5 }, "(B, T, S): everything spelled out");
    check_legal_mask(3, s3, 3, (int[]){ 1, 1, 5 }, "(1, 1, S)");
    check_legal_mask(4, s4, 1, (int[]){ 5 }, "(S)");
    check_legal_mask(4, s4, 2, (int[]){ 3, 5 }, "(T, S)");
    check_legal_mask(4, s4, 2, (int[]){ 1, 5 }, "(1, S)");
    check_legal_mask(4, s4, 4, (int[]){ 2, 1, 1, 5 }, "(B, 1, 1, S): padding for every head");
    check_legal_mask(4, s4, 4, (int[]){ 2, 1, 3, 5 }, "(B, 1, T, S): a pattern shared by the heads");
    check_legal_mask(4, s4, 4, (int[]){ 2, 4, 3, 5 }, "(B, H, T, S): everything spelled out");
    check_legal_mask(4, s4, 4, (int[]){ 1, 1, 1, 5 }, "(1, 1, 1, S)");
    check_legal_mask(4, s4, 3, (int[]){ 4, 3, 5 }, "(H, T, S): a pattern per head");
    check_legal_mask(4, s4, 4, (int[]){ 1, 4, 1, 1 }, "(1, H, 1, 1): whole heads hidden");

    check_illegal_mask((FillCase){ 3, 2, { 2, 3, 3 }, { 2, 3 } }, "a (B, T) padding mask meets (B, T, T): B lines up with T");
    check_illegal_mask((FillCase){ 3, 4, { 2, 3, 5 }, { 2, 1, 3, 5 } }, "more dimensions than the scores");
    check_illegal_mask((FillCase){ 3, 2, { 2, 3, 5 }, { 4, 5 } }, "4 queries against 3");
    check_illegal_mask((FillCase){ 3, 1, { 2, 3, 5 }, { 6 } }, "6 keys against 5");
    check_illegal_mask((FillCase){ 4, 3, { 2, 4, 3, 5 }, { 2, 3, 5 } }, "(B, T, S) against heads: B lines up with H");
    check_illegal_mask((FillCase){ 4, 2, { 2, 4, 3, 5 }, { 2, 3 } }, "(B, T) against (B, H, T, S)");

    /* The trap: with B == T, a (B, T) padding mask is silently a (T, S) mask. */
    int st[] = { 3, 3, 3 };
    Tensor scores = tensor_new(3, st), x = tensor_new(3, st);
    Tensor pad = tensor_of(2, (int[]){ 3, 3 }, (float[]){ 1, 1, 0, 1, 0, 0, 1, 1, 1 });
    for (long i = 0; i < scores.size; i++) scores.data[i] = x.data[i] = (float)i;
    ok(broadcastable(pad.shape, 2, st, 3), "a (B, T) mask with B == T = 3 broadcasts to (B, T, T) without complaint");
    masked_fill(&x, &pad, -1e20f);
    long as_query_key = 0, as_batch_key = 0;
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 3; t++)
            for (int s = 0; s < 3; s++) {
                int hidden = x.data[(b * 3 + t) * 3 + s] == -1e20f;
                as_query_key += hidden == (pad.data[t * 3 + s] == 0);
                as_batch_key += hidden == (pad.data[b * 3 + s] == 0);
            }
    ok(as_query_key == 27 && as_batch_key < 27,
       "...and is read as mask[query][key], not mask[sequence][key]: the trap the chapter warns about");

    Tensor z = tensor_new(0, NULL);   /* a scalar 0 mask hides everything */
    masked_fill(&x, &z, -INFINITY);
    long all = 0;
    for (long i = 0; i < x.size; i++) all += isinf(x.data[i]) && x.data[i] < 0;
    ok(all == x.size, "a scalar mask of 0 fills every score, here with -inf");
    Tensor nanmask = tensor_of(1, (int[]){ 3 }, (float[]){ NAN, 0, 1 });
    memcpy(x.data, scores.data, (size_t)x.size * sizeof(float));
    masked_fill(&x, &nanmask, 7);
    ok(x.data[0] == 0 && x.data[1] == 7 && x.data[2] == 2, "only an exact 0 in the mask hides a score; NaN keeps it");
    tensor_free(&scores); tensor_free(&x); tensor_free(&pad); tensor_free(&z); tensor_free(&nanmask);
}

/* ---- dropout ---------------------------------------------------------------- */

static void drop_bad(void *arg) {
    float x[2] = { 1, 1 };
    Rng r;
    rng_seed(&r, 1);
    dropout(x, 2, *(float *)arg, &r);
}

static void test_dropout(void) {
    enum { N = 200000 };
    static const float ps[] = { 0.1f, 0.5f, 0.9f };
    float *x = random_floats(N, 0.1f, 1.0f, 80), *y = malloc(N * sizeof(float)), *y2 = malloc(N * sizeof(float));
    for (size_t c = 0; c < 3; c++) {
        float p = ps[c];
        Rng r, r2;
        rng_seed(&r, 81);
        rng_seed(&r2, 81);
        memcpy(y, x, N * sizeof(float));
        memcpy(y2, x, N * sizeof(float));
        dropout(y, N, p, &r);
        dropout(y2, N, p, &r2);
        long kept = 0, wrong = 0;
        for (long i = 0; i < N; i++) {
            kept += y[i] != 0.0f;
            wrong += y[i] != 0.0f && y[i] != x[i] * (1.0f / (float)(1.0 - p));   /* PyTorch: x * (1 / (1 - p)) */
        }
        double expect = N * (1.0 - p), sd = sqrt(N * p * (1.0 - p));
        ok(fabs(kept - expect) <= 5 * sd, "dropout(p = %.1f) keeps %ld of %d, within 5 binomial sd (%.0f) of %.0f",
           (double)p, kept, N, sd, expect);
        ok(wrong == 0, "dropout(p = %.1f): every kept value is exactly x * (1 / (1 - p)), as PyTorch scales it, every other exactly 0", (double)p);
        ok(!memcmp(y, y2, N * sizeof(float)), "dropout(p = %.1f) with the same seed drops the same elements", (double)p);
    }
    Rng r, fresh;
    rng_seed(&r, 82);
    rng_seed(&fresh, 82);
    memcpy(y, x, N * sizeof(float));
    dropout(y, N, 0.0f, &r);
    ok(!memcmp(y, x, N * sizeof(float)) && r.state == fresh.state, "dropout with p = 0 is the identity and draws nothing");
    dropout(y, N, 1.0f, &r);
    long nonzero = 0;
    for (long i = 0; i < N; i++) nonzero += y[i] != 0.0f;
    ok(nonzero == 0 && r.state == fresh.state, "dropout with p = 1 zeroes everything and draws nothing");
    float bad[] = { -0.1f, 1.5f, NAN };
    for (int i = 0; i < 3; i++)
        dies_with(drop_bad, &bad[i], "is not in [0, 1]", "dropout refuses p = %g", (double)bad[i]);
    free(x); free(y); free(y2);
}

/* ---- printing --------------------------------------------------------------- */

/* Values ((i * 37) mod 101) / 101, minus shift, rounded to float. */
static Tensor pattern(int ndim, const int *shape, double shift) {
    Tensor t = tensor_new(ndim, shape);
    for (long i = 0; i < t.size; i++) t.data[i] = (float)((i * 37 % 101) / 101.0 - shift);
    return t;
}

static void check_print(const char *label, const Tensor *t, const char *want, const char *what) {
    char *got = printed(label, t);
    is_str(got, want, "tensor_print: %s", what);
    free(got);
}

/* Every expected string below is what PyTorch 1.13 prints for the same numbers. */
static void test_print(void) {
    Tensor w = tensor_of(3, (int[]){ 2, 2, 2 }, (float[]){ 0.6514f, 0.3486f, 0.5122f, 0.4878f, 0.2207f, 0.7793f, 0.4950f, 0.5050f });
    check_print("attention_weight", &w,
                "attention_weight: tensor([[[0.6514, 0.3486],\n"
                "         [0.5122, 0.4878]],\n"
                "\n"
                "        [[0.2207, 0.7793],\n"
                "         [0.4950, 0.5050]]])\n",
                "a (2, 2, 2) tensor after a label, as print('label:', t) shows it");
    check_print(NULL, &w,
                "tensor([[[0.6514, 0.3486],\n         [0.5122, 0.4878]],\n\n        [[0.2207, 0.7793],\n         [0.4950, 0.5050]]])\n",
                "without a label, only tensor(...)");
    Tensor t;
    t = pattern(3, (int[]){ 1, 2, 12 }, 0);
    check_print(NULL, &t,
                "tensor([[[0.0000, 0.3663, 0.7327, 0.0990, 0.4653, 0.8317, 0.1980, 0.5644,\n"
                "          0.9307, 0.2970, 0.6634, 0.0297],\n"
                "         [0.3960, 0.7624, 0.1287, 0.4950, 0.8614, 0.2277, 0.5941, 0.9604,\n"
                "          0.3267, 0.6931, 0.0594, 0.4257]]])\n",
                "rows longer than 80 columns wrap, 8 numbers per line in 3-D");
    tensor_free(&t);
    t = pattern(3, (int[]){ 2, 3, 400 }, 0);
    check_print(NULL, &t,
                "tensor([[[0.0000, 0.3663, 0.7327,  ..., 0.4356, 0.8020, 0.1683],\n"
                "         [0.5347, 0.9010, 0.2673,  ..., 0.9703, 0.3366, 0.7030],\n"
                "         [0.0693, 0.4356, 0.8020,  ..., 0.5050, 0.8713, 0.2376]],\n"
                "\n"
                "        [[0.6040, 0.9703, 0.3366,  ..., 0.0396, 0.4059, 0.7723],\n"
                "         [0.1386, 0.5050, 0.8713,  ..., 0.5743, 0.9406, 0.3069],\n"
                "         [0.6733, 0.0396, 0.4059,  ..., 0.1089, 0.4752, 0.8416]]])\n",
                "over 1000 elements, long rows show 3 numbers at each end");
    tensor_free(&t);
    t = pattern(2, (int[]){ 40, 40 }, 0);
    check_print("big", &t,
                "big: tensor([[0.0000, 0.3663, 0.7327,  ..., 0.5545, 0.9208, 0.2871],\n"
                "        [0.6535, 0.0198, 0.3861,  ..., 0.2079, 0.5743, 0.9406],\n"
                "        [0.3069, 0.6733, 0.0396,  ..., 0.8614, 0.2277, 0.5941],\n"
                "        ...,\n"
                "        [0.1782, 0.5446, 0.9109,  ..., 0.7327, 0.0990, 0.4653],\n"
                "        [0.8317, 0.1980, 0.5644,  ..., 0.3861, 0.7525, 0.1188],\n"
                "        [0.4851, 0.8515, 0.2178,  ..., 0.0396, 0.4059, 0.7723]])\n",
                "a summarized (40, 40) matrix shows '...,' for its middle rows");
    tensor_free(&t);
    t = pattern(4, (int[]){ 2, 2, 2, 2 }, 0.5);
    check_print("h", &t,
                "h: tensor([[[[-0.5000, -0.1337],\n"
                "          [ 0.2327, -0.4010]],\n"
                "\n"
                "         [[-0.0347,  0.3317],\n"
                "          [-0.3020,  0.0644]]],\n"
                "\n"
                "\n"
                "        [[[ 0.4307, -0.2030],\n"
                "          [ 0.1634, -0.4703]],\n"
                "\n"
                "         [[-0.1040,  0.2624],\n"
                "          [-0.3713, -0.0050]]]])\n",
                "a (B, H, T, S) tensor: two blank lines between batches, one between heads");
    tensor_free(&t);
    t = pattern(4, (int[]){ 1, 1, 3, 9 }, 0.5);
    check_print("att", &t,
                "att: tensor([[[[-0.5000, -0.1337,  0.2327, -0.4010, -0.0347,  0.3317, -0.3020,\n"
                "            0.0644,  0.4307],\n"
                "          [-0.2030,  0.1634, -0.4703, -0.1040,  0.2624, -0.3713, -0.0050,\n"
                "            0.3614, -0.2723],\n"
                "          [ 0.0941,  0.4604, -0.1733,  0.1931, -0.4406, -0.0743,  0.2921,\n"
                "           -0.3416,  0.0248]]]])\n",
                "negative numbers widen every column, and the wrap follows");
    tensor_free(&t);

    static const struct { int ndim, shape[2]; float v[4]; const char *want, *what; } small[] = {
        { 2, { 2, 2 }, { 1, 0, 0, -1 }, "tensor([[ 1.,  0.],\n        [ 0., -1.]])\n", "whole numbers print as '1.'" },
        { 2, { 2, 2 }, { 1e-5f, 0.5f, 3, NAN }, "tensor([[1.0000e-05, 5.0000e-01],\n        [3.0000e+00,        nan]])\n",
          "a number below 1e-4 switches the tensor to scientific notation" },
        { 2, { 2, 2 }, { 2, -300, 7, 1e9f }, "tensor([[ 2.0000e+00, -3.0000e+02],\n        [ 7.0000e+00,  1.0000e+09]])\n",
          "whole numbers over 1e8 print in scientific notation" },
        { 1, { 2 }, { 0.99995f, 4.5398e-05f }, "tensor([9.9995e-01, 4.5398e-05])\n", "a peaked softmax prints in scientific notation" },
        { 2, { 2, 2 }, { 0, 0, 0, 0 }, "tensor([[0., 0.],\n        [0., 0.]])\n", "all zeros print as '0.'" },
        { 1, { 2 }, { NAN, INFINITY }, "tensor([nan, inf])\n", "NaN and inf alone" },
        { 1, { 3 }, { -INFINITY, 0.5f, INFINITY }, "tensor([  -inf, 0.5000,    inf])\n", "infinities are padded to the width" },
        { 1, { 2 }, { 123.456f, -7.5f }, "tensor([123.4560,  -7.5000])\n", "numbers above 10 widen the column" },
        { 1, { 2 }, { -0.0f, 0.0f }, "tensor([-0., 0.])\n", "negative zero keeps its sign" },
        { 1, { 1 }, { -NAN }, "tensor([nan])\n", "a negative NaN prints as 'nan', as Python does" },
    };
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        t = tensor_of(small[i].ndim, small[i].shape, small[i].v);
        check_print(NULL, &t, small[i].want, small[i].what);
        tensor_free(&t);
    }
    t = tensor_new(0, NULL);
    t.data[0] = 0.5f;
    check_print(NULL, &t, "tensor(0.5000)\n", "a scalar prints without brackets");
    tensor_free(&t);
    t = tensor_new3(1, 1, 1);
    t.data[0] = 1;
    check_print(NULL, &t, "tensor([[[1.]]])\n", "a single weight of 1 prints as PyTorch's [[[1.]]]");
    tensor_free(&t);
    tensor_free(&w);
}

/* ---- .npy files -------------------------------------------------------------- */

/* v as size bytes, little-endian. */
static void put_le(unsigned char *p, uint64_t v, int size) {
    for (int i = 0; i < size; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* A .npy file by hand: magic, version major.0, the header length (2 bytes in
 * 1.0, 4 in 2.0), the dict padded with spaces and a '\n' to a multiple of 64,
 * then the data bytes as given. */
static void write_npy(const char *path, int major, const char *dict, const void *data, size_t n) {
    unsigned char head[20000];
    size_t pre = major == 1 ? 10 : 12, len = strlen(dict) + 1;
    size_t hlen = len + (64 - (pre + len) % 64) % 64;
    memcpy(head, "\x93NUMPY", 6);
    head[6] = (unsigned char)major;
    head[7] = 0;
    put_le(head + 8, hlen, major == 1 ? 2 : 4);
    memset(head + pre, ' ', hlen);
    memcpy(head + pre, dict, strlen(dict));
    head[pre + hlen - 1] = '\n';
    FILE *f = fopen(path, "wb");
    fwrite(head, 1, pre + hlen, f);
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

static void write_raw(const char *path, const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    if (n) fwrite(bytes, 1, n, f);
    fclose(f);
}

/* Six <f4 values 1..6, little-endian. */
static const unsigned char *f4_data(void) {
    static unsigned char b[64];
    for (int i = 0; i < 16; i++) {
        float v = (float)(i + 1);
        uint32_t u;
        memcpy(&u, &v, 4);
        put_le(b + 4 * i, u, 4);
    }
    return b;
}

static void load_float(void *path) { Tensor t = npy_load(path, NPY_FLOAT); tensor_free(&t); }
static void load_mask(void *path) { Tensor t = npy_load(path, NPY_MASK); tensor_free(&t); }
static void try_load(void *path) { Tensor t = { 0 }; npy_try_load(path, NPY_MASK, &t); tensor_free(&t); }

/* Load a hand-made file and compare with the values it should hold. */
static void check_dtype(const char *name, const char *dict, const unsigned char *data, size_t n, int kind, int ndim,
                        const int *shape, const float *want, const char *what) {
    char path[256];
    in_tmp(path, sizeof path, name);
    write_npy(path, 1, dict, data, n);
    Tensor t = npy_load(path, kind);
    int same_shape = t.ndim == ndim && !memcmp(t.shape, shape, (size_t)ndim * sizeof(int));
    ok(same_shape && !memcmp(t.data, want, (size_t)t.size * sizeof(float)), "npy_load reads %s", what);
    tensor_free(&t);
}

static void test_npy_dtypes(void) {
    unsigned char b[64];
    double d[6] = { 0.1, -2.5, 3.0, 1e-3, 65504.0, -7.0 };
    float dw[6];
    for (int i = 0; i < 6; i++) { uint64_t u; memcpy(&u, &d[i], 8); put_le(b + 8 * i, u, 8); dw[i] = (float)d[i]; }
    check_dtype("f8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", b, 48, NPY_FLOAT, 2,
                (int[]){ 2, 3 }, dw, "<f8, rounding each value to float");

    int64_t i8[4] = { 0, 1, -3, (int64_t)1 << 40 };
    for (int i = 0; i < 4; i++) put_le(b + 8 * i, (uint64_t)i8[i], 8);
    check_dtype("i8.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", b, 32, NPY_MASK, 2,
                (int[]){ 2, 2 }, (float[]){ 0, 1, -3, 1099511627776.0f }, "an <i8 mask (torch.randint's int64)");

    int32_t i4[4] = { 0, 1, 7, -1 };
    for (int i = 0; i < 4; i++) put_le(b + 4 * i, (uint32_t)i4[i], 4);
    check_dtype("i4.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", b, 16, NPY_MASK, 1,
                (int[]){ 4 }, (float[]){ 0, 1, 7, -1 }, "an <i4 mask");

    unsigned char b1[6] = { 1, 0, 1, 1, 0, 0 }, u1[3] = { 0, 255, 1 };
    check_dtype("b1.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }", b1, 6, NPY_MASK, 2,
                (int[]){ 2, 3 }, (float[]){ 1, 0, 1, 1, 0, 0 }, "a |b1 (bool) mask");
    check_dtype("u1.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", u1, 3, NPY_MASK, 1,
                (int[]){ 3 }, (float[]){ 0, 255, 1 }, "a |u1 (uint8) mask");
    check_dtype("f4mask.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", f4_data(), 24, NPY_MASK, 1,
                (int[]){ 6 }, (float[]){ 1, 2, 3, 4, 5, 6 }, "a float mask");
    check_dtype("order.npy", "{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<f4\"}", f4_data(), 24,
                NPY_FLOAT, 2, (int[]){ 2, 3 }, (float[]){ 1, 2, 3, 4, 5, 6 },
                "a header with its keys in another order, double quotes, and no trailing comma");
    check_dtype("scalar.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f4_data(), 4, NPY_FLOAT, 0,
                (int[]){ 0 }, (float[]){ 1 }, "a scalar, shape ()");

    char path[256];
    in_tmp(path, sizeof path, "v2.npy");
    write_npy(path, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", f4_data(), 16);
    Tensor t = npy_load(path, NPY_FLOAT);
    ok(t.ndim == 2 && t.shape[0] == 2 && t.data[3] == 4.0f, "npy_load reads format version 2.0 (4-byte header length)");
    tensor_free(&t);
}

static void test_npy_save(void) {
    static const int shapes[][5] = { { 3, 3, 2, 4 }, { 1, 5 }, { 4, 1, 1, 1, 1 }, { 2, 2, 3 }, { 0 } };
    char path[256];
    in_tmp(path, sizeof path, "round.npy");
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        Tensor t = tensor_new(shapes[c][0], shapes[c] + 1), back;
        Rng r;
        rng_seed(&r, 90 + c);
        rand_uniform(t.data, t.size, -5, 5, &r);
        t.data[0] = -0.0f;
        npy_save(path, &t);
        back = npy_load(path, NPY_FLOAT);
        char s[64];
        shape_str(s, sizeof s, t.ndim, t.shape);
        ok(back.ndim == t.ndim && !memcmp(back.shape, t.shape, sizeof t.shape) &&
               !memcmp(back.data, t.data, (size_t)t.size * sizeof(float)),
           "a %s tensor survives npy_save and npy_load bit for bit", s);
        tensor_free(&t); tensor_free(&back);
    }

    /* The header np.save (NumPy 1.24) writes for np.zeros((3, 2, 4), np.float32): 128 bytes before the data. */
    static const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2, 4), }";
    Tensor t = tensor_new3(3, 2, 4);
    npy_save(path, &t);
    long n;
    unsigned char *b = file_bytes(path, &n);
    ok(!memcmp(b, "\x93NUMPY", 6) && b[6] == 1 && b[7] == 0, "npy_save writes the magic string and version 1.0");
    int hlen = b[8] | b[9] << 8;
    ok((10 + hlen) % 64 == 0 && b[10 + hlen - 1] == '\n', "the header ends in a newline at a multiple of 64 bytes");
    int spaces = 1;
    for (int i = 10 + (int)strlen(dict); i < 10 + hlen - 1; i++) spaces &= b[i] == ' ';
    ok(hlen == 118 && !memcmp(b + 10, dict, strlen(dict)) && spaces,
       "the header is exactly the one NumPy 1.24 writes: the dict, spaces, '\\n'");
    ok(n == 128 + 24 * 4, "the data, 24 floats, follows the 128-byte header and nothing else");
    t.data[1] = 1.5f;
    npy_save(path, &t);
    free(b);
    b = file_bytes(path, &n);
    ok(b[128 + 4] == 0x00 && b[128 + 5] == 0x00 && b[128 + 6] == 0xc0 && b[128 + 7] == 0x3f,
       "floats are written little-endian: 1.5 is 00 00 c0 3f");
    free(b);
    tensor_free(&t);
}

static void save_into_missing_dir(void *arg) {
    Tensor t = tensor_new1(3);
    npy_save(arg, &t);
}

static void test_npy_atomic(void) {
    char dir[256], path[300];
    in_tmp(dir, sizeof dir, "atomic");
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/x.npy", dir);
    Tensor a = tensor_of(2, (int[]){ 2, 2 }, (float[]){ 1, 2, 3, 4 }), b = tensor_of(1, (int[]){ 3 }, (float[]){ 7, 8, 9 });
    npy_save(path, &a);
    long n_old;
    unsigned char *old_bytes = file_bytes(path, &n_old);
    FILE *old = fopen(path, "rb");                     /* held open across the overwrite */
    npy_save(path, &b);
    unsigned char seen[256];
    long n_seen = (long)fread(seen, 1, sizeof seen, old);
    fclose(old);
    ok(n_seen == n_old && !memcmp(seen, old_bytes, (size_t)n_old),
       "a reader holding the old file still sees all of it after an overwrite: the new file was renamed into place");
    Tensor back = npy_load(path, NPY_FLOAT);
    ok(back.ndim == 1 && back.shape[0] == 3 && back.data[2] == 9, "the path now holds the new tensor");
    int found;
    ok(count_entries(dir, "tmp", &found) == 1 && !found, "npy_save leaves no temporary file behind");

    char missing[300];
    snprintf(missing, sizeof missing, "%s/no/such/dir/y.npy", dir);
    dies_with(save_into_missing_dir, missing, "y.npy: cannot write", "npy_save into a missing directory fails in one line");
    ok(count_entries(dir, "tmp", &found) == 1 && !found, "a failed npy_save leaves nothing behind");
    free(old_bytes);
    tensor_free(&a); tensor_free(&b); tensor_free(&back);
}

/* One malformed file: written, then refused with one line naming it. */
typedef struct Bad { const char *name; int major; const char *dict; size_t data_bytes; const char *says; } Bad;

static void test_npy_refusals(void) {
    static const Bad bad[] = {
        { "truncated.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
          "truncated: shape (2, 3) of '<f4' needs 24 bytes of data, the file has 20" },
        { "extra.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28,
          "4 bytes more than shape (2, 3) of '<f4' needs (24)" },
        { "lies.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", 24,
          "truncated: shape (2, 4) of '<f4' needs 32 bytes of data, the file has 24" },
        { "lies-small.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 24,
          "8 bytes more than shape (2, 2)" },
        { "fortran.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24, "Fortran order" },
        { "big-endian.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24,
          "dtype '>f4' is big-endian" },
        { "complex.npy", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", 24,
          "dtype '<c8' is not one we read (we read <f4 <f8)" },
        { "half.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", 12, "dtype '<f2' is not one we read" },
        { "int-param.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", 24,
          "dtype '<i8' is not float; only a mask may" },
        { "bool-param.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 3, "dtype '|b1' is not float" },
        { "huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", 24,
          "the shape is too large" },
        { "huge-digits.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 24,
          "the shape is too large" },
        { "int-overflow.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3000000000,), }", 24,
          "the shape is too large" },
        { "five-dims.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }", 4,
          "5 dimensions: at most 4" },
        { "negative.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", 24,
          "dimension 0 of the shape is -3" },
        { "empty-dim.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0), }", 0,
          "dimension 1 of the shape is 0" },
        { "no-order.npy", 1, "{'descr': '<f4', 'shape': (2, 3), }", 24, "the .npy header has no 'fortran_order'" },
        { "no-shape.npy", 1, "{'descr': '<f4', 'fortran_order': False}", 24, "the .npy header has no 'shape'" },
        { "extra-key.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", 24,
          "the .npy header has a key 'extra'" },
        { "twice.npy", 1, "{'descr': '<f4', 'shape': (2, 3), 'fortran_order': False, 'shape': (6,)}", 24,
          "the .npy header gives 'shape' twice" },
        { "garbage.npy", 1, "hello world", 24, "malformed .npy header: expected '{' starting the dict at character 0" },
        { "not-a-dict.npy", 1, "{'descr' '<f4'}", 24, "malformed .npy header: expected ':' after a key" },
        { "one-tuple.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", 24, "malformed .npy header: expected a comma: Python writes a one-element tuple (5,)" },
        { "bad-bool.npy", 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (6,), }", 24, "malformed .npy header: expected True or False" },
        { "bad-shape.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 24,
          "malformed .npy header: expected a whole number in the shape" },
        { "after-dict.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), } junk", 24,
          "malformed .npy header: expected nothing but spaces after the dict" },
        { "unclosed.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)", 24, "malformed .npy header: expected ',' or '}'" },
        { "v2-bad.npy", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", 24, "truncated: shape (7) of '<f4' needs 28 bytes" },
    };
    char path[256], part[300];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        in_tmp(path, sizeof path, bad[i].name);
        write_npy(path, bad[i].major, bad[i].dict, f4_data(), bad[i].data_bytes);
        snprintf(part, sizeof part, "%s: %s", bad[i].name, bad[i].says);
        dies_with(load_float, path, part, "npy_load refuses %s in one line: %s", bad[i].name, bad[i].says);
    }
    in_tmp(path, sizeof path, "int-param.npy");
    Tensor m = npy_load(path, NPY_MASK);
    ok(m.size == 3, "the same <i8 file loads as a mask");
    tensor_free(&m);
    in_tmp(path, sizeof path, "short-int.npy");
    write_npy(path, 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", f4_data(), 6);
    dies_with(load_mask, path, "short-int.npy: dtype '<i2' is not one we read (we read <f4 <f8 <i8 <i4 |b1 |u1)",
              "a mask of a dtype we do not read is refused, listing the ones we do");

    /* Files broken below the header's dict. */
    struct { const char *name; const void *bytes; size_t n; const char *says; } broken[] = {
        { "empty.npy", "", 0, "truncated: 0 bytes" },
        { "text.npy", "hello", 5, "not a .npy file" },
        { "magic.npy", "\x93NUMPZ\x01\x00\x10\x00", 10, "not a .npy file" },
        { "seven.npy", "\x93NUMPY\x01", 7, "truncated: 7 bytes" },
        { "version3.npy", "\x93NUMPY\x03\x00\x10\x00", 10, ".npy format version 3.0: we read 1.0 and 2.0" },
        { "no-length.npy", "\x93NUMPY\x01\x00\x10", 9, "truncated: 9 bytes" },
        { "long-header.npy", "\x93NUMPY\x01\x00\xe8\x03{'descr'", 18, "the header claims 1000 bytes, but the file ends 8 bytes into it" },
        { "v2-long.npy", "\x93NUMPY\x02\x00\xff\xff\xff\xff{", 13, "the header claims 4294967295 bytes" },
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        in_tmp(path, sizeof path, broken[i].name);
        write_raw(path, broken[i].bytes, broken[i].n);
        snprintf(part, sizeof part, "%s: %s", broken[i].name, broken[i].says);
        dies_with(load_float, path, part, "npy_load refuses %s in one line: %s", broken[i].name, broken[i].says);
    }
    in_tmp(path, sizeof path, "nul.npy");   /* a valid file, then one space of its header made NUL */
    write_npy(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f4_data(), 4);
    FILE *f = fopen(path, "r+b");
    fseek(f, 10 + 16, SEEK_SET);
    fputc('\0', f);
    fclose(f);
    dies_with(load_float, path, "nul.npy: the .npy header holds a NUL byte", "a header holding a NUL byte is refused");
    in_tmp(path, sizeof path, "too-long-header.npy");
    {
        static char dict[12000];
        memset(dict, ' ', sizeof dict - 1);
        memcpy(dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 57);
        write_npy(path, 2, dict, f4_data(), 4);
        dies_with(load_float, path, "over NumPy's limit of 10000", "a header over 10000 bytes is refused, as NumPy refuses it");
    }
    in_tmp(path, sizeof path, "does-not-exist.npy");
    dies_with(load_float, path, "does-not-exist.npy: cannot open: No such file or directory", "a missing file is refused");
    dies_with(load_float, tmp, ": not a regular file", "a directory is refused");

    Tensor opt = { 0 };
    ok(npy_try_load(path, NPY_MASK, &opt) == 0 && opt.data == NULL, "npy_try_load of a missing file returns 0: no mask");
    in_tmp(path, sizeof path, "b1.npy");
    ok(npy_try_load(path, NPY_MASK, &opt) == 1 && opt.size == 6 && opt.data[0] == 1, "npy_try_load of a present file loads it");
    tensor_free(&opt);
    in_tmp(path, sizeof path, "truncated.npy");
    dies_with(try_load, path, "truncated.npy: truncated", "npy_try_load of a present but bad file still refuses it");
    TapChild c = run_child(load_float, path);
    like(c.err, ": chapters/A-machinery.md:", "an error from the .npy reader names its line in Appendix A, beside the check's prose");
}

/* ---- loading and dumping by name ---------------------------------------------- */

static void load_wrong_shape(void *dir) {
    Tensor t;
    load_param(&t, dir, "w", 2, (int[]){ 3, 3 });
}
static void load_missing(void *dir) {
    Tensor t;
    load_param(&t, dir, "nothing", 1, (int[]){ 3 });
}
static void disagree(void *arg) {
    Args a = { .dim = 8, .given = GIVEN_DIM };
    args_agree(&a, GIVEN_DIM, &a.dim, 4, "--dim", arg);
}
static void dump_onto_file(void *dir) {
    Tensor t = tensor_new1(2);
    dump_tensor(dir, "x", &t);
}

static void test_by_name(void) {
    char dir[256], path[300];
    in_tmp(dir, sizeof dir, "dump/a/b");
    Tensor w = tensor_of(2, (int[]){ 2, 3 }, (float[]){ 1, 2, 3, 4, 5, 6 }), back;
    dump_tensor(dir, "w", &w);
    snprintf(path, sizeof path, "%s/w.npy", dir);
    ok(file_exists(path), "dump_tensor makes missing directories, like mkdir -p, and writes DIR/NAME.npy");
    dump_tensor(dir, "w", &w);
    ok(file_exists(path), "dump_tensor into an existing directory works too");
    load_param(&back, dir, "w", 2, (int[]){ 2, 3 });
    ok(!memcmp(back.data, w.data, 6 * sizeof(float)), "load_param reads DIR/NAME.npy back");
    dies_with(load_wrong_shape, dir, "w.npy: shape (2, 3), expected (3, 3)",
              "load_param refuses a parameter of the wrong shape, naming the file, got and expected");
    dies_with(load_missing, dir, "nothing.npy: cannot open", "load_param refuses a missing parameter, naming it");
    dies_with(dump_onto_file, path, "w.npy", "dump_tensor refuses a directory path that is a file");

    Args a = { .dim = 8 };
    args_agree(&a, GIVEN_DIM, &a.dim, 4, "--dim", "d/X.npy");
    is_int(a.dim, 4, "a size not given as a flag is taken from the file");
    a.given = GIVEN_DIM;
    args_agree(&a, GIVEN_DIM, &a.dim, 4, "--dim", "d/X.npy");
    is_int(a.dim, 4, "a size given as a flag that agrees with the file is fine");
    dies_with(disagree, "d/X.npy", "--dim 8 disagrees with d/X.npy (4)", "a size flag that disagrees with a file is refused");
    tensor_free(&w); tensor_free(&back);
}

/* ---- the command line ---------------------------------------------------------- */

#define ALL_OPTIONS (OPT_CASE | OPT_HEADS | OPT_KV_HEADS | OPT_KV_SEQ | OPT_MASK | OPT_DROPOUT)

typedef struct Cmd { unsigned options; const char *argv[24]; } Cmd;

static Args defaults(void) {
    return (Args){ .batch = 3, .seq = 2, .dim = 4, .heads = 1, .kv_heads = 1, .kv_seq = 2, .seed = 42 };
}

/* Parse cmd's arguments after argv[0] = "/some/dir/prog" into a. */
static void parse(Args *a, const Cmd *cmd) {
    char *argv[26] = { "/some/dir/prog" };
    int argc = 1;
    while (cmd->argv[argc - 1]) argv[argc] = (char *)cmd->argv[argc - 1], argc++;
    args_parse(a, argc, argv, cmd->options, "prog: a test of the shared command line");
}

static void parse_in_child(void *cmd) {
    Args a = defaults();
    parse(&a, cmd);
}

typedef struct Reasoned { Args *a; const Cmd *cmd; } Reasoned;
static void parse_with_reasons(void *arg) {
    Reasoned *r = arg;
    parse(r->a, r->cmd);
}

static void parse_refuses(unsigned options, const char *a1, const char *a2, const char *a3, const char *says, const char *why) {
    Cmd cmd = { options, { a1, a2, a3, NULL } };
    char line[200] = "";
    for (int i = 0; cmd.argv[i]; i++) snprintf(line + strlen(line), sizeof line - strlen(line), "%s'%s'", i ? " " : "", cmd.argv[i]);
    dies_with(parse_in_child, &cmd, says, "args_parse refuses %s, %s", line, why);
}

static void test_args(void) {
    Args a = defaults();
    parse(&a, &(Cmd){ 0, { NULL } });
    ok(a.batch == 3 && a.seq == 2 && a.dim == 4 && a.seed == 42 && a.given == 0 && a.dropout == 0 && !a.train &&
           !a.load && !a.dump && !a.quiet && !a.causal,
       "without flags the caller's defaults stay, nothing is marked given");
    is_str(program_name, "prog", "program_name is argv[0] without its directory");

    a = defaults();
    parse(&a, &(Cmd){ ALL_OPTIONS, { "--batch", "2", "--seq", "5", "--dim", "8", "--heads", "2", "--kv-heads", "1",
                                     "--kv-seq", "7", "--seed", "123", "--causal", "--train", NULL } });
    ok(a.batch == 2 && a.seq == 5 && a.dim == 8 && a.heads == 2 && a.kv_heads == 1 && a.kv_seq == 7 && a.seed == 123 &&
           a.causal && a.train,
       "every size flag, --seed, --causal and --train are read");
    is_int(a.given, GIVEN_BATCH | GIVEN_SEQ | GIVEN_DIM | GIVEN_HEADS | GIVEN_KV_HEADS | GIVEN_KV_SEQ,
           "each size flag given sets its GIVEN_ bit");
    ok(a.dropout == 0.1f, "--train alone means dropout 0.1, the sources' nn.Dropout(0.1)");
    a = defaults();
    parse(&a, &(Cmd){ OPT_CASE | OPT_DROPOUT, { "--train", "--dropout", "0.25", "--load", "in", "--dump", "out", "--quiet", NULL } });
    ok(a.train && a.dropout == 0.25f && !strcmp(a.load, "in") && !strcmp(a.dump, "out") && a.quiet,
       "--train --dropout 0.25, --load, --dump and --quiet are read");
    a = defaults();
    parse(&a, &(Cmd){ OPT_CASE | OPT_DROPOUT, { "--dropout", "0", "--train", "--seed", "18446744073709551615", "--dim",
                                                "65536", NULL } });
    ok(a.dropout == 0 && a.seed == UINT64_MAX && a.dim == 65536, "--dropout 0 is allowed, a seed may be 2^64 - 1");
    a = defaults();
    parse(&a, &(Cmd){ OPT_CASE | OPT_DROPOUT, { "--seq=5", "--dump=d=1", "--train", "--dropout=0.5", NULL } });
    ok(a.seq == 5 && !strcmp(a.dump, "d=1") && a.dropout == 0.5f && (a.given & GIVEN_SEQ),
       "--flag=value is read as --flag value (the value may hold '=' itself)");
    a = defaults();
    parse(&a, &(Cmd){ OPT_CASE | OPT_HEADS | OPT_KV_HEADS, { "--load", "in", "--heads", "2", "--kv-heads", "1", NULL } });
    ok(!strcmp(a.load, "in") && a.heads == 2 && a.kv_heads == 1, "--load with --heads and --kv-heads is read");

    parse_refuses(0, "--frobnicate", NULL, NULL, "unknown flag --frobnicate (prog --help lists", "an unknown flag");
    parse_refuses(0, "--heads", "2", NULL, "unknown flag --heads", "a flag this program does not take, like an unknown one");
    parse_refuses(OPT_HEADS, "--causal", NULL, NULL, "unknown flag --causal", "--causal without OPT_MASK");
    parse_refuses(OPT_MASK, "--train", NULL, NULL, "unknown flag --train", "--train without OPT_DROPOUT");
    parse_refuses(0, "--kv-seq", "4", NULL, "unknown flag --kv-seq", "--kv-seq without OPT_KV_SEQ");
    parse_refuses(OPT_CASE, "--dim", "abc", NULL, "--dim abc: not a whole number", "a size that is not a number");
    parse_refuses(OPT_CASE, "--dim", "0", NULL, "--dim 0: must be from 1 to 65536", "a size of 0");
    parse_refuses(OPT_CASE, "--dim", "-3", NULL, "--dim -3: must be from 1 to 65536", "a negative size");
    parse_refuses(OPT_CASE, "--dim", "5x", NULL, "--dim 5x: not a whole number", "a size with junk after it");
    parse_refuses(OPT_CASE, "--dim", "", NULL, "--dim : not a whole number", "an empty size");
    parse_refuses(OPT_CASE, "--seq", "65537", NULL, "--seq 65537: must be from 1 to 65536", "a size over 65536");
    parse_refuses(OPT_CASE, "--batch", "99999999999999999999", NULL, "must be from 1 to 65536", "a size too big for a long");
    parse_refuses(OPT_CASE, "--dim", NULL, NULL, "--dim needs a value: --dim D", "a flag missing its value at the end");
    parse_refuses(OPT_CASE, "--dim", "--quiet", NULL, "--dim needs a value: --dim D", "a flag followed by another flag");
    parse_refuses(OPT_CASE, "--seed", "-1", NULL, "--seed -1: not a whole number from 0 to 2^64 - 1", "a negative seed");
    parse_refuses(OPT_CASE, "--seed", "18446744073709551616", NULL, "not a whole number from 0 to 2^64 - 1", "a seed of 2^64");
    parse_refuses(OPT_CASE, "--seed", "abc", NULL, "--seed abc: not a whole number", "a seed that is not a number");
    parse_refuses(OPT_DROPOUT, "--train", "--dropout", "1", "--dropout 1: must be at least 0 and below 1", "dropout 1");
    parse_refuses(OPT_DROPOUT, "--train", "--dropout", "-0.1", "--dropout -0.1: must be at least 0", "a negative dropout");
    parse_refuses(OPT_DROPOUT, "--train", "--dropout", "1.5", "--dropout 1.5: must be", "dropout 1.5");
    parse_refuses(OPT_DROPOUT, "--train", "--dropout", "nan", "--dropout nan: must be", "dropout NaN");
    parse_refuses(OPT_DROPOUT, "--train", "--dropout", "0.99999999", "must be at least 0 and below 1",
            "a dropout that rounds to 1 as a float");
    parse_refuses(OPT_DROPOUT, "--train", "--dropout", "x", "--dropout x: not a number", "a dropout that is not a number");
    parse_refuses(OPT_DROPOUT, "--dropout", "0.2", NULL, "--dropout without --train", "--dropout without --train");
    parse_refuses(0, "extra", NULL, NULL, "unexpected argument 'extra'", "a stray argument");
    parse_refuses(0, "-d", "4", NULL, "unexpected argument '-d'", "a short flag");
    parse_refuses(0, "--dim", "4", NULL, "unknown flag --dim", "a size flag, for a program that takes none");
    parse_refuses(OPT_CASE, "--seq", "4", "--seq=5", "--seq is given twice", "a flag given twice");
    parse_refuses(OPT_CASE, "--quiet", "--quiet", NULL, "--quiet is given twice", "a switch given twice");
    parse_refuses(OPT_MASK, "--causal=1", NULL, NULL, "--causal takes no value", "a value given to a switch");
    parse_refuses(OPT_CASE, "--seq=", NULL, NULL, "--seq : not a whole number", "an empty value after '='");
    parse_refuses(OPT_CASE, "--sequence=4", NULL, NULL, "unknown flag --sequence", "an unknown flag with '='");
    parse_refuses(OPT_CASE | OPT_HEADS, "--load", "in", NULL, "--load needs --heads: the .npy files do not say how many heads",
            "--load without --heads, for a program with heads");
    parse_refuses(OPT_CASE | OPT_HEADS | OPT_KV_HEADS, "--load", "in", "--heads=2", "--load needs --kv-heads",
            "--load without --kv-heads, for a program with key/value heads");
    char blocked[300];
    in_tmp(blocked, sizeof blocked, "a-file");
    FILE *f = fopen(blocked, "w");
    if (f) fclose(f);
    snprintf(blocked + strlen(blocked), sizeof blocked - strlen(blocked), "/sub");
    parse_refuses(OPT_CASE, "--dump", blocked, NULL, "a-file/sub: Not a directory",
            "--dump under a file: refused while parsing, before any work");
    ok(!file_exists(blocked), "...and nothing was made");
    Cmd reasoned = { OPT_CASE, { "--seq", "4", "--causal", NULL } };
    static const char *const why[] = { "--train", "no dropout here", "--causal", "no causal mask here", NULL };
    Args with_reasons = defaults();
    with_reasons.refused = why;
    TapChild r = run_child(parse_with_reasons, &(Reasoned){ &with_reasons, &reasoned });
    ok(r.status == 1 && strstr(r.err, "prog: ") && strstr(r.err, ": --causal: no causal mask here\n") && !r.out[0],
       "a flag the program refuses with a reason (Args.refused) is refused with that reason");

    Cmd help = { OPT_CASE, { "--batch", "7", "--help", NULL } };
    TapChild c = run_child(parse_in_child, &help);
    ok(c.status == 0 && c.err[0] == '\0', "--help exits 0 and prints nothing on stderr");
    like(c.out, "usage: prog [flags]\nprog: a test of the shared command line\n", "--help starts with the usage and the program's description");
    like(c.out, "  --batch B       sequences in the batch\n", "--help lists --batch with its help");
    ok(!strstr(c.out, "--heads") && !strstr(c.out, "--causal") && !strstr(c.out, "--dropout"),
       "--help lists no flag the program does not take");
    like(c.out, "defaults: --batch 7 --seq 2 --dim 4 --seed 42\n", "--help ends with the values the program would use");
    help.options = ALL_OPTIONS;
    c = run_child(parse_in_child, &help);
    like(c.out, "  --heads H", "with OPT_HEADS, --help lists --heads");
    like(c.out, "--heads 1 --kv-heads 1 --kv-seq 2 --seed 42", "...and its default");
    like(c.out, "  --dropout P", "with OPT_DROPOUT, --help lists --dropout");
    Cmd h = { 0, { "-h", NULL } };
    c = run_child(parse_in_child, &h);
    ok(c.status == 0 && strstr(c.out, "usage: prog") && !strstr(c.out, "--batch") && !strstr(c.out, "defaults:") &&
           strstr(c.out, "--quiet") && strstr(c.out, "--help"),
       "-h is --help; a program without options lists --quiet and --help and no defaults");
}

/* split_heads / merge_heads against PyTorch's index rule, written out here:
 * y = x.view(B, T, H, hd).transpose(1, 2) has y[b][h][t][i] = x[b][t][h * hd + i]. */
static void test_heads(void) {
    static const int shapes[][4] = { {2, 3, 4, 2}, {1, 5, 1, 7}, {3, 1, 6, 1}, {2, 4, 3, 5} };
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int B = shapes[c][0], T = shapes[c][1], H = shapes[c][2], hd = shapes[c][3], D = H * hd;
        long n = (long)B * T * D;
        float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *back = malloc(n * sizeof *back);
        for (long i = 0; i < n; i++) x[i] = (float)i;          /* every element different */
        split_heads(y, x, B, T, H, hd);
        long wrong = 0;
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int t = 0; t < T; t++)
                    for (int i = 0; i < hd; i++)
                        wrong += y[((b * H + h) * T + t) * hd + i] != x[(b * T + t) * D + h * hd + i];
        ok(wrong == 0, "split_heads puts x[b, t, h*hd + i] at [b, h, t, i] for (B, T, H, hd) = (%d, %d, %d, %d)",
           B, T, H, hd);
        merge_heads(back, y, B, T, H, hd);
        ok(memcmp(back, x, n * sizeof *x) == 0, "merge_heads undoes split_heads exactly for (B, T, H, hd) = (%d, %d, %d, %d)",
           B, T, H, hd);
        free(x); free(y); free(back);
    }
    float x1[6] = { 0, 1, 2, 3, 4, 5 }, y1[6];        /* B = 1, T = 3, H = 2, hd = 1 */
    split_heads(y1, x1, 1, 3, 2, 1);
    ok(y1[0] == 0 && y1[1] == 2 && y1[2] == 4 && y1[3] == 1 && y1[4] == 3 && y1[5] == 5,
       "a hand-worked split: three positions of two one-number heads become [0 2 4 | 1 3 5]");
}

int main(void) {
    snprintf(tmp, sizeof tmp, "/tmp/abh-tensor-XXXXXX");
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    TEST_GROUP(test_tensors());
    TEST_GROUP(test_rng());
    TEST_GROUP(test_rng_stream());
    TEST_GROUP(test_init_linear());
    TEST_GROUP(test_linear());
    TEST_GROUP(test_matmuls());
    TEST_GROUP(test_heads());
    /* Exercise 0.7 (the body of softmax_lastdim): the tests that say it is done */
    EXERCISE("0.7", 8, test_softmax_by_hand());
    EXERCISE("0.7", 3, test_softmax_reference());
    TEST_GROUP(test_masks());
    TEST_GROUP(test_dropout());
    TEST_GROUP(test_print());
    TEST_GROUP(test_npy_dtypes());
    TEST_GROUP(test_npy_save());
    TEST_GROUP(test_npy_atomic());
    TEST_GROUP(test_npy_refusals());
    TEST_GROUP(test_by_name());
    TEST_GROUP(test_args());

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) diag("could not remove %s", tmp);
    done_testing();
    return exit_status();
}
