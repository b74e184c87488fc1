/* Hidden tests for Exercise 4.6 (chapter 4: SelfAttV4's forward pass, written
 * at the interview).
 *
 * For teachers: a student handout leaves this folder out. These cases are ones
 * the public tests do not use: sizes of 1 and odd sizes without a mask, a (T, T)
 * causal mask shared by the batch, left padding as (B, 1, T), hidden query rows
 * as (B, T, 1), and training mode under a (1, 1, T) key mask. Each is compared
 * with the double-precision reference of tests/reference.h, from the four layers; in
 * training, the weights that multiply V must be the softmax after chapter 0's
 * dropout drawn from the generator given, and the output must be output_proj of
 * those weights times V. `make test` and `make grade` run it. */
#define TESTING
#include "selfatt_v4.c"
#include "tap.h"
#include "run.h"
#define MODULE_SELFATT_V4
#include "reference.h"

/* SelfAttV4's four layers, for tests/reference.h's pass. */
static RefWeights weights_of(const SelfAttV4 *m) {
    return (RefWeights){ m->query_w.data, m->query_b.data, m->key_w.data, m->key_b.data, m->value_w.data,
                         m->value_b.data, m->out_w.data, m->out_b.data };
}

/* att (B, T, T), the softmax of the visible scaled scores (uniform for a row with
 * none), and out (B, T, D) = output_proj(att @ V), in double, with in eatt and eout
 * how far a float32 pass, its sums in any order, may be from them (reference.h).
 * mask: NULL (all visible) or any shape that broadcasts to (B, T, T), matched from
 * the right; nonzero = visible. */
static void reference(double *out, double *att, double *eout, double *eatt, const SelfAttV4 *m, const float *x,
                      const Tensor *mask, int B, int T) {
    RefWeights w = weights_of(m);
    float *vis = ref_visible(mask, 3, (int[]){ B, T, T });
    ref_attention_err(out, eout, att, eatt, &w, x, x, x, m->dim, &(RefAttn){ .B = B, .T = T, .H = 1, .hd = m->dim,
                                                                          .vis = vis });
    free(vis);
}

/* The largest |got - want| as a fraction of its bound (NaN: infinitely far). */
static double worst(const float *got, const double *want, const double *bound, long n) {
    double e = 0;
    for (long i = 0; i < n; i++) e = isnan(got[i]) ? INFINITY : fmax(e, fabs(got[i] - want[i]) / bound[i]);
    return e;
}

/* What is wrong, said after a failed test (reference.h's ref_explain). */
static void explain(const SelfAttV4 *m, const float *x, const Tensor *mask, int B, int T, const float *out,
                    const float *att) {
    float *vis = ref_visible(mask, 3, (int[]){ B, T, T });
    RefCase c = { weights_of(m), x, x, x, m->dim, { .B = B, .T = T, .H = 1, .hd = m->dim, .vis = vis }, out, att };
    ref_explain(&c, NULL, 0);
    free(vis);
}

/* One eval-mode test: SelfAttV4 (B, T, D) from `seed` under `mask` (or NULL). */
static void check(int B, int T, int D, uint64_t seed, const Tensor *mask, const char *what) {
    Args a = { .batch = B, .seq = T, .dim = D, .seed = seed };
    SelfAttV4 m = {0};
    Tensor x, pad;
    make_module(&m, &x, &pad, &a);
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
    STUDENT(selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, mask, 0.0f, NULL, B, T));
    double *eatt = ref_new(att.size), *eout = ref_new(out.size);
    reference(rout, ratt, eout, eatt, &m, x.data, mask, B, T);
    double ew = worst(att.data, ratt, eatt, att.size), eo = worst(out.data, rout, eout, out.size);
    ok(ew <= 1 && eo <= 1, "%s: weights and output match a double-precision reference, within what float32 rounding "
       "allows", what);
    if (!(ew <= 1 && eo <= 1) && !tap_stub[0]) {
        diag("largest error: weights %.3g, output %.3g times their bounds", ew, eo);
        explain(&m, x.data, mask, B, T, out.data, att.data);
    }
    free(ratt); free(rout); free(eatt); free(eout);
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
    double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
    double *w = calloc(att.size, sizeof *w);
    RefWeights layers = weights_of(&m);
    Rng r, copy;
    rng_seed(&r, 4242);
    copy = r;
    STUDENT(selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, &keys, p, &r, B, T));
    double *eatt = ref_new(att.size), *eout = ref_new(out.size);
    reference(rout, ratt, eout, eatt, &m, x.data, &keys, B, T);    /* rout: eval mode's, replaced below */
    memcpy(want.data, att.data, (size_t)att.size * sizeof(float));
    dropout(want.data, want.size, p, &copy);              /* what att_drop must hold */
    long kept = 0;
    for (long i = 0; i < att.size; i++) w[i] = drop.data[i], kept += drop.data[i] != 0.0f;
    ref_output_err(rout, eout, w, NULL, &layers, x.data, D, &(RefAttn){ .B = B, .T = T, .H = 1, .hd = D });
    double ew = worst(att.data, ratt, eatt, att.size), eo = worst(out.data, rout, eout, out.size);
    int same_drop = memcmp(drop.data, want.data, (size_t)att.size * sizeof(float)) == 0;
    int good = ew <= 1 && same_drop && eo <= 1 && kept > 0 && kept < (long)B * T * 4;   /* 4 visible keys per row */
    ok(good, "train mode, p = 0.3, a (1, 1, 6) key mask: att is the softmax, att_drop is att after dropout "
             "from the given generator, out is output_proj(att_drop @ V)");
    if (!good) diag("weights off by %.3g, att_drop %s, output off by %.3g (times their bounds), %ld kept", ew,
                    same_drop ? "as dropout makes it" : "not what dropout makes", eo, kept);
    if (!good && !tap_stub[0] && !(ew <= 1)) explain(&m, x.data, &keys, B, T, NULL, att.data);
    else if (!good && !tap_stub[0] && !same_drop)
        what_is_wrong("att_drop is not att after dropout: the weights that multiply V are dropped from att, the "
                      "softmax, with the generator given (att itself must stay as it was)");
    free(ratt); free(rout); free(w); free(eatt); free(eout);
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
