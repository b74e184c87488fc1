/* Hidden tests for Exercise 2.6 (chapter 2: the split of the fused projection).
 *
 * For teachers: a student handout leaves this folder out, so these cases are
 * ones the student has not seen. They run SelfAttV2 on shapes the public tests
 * do not use (sizes of 1, odd sizes, D = 1 and D = 33) from other seeds, and
 * compare its weights and output with the double-precision reference of
 * tests/reference.h, which reads Q, K and V straight from the three blocks of
 * rows of proj.weight and never splits anything. `make test` and `make grade`
 * run it. */
#define TESTING
#include "selfatt_v2.c"
#include "tap.h"
#include "run.h"
#define MODULE_SELFATT_V2
#include "reference.h"

/* SelfAttV2 for tests/reference.h's pass (ref_check): Q, K and V read straight from
 * the three blocks of rows of proj. */
static RefCase case_of(const SelfAttV2 *m, const float *x, int B, int T) {
    int D = m->dim;
    const float *w = m->proj_w.data, *b = m->proj_b.data;
    /* q: rows [0, D), k: rows [D, 2D), v: rows [2D, 3D) */
    RefWeights ws = { w, b, w + D * D, b + D, w + 2 * D * D, b + 2 * D, m->out_w.data, m->out_b.data };
    return (RefCase){ ws, x, x, x, D, { .B = B, .T = T, .H = 1, .hd = D }, NULL, NULL };
}

/* One test: SelfAttV2 on (B, T, D) from `seed` against the reference. */
static void check(int B, int T, int D, uint64_t seed, const char *what) {
    Args a = { .batch = B, .seq = T, .dim = D, .seed = seed };
    SelfAttV2 m = {0};
    Tensor x;
    make_v2_module(&m, &x, &a);
    Tensor att = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
    STUDENT(selfatt_v2_forward(out.data, att.data, &m, x.data, B, T));
    RefCase c = case_of(&m, x.data, B, T);
    c.out = out.data, c.att = att.data;
    ref_check(&c, NULL, 0, "(B, T, D) = (%d, %d, %d), seed %llu, %s: weights and output match a double-precision "
              "reference, within what float32 rounding allows", B, T, D, (unsigned long long)seed, what);
    free(ratt); free(rout);
    tensor_free(&att); tensor_free(&out); tensor_free(&x);
    free_v2_module(&m);
}

static void test_other_shapes(void) {
    check(1, 1, 3, 901, "one position, so the output is output_proj(v) alone");
    check(4, 1, 2, 902, "four sequences of one position");
    check(1, 6, 1, 903, "D = 1, so q, k and v are columns 0, 1 and 2");
    check(3, 5, 7, 904, "odd sizes");
    check(2, 3, 33, 905, "an odd D larger than the public tests'");
    check(7, 2, 3, 906, "more sequences than positions");
}

int main(void) {
    (void)print_run, (void)selfatt_v2_params, (void)selfatt_v2_macs_all;   /* the program's, not tested here */
    EXERCISE("2.6", 6, test_other_shapes());
    done_testing();
    return exit_status();
}
