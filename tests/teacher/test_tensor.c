/* Hidden tests for teachers: Exercise 0.7, the body of softmax_lastdim.
 *
 * A student handout leaves this folder out, so these cases are ones the
 * student has not seen: rows of one score, rows of +-1e30, rows of scores far
 * below zero, rows mixing -inf with finite scores and with -1e20, one very
 * long row, an odd shape from another seed, and the floats after the last row
 * left alone. Every expected value comes from the double-precision softmax
 * below, written here and not copied from the chapter. `make test` and
 * `make grade` build and run this file like tests/test_tensor.c. */
#include "tensor.h"
#include "tap.h"
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference ---------------------------------------------------------- */

/* softmax of each of the rows of n floats of x into want, in double: shift by
 * the row's largest score (fmax over the row, starting from its first score), then
 * exponentiate and normalise. A row whose largest score is -inf or +inf, or
 * that holds a NaN, becomes NaN, as torch.softmax gives. */
static void ref_softmax(double *want, const float *x, long rows, int n) {
    for (long r = 0; r < rows; r++) {
        const float *row = x + r * n;
        double top = row[0], total = 0;
        int has_nan = isnan(row[0]);
        for (int j = 1; j < n; j++) {
            top = fmax(top, (double)row[j]);
            has_nan |= isnan(row[j]);
        }
        for (int j = 0; j < n; j++) {
            double e = exp((double)row[j] - top);   /* NaN when top is infinite */
            want[r * n + j] = e;
            total += e;
        }
        for (int j = 0; j < n; j++) want[r * n + j] = has_nan ? NAN : want[r * n + j] / total;
    }
}

/* n floats uniform in [lo, hi) from a seed (the chapter's generator, tested in
 * tests/test_tensor.c; it only makes inputs here). */
static float *uniform(long n, float lo, float hi, uint64_t seed) {
    Rng rng;
    float *x = malloc((size_t)n * sizeof *x);
    rng_seed(&rng, seed);
    rand_uniform(x, n, lo, hi, &rng);
    return x;
}

/* softmax_lastdim on a copy of x (rows, n), compared with the reference, each weight
 * within p_j (u |x_j - max| + gamma(n + 5)) + FLT_MIN of it, u = 2^-24: how far a
 * float32 softmax may be, in any order of its sum and form (the shift by the maximum
 * rounds once, expf within one unit in the last place, a sum of n terms, the division
 * or the reciprocal and product; a weight may underflow). */
static void check_rows(const float *x, long rows, int n, const char *what) {
    float *got = malloc((size_t)(rows * n) * sizeof *got);
    double *want = malloc((size_t)(rows * n) * sizeof *want), *bound = malloc((size_t)(rows * n) * sizeof *bound);
    double u = 0x1p-24, g = (n + 5) * u / (1 - (n + 5) * u);
    memcpy(got, x, (size_t)(rows * n) * sizeof *got);
    ref_softmax(want, x, rows, n);
    for (long r = 0; r < rows; r++) {
        float top = -INFINITY;
        for (int j = 0; j < n; j++) top = fmaxf(top, x[r * n + j]);
        for (int j = 0; j < n; j++) {
            double t = isfinite(x[r * n + j]) && isfinite(top) ? fabs((double)x[r * n + j] - top) : 0;
            double p = isnan(want[r * n + j]) ? 0 : want[r * n + j];
            bound[r * n + j] = p * (u * t + g) + 0x1p-126;
        }
    }
    STUDENT(softmax_lastdim(got, rows, n));
    within_ok(got, want, bound, rows * n, "%s", what);
    free(bound);
    free(got);
    free(want);
}

/* ---- the tests -------------------------------------------------------------- */

/* A row of one score is 1 whatever the score, if it is finite: also -1e30,
 * whose exponential underflows unless the maximum is subtracted first. */
static void test_single_scores(void) {
    const float x[] = { 5, -3, 0, 1e30f, -1e30f, -1e20f, -250, -INFINITY };
    check_rows(x, 8, 1, "eight rows of one score (5, -3, 0, +-1e30, -1e20, -250, -inf) are 1 each, NaN for -inf");
}

/* Scores so large or so small that only the differences can be exponentiated. */
static void test_extremes(void) {
    const float huge[] = {
        1e30f, -1e30f, 1e30f,
        -1e30f, -1e30f, -1e30f,
        1e30f, 0, -1e30f,
        -1e30f, 1e30f, 1e30f - 1e24f,
    };
    check_rows(huge, 4, 3, "rows of +-1e30 (4, 3): the weights of the double softmax, no NaN");

    const float hidden[] = {
        -INFINITY, 1, 2, -INFINITY,
        -1e20f, -INFINITY, -1e20f, -INFINITY,
        -INFINITY, -INFINITY, -INFINITY, 7,
        -INFINITY, -INFINITY, -INFINITY, -INFINITY,
        3, -INFINITY, 3, 3,
    };
    check_rows(hidden, 5, 4,
               "rows with -inf entries (5, 4): those get 0, -1e20 among -inf shares evenly, all -inf is NaN");

    float *deep = uniform(3 * 5, -400, -300, 91);
    check_rows(deep, 3, 5, "rows of scores in [-400, -300) (3, 5), each exp(score) 0 in float, match the reference");
    free(deep);
}

/* Shapes the public tests do not use, and nothing written past the end. */
static void test_shapes(void) {
    enum { LONG = 100003 };
    float *wide = uniform(2L * LONG, -20, 20, 4242);
    check_rows(wide, 2, LONG, "two rows of 100003 scores in [-20, 20) match the double reference");
    free(wide);

    enum { R = 33, C = 17 };
    float *odd = uniform(R * C, -50, 50, 2024);
    check_rows(odd, R, C, "(33, 17) scores in [-50, 50) from seed 2024 match the double reference");
    free(odd);

    float buf[3 * 5 + 4];
    for (int i = 0; i < 3 * 5; i++) buf[i] = (float)(i % 7) - 3;
    for (int i = 3 * 5; i < 3 * 5 + 4; i++) buf[i] = 1234.5f;
    STUDENT(softmax_lastdim(buf, 3, 5));
    ok(buf[15] == 1234.5f && buf[16] == 1234.5f && buf[17] == 1234.5f && buf[18] == 1234.5f,
       "softmax of (3, 5) leaves the four floats after its last row as they were");
}

int main(void) {
    EXERCISE("0.7", 1, test_single_scores());
    EXERCISE("0.7", 3, test_extremes());
    EXERCISE("0.7", 3, test_shapes());
    done_testing();
    return exit_status();
}
