/* Hidden tests for teachers: Exercise 9.6 in decode (append the new token's key
 * and value to the cache, score the new queries against the cached keys, mix the
 * cached values).
 *
 * A student handout leaves this folder out, so a solution cannot be tuned to
 * these cases; `make test` and `make grade` run it like tests/test_decode.c. The
 * cases are ones the public tests do not use: ten query heads in five groups of
 * two over four sequences, a sequence of seventeen tokens, eight query heads on
 * one key/value head, q and k weights made larger so that the maps are far from
 * uniform, and a cache with room for five tokens more than are decoded, the room
 * filled with 1e30 (a step that reads past its keys is far off, not NaN). Each is
 * checked against the double-precision reference below, written for this file:
 * token t's query head h against the keys and values of tokens 0..t of key/value
 * head h / (H/G), as repeat_interleave pairs them, and nothing else. */
#define TESTING
#include "decode.c"
#include "tap.h"
#include "run.h"

/* A module and its input X as decode makes them from a seed, through gqa's list of
 * tensors, and the module's tensors freed through the same list. */
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

/* Causal GQA in double. out (B, T, D); kc (B, G, T, hd): every token's key. */
static void ref_decode(double *out, double *kc, const GQA *m, const Tensor *x, int B, int T) {
    int D = m->dim, H = m->heads, G = m->kv_heads, hd = D / H, W = G * hd, R = H / G;
    long BT = (long)B * T;
    double *xd = malloc(sizeof(double) * BT * D), *q = malloc(sizeof(double) * BT * D);
    double *k = malloc(sizeof(double) * BT * W), *v = malloc(sizeof(double) * BT * W);
    double *cat = calloc(BT * D, sizeof(double)), *w = malloc(sizeof(double) * T);
    for (long i = 0; i < BT * D; i++) xd[i] = x->data[i];
    lin(q, xd, &m->q_w, &m->q_b, BT, D, D);
    lin(k, xd, &m->k_w, &m->k_b, BT, D, W);
    lin(v, xd, &m->v_w, &m->v_b, BT, D, W);
    for (int b = 0; b < B; b++)
        for (int g = 0; g < G; g++)
            for (int s = 0; s < T; s++)
                for (int i = 0; i < hd; i++) kc[(((long)b * G + g) * T + s) * hd + i] = k[((long)b * T + s) * W + g * hd + i];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++) {
                int kv = h / R * hd;                         /* the first column of its key head */
                double top = -INFINITY, sum = 0;
                for (int s = 0; s <= t; s++) {
                    double dot = 0;
                    for (int i = 0; i < hd; i++) dot += q[((long)b * T + t) * D + h * hd + i] * k[((long)b * T + s) * W + kv + i];
                    w[s] = dot / sqrt((double)hd);
                    top = fmax(top, w[s]);
                }
                for (int s = 0; s <= t; s++) sum += w[s] = exp(w[s] - top);
                for (int s = 0; s <= t; s++)
                    for (int i = 0; i < hd; i++) cat[((long)b * T + t) * D + h * hd + i] += w[s] / sum * v[((long)b * T + s) * W + kv + i];
            }
    lin(out, cat, &m->o_w, &m->o_b, BT, D, D);
    free(xd); free(q); free(k); free(v); free(cat); free(w);
}

/* Two tests: the outputs of T steps and the cache's keys against the reference. The
 * cache has room for `spare` more tokens, filled with 1e30; q_proj's and k_proj's
 * weights are multiplied by `sharpen` first. Steps are taken one by one. */
static void check_case(const char *what, int B, int T, int D, int H, int G, uint64_t seed, float sharpen, int spare) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .kv_heads = G, .seed = seed };
    int hd = D / H;
    GQA m = {0};
    Tensor x;
    make_module(&m, &x, &a);
    for (long i = 0; i < m.q_w.size; i++) m.q_w.data[i] *= sharpen;
    for (long i = 0; i < m.k_w.size; i++) m.k_w.data[i] *= sharpen;
    KVCache c = kv_cache_new(B, G, T + spare, hd);
    for (long i = 0; i < c.k.size; i++) c.k.data[i] = c.v.data[i] = 1e30f;
    Tensor out = tensor_new3(B, T, D), x_t = tensor_new2(B, D), out_t = tensor_new2(B, D);
    Tensor att_t = tensor_new3(B, H, T + spare);
    for (int t = 0; t < T; t++) {
        for (int b = 0; b < B; b++) memcpy(x_t.data + (long)b * D, x.data + ((long)b * T + t) * D, sizeof(float) * D);
        STUDENT(decode_step(out_t.data, att_t.data, &c, &m, x_t.data, B));
        for (int b = 0; b < B; b++) memcpy(out.data + ((long)b * T + t) * D, out_t.data + (long)b * D, sizeof(float) * D);
    }
    double *rout = calloc(out.size, sizeof(double)), *rk = calloc((size_t)B * G * T * hd, sizeof(double));
    float *keys = malloc(sizeof(float) * B * G * T * hd);
    ref_decode(rout, rk, &m, &x, B, T);
    for (int bg = 0; bg < B * G; bg++)                        /* the first T rows of each (b, g) block */
        memcpy(keys + (long)bg * T * hd, c.k.data + (long)bg * (T + spare) * hd, sizeof(float) * T * hd);
    close_ok(out.data, rout, out.size, 1e-5, 0, "%s: the outputs of %d steps match a causal double reference", what, T);
    long wrong = 0;
    for (long i = 0; i < (long)B * G * T * hd; i++) wrong += !(fabs(keys[i] - rk[i]) <= 1e-5);   /* NaN is wrong */
    ok(c.len == T && wrong == 0, "%s: after %d steps the cache's len is %d and it holds every token's key", what, T, T);
    if (c.len != T || wrong) diag("len %d; %ld of %ld cached key numbers off by more than 1e-5", c.len, wrong,
                                  (long)B * G * T * hd);
    free(rout); free(rk); free(keys);
    tensor_free(&c.k); tensor_free(&c.v);
    tensor_free(&out); tensor_free(&x_t); tensor_free(&out_t); tensor_free(&att_t); tensor_free(&x);
    free_module(&m);
}

static void test_five_groups(void) {
    check_case("(B, T, D, H, G) = (4, 3, 20, 10, 5), q and k weights x3", 4, 3, 20, 10, 5, 9001, 3.0f, 0);
}

static void test_long(void) {
    check_case("(B, T, D, H, G) = (1, 17, 12, 6, 2), seventeen tokens", 1, 17, 12, 6, 2, 9002, 1.0f, 0);
}

static void test_eight_on_one(void) {
    check_case("(B, T, D, H, G) = (2, 5, 32, 8, 1), eight query heads on one, q and k weights x4", 2, 5, 32, 8, 1,
               9003, 4.0f, 0);
}

static void test_room(void) {
    check_case("(B, T, D, H, G) = (3, 6, 18, 3, 3), room for 5 more tokens holding 1e30", 3, 6, 18, 3, 3, 9004,
               2.0f, 5);
}

int main(void) {
    (void)decode_print; (void)decode_check; (void)decode_check_mask; (void)decode_run; (void)gqa_forward;
    EXERCISE("9.6", 2, test_five_groups());
    EXERCISE("9.6", 2, test_long());
    EXERCISE("9.6", 2, test_eight_on_one());
    EXERCISE("9.6", 2, test_room());
    done_testing();
    return exit_status();
}
