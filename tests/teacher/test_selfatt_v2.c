/* Hidden tests for Exercise 2.6 (chapter 2: the split of the fused projection).
 *
 * For teachers: a student handout leaves this folder out, so these cases are
 * ones the student has not seen. They run SelfAttV2 on shapes the public tests
 * do not use (sizes of 1, odd sizes, D = 1 and D = 33) from other seeds, and
 * compare its weights and output with a double-precision reference written
 * here, which reads Q, K and V straight from the three blocks of rows of
 * proj.weight and never splits anything. `make test` and `make grade` run it. */
#define TESTING
#include "selfatt_v2.c"
#include "tap.h"
#include "run.h"

/* y[r, o] = b[o] + sum_i x[r, i] w[o, i] for the rows o0 .. o0 + D - 1 of (w, b). */
static void ref_rows(double *y, const float *x, const Tensor *w, const Tensor *b, int o0, long N, int D) {
    for (long r = 0; r < N; r++)
        for (int o = 0; o < D; o++) {
            double sum = b->data[o0 + o];
            for (int i = 0; i < D; i++) sum += (double)x[r * D + i] * w->data[(long)(o0 + o) * D + i];
            y[r * D + o] = sum;
        }
}

/* att (B, T, T) and out (B, T, D) of SelfAttV2, in double. */
static void reference(double *out, double *att, const SelfAttV2 *m, const float *x, int B, int T) {
    int D = m->dim;
    long BT = (long)B * T;
    double *q = malloc(BT * D * sizeof *q), *k = malloc(BT * D * sizeof *k), *v = malloc(BT * D * sizeof *v);
    double *mix = calloc(BT * D, sizeof *mix);
    ref_rows(q, x, &m->proj_w, &m->proj_b, 0, BT, D);          /* proj rows [0, D) */
    ref_rows(k, x, &m->proj_w, &m->proj_b, D, BT, D);          /* rows [D, 2D) */
    ref_rows(v, x, &m->proj_w, &m->proj_b, 2 * D, BT, D);      /* rows [2D, 3D) */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            double *a = att + ((long)b * T + t) * T, top = -INFINITY, z = 0;
            for (int s = 0; s < T; s++) {
                double dot = 0;
                for (int i = 0; i < D; i++) dot += q[((long)b * T + t) * D + i] * k[((long)b * T + s) * D + i];
                a[s] = dot / sqrt((double)D);
                top = fmax(top, a[s]);
            }
            for (int s = 0; s < T; s++) z += a[s] = exp(a[s] - top);
            for (int s = 0; s < T; s++) {
                a[s] /= z;
                for (int i = 0; i < D; i++) mix[((long)b * T + t) * D + i] += a[s] * v[((long)b * T + s) * D + i];
            }
        }
    for (long r = 0; r < BT; r++)
        for (int o = 0; o < D; o++) {
            double sum = m->out_b.data[o];
            for (int i = 0; i < D; i++) sum += mix[r * D + i] * m->out_w.data[o * D + i];
            out[r * D + o] = sum;
        }
    free(q); free(k); free(v); free(mix);
}

static double worst(const float *got, const double *want, long n) {
    double w = 0;
    for (long i = 0; i < n; i++) w = isnan(got[i]) ? INFINITY : fmax(w, fabs(got[i] - want[i]));
    return w;
}

/* SelfAttV2 and its input X as selfatt_v2 makes them, through its own list of
 * tensors, and its weights freed through the same list. */
static void make_v2_module(SelfAttV2 *m, Tensor *x, const Args *a) {
    Tensors list = {0};
    Tensor att, out;
    selfatt_v2_tensors(&list, m, x, &att, &out);
    tensors_open(&list, (Args *)a);
    m->dim = a->dim;
    tensor_free(&att); tensor_free(&out);
}

static void free_v2_module(SelfAttV2 *m) {
    Tensors list = {0};
    Tensor none = {0};
    selfatt_v2_tensors(&list, m, &none, &none, &none);
    tensors_close(&list, &(Args){0});
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
    reference(rout, ratt, &m, x.data, B, T);
    double ew = worst(att.data, ratt, att.size), eo = worst(out.data, rout, out.size);
    ok(ew <= 1e-6 && eo <= 1e-5, "(B, T, D) = (%d, %d, %d), seed %llu, %s: weights and output match a double-precision reference",
       B, T, D, (unsigned long long)seed, what);
    if (ew > 1e-6 || eo > 1e-5) diag("largest error: weights %.3g, output %.3g", ew, eo);
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
