/* Hidden tests for teachers: Exercise 6.7 in mqa (the H query heads stacked as
 * rows against the one shared key head, and the weighted sum of its values).
 *
 * A student handout leaves this folder out, so a solution cannot be tuned to
 * these cases; `make test` and `make grade` run it like tests/test_mqa.c. The
 * cases are ones the public tests do not use: one position with heads of one
 * number, an odd number of heads of an odd size, weights made larger so that the
 * maps are far from uniform, a (B, 1, 1, T) padding mask with --causal, and an
 * (H, T, T) mask that hides every key of one query in one head (NaN there, as
 * -inf makes it). Each is checked against the double-precision reference of
 * tests/reference.h: it scores every query head against the single key head,
 * one head at a time, and leaves hidden keys out of the softmax. */
#define TESTING
#include "mqa.c"
#include "tap.h"
#include "run.h"
#define MODULE_MQA
#include "reference.h"

/* MultiQueryAttention in double, tests/reference.h's pass: K and V are (B, T, hd),
 * one head for all H query heads. A query that sees no key gets NaN weights, as
 * softmax of -inf. */
/* The module's case for tests/reference.h; its vis is malloc'd (the caller frees). */
static RefCase case_of(const MQA *m, const Tensor *x, const Tensor *mask, int B, int T) {
    int D = m->dim, H = m->heads;
    RefWeights w = { m->q_w.data, m->q_b.data, m->k_w.data, m->k_b.data, m->v_w.data, m->v_b.data, m->o_w.data,
                     m->o_b.data };
    float *vis = ref_visible(mask, 4, (int[]){ B, H, T, T });
    RefAttn a = { .B = B, .T = T, .H = H, .G = 1, .hd = D / H, .vis = vis, .hide = REF_FILL_INF };
    return (RefCase){ w, x->data, x->data, x->data, D, a, NULL, NULL };
}

/* Two tests: the program's weights and output against the reference. W_Q and
 * W_K's weights are multiplied by `sharpen` first. */
static void check_case(const char *what, int B, int T, int D, int H, uint64_t seed, float sharpen, const Tensor *mask) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .seed = seed };
    MQA m = {0};
    Tensor x;
    make_module(&m, &x, &a);
    for (long i = 0; i < m.q_w.size; i++) m.q_w.data[i] *= sharpen;
    for (long i = 0; i < m.k_w.size; i++) m.k_w.data[i] *= sharpen;
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof(double)), *rout = calloc(out.size, sizeof(double));
    STUDENT(mqa_forward(out.data, att.data, &m, x.data, mask, B, T));
    RefCase c = case_of(&m, &x, mask, B, T);
    double *eatt = ref_new(att.size), *eout = ref_new(out.size);
    ref_attention_err(rout, eout, ratt, eatt, &c.w, x.data, x.data, x.data, D, &c.a);
    int good = within_ok(att.data, ratt, eatt, att.size, "%s: the weights (B, H, T, T) match a head-by-head double "
                         "reference, within what float32 rounding allows", what);
    good &= within_ok(out.data, rout, eout, out.size, "%s: the output matches the reference", what);
    c.out = out.data, c.att = att.data;
    if (!good) ref_explain(&c, NULL, 0);
    free((float *)c.a.vis);
    free(ratt); free(rout); free(eatt); free(eout);
    tensor_free(&att); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

/* One position, five heads of one number: every weight is 1. */
static void test_one_position(void) {
    check_case("(B, T, D, H) = (1, 1, 5, 5), no mask", 1, 1, 5, 5, 4242, 1.0f, NULL);
}

/* Seven heads of three numbers on one key head, padding of different lengths
 * with --causal on top, weights x3. */
static void test_padding_causal(void) {
    int B = 3, T = 6, real[3] = { 6, 2, 4 };
    Tensor pad = tensor_new(4, (int[]){ B, 1, 1, T });
    for (int b = 0; b < B; b++)
        for (int s = 0; s < T; s++) pad.data[b * T + s] = s < real[b];
    mask_final(&pad, 1, T, T);                            /* (B, 1, T, T) */
    check_case("(B, T, D, H) = (3, 6, 21, 7), (B, 1, 1, T) padding and --causal, W_Q and W_K x3", B, T, 21, 7, 99, 3.0f, &pad);
    tensor_free(&pad);
}

/* An (H, T, T) mask: a pattern per head, and query 2 of head 3 sees no key, so
 * its weights and every output of position 2 are NaN. Weights x4. */
static void test_per_head_nan(void) {
    int H = 4, T = 5;
    Tensor per_head = tensor_new3(H, T, T);
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++)
            for (int s = 0; s < T; s++) per_head.data[(h * T + t) * T + s] = (3 * s + t + h) % 4 != 3 && !(h == 3 && t == 2);
    check_case("(B, T, D, H) = (2, 5, 12, 4), an (H, T, T) mask with one query of head 3 seeing nothing (NaN), W_Q and W_K x4",
               2, T, 12, H, 31337, 4.0f, &per_head);
    tensor_free(&per_head);
}

int main(void) {
    (void)mqa_print;                                      /* tested through the program */
    EXERCISE("6.7", 2, test_one_position());
    EXERCISE("6.7", 2, test_padding_causal());
    EXERCISE("6.7", 2, test_per_head_nan());
    done_testing();
    return exit_status();
}
