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
 * checked against the double-precision reference of tests/reference.h: token t's
 * query head h against the keys and values of tokens 0..t of key/value head
 * h / (H/G), as repeat_interleave pairs them, and nothing else. */
#define TESTING
#include "decode.c"
#include "tap.h"
#include "run.h"
#define MODULE_GQA
#include "reference.h"

/* Causal GQA in double, tests/reference.h's pass: query head h of token t against
 * the keys and values of tokens 0..t of key/value head h / (H/G). out (B, T, D);
 * kc (B, G, T, hd): every token's key. */
static RefCase case_of(const GQA *m, const Tensor *x, int B, int T) {
    int D = m->dim, H = m->heads;
    RefWeights w = { m->q_w.data, m->q_b.data, m->k_w.data, m->k_b.data, m->v_w.data, m->v_b.data, m->o_w.data,
                     m->o_b.data };
    return (RefCase){ w, x->data, x->data, x->data, D, { .B = B, .T = T, .H = H, .G = m->kv_heads, .hd = D / H,
                                                         .causal = 1 }, NULL, NULL };
}

/* The same, computed, with in eout and ekc how far a float32 pass, its sums in any
 * order, may be from out and kc. */
static void ref_decode(double *out, double *kc, double *eout, double *ekc, const GQA *m, const Tensor *x, int B,
                       int T) {
    int D = m->dim, H = m->heads, G = m->kv_heads, hd = D / H, W = G * hd;
    long BT = (long)B * T;
    RefCase c = case_of(m, x, B, T);
    ref_attention_err(out, eout, NULL, NULL, &c.w, x->data, x->data, x->data, D, &c.a);
    double *xd = ref_doubles(x->data, BT * D), *k = ref_new(BT * W), *ek = ref_new(BT * W);
    ref_linear_err(k, ek, xd, NULL, c.w.k_w, c.w.k_b, BT, D, W);
    for (int b = 0; b < B; b++)
        for (int g = 0; g < G; g++)
            for (int s = 0; s < T; s++)
                for (int i = 0; i < hd; i++) {
                    long to = (((long)b * G + g) * T + s) * hd + i, from = ((long)b * T + s) * W + g * hd + i;
                    kc[to] = k[from], ekc[to] = ek[from];
                }
    free(xd); free(k); free(ek);
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
    double *eout = ref_new(out.size), *ek = ref_new((long)B * G * T * hd);
    float *keys = malloc(sizeof(float) * B * G * T * hd);
    ref_decode(rout, rk, eout, ek, &m, &x, B, T);
    for (int bg = 0; bg < B * G; bg++)                        /* the first T rows of each (b, g) block */
        memcpy(keys + (long)bg * T * hd, c.k.data + (long)bg * (T + spare) * hd, sizeof(float) * T * hd);
    if (!within_ok(out.data, rout, eout, out.size, "%s: the outputs of %d steps match a causal double reference, "
                   "within what float32 rounding allows", what, T)) {
        RefCase rc = case_of(&m, &x, B, T);
        rc.out = out.data;
        ref_explain(&rc, NULL, 0);
    }
    long wrong = 0;
    for (long i = 0; i < (long)B * G * T * hd; i++) wrong += !(fabs(keys[i] - rk[i]) <= ek[i]);   /* NaN is wrong */
    ok(c.len == T && wrong == 0, "%s: after %d steps the cache's len is %d and it holds every token's key", what, T, T);
    if (c.len != T || wrong) diag("len %d; %ld of %ld cached key numbers off by more than float32 rounding allows",
                                  c.len, wrong, (long)B * G * T * hd);
    free(rout); free(rk); free(keys); free(eout); free(ek);
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
