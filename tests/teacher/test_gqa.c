/* Hidden tests for teachers: Exercise 6.7 in gqa (each group's query rows
 * against its key head, and the weighted sum of that head's values).
 *
 * A student handout leaves this folder out, so a solution cannot be tuned to
 * these cases; `make test` and `make grade` run it like tests/test_gqa.c. The
 * cases are ones the public tests do not use: one position, three query heads
 * per group with three groups, heads of an odd size, weights made larger so
 * that the maps are far from uniform, a (B, 1, 1, T) padding mask with
 * --causal, and an (H, T, T) mask that hides every key of one query (NaN
 * there, as -inf makes it). Each is checked against the double-precision
 * reference of tests/reference.h: query head h reads key and value head
 * h / (H/G), as repeat_interleave pairs them, one head at a time. */
#define TESTING
#include "gqa.c"
#include "tap.h"
#include "run.h"
#define MODULE_GQA
#include "reference.h"

/* GroupedQueryAttention in double, tests/reference.h's pass: K and V are
 * (B, T, G*hd); query head h reads their head h / R. A query that sees no key gets
 * NaN weights. */
/* The module's case for tests/reference.h; its vis is malloc'd (the caller frees). */
static RefCase case_of(const GQA *m, const Tensor *x, const Tensor *mask, int B, int T) {
    int D = m->dim, H = m->heads;
    RefWeights w = { m->q_w.data, m->q_b.data, m->k_w.data, m->k_b.data, m->v_w.data, m->v_b.data, m->o_w.data,
                     m->o_b.data };
    float *vis = ref_visible(mask, 4, (int[]){ B, H, T, T });
    RefAttn a = { .B = B, .T = T, .H = H, .G = m->kv_heads, .hd = D / H, .vis = vis, .hide = REF_FILL_INF };
    return (RefCase){ w, x->data, x->data, x->data, D, a, NULL, NULL };
}

/* Two tests: the program's weights and output against the reference. q_proj's
 * and k_proj's weights are multiplied by `sharpen` first. */
static void check_case(const char *what, int B, int T, int D, int H, int G, uint64_t seed, float sharpen, const Tensor *mask) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .kv_heads = G, .seed = seed };
    GQA m = {0};
    Tensor x;
    make_module(&m, &x, &a);
    for (long i = 0; i < m.q_w.size; i++) m.q_w.data[i] *= sharpen;
    for (long i = 0; i < m.k_w.size; i++) m.k_w.data[i] *= sharpen;
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof(double)), *rout = calloc(out.size, sizeof(double));
    STUDENT(gqa_forward(out.data, att.data, &m, x.data, mask, B, T));
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

/* One position: six query heads in three groups, every weight 1; the output
 * still depends on which value head each query head reads. */
static void test_one_position(void) {
    check_case("(B, T, D, H, G) = (2, 1, 12, 6, 3), no mask", 2, 1, 12, 6, 3, 808, 1.0f, NULL);
}

/* Nine query heads in three groups of three, padding of different lengths with
 * --causal on top, weights x3. */
static void test_padding_causal(void) {
    int B = 3, T = 5, real[3] = { 3, 5, 1 };
    Tensor pad = tensor_new(4, (int[]){ B, 1, 1, T });
    for (int b = 0; b < B; b++)
        for (int s = 0; s < T; s++) pad.data[b * T + s] = s < real[b];
    mask_final(&pad, 1, T, T);                            /* (B, 1, T, T) */
    check_case("(B, T, D, H, G) = (3, 5, 18, 9, 3), (B, 1, 1, T) padding and --causal, q and k weights x3",
               B, T, 18, 9, 3, 2718, 3.0f, &pad);
    tensor_free(&pad);
}

/* Heads of five numbers, two groups of two, an (H, T, T) mask with a pattern per
 * head in which query 4 of head 1 sees no key (NaN). Weights x4. */
static void test_per_head_nan(void) {
    int H = 4, T = 6;
    Tensor per_head = tensor_new3(H, T, T);
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++)
            for (int s = 0; s < T; s++) per_head.data[(h * T + t) * T + s] = (s + 2 * t + h) % 3 != 0 && !(h == 1 && t == 4);
    check_case("(B, T, D, H, G) = (2, 6, 20, 4, 2), an (H, T, T) mask with one query of head 1 seeing nothing (NaN), q and k weights x4",
               2, T, 20, H, 2, 1618, 4.0f, &per_head);
    tensor_free(&per_head);
}

int main(void) {
    (void)gqa_print;                                      /* tested through the program */
    EXERCISE("6.7", 2, test_one_position());
    EXERCISE("6.7", 2, test_padding_causal());
    EXERCISE("6.7", 2, test_per_head_nan());
    done_testing();
    return exit_status();
}
