/* Hidden tests for Exercise 4.6 (chapter 4: SelfAttV4's forward pass, written
 * at the interview).
 *
 * For teachers: a student handout leaves this folder out. These cases are ones
 * the public tests do not use: sizes of 1 and odd sizes without a mask, a (T, T)
 * causal mask shared by the batch, left padding as (B, 1, T), hidden query rows
 * as (B, T, 1), and training mode under a (1, 1, T) key mask. Each is compared
 * with a double-precision reference written here from the four layers; in
 * training, the weights that multiply V must be the softmax after chapter 0's
 * dropout drawn from the generator given, and the output must be output_proj of
 * those weights times V. `make test` and `make grade` run it. */
#define TESTING
#include "selfatt_v4.c"
#include "tap.h"
#include "run.h"

/* A module, its input and the notebook's padding mask, made through the
 * program's own list of tensors as its main makes them. */
static void make_module(SelfAttV4 *m, Tensor *x, Tensor *mask, const Args *a) {
    Tensors list = {0};
    Tensor att, out;
    selfatt_v4_tensors(&list, m, x, mask, &att, &out);
    tensors_open(&list, (Args *)a);
    *mask = mask_padding(a->batch, a->seq);
    m->dim = a->dim;
    tensor_free(&att); tensor_free(&out);
}

/* Free a module's tensors through the same list. */
static void free_module(SelfAttV4 *m) {
    Tensors list = {0};
    Tensor none = {0};
    selfatt_v4_tensors(&list, m, &none, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}

/* Is key s visible to query t of sequence b? mask: NULL (all visible) or any
 * shape that broadcasts to (B, T, T), matched from the right; nonzero = visible. */
static int visible(const Tensor *mask, int b, int t, int s) {
    if (!mask) return 1;
    int at[3] = { b, t, s };
    long index = 0, stride = 1;
    for (int d = mask->ndim - 1, a = 2; d >= 0; d--, a--) {
        if (mask->shape[d] != 1) index += at[a] * stride;
        stride *= mask->shape[d];
    }
    return mask->data[index] != 0.0f;
}

/* y (N, D) = x (N, D) @ w^T + b, x given in float or in double. */
static void layer(double *y, const float *xf, const double *xd, const Tensor *w, const Tensor *b, long N, int D) {
    for (long r = 0; r < N; r++)
        for (int o = 0; o < D; o++) {
            double sum = b->data[o];
            for (int i = 0; i < D; i++) sum += (xf ? xf[r * D + i] : xd[r * D + i]) * (double)w->data[(long)o * D + i];
            y[r * D + o] = sum;
        }
}

/* att (B, T, T), the softmax of the visible scaled scores (uniform for a row with
 * none), and v (B*T, D), in double. */
static void ref_weights(double *att, double *v, const SelfAttV4 *m, const float *x, const Tensor *mask, int B, int T) {
    int D = m->dim;
    long BT = (long)B * T;
    double *q = malloc(BT * D * sizeof *q), *k = malloc(BT * D * sizeof *k);
    layer(q, x, NULL, &m->query_w, &m->query_b, BT, D);
    layer(k, x, NULL, &m->key_w, &m->key_b, BT, D);
    layer(v, x, NULL, &m->value_w, &m->value_b, BT, D);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            double *a = att + ((long)b * T + t) * T, top = -INFINITY, z = 0;
            for (int s = 0; s < T; s++) {
                double dot = 0;
                for (int i = 0; i < D; i++) dot += q[((long)b * T + t) * D + i] * k[((long)b * T + s) * D + i];
                a[s] = dot / sqrt((double)D);
                if (visible(mask, b, t, s)) top = fmax(top, a[s]);
            }
            for (int s = 0; s < T; s++) z += a[s] = top == -INFINITY ? 1.0 : visible(mask, b, t, s) ? exp(a[s] - top) : 0.0;
            for (int s = 0; s < T; s++) a[s] /= z;
        }
    free(q); free(k);
}

/* out (B, T, D) = output_proj(w @ v) for weights w (B, T, T), in double. */
static void ref_output(double *out, const SelfAttV4 *m, const double *w, const double *v, int B, int T) {
    int D = m->dim;
    double *mix = calloc((size_t)B * T * D, sizeof *mix);
    for (long r = 0; r < (long)B * T; r++)
        for (int s = 0; s < T; s++)
            for (int i = 0; i < D; i++) mix[r * D + i] += w[r * T + s] * v[(r / T * T + s) * D + i];
    layer(out, NULL, mix, &m->out_w, &m->out_b, (long)B * T, D);
    free(mix);
}

static double worst(const float *got, const double *want, long n) {
    double e = 0;
    for (long i = 0; i < n; i++) e = isnan(got[i]) ? INFINITY : fmax(e, fabs(got[i] - want[i]));
    return e;
}

/* One eval-mode test: SelfAttV4 (B, T, D) from `seed` under `mask` (or NULL). */
static void check(int B, int T, int D, uint64_t seed, const Tensor *mask, const char *what) {
    Args a = { .batch = B, .seq = T, .dim = D, .seed = seed };
    SelfAttV4 m = {0};
    Tensor x, pad;
    make_module(&m, &x, &pad, &a);
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout), *v = calloc(out.size, sizeof *v);
    STUDENT(selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, mask, 0.0f, NULL, B, T));
    ref_weights(ratt, v, &m, x.data, mask, B, T);
    ref_output(rout, &m, ratt, v, B, T);
    double ew = worst(att.data, ratt, att.size), eo = worst(out.data, rout, out.size);
    ok(ew <= 1e-6 && eo <= 1e-5, "%s: weights and output match a double-precision reference", what);
    if (ew > 1e-6 || eo > 1e-5) diag("largest error: weights %.3g, output %.3g", ew, eo);
    free(ratt); free(rout); free(v);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&pad);
    free_module(&m);
}

/* Training mode: att is the eval-mode softmax, att_drop is att after chapter 0's
 * dropout from the same generator state, and out is output_proj(att_drop @ V). */
static void check_train(void) {
    int B = 2, T = 6, D = 4;
    float p = 0.3f;
    Args a = { .batch = B, .seq = T, .dim = D, .seed = 705 };
    SelfAttV4 m = {0};
    Tensor x, pad, keys = tensor_new3(1, 1, T);
    static const float seen[6] = { 1, 1, 0, 1, 0, 1 };
    memcpy(keys.data, seen, sizeof seen);
    make_module(&m, &x, &pad, &a);
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D), want = tensor_new3(B, T, T);
    double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout), *v = calloc(out.size, sizeof *v);
    double *w = calloc(att.size, sizeof *w);
    Rng r, copy;
    rng_seed(&r, 4242);
    copy = r;
    STUDENT(selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, &keys, p, &r, B, T));
    ref_weights(ratt, v, &m, x.data, &keys, B, T);
    memcpy(want.data, att.data, (size_t)att.size * sizeof(float));
    dropout(want.data, want.size, p, &copy);              /* what att_drop must hold */
    long kept = 0;
    for (long i = 0; i < att.size; i++) w[i] = drop.data[i], kept += drop.data[i] != 0.0f;
    ref_output(rout, &m, w, v, B, T);
    double ew = worst(att.data, ratt, att.size), eo = worst(out.data, rout, out.size);
    int same_drop = memcmp(drop.data, want.data, (size_t)att.size * sizeof(float)) == 0;
    int good = ew <= 1e-6 && same_drop && eo <= 1e-5 && kept > 0 && kept < (long)B * T * 4;   /* 4 visible keys per row */
    ok(good, "train mode, p = 0.3, a (1, 1, 6) key mask: att is the softmax, att_drop is att after dropout "
             "from the given generator, out is output_proj(att_drop @ V)");
    if (!good) diag("weights off by %.3g, att_drop %s, output off by %.3g, %ld kept", ew,
                    same_drop ? "as dropout makes it" : "not what dropout makes", eo, kept);
    free(ratt); free(rout); free(v); free(w);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&want);
    tensor_free(&x); tensor_free(&pad); tensor_free(&keys);
    free_module(&m);
}

static void test_other_cases(void) {
    check(1, 1, 1, 701, NULL, "(1, 1, 1), no mask: one key, weight 1, out = output_proj(v)");
    check(3, 5, 7, 702, NULL, "(3, 5, 7), no mask");

    Tensor causal = tensor_new2(6, 6);
    for (int t = 0; t < 6; t++)
        for (int s = 0; s <= t; s++) causal.data[t * 6 + s] = 1;
    check(2, 6, 3, 703, &causal, "(2, 6, 3) under a (6, 6) causal mask shared by the batch");
    tensor_free(&causal);

    Tensor left = tensor_new3(4, 1, 3);
    for (int b = 0; b < 4; b++)
        for (int s = b < 3 ? b : 2; s < 3; s++) left.data[b * 3 + s] = 1;
    check(4, 3, 5, 704, &left, "(4, 3, 5) with left padding as a (4, 1, 3) mask");
    tensor_free(&left);

    Tensor rows = tensor_new3(2, 4, 1);
    static const float query_seen[8] = { 1, 0, 1, 1, 0, 1, 1, 0 };
    memcpy(rows.data, query_seen, sizeof query_seen);
    check(2, 4, 2, 706, &rows, "(2, 4, 2) with a (2, 4, 1) mask hiding whole query rows, uniform there");
    tensor_free(&rows);

    check_train();
}

int main(void) {
    (void)print_masked;   /* the program's, not tested here */
    (void)mask_final;
    EXERCISE("4.6", 6, test_other_cases());
    done_testing();
    return exit_status();
}
