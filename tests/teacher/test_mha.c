/* Hidden tests for teachers: Exercise 5.6 (mha's heads: the split, the scores
 * scaled by 1/sqrt(hd), the weighted sum and the merge).
 *
 * A student handout leaves this folder out, so a student cannot tune a solution
 * to these cases; `make test` and `make grade` run it like tests/test_mha.c.
 * The cases are ones the public tests do not use: one position, an odd head
 * size, hd = 1 with an odd D, seeds of their own, weights made larger so that
 * the maps are far from uniform, masks of shape (B, 1, 1, T) with --causal,
 * (H, T, T) and (T), and training mode. Each is checked against the
 * double-precision reference of tests/reference.h: it reads head h of position t
 * straight out of the projections (columns h*hd .. h*hd + hd - 1), leaves hidden
 * scores out of the softmax as the seed's -1e20 does, and never splits or merges. */
#define TESTING
#include "mha.c"
#include "tap.h"
#include "run.h"
#define MODULE_MHA
#include "reference.h"

/* MultiHeadAttention's case for tests/reference.h; its vis is malloc'd (the caller frees). */
static RefCase case_of(const MHA *m, const Tensor *x, const Tensor *mask, int B, int T) {
    int D = m->dim, H = m->heads;
    RefWeights w = { m->query_w.data, m->query_b.data, m->key_w.data, m->key_b.data, m->value_w.data,
                     m->value_b.data, m->out_w.data, m->out_b.data };
    float *vis = ref_visible(mask, 4, (int[]){ B, H, T, T });
    return (RefCase){ w, x->data, x->data, x->data, D, { .B = B, .T = T, .H = H, .hd = D / H, .vis = vis }, NULL, NULL };
}

/* MultiHeadAttention in double, by tests/reference.h's steps: head h of position t
 * read straight out of the projections, hidden scores out of the softmax as -1e20
 * takes them out. drop (B, H, T, T), or NULL in eval mode: the weights that multiply V
 * (the program's, for its draws); otherwise att itself. att (B, H, T, T) and out
 * (B, T, D) are written, and in eatt and eout how far a float32 pass, its sums in any
 * order, may be from them. */
static void ref_mha(double *out, double *att, double *eout, double *eatt, const MHA *m, const Tensor *x,
                    const Tensor *mask, const float *drop, int B, int T) {
    int D = m->dim, H = m->heads;
    RefCase c = case_of(m, x, mask, B, T);
    ref_attention_err(out, eout, att, eatt, &c.w, x->data, x->data, x->data, D, &c.a);
    if (drop) {
        double *dropped = ref_doubles(drop, (long)B * H * T * T);
        ref_output_err(out, eout, dropped, NULL, &c.w, x->data, D, &c.a);
        free(dropped);
    }
    free((float *)c.a.vis);
}

/* A module from `seed`, made through the program's own list of tensors
 * (tests/reference.h), its q_proj and k_proj weights times `sharpen`. */
static void module(MHA *m, Tensor *x, int B, int T, int D, int H, uint64_t seed, float sharpen) {
    make_module(m, x, NULL, &(Args){ .batch = B, .seq = T, .dim = D, .heads = H, .seed = seed });
    for (long i = 0; i < m->query_w.size; i++) m->query_w.data[i] *= sharpen, m->key_w.data[i] *= sharpen;
}

/* Two tests: the program's weights and output against the reference, eval mode. */
static void eval_case(const char *what, int B, int T, int D, int H, uint64_t seed, float sharpen, const Tensor *mask) {
    MHA m = {0};
    Tensor x;
    module(&m, &x, B, T, D, H, seed, sharpen);
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), drop = tensor_new(4, (int[]){ B, H, T, T });
    Tensor out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof(double)), *rout = calloc(out.size, sizeof(double));
    STUDENT(mha_forward(out.data, att.data, drop.data, &m, x.data, mask, 0.0f, NULL, B, T));
    double *eatt = ref_new(att.size), *eout = ref_new(out.size);
    ref_mha(rout, ratt, eout, eatt, &m, &x, mask, NULL, B, T);
    int good = within_ok(att.data, ratt, eatt, att.size, "%s: the weights (B, H, T, T) match a head-by-head double "
                         "reference, within what float32 rounding allows", what);
    good &= within_ok(out.data, rout, eout, out.size, "%s: the output matches the reference", what);
    if (!good) {
        RefCase c = case_of(&m, &x, mask, B, T);
        c.out = out.data, c.att = att.data;
        ref_explain(&c, NULL, 0);
        free((float *)c.a.vis);
    }
    free(ratt); free(rout); free(eatt); free(eout);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

/* One position, three heads of an odd size, no mask: every weight is 1, and the
 * output is o_proj of the merged values. */
static void test_one_position(void) {
    eval_case("(B, T, D, H) = (1, 1, 9, 3), no mask", 1, 1, 9, 3, 1001, 1.0f, NULL);
}

/* Heads of 3 numbers, padding of different lengths per sequence (one sequence
 * with a single real position), --causal on top, weights made sharper. */
static void test_padding_causal(void) {
    int B = 3, T = 5;
    Tensor pad = tensor_new(4, (int[]){ B, 1, 1, T });
    int real[3] = { 5, 1, 3 };
    for (int b = 0; b < B; b++)
        for (int s = 0; s < T; s++) pad.data[b * T + s] = s < real[b];
    mask_final(&pad, 1, T, T);                              /* (B, 1, T, T) */
    eval_case("(B, T, D, H) = (3, 5, 15, 5), (B, 1, 1, T) padding and --causal, q and k weights x3", B, T, 15, 5, 2024, 3.0f, &pad);
    tensor_free(&pad);
}

/* hd = 5, a different (T, T) pattern for each of two heads, weights x4: with
 * maps this sharp, any mix-up of heads or positions shows. */
static void test_per_head_mask(void) {
    int H = 2, T = 6;
    Tensor per_head = tensor_new3(H, T, T);
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            per_head.data[(0 * T + t) * T + s] = s >= t;            /* head 0 looks ahead */
            per_head.data[(1 * T + t) * T + s] = (s + t) % 3 != 1;   /* head 1: a scattered pattern */
        }
    eval_case("(B, T, D, H) = (2, 6, 10, 2), an (H, T, T) mask, one pattern per head, q and k weights x4", 2, T, 10, H, 77, 4.0f, &per_head);
    tensor_free(&per_head);
}

/* Training mode, hd = 1 with an odd D = 7, a (T) mask hiding keys 1 and 3: every
 * dropped weight is 0, every kept one the reference's times 1/(1 - p), and the
 * output is o_proj of the kept weights times the values, merged. */
static void test_train(void) {
    int B = 2, T = 5, D = 7, H = 7;
    float p = 0.5f;
    MHA m = {0};
    Tensor x, keys = tensor_new1(T);
    for (int s = 0; s < T; s++) keys.data[s] = s != 1 && s != 3;
    module(&m, &x, B, T, D, H, 555, 2.0f);
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), drop = tensor_new(4, (int[]){ B, H, T, T });
    Tensor out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof(double)), *rout = calloc(out.size, sizeof(double));
    double *want = calloc(att.size, sizeof(double));
    Rng rng;
    rng_seed(&rng, 8);
    STUDENT(mha_forward(out.data, att.data, drop.data, &m, x.data, &keys, p, &rng, B, T));
    double *eatt = ref_new(att.size), *eout = ref_new(out.size), *ewant = ref_new(att.size);
    ref_mha(rout, ratt, eout, eatt, &m, &x, &keys, drop.data, B, T);
    for (long i = 0; i < att.size; i++) {        /* times 1/(1 - p) = 2, exactly: the bound doubles too */
        want[i] = drop.data[i] == 0.0f ? 0.0 : ratt[i] / (1.0 - p);
        ewant[i] = drop.data[i] == 0.0f ? 0.0 : eatt[i] / (1.0 - p);
    }
    within_ok(drop.data, want, ewant, att.size,
              "(B, T, D, H) = (2, 5, 7, 7), hd = 1, a (T) mask, --train p = 0.5: each kept weight is the reference's times 2");
    within_ok(out.data, rout, eout, out.size, "(B, T, D, H) = (2, 5, 7, 7), --train: the output is o_proj of the kept "
              "weights @ v, heads merged");
    free(ratt); free(rout); free(want); free(eatt); free(eout); free(ewant);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&keys);
    free_module(&m);
}

/* Tested elsewhere, through the program. */
static void unused_here(void) { (void)mha_print; (void)mha_mask_random; }

int main(void) {
    unused_here();
    EXERCISE("5.6", 2, test_one_position());
    EXERCISE("5.6", 2, test_padding_causal());
    EXERCISE("5.6", 2, test_per_head_mask());
    EXERCISE("5.6", 2, test_train());
    done_testing();
    return exit_status();
}
