/* Hidden tests for teachers: Exercise 5.6 (mha's heads: the split, the scores
 * scaled by 1/sqrt(hd), the weighted sum and the merge).
 *
 * A student handout leaves this folder out, so a student cannot tune a solution
 * to these cases; `make test` and `make grade` run it like tests/test_mha.c.
 * The cases are ones the public tests do not use: one position, an odd head
 * size, hd = 1 with an odd D, seeds of their own, weights made larger so that
 * the maps are far from uniform, masks of shape (B, 1, 1, T) with --causal,
 * (H, T, T) and (T), and training mode. Each is checked against the
 * double-precision reference below, written for this file: it reads head h of
 * position t straight out of the projections (columns h*hd .. h*hd + hd - 1),
 * fills hidden scores with -1e20 as the seed does, and never splits or merges. */
#define TESTING
#include "mha.c"
#include "tap.h"
#include "run.h"

/* y (N, D) = x (N, D) @ w^T + b, in double. */
static void lin(double *y, const double *x, const Tensor *w, const Tensor *b, long N, int D) {
    for (long r = 0; r < N; r++)
        for (int o = 0; o < D; o++) {
            double acc = b->data[o];
            for (int i = 0; i < D; i++) acc += x[r * D + i] * (double)w->data[(long)o * D + i];
            y[r * D + o] = acc;
        }
}

/* Is key s visible to query t of head h in sequence b? The mask (any shape that
 * broadcasts to (B, H, T, T), or NULL) is read from the right. */
static int visible(const Tensor *mask, int b, int h, int t, int s) {
    if (!mask) return 1;
    int coord[4] = { b, h, t, s };
    long j = 0;
    for (int d = 0; d < mask->ndim; d++) {
        int n = mask->shape[d], c = coord[4 - mask->ndim + d];
        j = j * n + (n == 1 ? 0 : c);
    }
    return mask->data[j] != 0.0f;
}

/* MultiHeadAttention in double, as the seed writes it. drop (B, H, T, T), or
 * NULL in eval mode: the weights that multiply V (the program's, for its
 * draws); otherwise att itself. att (B, H, T, T) and out (B, T, D) are written. */
static void ref_mha(double *out, double *att, const MHA *m, const Tensor *x, const Tensor *mask,
                    const float *drop, int B, int T) {
    int D = m->dim, H = m->heads, hd = D / H;
    long BT = (long)B * T;
    double *xd = malloc(sizeof(double) * BT * D), *q = malloc(sizeof(double) * BT * D);
    double *k = malloc(sizeof(double) * BT * D), *v = malloc(sizeof(double) * BT * D);
    double *cat = calloc(BT * D, sizeof(double));
    for (long i = 0; i < BT * D; i++) xd[i] = x->data[i];
    lin(q, xd, &m->query_w, &m->query_b, BT, D);
    lin(k, xd, &m->key_w, &m->key_b, BT, D);
    lin(v, xd, &m->value_w, &m->value_b, BT, D);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                double *row = att + (((long)b * H + h) * T + t) * T, top = -INFINITY, sum = 0;
                for (int s = 0; s < T; s++) {
                    double dot = 0;
                    for (int i = 0; i < hd; i++) dot += q[(b * T + t) * (long)D + h * hd + i] * k[(b * T + s) * (long)D + h * hd + i];
                    row[s] = visible(mask, b, h, t, s) ? dot / sqrt((double)hd) : -1e20;
                    if (row[s] > top) top = row[s];
                }
                for (int s = 0; s < T; s++) sum += row[s] = exp(row[s] - top);
                for (int s = 0; s < T; s++) row[s] /= sum;
                const float *w = drop ? drop + (((long)b * H + h) * T + t) * T : NULL;
                for (int i = 0; i < hd; i++)
                    for (int s = 0; s < T; s++)
                        cat[(b * T + t) * (long)D + h * hd + i] += (w ? w[s] : row[s]) * v[(b * T + s) * (long)D + h * hd + i];
            }
    lin(out, cat, &m->out_w, &m->out_b, BT, D);
    free(xd); free(q); free(k); free(v); free(cat);
}

/* A module from `seed`, made through the program's own list of tensors, its
 * q_proj and k_proj weights times `sharpen`. */
static void module(MHA *m, Tensor *x, int B, int T, int D, int H, uint64_t seed, float sharpen) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .seed = seed };
    Tensors list = {0};
    mha_tensors(&list, m, x, NULL, NULL, NULL);
    tensors_open(&list, &a);
    m->dim = D, m->heads = H;
    for (long i = 0; i < m->query_w.size; i++) m->query_w.data[i] *= sharpen, m->key_w.data[i] *= sharpen;
}

/* Free a module's weights through the same list. */
static void module_free(MHA *m) {
    Tensors list = {0};
    Tensor none = {0};
    mha_tensors(&list, m, &none, NULL, NULL, NULL);
    tensors_close(&list, &(Args){0});
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
    ref_mha(rout, ratt, &m, &x, mask, NULL, B, T);
    close_ok(att.data, ratt, att.size, 1e-6, 0, "%s: the weights (B, H, T, T) match a head-by-head double reference", what);
    close_ok(out.data, rout, out.size, 1e-5, 0, "%s: the output matches the reference", what);
    free(ratt); free(rout);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x);
    module_free(&m);
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
    ref_mha(rout, ratt, &m, &x, &keys, drop.data, B, T);
    for (long i = 0; i < att.size; i++) want[i] = drop.data[i] == 0.0f ? 0.0 : ratt[i] / (1.0 - p);
    close_ok(drop.data, want, att.size, 2e-6, 0,
             "(B, T, D, H) = (2, 5, 7, 7), hd = 1, a (T) mask, --train p = 0.5: each kept weight is the reference's times 2");
    close_ok(out.data, rout, out.size, 1e-5, 0, "(B, T, D, H) = (2, 5, 7, 7), --train: the output is o_proj of the kept weights @ v, heads merged");
    free(ratt); free(rout); free(want);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&keys);
    module_free(&m);
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
