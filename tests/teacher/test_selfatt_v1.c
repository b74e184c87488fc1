/* Hidden tests for Exercise 1.6 (passes 2 to 4 of SelfAttV1), for teachers.
 *
 * A student handout leaves tests/teacher/ out, so a solution cannot be fitted to
 * these cases. `make test` and `make grade` run them in the full book; to grade a
 * student's tree, run `make grade TEACHER_TESTS=/path/to/the/book/tests/teacher`
 * there. Every case is checked against a double-precision reference written
 * in tests/reference.h, independently of the chapter. */
#define TESTING
#include "selfatt_v1.c"
#include "tap.h"
#include "run.h"
#define MODULE_SELFATT_V1
#include "reference.h"

#include <stdlib.h>

/* The reference is reference.h's ref_check: SelfAttV1 from the formula, in double,
 * softmax(Q K^T / sqrt(D)) V with the row maximum subtracted so that large scores do
 * not overflow (one head, no output projection), and the bound of a float32 pass. */

/* One case: sizes, a seed, and a factor for the query weights (large factors
 * make large scores, which a softmax without its maximum cannot take). Two tests:
 * the weights and the output against the reference. */
static void check_case(int B, int T, int D, uint64_t seed, float sharpen) {
    SelfAttV1 m = {0};
    Tensor x, att = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    make_module(&m, &x, &(Args){ .batch = B, .seq = T, .dim = D, .seed = seed });   /* as the program makes them */
    for (long i = 0; i < m.query_w.size; i++) m.query_w.data[i] *= sharpen;
    double *ratt = malloc((size_t)att.size * sizeof *ratt), *rout = malloc((size_t)out.size * sizeof *rout);
    STUDENT(selfatt_v1_forward(out.data, att.data, &m, x.data, B, T));
    RefWeights w = { m.query_w.data, m.query_b.data, m.key_w.data, m.key_b.data, m.value_w.data, m.value_b.data, NULL,
                     NULL };
    RefCase c = { w, x.data, x.data, x.data, D, { .B = B, .T = T, .H = 1, .hd = D }, NULL, att.data };
    ref_check(&c, NULL, 0, "hidden case (B, T, D) = (%d, %d, %d), seed %llu, query weights x%g: the weights, within "
              "what float32 rounding allows", B, T, D, (unsigned long long)seed, sharpen);
    c.att = NULL, c.out = out.data;
    ref_check(&c, NULL, 0, "hidden case (B, T, D) = (%d, %d, %d), seed %llu, query weights x%g: the output",
              B, T, D, (unsigned long long)seed, sharpen);
    free(ratt), free(rout);
    tensor_free(&x); tensor_free(&att); tensor_free(&out);
    free_module(&m);
}

static void hidden_shapes(void) {
    check_case(4, 7, 5, 1001, 1);       /* odd sizes, T != D */
    check_case(1, 16, 1, 1002, 1);      /* D = 1: the scale is 1 */
    check_case(3, 1, 9, 1003, 1);       /* T = 1: every weight is 1 */
    check_case(2, 40, 24, 1004, 1);     /* longer rows */
}

static void hidden_sharp(void) {
    check_case(2, 6, 8, 1005, 1000);    /* scores past 88, where expf overflows: the max must go first */
}

int main(void) {
    (void)print_run;
    (void)selfatt_v1_params, (void)selfatt_v1_macs_all;
    EXERCISE("1.6", 8, hidden_shapes());
    EXERCISE("1.6", 2, hidden_sharp());
    done_testing();
    return exit_status();
}
