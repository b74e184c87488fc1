/* Hidden tests for Exercise 7.6 (chapter 7, passes 3 and 4 of cross_attention:
 * the (T, S) scores of every head and the mask over the source), for teachers.
 *
 * A student handout leaves this folder out; `make test` and `make grade` in
 * the full book build and run it beside tests/test_cross_attention.c. Its
 * cases are ones the public tests do not use: sizes of 1, odd sizes, one key,
 * other seeds, and masks the public tests never give the forward pass (a (T, S)
 * pattern, one key pattern per head, a source that is hidden entirely, a
 * (B, 1, T, S) pattern with T == S). Each is checked against the reference of
 * tests/reference.h, in double precision, which reads the mask element by
 * element and leaves hidden keys out of the softmax instead of filling them. */
#define TESTING
#include "cross_attention.c"
#include "tap.h"
#include "run.h"
#define MODULE_CROSS_ATTENTION
#include "reference.h"

/* The module in eval mode, for tests/reference.h's pass (ref_check): att (B, H, T, S),
 * out (B, T, D). Head h is columns h*hd .. h*hd + hd - 1 of every projected row; the
 * mask is read element by element, lined up with (B, H, T, S) from the right (vis,
 * malloc'd: the caller frees it). A row whose keys are all hidden is uniform, 1/S
 * each, which is what filling with -1e20 gives. */
static RefCase case_of(const CrossAttention *m, const float *xq, const float *xk, const float *xv, const Tensor *mask,
                       int B, int T, int S) {
    int D = m->dim, H = m->heads;
    RefWeights w = { m->q_w.data, m->q_b.data, m->k_w.data, m->k_b.data, m->v_w.data, m->v_b.data, m->o_w.data,
                     m->o_b.data };
    float *vis = ref_visible(mask, 4, (int[]){ B, H, T, S });
    return (RefCase){ w, xq, xk, xv, D, { .B = B, .T = T, .S = S, .H = H, .hd = D / H, .vis = vis }, NULL, NULL };
}

/* A case drawn from `seed` by the program itself, run through the forward pass
 * with `mask` (NULL for none; the drawn source padding when use_padding), and
 * compared with the reference: one test, the weights and the output within the
 * bound of a float32 pass. */
static void check(const char *what, int B, int H, int T, int S, int D, uint64_t seed, const Tensor *mask, int use_padding) {
    CrossAttention m = {0};
    Tensor q, k, v, pad;
    Args a = { .batch = B, .seq = T, .kv_seq = S, .dim = D, .heads = H, .seed = seed };
    make_module(&m, &q, &k, &v, &pad, &a);
    if (use_padding) mask = &pad;
    int shape[4] = { B, H, T, S };
    Tensor att = tensor_new(4, shape), drop = tensor_new(4, shape), out = tensor_new3(B, T, D);
    STUDENT(cross_attention_forward(out.data, att.data, drop.data, &m, q.data, k.data, v.data, mask, 0.0f, NULL, B, T, S));
    RefCase c = case_of(&m, q.data, k.data, v.data, mask, B, T, S);
    c.out = out.data, c.att = att.data;
    ref_check(&c, NULL, 0, "%s: (B, H, T, S, D) = (%d, %d, %d, %d, %d), weights and output match the reference, within "
              "what float32 rounding allows", what, B, H, T, S, D);
    free((float *)c.a.vis);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out);
    free_module(&m, &q, &k, &v, &pad);
}

static void test_hidden_cases(void) {
    check("every size 1", 1, 1, 1, 1, 1, 101, NULL, 1);
    check("odd sizes, source padding of 2, 1 and 1 keys", 3, 3, 7, 3, 9, 102, NULL, 1);
    check("T == S, odd sizes, source padding of 2 and 1 keys", 2, 1, 3, 3, 5, 108, NULL, 1);
    check("one key for five queries: every weight is 1", 2, 2, 5, 1, 6, 103, NULL, 0);

    Tensor late = tensor_new2(4, 6);                  /* (T, S): query t sees keys t .. S-1 */
    for (int t = 0; t < 4; t++)
        for (int s = 0; s < 6; s++) late.data[t * 6 + s] = s >= t;
    check("a (T, S) mask, query t seeing keys t and later", 2, 2, 4, 6, 8, 104, &late, 0);

    Tensor per_head = tensor_new3(3, 1, 5);            /* (H, 1, S): head h hides keys h and 4 - h */
    for (int h = 0; h < 3; h++)
        for (int s = 0; s < 5; s++) per_head.data[h * 5 + s] = s != h && s != 4 - h;
    check("an (H, 1, S) mask, different keys hidden in each head", 2, 3, 3, 5, 12, 105, &per_head, 0);

    Tensor gone = tensor_new(4, (int[]){ 2, 1, 1, 3 }); /* sequence 1's source hidden entirely */
    for (int s = 0; s < 3; s++) gone.data[s] = 1, gone.data[3 + s] = 0;
    check("a source hidden entirely: its rows are uniform, 1/3 each", 2, 2, 2, 3, 4, 106, &gone, 0);

    Tensor stripes = tensor_new(4, (int[]){ 1, 1, 9, 9 }); /* (1, 1, T, S), T == S: (2t + s) % 3 != 0 */
    for (int t = 0; t < 9; t++)
        for (int s = 0; s < 9; s++) stripes.data[t * 9 + s] = (2 * t + s) % 3 != 0;
    check("a (1, 1, T, S) mask with T == S, not symmetric in rows and columns", 1, 4, 9, 9, 8, 107, &stripes, 0);

    tensor_free(&late); tensor_free(&per_head); tensor_free(&gone); tensor_free(&stripes);
}

/* Tested through the public tests, not here. */
static void unused_here(void) {
    (void)cross_attention_print;
}

int main(void) {
    unused_here();
    EXERCISE("7.6", 8, test_hidden_cases());
    done_testing();
    return exit_status();
}
