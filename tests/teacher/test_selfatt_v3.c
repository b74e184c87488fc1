/* Hidden tests for Exercise 3.6 (chapter 3: the mask pass, hidden scores
 * replaced by -1e20 before the softmax).
 *
 * For teachers: a student handout leaves this folder out. These cases use
 * masks the public tests do not try: values other than 0 and 1, a (T, T)
 * causal mask shared by the batch at other sizes, left padding as (B, 1, T), a
 * whole sequence hidden by a (B, 1, 1) mask, one position whose only key is
 * hidden, query rows hidden by a (T, 1) mask, and a hidden key scored so high
 * that only a fill which *replaces* the score hides it. Each is compared with
 * the double-precision reference of tests/reference.h, which reads the mask by
 * broadcasting coordinates and leaves hidden keys out of the softmax (a row with
 * no visible key is uniform, as -1e20 makes it).
 * `make test` and `make grade` run it. */
#define TESTING
#include "selfatt_v3.c"
#include "tap.h"
#include "run.h"
#define MODULE_SELFATT_V3
#include "reference.h"

/* SelfAttV3 in eval mode for tests/reference.h's pass: q, k and v read from proj's
 * three blocks of rows, the mask (vis) spelled out by broadcasting coordinates. */
static RefCase case_of(const SelfAttV3 *m, const float *x, const float *vis, int B, int T) {
    int D = m->dim;
    const float *w = m->proj_w.data, *b = m->proj_b.data;
    RefWeights ws = { w, b, w + D * D, b + D, w + 2 * D * D, b + 2 * D, m->out_w.data, m->out_b.data };
    return (RefCase){ ws, x, x, x, D, { .B = B, .T = T, .H = 1, .hd = D, .vis = vis }, NULL, NULL };
}

/* One test: the module m on x (B, T, D) under `mask`, against the reference;
 * every hidden key of a row that sees some key must get exactly 0. */
static void check_case(const SelfAttV3 *m, const Tensor *x, const Tensor *mask, int B, int T, const char *what) {
    int D = m->dim;
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
    float *vis = ref_visible(mask, 3, (int[]){ B, T, T });        /* (B, T, T), 1 where visible */
    STUDENT(selfatt_v3_forward(out.data, att.data, drop.data, m, x->data, mask, 0.0f, NULL, B, T));
    double *eatt = ref_new(att.size), *eout = ref_new(out.size);
    RefCase c = case_of(m, x->data, vis, B, T);
    ref_attention_err(rout, eout, ratt, eatt, &c.w, x->data, x->data, x->data, D, &c.a);
    double ew = 0, eo = 0;                            /* the largest error, as a fraction of its bound */
    long leaked = 0;
    for (long i = 0; i < att.size; i++) ew = isnan(att.data[i]) ? INFINITY : fmax(ew, fabs(att.data[i] - ratt[i]) / eatt[i]);
    for (long i = 0; i < out.size; i++) eo = isnan(out.data[i]) ? INFINITY : fmax(eo, fabs(out.data[i] - rout[i]) / eout[i]);
    for (long r = 0; r < (long)B * T; r++) {
        int any = 0;
        for (int s = 0; s < T; s++) any |= vis[r * T + s] != 0.0f;
        for (int s = 0; s < T && any; s++) leaked += vis[r * T + s] == 0.0f && att.data[r * T + s] != 0.0f;
    }
    int good = ew <= 1 && eo <= 1 && leaked == 0;
    ok(good, "%s: weights and output match a double-precision reference within what float32 rounding allows, hidden "
       "keys at exactly 0", what);
    if (!good && !tap_stub[0]) {
        diag("largest error: weights %.3g, output %.3g times their bounds; %ld hidden keys got weight", ew, eo, leaked);
        c.out = out.data, c.att = att.data;
        ref_explain(&c, NULL, 0);
    }
    free(ratt); free(rout); free(vis); free(eatt); free(eout);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out);
}

/* The same for SelfAttV3 (B, T, D) drawn from `seed`. */
static void check(int B, int T, int D, uint64_t seed, const Tensor *mask, const char *what) {
    Args a = { .batch = B, .seq = T, .dim = D, .seed = seed };
    SelfAttV3 m = {0};
    Tensor x, pad;
    make_module(&m, &x, &pad, &a);
    check_case(&m, &x, mask, B, T, what);
    tensor_free(&x); tensor_free(&pad);
    free_module(&m);
}

static void test_other_masks(void) {
    /* values other than 0 and 1: only 0 hides */
    Tensor odd = tensor_new3(2, 5, 5);
    static const float values[5] = { 2.0f, -1.0f, 0.0f, 0.5f, 0.0f };
    for (long i = 0; i < odd.size; i++) odd.data[i] = values[(i * 7 + i / 5) % 5];
    check(2, 5, 3, 811, &odd, "a (2, 5, 5) mask of 2, -1, 0.5 and 0: only the zeros hide");
    tensor_free(&odd);

    /* a (T, T) causal mask for the whole batch */
    Tensor causal = tensor_new2(7, 7);
    for (int t = 0; t < 7; t++)
        for (int s = 0; s <= t; s++) causal.data[t * 7 + s] = 1;
    check(3, 7, 5, 812, &causal, "a (7, 7) causal mask shared by three sequences");
    tensor_free(&causal);

    /* left padding, (B, 1, T): sequence b starts at position b */
    Tensor left = tensor_new3(4, 1, 5);
    for (int b = 0; b < 4; b++)
        for (int s = b; s < 5; s++) left.data[b * 5 + s] = 1;
    check(4, 5, 3, 813, &left, "left padding as a (4, 1, 5) mask");
    tensor_free(&left);

    /* (B, 1, 1): sequence 1 hidden whole, so each of its rows is uniform */
    Tensor whole = tensor_new3(3, 1, 1);
    whole.data[0] = 1, whole.data[2] = 1;
    check(3, 4, 2, 814, &whole, "a (3, 1, 1) mask that hides every key of sequence 1");
    tensor_free(&whole);

    /* one position, its only key hidden: the weight is 1/1 */
    Tensor none = tensor_new1(1);                       /* (1), zero */
    check(1, 1, 2, 815, &none, "one position whose only key a (1) mask hides");
    tensor_free(&none);

    /* a hidden key scored 20000 above the visible ones: an additive -10000 would
     * leave it the largest score, replacing it by -1e20 hides it. D = 1, every
     * query is 1 and every key is its x, so the scores are x itself. */
    SelfAttV3 big = { .dim = 1, .proj_w = tensor_new2(3, 1), .proj_b = tensor_new1(3),
                      .out_w = tensor_new2(1, 1), .out_b = tensor_new1(1) };
    static const float w[3] = { 0.0f, 1.0f, 0.5f }, bias[3] = { 1.0f, 0.0f, 0.25f };   /* q, k, v */
    memcpy(big.proj_w.data, w, sizeof w);
    memcpy(big.proj_b.data, bias, sizeof bias);
    big.out_w.data[0] = 2.0f, big.out_b.data[0] = -0.5f;
    Tensor x = tensor_new3(2, 4, 1), keys = tensor_new3(2, 1, 4);
    static const float xs[8] = { 0.1f, 0.2f, 0.3f, 20000.0f, 20000.0f, -0.4f, 0.6f, 0.2f };
    static const float seen[8] = { 1, 1, 1, 0, 0, 1, 1, 1 };
    memcpy(x.data, xs, sizeof xs);
    memcpy(keys.data, seen, sizeof seen);
    check_case(&big, &x, &keys, 2, 4, "a hidden key whose score is 20000, under a (2, 1, 4) mask");
    tensor_free(&x); tensor_free(&keys);
    free_module(&big);

    /* a (T, 1) mask hides whole query rows, at an odd size with D = 1 */
    Tensor rows = tensor_new2(9, 1);
    for (int t = 0; t < 9; t++) rows.data[t] = t % 3 != 1;
    check(2, 9, 1, 817, &rows, "a (9, 1) mask that hides query rows 1, 4 and 7, D = 1");
    tensor_free(&rows);
}

int main(void) {
    (void)print_masked;   /* the program's, not tested here */
    (void)mask_final; (void)mask_length;
    EXERCISE("3.6", 7, test_other_masks());
    done_testing();
    return exit_status();
}
