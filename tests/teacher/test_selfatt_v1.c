/* Hidden tests for Exercise 1.6 (passes 2 to 4 of SelfAttV1), for teachers.
 *
 * A student handout leaves tests/teacher/ out, so a solution cannot be fitted to
 * these cases. `make test` and `make grade` run them in the full book; to grade a
 * student's tree, run `make grade TEACHER_TESTS=/path/to/the/book/tests/teacher`
 * there. Every case is checked against a double-precision reference written
 * here, independently of the chapter and of tests/test_selfatt_v1.c. */
#define TESTING
#include "selfatt_v1.c"
#include "tap.h"
#include "run.h"

#include <stdlib.h>

/* SelfAttV1 from the formula, in double: softmax(Q K^T / sqrt(D)) V, with the
 * row maximum subtracted so that large scores do not overflow. */
static void reference(double *out, double *att, const SelfAttV1 *m, const float *x, int B, int T) {
    int D = m->dim;
    size_t n = (size_t)B * T * D;
    double *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v);
    for (long r = 0; r < (long)B * T; r++)
        for (int o = 0; o < D; o++) {
            double a = m->query_b.data[o], c = m->key_b.data[o], e = m->value_b.data[o];
            for (int i = 0; i < D; i++) {
                double xi = x[r * D + i];
                a += xi * m->query_w.data[(long)o * D + i];
                c += xi * m->key_w.data[(long)o * D + i];
                e += xi * m->value_w.data[(long)o * D + i];
            }
            q[r * D + o] = a, k[r * D + o] = c, v[r * D + o] = e;
        }
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            double *w = att + ((long)b * T + t) * T, top = -INFINITY, sum = 0;
            for (int s = 0; s < T; s++) {
                double dot = 0;
                for (int i = 0; i < D; i++) dot += q[((long)b * T + t) * D + i] * k[((long)b * T + s) * D + i];
                w[s] = dot / sqrt((double)D);
                if (w[s] > top) top = w[s];
            }
            for (int s = 0; s < T; s++) sum += w[s] = exp(w[s] - top);
            for (int s = 0; s < T; s++) w[s] /= sum;
            for (int i = 0; i < D; i++) {
                double acc = 0;
                for (int s = 0; s < T; s++) acc += w[s] * v[((long)b * T + s) * D + i];
                out[((long)b * T + t) * D + i] = acc;
            }
        }
    free(q), free(k), free(v);
}

/* One case: sizes, a seed, and a factor for the query weights (large factors
 * make large scores, which a softmax without its maximum cannot take). Two tests:
 * the weights and the output against the reference. */
static void check_case(int B, int T, int D, uint64_t seed, float sharpen) {
    Args a = { .batch = B, .seq = T, .dim = D, .seed = seed };
    SelfAttV1 m = {0};
    Tensor x, att, out;
    Tensors list = {0};
    selfatt_v1_tensors(&list, &m, &x, &att, &out);   /* made as the program makes them */
    tensors_open(&list, &a);
    m.dim = D;
    for (long i = 0; i < m.query_w.size; i++) m.query_w.data[i] *= sharpen;
    double *ratt = malloc((size_t)att.size * sizeof *ratt), *rout = malloc((size_t)out.size * sizeof *rout);
    STUDENT(selfatt_v1_forward(out.data, att.data, &m, x.data, B, T));
    reference(rout, ratt, &m, x.data, B, T);
    close_ok(att.data, ratt, att.size, 1e-5, 1e-5, "hidden case (B, T, D) = (%d, %d, %d), seed %llu, query weights x%g: the weights",
             B, T, D, (unsigned long long)seed, sharpen);
    close_ok(out.data, rout, out.size, 1e-5, 1e-5, "hidden case (B, T, D) = (%d, %d, %d), seed %llu, query weights x%g: the output",
             B, T, D, (unsigned long long)seed, sharpen);
    free(ratt), free(rout);
    tensors_close(&list, &(Args){0});
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
