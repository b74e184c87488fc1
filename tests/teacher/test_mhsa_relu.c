/* Hidden tests for Exercise 8.6 (chapter 8, passes 3 to 5 of mhsa_relu: the
 * unscaled scores, the additive -10000 above the diagonal, the softmax), for
 * teachers.
 *
 * A student handout leaves this folder out; `make test` and `make grade` in
 * the full book build and run it beside tests/test_mhsa_relu.c. Its cases are
 * ones the public tests do not use: sizes of 1, one query, odd sizes, a single
 * wide head, other seeds, and queries and keys both grown until scores lie
 * tens of thousands apart, where adding -10000 and filling differ. Each is
 * checked against tests/reference.h's reference in double precision, from the
 * notebook's formula: softmax(q k^T + triu(ones(T, T), 1) * -10000), no scale. */
#define TESTING
#include "mhsa_relu.c"
#include "tap.h"
#include "run.h"
#define MODULE_MHSA_RELU
#include "reference.h"

/* The module by tests/reference.h's steps: att (B, H, T, T) after the softmax, out
 * (B, T, D) after the ReLU, and raw (B, H, T, T), the scores q . k before anything
 * is added. Head h is columns h*hd .. h*hd + hd - 1 of the projections; no scale;
 * with causal set, -10000 added to the keys after the query. */
static RefCase case_of(const MhsaRelu *m, const float *x, int causal, int B, int T) {
    RefWeights w = { m->wq.data, m->bq.data, m->wk.data, m->bk.data, m->wv.data, m->bv.data, m->wo.data, m->bo.data };
    RefAttn a = { .B = B, .T = T, .H = m->heads, .hd = m->dim / m->heads, .divisor = 1.0, .causal = causal,
                  .hide = REF_ADD_10000 };
    return (RefCase){ w, x, x, x, m->dim, a, NULL, NULL };
}

/* The same, computed, with in eatt and eout how far a float32 pass, its sums in any
 * order, may be from att and out (the ReLU brings no two numbers further apart). */
static void reference(double *att, double *out, double *raw, double *eatt, double *eout, const MhsaRelu *m,
                      const float *x, int causal, int B, int T) {
    int D = m->dim;
    long BT = (long)B * T;
    RefCase c = case_of(m, x, causal, B, T);
    double *xd = ref_doubles(x, BT * D), *q = ref_new(BT * D), *k = ref_new(BT * D);
    ref_linear(q, xd, c.w.q_w, c.w.q_b, BT, D, D);
    ref_linear(k, xd, c.w.k_w, c.w.k_b, BT, D, D);
    ref_scores(raw, q, k, &c.a);
    ref_attention_err(out, eout, att, eatt, &c.w, x, x, x, D, &c.a);
    for (long i = 0; i < BT * D; i++) if (out[i] < 0) out[i] = 0;
    free(xd); free(q); free(k);
}

/* Largest |got - want| over n numbers as a fraction of its bound; NaN if any got is NaN. */
static double worst(const float *got, const double *want, const double *bound, long n) {
    double e = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]) / bound[i];
        if (isnan(d)) return NAN;
        e = fmax(e, d);
    }
    return e;
}

/* One test: a module drawn from seed by the program itself, its queries and
 * keys multiplied by grow, run forward and compared with the reference, the
 * weights and the output within the bound of a float32 pass. With want_far set, the case
 * must also hold a row where a hidden key's score is over 10000 above every
 * visible one, and one whose visible scores all lie below -10100. */
static void check(const char *what, int B, int T, int D, int H, int causal, uint64_t seed, float grow, int want_far) {
    MhsaRelu m = {0};
    Tensor x;
    make_module(&m, &x, &(Args){ .batch = B, .seq = T, .dim = D, .heads = H, .seed = seed });   /* as main makes it */
    Tensor *grown[4] = { &m.wq, &m.bq, &m.wk, &m.bk };
    for (int g = 0; g < 4; g++)
        for (long i = 0; i < grown[g]->size; i++) grown[g]->data[i] *= grow;
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    double *ratt = malloc(sizeof *ratt * att.size), *raw = malloc(sizeof *raw * att.size);
    double *rout = malloc(sizeof *rout * out.size), *eatt = ref_new(att.size), *eout = ref_new(out.size);
    STUDENT(mhsa_relu_forward(out.data, att.data, &m, x.data, causal, B, T));
    reference(ratt, rout, raw, eatt, eout, &m, x.data, causal, B, T);
    int above = 0, below = 0;
    for (long r = 0; r < (long)B * H * T; r++) {
        double seen = -INFINITY, hidden = -INFINITY;
        int t = (int)(r % T);
        for (int s = 0; s < T; s++)
            if (s <= t) seen = fmax(seen, raw[r * T + s]);
            else hidden = fmax(hidden, raw[r * T + s]);
        above |= hidden - 10000 > seen + 100;
        below |= t < T - 1 && seen < -10100;
    }
    double ea = worst(att.data, ratt, eatt, att.size), eo = worst(out.data, rout, eout, out.size);
    int pass = ea <= 1 && eo <= 1 && (!want_far || (above && below));
    ok(pass, "%s: (B, T, D, H) = (%d, %d, %d, %d)%s, weights and output match the reference, within what float32 "
       "rounding allows", what, B, T, D, H, causal ? ", causal" : "");
    if (!pass) diag("largest error: %g in the weights, %g in the output, times their bounds%s", ea, eo,
                    want_far && !(above && below) ? "; the case has lost the rows it is for" : "");
    if (!pass && !tap_stub[0] && !(ea <= 1 && eo <= 1)) {
        RefCase c = case_of(&m, x.data, causal, B, T);
        c.att = att.data;                                   /* out is after the ReLU, which the suspects lack */
        ref_explain(&c, NULL, 0);
    }
    free(ratt); free(raw); free(rout); free(eatt); free(eout);
    tensor_free(&att); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

static void test_hidden_cases(void) {
    check("every size 1", 1, 1, 1, 1, 1, 81, 1, 0);
    check("one query: nothing to hide", 2, 1, 6, 3, 1, 82, 1, 0);
    check("odd sizes, hd = 3", 3, 5, 15, 5, 1, 83, 1, 0);
    check("one head of 10, no mask", 1, 11, 10, 1, 0, 84, 1, 0);
    check("one wide head of 96: large unscaled scores", 1, 7, 96, 1, 1, 85, 1, 0);
    check("two queries, hd = 1", 3, 2, 4, 4, 1, 86, 1, 0);
    check("queries and keys times 1000: hidden keys that come back, and rows far below -10000", 2, 5, 6, 3, 1, 87, 1000, 1);
}

/* Tested through the public tests, not here. */
static void unused_here(void) { (void)mhsa_relu_print; (void)relu_zeros; }

int main(void) {
    unused_here();
    EXERCISE("8.6", 7, test_hidden_cases());
    done_testing();
    return exit_status();
}
