/* Tests for chapter 9: decoding one token at a time with a KV cache (decode), and
 * the table of its costs (decode_costs).
 *
 * decode.c and decode_costs.c are included with TESTING defined. The reference,
 * tests/reference.h's, is a double-precision loop that computes causal
 * grouped-query attention one query at a time, each query against the keys and
 * values of positions 0..t only, its head h reading key/value head h / (H/G)
 * (repeat_interleave); it never fills anything and has no cache, and carries
 * the bound of a float32 pass beside each number. Other checks hold the steps to
 * chapter 6's full causal pass, gqa_forward with the (T, T) triangle, within twice
 * that bound, and say in a note whether they are its very bits.
 * The command-line checks run the real programs: $ABH_BIN/decode against
 * $ABH_BIN/gqa --causal on the same files, the refusals, and the tables of
 * $ABH_BIN/decode_costs and $ABH_BIN/decode_bench (their counts only: no test
 * here looks at a time). */
#define TESTING
#include "decode.c"
#include "decode_costs.c"
#include "tap.h"
#include "run.h"
#define MODULE_GQA
#include "reference.h"
#include <ctype.h>

/* ---- an independent reference, in double precision ---------------------- */

/* Causal GQA in double: tests/reference.h's pass, each query against the keys of
 * positions 0..t only (those after it left out of the softmax). out (B, T, D); att
 * (B, H, T, T), zeros after key t in row t; kc, vc (B, G, T, hd): every position's
 * key and value, projected again. */
static RefCase case_of(const GQA *m, const float *x, int B, int T, const float *out, const float *att) {
    RefWeights w = { m->q_w.data, m->q_b.data, m->k_w.data, m->k_b.data, m->v_w.data, m->v_b.data, m->o_w.data,
                     m->o_b.data };
    return (RefCase){ w, x, x, x, m->dim, { .B = B, .T = T, .H = m->heads, .G = m->kv_heads, .hd = m->dim / m->heads,
                                            .causal = 1 }, out, att };
}

/* The same with, in eout, eatt and ekv, how far a float32 pass, its sums in any order,
 * may be from out, att and the cache (ekv: kc's bounds, then vc's). */
static void reference(double *out, double *att, double *kc, double *vc, double *eout, double *eatt, double *ekv,
                      const GQA *m, const float *x, int B, int T) {
    int D = m->dim, H = m->heads, G = m->kv_heads, hd = D / H, Ghd = G * hd;
    long BT = (long)B * T;
    RefCase c = case_of(m, x, B, T, NULL, NULL);
    ref_attention_err(out, eout, att, eatt, &c.w, x, x, x, D, &c.a);
    double *xd = ref_doubles(x, BT * D), *k = ref_new(BT * Ghd), *v = ref_new(BT * Ghd), *ek = ref_new(BT * Ghd);
    double *ev = ref_new(BT * Ghd);
    ref_linear_err(k, ek, xd, NULL, c.w.k_w, c.w.k_b, BT, D, Ghd);
    ref_linear_err(v, ev, xd, NULL, c.w.v_w, c.w.v_b, BT, D, Ghd);
    for (int b = 0; b < B; b++)
        for (int s = 0; s < T; s++)
            for (int g = 0; g < G; g++)
                for (int i = 0; i < hd; i++) {
                    long to = (((long)b * G + g) * T + s) * hd + i, from = ((long)b * T + s) * Ghd + g * hd + i;
                    kc[to] = k[from], vc[to] = v[from];
                    if (ekv) ekv[to] = ek[from], ekv[BT * Ghd + to] = ev[from];
                }
    free(xd); free(k); free(v); free(ek); free(ev);
}

/* What is wrong with failing steps (Exercise 9.6): the usual suspects, then what the
 * cache says of itself. */
static void explain_steps(const RefCase *student, const KVCache *c, int T) {
    if (ref_explain(student, NULL, 0)) return;
    if (c && c->len != T) what_is_wrong("after %d steps the cache says it holds %d tokens: each step appends one and "
                                        "counts it (c->len = t + 1)", T, c->len);
}

/* ---- cases ------------------------------------------------------------------ */

typedef struct Case { int B, T, D, H, G; const char *what; } Case;

/* A cache freed as decode's tensors_close frees it. */
static void kv_cache_free(KVCache *c) { tensor_free(&c->k); tensor_free(&c->v); }

/* A module and its input X as decode and gqa make them from a seed, through gqa's
 * list of tensors (tests/reference.h). */
static void make_case(GQA *m, Tensor *x, const Case *c, uint64_t seed) {
    Args a = { .batch = c->B, .seq = c->T, .dim = c->D, .heads = c->H, .kv_heads = c->G, .seed = seed };
    make_module(m, x, &a);
}

static const Case cases[] = {
    { 1, 4, 8, 4, 2, "the default case: H = 4, G = 2" },
    { 2, 5, 12, 3, 3, "G = H = 3 (MHA), B = 2, T = 5" },
    { 2, 6, 16, 4, 1, "G = 1 (MQA), B = 2, T = 6" },
    { 3, 7, 24, 6, 2, "H = 6, G = 2: three query heads per group, B = 3, T = 7" },
    { 2, 1, 8, 2, 2, "one token: T = 1, G = H = 2" },
    { 1, 1, 6, 3, 1, "one token: T = 1, G = 1" },
    { 3, 5, 15, 5, 5, "odd sizes: D = 15, H = G = 5 heads of 3" },
    { 1, 9, 21, 7, 1, "odd sizes: T = 9, D = 21, H = 7, G = 1" },
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static int same_floats(const float *a, const float *b, long n) { return memcmp(a, b, (size_t)n * sizeof(float)) == 0; }

/* ---- the steps against the reference (Exercise 9.6) ---------------------------- */

/* Four tests per case: outputs and weights against the reference, the cache against
 * the reference's keys and values, and each row's shape (sums to 1, zeros after t). */
static void check_case(const Case *cs, uint64_t seed) {
    int B = cs->B, T = cs->T, D = cs->D, H = cs->H, G = cs->G, hd = D / H;
    GQA m = {0};
    Tensor x;
    make_case(&m, &x, cs, seed);
    KVCache c = kv_cache_new(B, G, T, hd);
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof(double)), *rout = calloc(out.size, sizeof(double));
    double *rk = calloc(c.k.size, sizeof(double)), *rv = calloc(c.v.size, sizeof(double));
    double *eout = ref_new(out.size), *eatt = ref_new(att.size), *ekv = ref_new(2 * c.k.size);
    STUDENT(decode_run(out.data, att.data, &c, &m, x.data, B, T));
    reference(rout, ratt, rk, rv, eout, eatt, ekv, &m, x.data, B, T);
    tap_layout("b t d", 3, out.shape);
    int good = within_ok(out.data, rout, eout, out.size, "%s: the T outputs match a causal double reference, within "
                         "what float32 rounding allows", cs->what);
    tap_layout("b h t s", 4, att.shape);
    good &= within_ok(att.data, ratt, eatt, att.size, "%s: each step's weights (row t of attn) match the reference",
                      cs->what);
    float *both = malloc(sizeof(float) * 2 * (size_t)c.k.size);
    memcpy(both, c.k.data, sizeof(float) * (size_t)c.k.size);
    memcpy(both + c.k.size, c.v.data, sizeof(float) * (size_t)c.v.size);
    double *rboth = malloc(sizeof(double) * 2 * (size_t)c.k.size);
    memcpy(rboth, rk, sizeof(double) * (size_t)c.k.size);
    memcpy(rboth + c.k.size, rv, sizeof(double) * (size_t)c.v.size);
    ok(c.len == T, "%s: after %d steps the cache holds %d tokens (it says %d)", cs->what, T, T, c.len);
    tap_layout("kv b g t i", 5, (int[]){ 2, B, G, T, hd });
    good &= within_ok(both, rboth, ekv, 2 * c.k.size, "%s: the cache holds every position's key and value, (B, G, T, "
                      "hd)", cs->what);
    RefCase student = case_of(&m, x.data, B, T, out.data, att.data);
    if (!good || c.len != T) explain_steps(&student, &c, T);
    free(both); free(rboth); free(eout); free(eatt); free(ekv);
    free(ratt); free(rout); free(rk); free(rv);
    kv_cache_free(&c);
    tensor_free(&att); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

static void test_against_reference(void) {
    for (int i = 0; i < NCASES; i++) check_case(&cases[i], 90 + (uint64_t)i);
}

/* Row t of every map: its t + 1 weights sum to 1, every weight after them is exactly 0. */
static void test_rows(void) {
    const Case cs = { 2, 6, 16, 4, 2, "" };
    GQA m = {0};
    Tensor x;
    make_case(&m, &x, &cs, 5);
    KVCache c = kv_cache_new(2, 2, 6, 4);
    Tensor att = tensor_new(4, (int[]){ 2, 4, 6, 6 }), out = tensor_new3(2, 6, 16);
    STUDENT(decode_run(out.data, att.data, &c, &m, x.data, 2, 6));
    double *ratt = ref_new(att.size), *eatt = ref_new(att.size), *rout = ref_new(out.size);
    RefCase student = case_of(&m, x.data, 2, 6, out.data, att.data);
    ref_attention_err(rout, NULL, ratt, eatt, &student.w, x.data, x.data, x.data, 16, &student.a);
    double worst = 0, allowed = 1;                  /* the worst row, against the sum of its weights' bounds */
    long leaked = 0;
    for (long r = 0; r < att.size / 6; r++) {
        int t = (int)(r % 6);
        double sum = 0, bound = 0;
        for (int s = 0; s < 6; s++) {
            if (s <= t) sum += att.data[r * 6 + s], bound += eatt[r * 6 + s];
            else leaked += att.data[r * 6 + s] != 0.0f;
        }
        if (!(fabs(sum - 1) / bound <= worst / allowed)) worst = fabs(sum - 1), allowed = bound;
    }
    ok(leaked == 0 && worst <= allowed, "step t's weights sum to 1 over keys 0..t, and keys after t get exactly 0 "
       "(worst sum off by %.1e, %ld weights leaked)", worst, leaked);
    if (leaked || !(worst <= allowed)) explain_steps(&student, &c, 6);
    free(ratt); free(eatt); free(rout);
    kv_cache_free(&c);
    tensor_free(&att); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

/* Step t writes position t of the cache and nothing else: after each step, the
 * positions not reached yet still hold what the cache was made with. */
static void test_append_only_position_t(void) {
    const Case cs = { 2, 5, 12, 6, 3, "" };
    int B = 2, T = 5, D = 12, G = 3, hd = 2;
    GQA m = {0};
    Tensor x;
    make_case(&m, &x, &cs, 21);
    KVCache c = kv_cache_new(B, G, T, hd);
    for (long i = 0; i < c.k.size; i++) c.k.data[i] = c.v.data[i] = 1234.5f;     /* "never written" */
    Tensor x_t = tensor_new2(B, D), out_t = tensor_new2(B, D), att_t = tensor_new3(B, 6, T);
    int only_t = 1, len_right = 1;
    for (int t = 0; t < T; t++) {
        for (int b = 0; b < B; b++) memcpy(x_t.data + b * D, x.data + ((long)b * T + t) * D, sizeof(float) * D);
        STUDENT(decode_step(out_t.data, att_t.data, &c, &m, x_t.data, B));
        len_right &= c.len == t + 1;
        for (long i = 0; i < c.k.size; i++) {
            int s = (int)(i / hd % T);
            int untouched = c.k.data[i] == 1234.5f && c.v.data[i] == 1234.5f;
            if ((s <= t) == untouched) only_t = 0;
        }
    }
    ok(len_right, "after step t the cache's len is t + 1");
    ok(only_t, "step t writes position t of every (b, g) of k_cache and v_cache, and no position after it");
    kv_cache_free(&c);
    tensor_free(&x_t); tensor_free(&out_t); tensor_free(&att_t); tensor_free(&x);
    free_module(&m);
}

/* A cache with room to spare: T_max = T + 3, and its unwritten positions poisoned
 * with NaN. A step that reads past its t + 1 keys turns its row into NaN. */
static void test_room_to_spare(void) {
    const Case cs = { 2, 5, 16, 4, 2, "" };
    int B = 2, T = 5, D = 16, H = 4, G = 2, hd = 4;
    GQA m = {0};
    Tensor x;
    make_case(&m, &x, &cs, 33);
    KVCache tight = kv_cache_new(B, G, T, hd), roomy = kv_cache_new(B, G, T + 3, hd);
    for (long i = 0; i < roomy.k.size; i++) roomy.k.data[i] = roomy.v.data[i] = NAN;
    Tensor a1 = tensor_new(4, (int[]){ B, H, T, T }), a2 = tensor_new(4, (int[]){ B, H, T, T });
    Tensor o1 = tensor_new3(B, T, D), o2 = tensor_new3(B, T, D);
    STUDENT(decode_run(o1.data, a1.data, &tight, &m, x.data, B, T));
    STUDENT(decode_run(o2.data, a2.data, &roomy, &m, x.data, B, T));
    ok(same_floats(o1.data, o2.data, o1.size) && same_floats(a1.data, a2.data, a1.size),
       "a cache with room for T + 3 tokens, the 3 unwritten ones NaN, gives the same bits: step t reads t + 1 keys");
    kv_cache_free(&tight); kv_cache_free(&roomy);
    tensor_free(&a1); tensor_free(&a2); tensor_free(&o1); tensor_free(&o2); tensor_free(&x);
    free_module(&m);
}

/* Sequences of a batch do not see each other: decoding three together gives, for
 * each, the bits of decoding it alone. */
static void test_batch_independent(void) {
    const Case cs = { 3, 4, 12, 6, 2, "" };
    int B = 3, T = 4, D = 12, H = 6, G = 2, hd = 2;
    GQA m = {0};
    Tensor x;
    make_case(&m, &x, &cs, 8);
    KVCache c = kv_cache_new(B, G, T, hd);
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    STUDENT(decode_run(out.data, att.data, &c, &m, x.data, B, T));
    int same = 1;
    for (int b = 0; b < B; b++) {
        KVCache one = kv_cache_new(1, G, T, hd);
        Tensor a1 = tensor_new(4, (int[]){ 1, H, T, T }), o1 = tensor_new3(1, T, D);
        STUDENT(decode_run(o1.data, a1.data, &one, &m, x.data + (long)b * T * D, 1, T));
        same &= same_floats(o1.data, out.data + (long)b * T * D, o1.size);
        same &= same_floats(a1.data, att.data + (long)b * H * T * T, a1.size);
        same &= same_floats(one.k.data, c.k.data + (long)b * G * T * hd, one.k.size);
        kv_cache_free(&one);
        tensor_free(&a1); tensor_free(&o1);
    }
    ok(same, "a batch of 3 decoded together gives each sequence the bits (outputs, weights, cache) of decoding it alone");
    kv_cache_free(&c);
    tensor_free(&att); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

/* ---- the steps against chapter 6's full causal pass ------------------------------ */

/* Per case: the outputs and weights of T steps against gqa_forward with the causal
 * triangle, to 1e-5 (Exercise 9.6), and the cache against the pass's kh and vh. */
static void check_full_pass(const Case *cs, uint64_t seed) {
    int B = cs->B, T = cs->T, D = cs->D, H = cs->H, G = cs->G, hd = D / H;
    GQA m = {0};
    Tensor x, causal = {0};
    make_case(&m, &x, cs, seed);
    mask_final(&causal, 1, T, T);
    KVCache c = kv_cache_new(B, G, T, hd);
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    Tensor fatt = tensor_new(4, (int[]){ B, H, T, T }), fout = tensor_new3(B, T, D);
    STUDENT(decode_run(out.data, att.data, &c, &m, x.data, B, T));
    STUDENT(gqa_forward(fout.data, fatt.data, &m, x.data, &causal, B, T));
    /* two float32 passes of one formula: within twice the bound of one (reference.h) */
    double *ratt = ref_new(att.size), *eatt = ref_new(att.size), *rout = ref_new(out.size), *eout = ref_new(out.size);
    RefCase student = case_of(&m, x.data, B, T, out.data, att.data);
    ref_attention_err(rout, eout, ratt, eatt, &student.w, x.data, x.data, x.data, D, &student.a);
    double worst = 0;                               /* the largest difference, as a fraction of its bound */
    for (long i = 0; i < out.size; i++) worst = fmax(worst, fabs(out.data[i] - fout.data[i]) / (2 * eout[i]));
    for (long i = 0; i < att.size; i++) worst = fmax(worst, fabs(att.data[i] - fatt.data[i]) / (2 * eatt[i]));
    for (long i = 0; i < out.size; i++) if (isnan(out.data[i]) != isnan(fout.data[i])) worst = INFINITY;
    ok(worst <= 1, "%s: every step's output row and weights agree with gqa --causal's, within what float32 "
       "rounding allows (the largest difference %.2g of its bound)", cs->what, worst);
    if (!(worst <= 1)) explain_steps(&student, &c, T);
    if (!tap_stub[0]) {
        same_bits_note(out.data, fout.data, out.size, "%s: the steps' outputs and gqa --causal's", cs->what);
        same_bits_note(att.data, fatt.data, att.size, "%s: the steps' weights and gqa --causal's", cs->what);
    }
    free(ratt); free(eatt); free(rout); free(eout);
    /* the full pass's keys and values: k_proj(X), v_proj(X), split into G heads */
    Tensor k = tensor_new3(B, T, G * hd), v = tensor_new3(B, T, G * hd);
    Tensor kh = tensor_new(4, (int[]){ B, G, T, hd }), vh = tensor_new(4, (int[]){ B, G, T, hd });
    linear(k.data, x.data, m.k_w.data, m.k_b.data, (long)B * T, D, G * hd);
    linear(v.data, x.data, m.v_w.data, m.v_b.data, (long)B * T, D, G * hd);
    ref_heads(kh.data, k.data, B, T, G, hd);
    ref_heads(vh.data, v.data, B, T, G, hd);
    ok(same_floats(c.k.data, kh.data, kh.size) && same_floats(c.v.data, vh.data, vh.size),
       "%s: the cache holds exactly the full pass's kh and vh, (B, G, T, hd), bit for bit", cs->what);
    tensor_free(&k); tensor_free(&v); tensor_free(&kh); tensor_free(&vh);
    kv_cache_free(&c);
    tensor_free(&att); tensor_free(&out); tensor_free(&fatt); tensor_free(&fout);
    tensor_free(&x); tensor_free(&causal);
    free_module(&m);
}

static void test_equals_full_pass(void) {
    for (int i = 0; i < NCASES; i++) check_full_pass(&cases[i], 190 + (uint64_t)i);
}

/* Causality, seen from the input: a new last row of X changes the last step and no other. */
static void test_future_unseen(void) {
    const Case cs = { 2, 6, 16, 4, 2, "" };
    int B = 2, T = 6, D = 16, H = 4;
    GQA m = {0};
    Tensor x;
    make_case(&m, &x, &cs, 44);
    KVCache c1 = kv_cache_new(B, 2, T, 4), c2 = kv_cache_new(B, 2, T, 4);
    Tensor a1 = tensor_new(4, (int[]){ B, H, T, T }), a2 = tensor_new(4, (int[]){ B, H, T, T });
    Tensor o1 = tensor_new3(B, T, D), o2 = tensor_new3(B, T, D);
    STUDENT(decode_run(o1.data, a1.data, &c1, &m, x.data, B, T));
    for (int b = 0; b < B; b++)
        for (int d = 0; d < D; d++) x.data[((long)b * T + T - 1) * D + d] = 5.0f - x.data[((long)b * T + T - 1) * D + d];
    STUDENT(decode_run(o2.data, a2.data, &c2, &m, x.data, B, T));
    int before = 1, last = 0;
    for (int t = 0; t < T; t++) {
        double d = step_diff(&o1, &o2, t) + step_diff(&a1, &a2, t);
        if (t < T - 1) before &= d == 0.0;
        else last = d > 0.0;
    }
    ok(before && last, "a new last row of X changes step T - 1's output and weights, and no earlier step's");
    kv_cache_free(&c1); kv_cache_free(&c2);
    tensor_free(&a1); tensor_free(&a2); tensor_free(&o1); tensor_free(&o2); tensor_free(&x);
    free_module(&m);
}

/* ---- the helpers around the steps ------------------------------------------------- */

static void fill_cache_full(void *unused) {
    (void)unused;
    const Case cs = { 1, 3, 8, 4, 2, "" };
    GQA m = {0};
    Tensor x;
    make_case(&m, &x, &cs, 3);
    KVCache c = kv_cache_new(1, 2, 2, 2);
    Tensor out = tensor_new3(1, 3, 8), att = tensor_new(4, (int[]){ 1, 4, 3, 3 });
    decode_run(out.data, att.data, &c, &m, x.data, 1, 3);     /* room for 2 tokens, 3 steps */
}

static void test_helpers(void) {
    dies_with(fill_cache_full, NULL, "the KV cache is full: it has room for 2 tokens",
              "a third step into a cache with room for two stops the program");

    Tensor a = tensor_new3(2, 3, 2), b = tensor_new3(2, 3, 2);       /* (B, T, D) */
    a.data[1 * 6 + 2 * 2 + 1] = 0.25f;                               /* b = 1, t = 2 */
    b.data[0 * 6 + 0 * 2 + 0] = -0.5f;                               /* b = 0, t = 0 */
    ok(step_diff(&a, &b, 0) == 0.5 && step_diff(&a, &b, 1) == 0.0 && step_diff(&a, &b, 2) == 0.25,
       "step_diff reads row t of every sequence: 0.5, 0 and 0.25 for rows 0, 1 and 2");
    a.data[1 * 6 + 1 * 2] = NAN;
    ok(isnan(step_diff(&a, &b, 1)), "step_diff of a row holding a NaN is NaN, so the check cannot pass it");
    tensor_free(&a); tensor_free(&b);
}

/* decode_check_mask, in a child process: the mask is (1, 1, T, T) or (T, T). */
typedef struct MaskCase { int ndim, T, flip_t, flip_s; } MaskCase;

static void check_mask_child(void *arg) {
    const MaskCase *mc = arg;
    int T = mc->T;
    Tensor mask = mc->ndim == 2 ? tensor_new2(T, T) : tensor_new(4, (int[]){ 1, 1, T, T });
    for (long i = 0; i < mask.size; i++) mask.data[i] = i % T <= i / T % T;
    if (mc->flip_t >= 0) mask.data[mc->flip_t * T + mc->flip_s] = !mask.data[mc->flip_t * T + mc->flip_s];
    decode_check_mask(&mask, "case", 2, 3, T);
    tensor_free(&mask);
    exit(0);
}

static void test_mask_check(void) {
    MaskCase good2 = { 2, 5, -1, -1 }, good4 = { 4, 5, -1, -1 }, keeps = { 2, 5, 1, 3 }, hides = { 4, 5, 4, 0 };
    TapChild r = run_child(check_mask_child, &good2);
    ok(r.status == 0 && !r.err[0], "the (T, T) causal triangle gqa --causal dumps is accepted");
    r = run_child(check_mask_child, &good4);
    ok(r.status == 0 && !r.err[0], "a (1, 1, T, T) causal mask is accepted");
    dies_with(check_mask_child, &keeps, "case/attention_mask.npy keeps key 3 of query 1 (sequence 0, head 0), which "
              "causal attention hides", "a mask that keeps a future key is refused, naming the first such score");
    dies_with(check_mask_child, &hides, "hides key 0 of query 4 (sequence 0, head 0), which causal attention keeps",
              "a mask that hides a past key is refused: decode takes no padding mask");
}

/* ---- the cost formulas, worked by hand ------------------------------------------- */

static void test_costs(void) {
    /* D = 8, H = 4 (hd = 2), G = 2, S = 3: projections 2*64 + 2*8*4 = 192, attention 2*8*3 = 48 */
    ok(step_macs(8, 4, 2, 3) == 240, "step_macs(D 8, H 4, G 2, S 3) = 2*8*8 + 2*8*(2*2) + 2*8*3 = 240");
    ok(prefix_macs(8, 4, 2, 3) == 720, "prefix_macs(D 8, H 4, G 2, S 3) = 3*192 + 2*8*3*3 = 720");
    ok(cache_bytes(8, 4, 2, 3, 4) == 96, "cache_bytes(D 8, H 4, G 2, S 3, 4 bytes) = 2*2*2*3*4 = 96");
    ok(step_macs(768, 12, 12, 1) == 2360832 && prefix_macs(768, 12, 12, 1) == 2360832,
       "the first step of a fresh sequence costs one token's full pass: 2,360,832 MACs at D = 768, as chapter 5 counts");
    ok(cache_bytes(768, 12, 12, 4096, 4) == 25165824 && cache_bytes(768, 12, 4, 4096, 4) == 8388608 &&
       cache_bytes(768, 12, 1, 4096, 4) == 2097152, "4096 tokens of D = 768: 24 MiB of cache for MHA, 8 for GQA-4, 2 for MQA");
    ok(step_macs(768, 12, 1, 4096) == 7569408 && prefix_macs(768, 12, 12, 4096) == 35433480192L,
       "at S = 4096: MQA's step 7,569,408 MACs; MHA without a cache 35,433,480,192");
    long total_cached = 0, total_prefix = 0;
    for (long S = 1; S <= 100; S++) total_cached += step_macs(64, 4, 4, S), total_prefix += prefix_macs(64, 4, 4, S);
    ok(total_cached == 100L * 4 * 64 * 64 + 64L * 100 * 101 &&
       total_prefix == 4L * 64 * 64 * 5050 + 2L * 64 * 338350,
       "100 tokens: sum of steps = 100 (4D^2) + D T(T+1); without a cache 4D^2 T(T+1)/2 + 2D T(T+1)(2T+1)/6");
}

/* ---- the programs ------------------------------------------------------------------ */

/* The text from "attention_weight:" to the end of the maps, "]]]])", of a run's output. */
static void maps_of(char *dst, size_t n, const char *out) {
    const char *from = strstr(out, "attention_weight:"), *to = from ? strstr(from, "]]]])") : NULL;
    snprintf(dst, n, "%.*s", to ? (int)(to - from + 5) : 0, from ? from : "");
}

/* 1 if two printouts are the same text but for their numbers, each pair of which is
 * within one unit of the last decimal printed: two numbers within float32 rounding of
 * each other, printed to 4 decimals, can differ by one in the last (0.12345 and
 * 0.12344996 print as 0.1235 and 0.1234). */
static int same_print(const char *a, const char *b) {
    while (*a && *b) {
        char *ea, *eb;
        if ((isdigit((unsigned char)*a) || *a == '-') && (isdigit((unsigned char)*b) || *b == '-')) {
            double x = strtod(a, &ea), y = strtod(b, &eb);
            if (ea == a || eb == b || fabs(x - y) > 1.0001e-4) return 0;
            a = ea, b = eb;
        } else if (*a++ != *b++) return 0;
    }
    return *a == *b;
}

/* gqa's layers in a dump, as reference.h's ref_dump_case reads them. */
static const char *const gqa_layers[8] = { "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                                           "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };

static void test_program(const char *tmp) {
    static char gqa_maps[16384], decode_maps[16384];
    int status = run("gqa", ARGS("--causal"));
    maps_of(gqa_maps, sizeof gqa_maps, run_out);
    status |= run("decode", NO_ARGS);
    maps_of(decode_maps, sizeof decode_maps, run_out);
    ok(status == 0 && decode_maps[0] && same_print(gqa_maps, decode_maps),
       "decode prints, step by step, the weights gqa --causal prints for the same seed (to the last digit printed, "
       "give or take one)");
    if (status == 0 && decode_maps[0] && strcmp(gqa_maps, decode_maps))
        note("decode's printed weights and gqa --causal's differ in a last digit (not scored)");
    ok(strstr(run_out, "the cache holds 4 tokens of room for 4: 32 numbers of K and V (MHA would keep 64)\n") != NULL,
       "decode's last line reads the cache itself: 4 tokens, 32 numbers");
    /* the last two columns, max |out - full| and max |attn - full|: 0 when the steps and the
     * full pass round alike, and in any case within twice the bound of one float32 pass */
    const char *row3 = strstr(run_out, "   3  (1, 2, 4, 2)                     32    128 ");
    double dout = INFINITY, datt = INFINITY, eout = 0, eatt = 0;
    if (row3) sscanf(row3 + strlen("   3  (1, 2, 4, 2)                     32    128 "), "%lf %lf", &dout, &datt);
    char dd[600];
    snprintf(dd, sizeof dd, "%s/table-case", tmp);
    RefDump table = {0};
    if (run("decode", ARGS("--quiet", "--dump", dd)) == 0 &&
        ref_dump_case(&table, dd, "X", "X", "X", gqa_layers, 4, 2, 1, 0)) {
        for (long i = 0; i < table.nout; i++) eout = fmax(eout, 2 * table.eout[i]);
        for (long i = 0; i < table.natt; i++) eatt = fmax(eatt, 2 * table.eatt[i]);
    }
    ref_dump_free(&table);
    ok(row3 && dout <= eout && datt <= eatt, "decode's table: after step 3 the cache is (1, 2, 4, 2), 32 numbers in 128 "
       "bytes, and the step is the full pass's to float32 rounding (%g, %g)", dout, datt);
    if (row3 && (dout != 0 || datt != 0)) note("decode's table: the steps differ from the full pass by %g and %g (not scored)",
                                              dout, datt);
    run("decode", ARGS("--quiet"));
    ok(!run_out[0] && !run_err[0], "--quiet prints nothing");

    static const char *const shapes[][10] = {        /* gqa flags: G = H, 1 < G < H, G = 1 */
        { "--batch", "2", "--seq", "5", "--dim", "12", "--heads", "6", "--kv-heads", "6" },
        { "--batch", "2", "--seq", "5", "--dim", "12", "--heads", "6", "--kv-heads", "3" },
        { "--batch", "3", "--seq", "7", "--dim", "16", "--heads", "4", "--kv-heads", "1" },
    };
    for (int i = 0; i < 3; i++) {
        char g[600], d[600], d2[600];
        const char *const *s = shapes[i];
        snprintf(g, sizeof g, "%s/gqa-%d", tmp, i);
        snprintf(d, sizeof d, "%s/decode-%d", tmp, i);
        snprintf(d2, sizeof d2, "%s/decode2-%d", tmp, i);
        status = run("gqa", ARGS(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], "--causal", "--dump", g,
                                 "--quiet"));
        status |= run("decode", ARGS("--load", g, "--heads", s[7], "--kv-heads", s[9], "--dump", d, "--quiet"));
        RefDump rd = {0};
        char pair[160];
        snprintf(pair, sizeof pair, "G = %s of H = %s: decode's and gqa --causal's", s[9], s[7]);
        int loaded = status == 0 && ref_dump_case(&rd, g, "X", "X", "X", gqa_layers, atoi(s[7]), atoi(s[9]), 1, 0);
        ok(loaded && ref_dumps_agree(&rd, d, g, d, pair), "decode --load of a gqa --causal dump (G = %s of H = %s) "
           "writes gqa's out.npy and attn.npy, within what float32 rounding allows", s[9], s[7]);
        status = run("decode", ARGS(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], "--dump", d2, "--quiet"));
        int same_inputs = status == 0;
        static const char *const files[] = { "q_proj.weight", "k_proj.weight", "v_proj.bias", "o_proj.bias", "X",
                                             "attention_mask" };
        for (int f = 0; f < 6; f++) {
            char p1[1400], p2[1400];
            snprintf(p1, sizeof p1, "%s/%s.npy", g, files[f]);
            snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[f]);
            same_inputs &= same_file(p1, p2);
        }
        ok(same_inputs && loaded && ref_dumps_agree(&rd, d2, g, d2, pair), "decode with gqa's flags (G = %s) dumps "
           "gqa --causal's very files: weights, X, the (T, T) mask, and out and attn within what float32 rounding "
           "allows", s[9]);
        ref_dump_free(&rd);
    }

    /* a gqa dump without a mask: decode agrees with gqa --causal --load */
    char g[600], d[600], h[600];
    snprintf(g, sizeof g, "%s/nomask", tmp);
    snprintf(d, sizeof d, "%s/nomask-decode", tmp);
    snprintf(h, sizeof h, "%s/nomask-gqa", tmp);
    status = run("gqa", ARGS("--batch", "2", "--seq", "4", "--dim", "8", "--heads", "2", "--kv-heads", "1",
                             "--dump", g, "--quiet"));
    status |= run("decode", ARGS("--load", g, "--heads", "2", "--kv-heads", "1", "--dump", d, "--quiet"));
    status |= run("gqa", ARGS("--load", g, "--heads", "2", "--kv-heads", "1", "--causal", "--dump", h, "--quiet"));
    RefDump rd = {0};
    ok(status == 0 && ref_dump_case(&rd, g, "X", "X", "X", gqa_layers, 2, 1, 1, 0) &&
       ref_dumps_agree(&rd, d, h, d, "no mask: decode's and gqa --causal's"),
       "decode --load DIR agrees with gqa --causal --load DIR on a dump without a mask, within what float32 rounding "
       "allows");
    ref_dump_free(&rd);

    /* the cache files: every position's key and value, split into heads */
    char kpath[1400];
    snprintf(kpath, sizeof kpath, "%s/k_cache.npy", d);
    if (!ok(file_exists(kpath), "--dump writes k_cache.npy")) {
        ok(0, "--dump writes k_cache.npy and v_cache.npy, (B, G, T, hd), k_cache being k_proj(X) split into heads");
        return;
    }
    Tensor x = load_npy(d, "X"), kw = load_npy(d, "k_proj.weight"), kb = load_npy(d, "k_proj.bias");
    Tensor kc = load_npy(d, "k_cache"), vc = load_npy(d, "v_cache");
    Tensor k = tensor_new3(2, 4, 4), kh = tensor_new(4, (int[]){ 2, 1, 4, 4 });
    linear(k.data, x.data, kw.data, kb.data, 8, 8, 4);
    split_heads(kh.data, k.data, 2, 4, 1, 4);
    ok(kc.ndim == 4 && kc.shape[0] == 2 && kc.shape[1] == 1 && kc.shape[2] == 4 && kc.shape[3] == 4 &&
       vc.ndim == 4 && same_floats(kc.data, kh.data, kh.size),
       "--dump writes k_cache.npy and v_cache.npy, (B, G, T, hd), k_cache being k_proj(X) split into heads");
    tensor_free(&x); tensor_free(&kw); tensor_free(&kb); tensor_free(&kc); tensor_free(&vc);
    tensor_free(&k); tensor_free(&kh);
}

static void test_refusals(const char *tmp) {
    char d[600], never[600], p[1400];
    snprintf(d, sizeof d, "%s/case", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    char decode[1024];
    snprintf(decode, sizeof decode, "%s", program_path("decode"));
    int status = run("gqa", ARGS("--batch", "2", "--seq", "5", "--dim", "12", "--heads", "6", "--kv-heads", "3",
                                 "--causal", "--dump", d, "--quiet"));
    ok(status == 0, "gqa --causal dumps a case to spoil");
    mkdir(d, 0777);                                   /* there to spoil even if gqa stopped at a stub */

    refuses(decode, ARGS("--causal", "--dump", never), "decode is causal by construction",
            "--causal is refused by name: decode has no other mode");
    refuses(decode, ARGS("--dump", never, "--causal"), "decode is causal by construction",
            "--causal is refused after other flags too");
    refuses(decode, ARGS("--heads", "4", "--kv-heads", "3", "--dump", never), "does not divide --heads",
            "--kv-heads 3 with --heads 4 is refused");
    refuses(decode, ARGS("--heads", "3", "--kv-heads", "1", "--dump", never), "does not divide --dim",
            "--heads 3 with --dim 8 is refused");
    refuses(decode, ARGS("--train", "--dump", never), "unknown flag --train", "--train is refused: no dropout here");
    refuses(decode, ARGS("--kv-seq", "3", "--dump", never), "unknown flag --kv-seq",
            "--kv-seq is refused: keys come from the same sequence");
    refuses(decode, ARGS("--load", d, "--heads", "6", "--kv-heads", "2", "--dump", never),
            "k_proj.weight.npy: shape (6, 12), expected (4, 12)", "--kv-heads 2 beside a dump with G = 3 is refused");

    Tensor all = tensor_new2(5, 5);                                        /* no mask at all: every key kept */
    for (long i = 0; i < all.size; i++) all.data[i] = 1;
    save_npy(d, "attention_mask", &all);
    refuses(decode, ARGS("--load", d, "--heads", "6", "--kv-heads", "3", "--dump", never),
            "attention_mask.npy keeps key 1 of query 0 (sequence 0, head 0), which causal attention hides",
            "an all-ones mask is refused: decode cannot attend to later tokens");
    Tensor pad = tensor_new(4, (int[]){ 2, 1, 1, 5 });                      /* causal would be fine, padding not */
    for (long i = 0; i < pad.size; i++) pad.data[i] = i != 9;               /* sequence 1 hides key 4 */
    Tensor tri = {0};
    mask_final(&pad, 1, 5, 5);                                          /* (2, 1, 5, 5): padding AND causal */
    save_npy(d, "attention_mask", &pad);
    refuses(decode, ARGS("--load", d, "--heads", "6", "--kv-heads", "3", "--dump", never),
            "hides key 4 of query 4 (sequence 1, head 0), which causal attention keeps",
            "a padding mask ANDed with the triangle is refused: decode takes no padding");
    Tensor bad = tensor_new3(2, 5, 5);                                      /* (B, T, T): B = 2 meets H = 6 */
    save_npy(d, "attention_mask", &bad);
    refuses(decode, ARGS("--load", d, "--heads", "6", "--kv-heads", "3", "--dump", never),
            "attention_mask.npy: shape (2, 5, 5) does not broadcast to the scores (B, H, T, T)",
            "a mask that does not broadcast to (B, H, T, T) is refused as gqa refuses it");
    mask_final(&tri, 1, 5, 5);
    save_npy(d, "attention_mask", &tri);
    Tensor odd = tensor_new2(5, 12);
    save_npy(d, "k_proj.weight", &odd);
    refuses(decode, ARGS("--load", d, "--heads", "6", "--kv-heads", "3", "--dump", never),
            "k_proj.weight.npy: shape (5, 12), expected (6, 12)", "a k_proj.weight whose rows are not a multiple of hd is refused");
    snprintf(p, sizeof p, "%s/X.npy", d);
    remove(p);
    refuses(decode, ARGS("--load", d, "--heads", "6", "--kv-heads", "3", "--dump", never), "X.npy", "a dump without X.npy is refused");
    ok(!file_exists(never), "no refused run left anything behind: the --dump directory was never made");
    tensor_free(&all); tensor_free(&pad); tensor_free(&bad); tensor_free(&tri); tensor_free(&odd);
}

/* decode_costs's table holds the formulas' numbers. */
static void test_costs_program(void) {
    int status = run("decode_costs", NO_ARGS);
    char row[256];
    snprintf(row, sizeof row, "%6d %12ld %12ld %12ld\n", 4096, cache_bytes(768, 12, 12, 4096, 4),
             cache_bytes(768, 12, 4, 4096, 4), cache_bytes(768, 12, 1, 4096, 4));
    ok(status == 0 && strstr(run_out, row), "decode_costs: the cache bytes at S = 4096 are the formula's, %.40s", row);
    snprintf(row, sizeof row, "%6d %12ld %12ld %12ld %14ld %14ld %14ld\n", 1024, step_macs(768, 12, 12, 1024),
             step_macs(768, 12, 4, 1024), step_macs(768, 12, 1, 1024), prefix_macs(768, 12, 12, 1024),
             prefix_macs(768, 12, 4, 1024), prefix_macs(768, 12, 1, 1024));
    ok(strstr(run_out, row) != NULL, "decode_costs: the MACs at S = 1024, with and without a cache, are the formulas'");
    int rows = 0;
    for (const char *p = run_out; (p = strchr(p, '\n')); p++) rows++;
    ok(rows == 2 + 1 + 13 + 2 + 2 + 1 + 13, "decode_costs prints two blocks of 13 rows, S = 1 .. 4096 (%d lines)", rows);
    refuses(program_path("decode_costs"), ARGS("--dim", "64"), "unknown flag --dim", "decode_costs refuses --dim");
}

/* decode_bench, on small sizes: it runs, and its MAC columns are the formulas'. */
static void test_bench_program(void) {
    int status = run("decode_bench", ARGS("--dim", "16", "--heads", "4", "--kv-heads", "2", "--seq", "16"));
    int found = 0;
    for (const char *line = run_out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        long S, kib;
        double ms, t1, m1, t2, m2;
        char none[32];
        double mnone;
        if (sscanf(line, "%ld %ld %lf %lf %lf %lf %lf %31s %lf", &S, &kib, &ms, &t1, &m1, &t2, &m2, none, &mnone) != 9)
            continue;
        double want1 = (double)step_macs(16, 4, 2, S) / step_macs(16, 4, 4, S);
        double want2 = (double)step_macs(16, 4, 1, S) / step_macs(16, 4, 4, S);
        double wantn = (double)prefix_macs(16, 4, 4, S) / step_macs(16, 4, 4, S);
        if (fabs(m1 - want1) < 0.006 && fabs(m2 - want2) < 0.006 && fabs(mnone - wantn) < 0.6 &&
            kib == cache_bytes(16, 4, 4, S, 4) / 1024 && ms > 0)
            found++;
    }
    ok(status == 0 && found == 3, "decode_bench --dim 16 --heads 4 --kv-heads 2 --seq 16: rows S = 1, 4, 16, "
       "MAC ratios as the formulas say (%d rows)", found);
    run("decode_bench", ARGS("--dim", "16", "--heads", "4", "--seq", "4", "--quiet"));
    ok(!run_out[0] && !run_err[0], "decode_bench --quiet prints nothing");
    refuses(program_path("decode_bench"), ARGS("--heads", "12", "--kv-heads", "5"), "does not divide --heads",
            "decode_bench refuses --kv-heads 5 with --heads 12");
    refuses(program_path("decode_bench"), ARGS("--batch", "2"), "--batch", "decode_bench refuses --batch 2");
}

int main(void) {
    char tmp[] = "/tmp/abh-decode-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    (void)decode_print; (void)decode_check;                /* tested through the program */

    /* Exercise 9.6 (append to the cache, attend to it): the tests that say it is done */
    EXERCISE("9.6", 4 * NCASES, test_against_reference());
    EXERCISE("9.6", 1, test_rows());
    EXERCISE("9.6", 2, test_append_only_position_t());
    EXERCISE("9.6", 1, test_room_to_spare());
    EXERCISE("9.6", 1, test_batch_independent());
    EXERCISE("9.6", 2 * NCASES, test_equals_full_pass());
    TEST_GROUP(test_future_unseen());
    TEST_GROUP(test_helpers());
    TEST_GROUP(test_mask_check());
    TEST_GROUP(test_costs());
    TEST_GROUP(test_program(tmp));
    TEST_GROUP(test_refusals(tmp));
    TEST_GROUP(test_costs_program());
    TEST_GROUP(test_bench_program());

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
