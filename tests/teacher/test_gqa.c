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
 * reference below, written for this file: query head h reads key and value
 * head h / (H/G), as repeat_interleave pairs them, one head at a time. */
#define TESTING
#include "gqa.c"
#include "tap.h"
#include "run.h"

/* A module and its input X as gqa makes them from a seed, through the program's
 * own list of tensors, and the module's tensors freed through the same list. */
static void make_module(GQA *m, Tensor *x, const Args *a) {
    Tensors list = {0};
    Tensor mask, att, out;
    gqa_tensors(&list, m, x, &mask, &att, &out);
    tensors_open(&list, (Args *)a);
    m->dim = a->dim, m->heads = a->heads, m->kv_heads = a->kv_heads;
    tensor_free(&att); tensor_free(&out);
}

static void free_module(GQA *m) {
    Tensors list = {0};
    Tensor none = {0};
    gqa_tensors(&list, m, &none, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}

/* y (N, out) = x (N, in) @ w^T + b, in double. */
static void lin(double *y, const double *x, const Tensor *w, const Tensor *b, long N, int in, int out) {
    for (long r = 0; r < N; r++)
        for (int o = 0; o < out; o++) {
            double acc = b->data[o];
            for (int i = 0; i < in; i++) acc += x[r * in + i] * (double)w->data[(long)o * in + i];
            y[r * out + o] = acc;
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

/* GroupedQueryAttention in double: K and V are (B, T, G*hd); query head h reads
 * their head h / R. A query that sees no key gets NaN weights. */
static void ref_gqa(double *out, double *att, const GQA *m, const Tensor *x, const Tensor *mask, int B, int T) {
    int D = m->dim, H = m->heads, G = m->kv_heads, hd = D / H, W = G * hd, R = H / G;
    long BT = (long)B * T;
    double *xd = malloc(sizeof(double) * BT * D), *q = malloc(sizeof(double) * BT * D);
    double *k = malloc(sizeof(double) * BT * W), *v = malloc(sizeof(double) * BT * W);
    double *cat = calloc(BT * D, sizeof(double));
    for (long i = 0; i < BT * D; i++) xd[i] = x->data[i];
    lin(q, xd, &m->q_w, &m->q_b, BT, D, D);
    lin(k, xd, &m->k_w, &m->k_b, BT, D, W);
    lin(v, xd, &m->v_w, &m->v_b, BT, D, W);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int kv = h / R * hd;                                /* the first column of its key head */
            for (int t = 0; t < T; t++) {
                double *row = att + (((long)b * H + h) * T + t) * T, top = -INFINITY, sum = 0;
                for (int s = 0; s < T; s++) {
                    double dot = 0;
                    for (int i = 0; i < hd; i++) dot += q[(b * T + t) * (long)D + h * hd + i] * k[(b * T + s) * (long)W + kv + i];
                    row[s] = visible(mask, b, h, t, s) ? dot / sqrt((double)hd) : -INFINITY;
                    if (row[s] > top) top = row[s];
                }
                for (int s = 0; s < T; s++) sum += row[s] = top == -INFINITY ? NAN : exp(row[s] - top);
                for (int s = 0; s < T; s++) row[s] /= sum;
                for (int i = 0; i < hd; i++)
                    for (int s = 0; s < T; s++) cat[(b * T + t) * (long)D + h * hd + i] += row[s] * v[(b * T + s) * (long)W + kv + i];
            }
        }
    lin(out, cat, &m->o_w, &m->o_b, BT, D, D);
    free(xd); free(q); free(k); free(v); free(cat);
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
    ref_gqa(rout, ratt, &m, &x, mask, B, T);
    close_ok(att.data, ratt, att.size, 1e-6, 0, "%s: the weights (B, H, T, T) match a head-by-head double reference", what);
    close_ok(out.data, rout, out.size, 1e-5, 0, "%s: the output matches the reference", what);
    free(ratt); free(rout);
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
