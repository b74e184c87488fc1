/* Tests for chapter 10, in the process: every rung of the fast ladder, called.
 *
 * Every rung against chapter 5's mha_forward (rung 0), and the fastest against a
 * double-precision reference (tests/reference.h's), each within the bound of its
 * float32 pass, on shapes whose sizes are not multiples of the tiles (hd of 3 and 8,
 * T of 5, 37, 100, 130), with the masks mha
 * takes ((B, H, T, T), (B, 1, 1, T), (H, T, T), (T) padding), --causal alone and on
 * padding, and a query that sees no key. The online-softmax core (Exercise 10.6) on
 * scores made to rise, fall and jump across key blocks; the polynomial 2^x against
 * exp2 in double; the same bits on one thread and on two; the bytes each rung holds,
 * counted, against the chapter's formula.
 *
 * These tests check what the chapter's C computes, so they are compiled at -Og
 * (mk/10-fast.mk): under a second, where -O3's eight copies of the flash block take
 * seven. tests/test_mha_fast.c checks the -O3 programs through their command lines. */
#define TESTING
#include "mha_fast.c"
#include "tap.h"
#include "run.h"
#define MODULE_MHA
#include "reference.h"
#include "flash_blocks.h"    /* flash_blocks: the core over one head */

/* ---- a reference in double precision, one head at a time ---------------- */

/* MHA in eval mode, in double: tests/reference.h's pass. vis (B, H, T, T): 1 where a
 * key is visible, or NULL; causal: keys after the query hidden too. Hidden keys are
 * left out of the softmax; a query that sees none gets the plain average of every
 * value, as -1e20 makes it. */
static RefCase case_of(const MHA *m, const float *x, const float *vis, int causal, int B, int T) {
    RefWeights w = { m->query_w.data, m->query_b.data, m->key_w.data, m->key_b.data, m->value_w.data,
                     m->value_b.data, m->out_w.data, m->out_b.data };
    return (RefCase){ w, x, x, x, m->dim, { .B = B, .T = T, .H = m->heads, .hd = m->dim / m->heads, .vis = vis,
                                            .causal = causal }, NULL, NULL };
}

/* The reference's out, and in eout how far rung r's float32 pass may be from it
 * (reference.h): rungs 0 to 3 are a softmax of each whole row, rung 4 an online one
 * over blocks of BC keys with expf, rung 5 the same with 2^x by a polynomial, within
 * 3.6e-7 of itself (test_exp2): 6.1 units of u. */
static void reference(double *out, double *eout, const MHA *m, const float *x, const float *vis, int causal, int B,
                      int T, int r) {
    RefCase c = case_of(m, x, vis, causal, B, T);
    if (r >= 4) c.a.blocks = (T + BC - 1) / BC, c.a.exp_u = r == 5 ? 6.1 : 2;
    ref_attention_err(out, eout, NULL, NULL, &c.w, x, x, x, m->dim, &c.a);
}

/* ---- cases ---------------------------------------------------------------- */

enum { NO_MASK, RANDOM, PADDING, PER_HEAD, KEYS };
static const char *const mask_names[] = { "no mask", "a random (B, H, T, T) mask", "a (B, 1, 1, T) padding mask",
                                          "an (H, T, T) mask hiding every key of query 1, head 0", "a (T) mask" };

typedef struct Case { int B, T, D, H, mask, causal; } Case;

/* mha's case, made through its own list of tensors as its main makes it, its
 * random mask replaced by one of the kinds above (0 or 1). */
static void make_case(MHA *m, Tensor *x, Tensor *mask, const Case *c, uint64_t seed) {
    make_module(m, x, mask, &(Args){ .batch = c->B, .seq = c->T, .dim = c->D, .heads = c->H, .seed = seed });
    if (c->mask == RANDOM) return;
    tensor_free(mask);
    if (c->mask == PADDING) {
        *mask = tensor_new(4, (int[]){ c->B, 1, 1, c->T });
        for (int b = 0; b < c->B; b++)
            for (int s = 0; s < c->T; s++) mask->data[b * c->T + s] = s < c->T - 2 * b || s == 0;
    } else if (c->mask == PER_HEAD) {
        *mask = tensor_new3(c->H, c->T, c->T);
        for (long i = 0; i < mask->size; i++) mask->data[i] = (i * 2654435761u >> 7) % 3 != 0;
        for (int s = 0; s < c->T; s++) mask->data[1 * c->T + s] = 0.0f;      /* head 0, query 1 sees nothing */
    } else if (c->mask == KEYS) {
        *mask = tensor_new1(c->T);
        for (int s = 0; s < c->T; s++) mask->data[s] = s % 4 != 3;
    }
}

static const Case cases[] = {
    { 2, 37, 12, 4, NO_MASK, 0 },     /* hd = 3: one padded panel of 32 per head */
    { 1, 100, 96, 3, RANDOM, 0 },     /* hd = 32; T not a multiple of 48 or 64 */
    { 2, 70, 64, 1, PADDING, 1 },     /* one head of 64, padding and --causal */
    { 3, 5, 20, 5, PER_HEAD, 0 },     /* hd = 4, T = 5 < one block; a query that sees nothing */
    { 1, 130, 48, 6, KEYS, 0 },       /* hd = 8, three key blocks */
    { 2, 64, 64, 2, NO_MASK, 1 },     /* --causal alone, T a whole number of key blocks */
};
#define CASES (int)(sizeof cases / sizeof cases[0])

static void describe(char *buf, size_t n, const Case *c) {
    snprintf(buf, n, "(B, T, D, H) = (%d, %d, %d, %d), %s%s", c->B, c->T, c->D, c->H, mask_names[c->mask],
             c->causal ? ", --causal" : "");
}

/* Run rung r on case c with `threads` threads: out (B, T, D). Its threads are let go
 * at once, so that the next STUDENT call may fork (a child forked from a process
 * with OpenMP's threads would wait for them forever). */
static void run_rung(float *out, int r, const MHA *m, const float *x, const Tensor *mask, int causal, int B, int T,
                     int threads) {
    Fast f;
    fast_prepare(&f, m, rung_fold(r, m->dim / m->heads));
    Visibility vis = visibility(mask, causal);
    STUDENT(rungs[r].forward(out, &f, x, &vis, B, T, threads), fast_threads_done());
    fast_free_prepared(&f);
}

/* ---- every rung against rung 0 --------------------------------------------- */

/* Rungs first .. last against chapter 5's mha_forward and, for the last, against the
 * double reference: 1e-4 for every number of out. */
static void test_rungs(int first, int last) {
    for (int c = 0; c < CASES; c++) {
        const Case *k = &cases[c];
        MHA m = {0};
        Tensor x, mask;
        make_case(&m, &x, &mask, k, 70 + c);
        long n = (long)k->B * k->T * k->D;
        float *naive = calloc(n, sizeof *naive), *got = calloc(n, sizeof *got);
        char what[160];
        describe(what, sizeof what, k);
        run_rung(naive, 0, &m, x.data, &mask, k->causal, k->B, k->T, 1);
        float *vis = ref_visible(mask.data ? &mask : NULL, 4, (int[]){ k->B, k->H, k->T, k->T });
        double *want = ref_new(n), *e0 = ref_new(n), *er = ref_new(n), *both = ref_new(n), *naive_d = ref_new(n);
        reference(want, e0, &m, x.data, vis, k->causal, k->B, k->T, 0);
        for (long i = 0; i < n; i++) naive_d[i] = naive[i];
        for (int r = first; r <= last; r++) {
            run_rung(got, r, &m, x.data, &mask, k->causal, k->B, k->T, 2);
            reference(want, er, &m, x.data, vis, k->causal, k->B, k->T, r);
            for (long i = 0; i < n; i++) both[i] = e0[i] + er[i];     /* each within its own bound of the exact */
            tap_layout("b t d", 3, (int[]){ k->B, k->T, k->D });
            within_ok(got, naive_d, both, n, "%s: rung %d (%s) agrees with chapter 5's mha, within what float32 rounding "
                      "allows both", what, r, rungs[r].name);
        }
        if (last == FASTEST) {
            reference(want, er, &m, x.data, vis, k->causal, k->B, k->T, FASTEST);
            if (!within_ok(got, want, er, n, "%s: the fastest rung agrees with a double-precision reference, within what "
                           "float32 rounding allows", what)) {
                RefCase c = case_of(&m, x.data, vis, k->causal, k->B, k->T);
                c.out = got;
                ref_explain(&c, NULL, 0);
            }
        }
        free(vis); free(want); free(e0); free(er); free(both); free(naive_d);
        free(naive); free(got);
        tensor_free(&x); tensor_free(&mask);
        free_module(&m);
    }
    fast_threads_done();
}

/* ---- the online-softmax core, one head at a time ---------------------------- */

/* One head of T queries and keys, hd = 4 (hdp = 32), whose scores q_t . k_s are
 * pattern(t, s) exactly: q_t = (1, a_t, 0, 0), k_s = (u_s, w_s, 0, 0). Values are
 * fixed numbers. The core runs block by block; the reference takes base^(score)
 * (2 for the polynomial core, e for expf's) over the visible keys, in double. */
enum { RISING, FALLING, JUMP, CROSSING, LAST };
static const char *const pattern_names[] = {
    "scores rising along the keys (a new max in every block)", "scores falling along the keys (the max comes first)",
    "one key of the last block far above the rest", "half the queries rising, half falling",
    "the last key of a block 150 above the rest (left out of the max, it overflows)" };

/* The chapter's list of step 4's mistakes, each made in double, block by block as
 * flash_block runs (hidden keys -1e20, keys past T -inf, steps 5 and 6 as the book's):
 * out (T, hd) for one head whose scores are score[t * T + s]. */
static const char *const online_mistakes[] = {
    "l is not rescaled: the old sum is kept against the old maximum (Exercise 10.3's bug); it must be l * alpha",
    "alpha is upside down: e^(new max - old max), where e^(old max - new max) <= 1 belongs",
    "the maximum starts from 0, not from the old maximum m",
    "the maximum is the block's alone: it must start from the old maximum m, so that it only grows",
    "the weights were taken against the old maximum, before it was updated",
    "the old sum is forgotten: l becomes the block's sum alone, where l * alpha + the block's belongs",
    "the new maximum is not kept: m[i] = mx[i] is missing",
    "the new sum is not kept: l[i] = sum[i] is missing",
    "the last key of each block is left out of the maximum",
    "the exponential is expf whatever poly says: the poly copy's scores are in units of ln 2, for 2^x",
};

static void online_mistake(int kind, double *out, const double *score, const float *v, int hdp, int T, int hd, int poly) {
    int expo = kind == 9 ? 0 : poly;
    for (int t = 0; t < T; t++) {
        double m = -INFINITY, l = 0, o[32] = {0};
        for (int s0 = 0; s0 < T; s0 += BC) {
            double st[BC], top = kind == 2 ? 0 : kind == 3 ? -INFINITY : m;
            for (int c = 0; c < BC; c++) {
                st[c] = s0 + c < T ? score[(long)t * T + s0 + c] : -INFINITY;
                if (c < BC - (kind == 8)) top = fmax(top, st[c]);
            }
            double alpha = kind == 1 ? (expo ? exp2(top - m) : exp(top - m)) : (expo ? exp2(m - top) : exp(m - top));
            double sum = kind == 0 ? l : kind == 5 ? 0 : l * alpha, against = kind == 4 ? m : top;
            if (kind != 6) m = top;
            for (int d = 0; d < hd; d++) o[d] *= alpha;
            for (int c = 0; c < BC; c++) {
                double p = expo ? exp2(st[c] - against) : exp(st[c] - against);
                if (!(p == p) || p == 0) p = p == p ? 0 : p;
                sum += p;
                for (int d = 0; d < hd && s0 + c < T; d++) o[d] += p * v[(long)(s0 + c) * hdp + d];
            }
            if (kind != 7) l = sum;
        }
        for (int d = 0; d < hd; d++) out[(long)t * hd + d] = o[d] / l;
    }
}

/* After a failed core_case: the listed mistake the outputs match, if one does. */
static void explain_online(const float *got, const double *score, const float *v, int hdp, int T, int hd, int poly) {
    double *alt = malloc(sizeof(double) * (size_t)T * hd);
    for (int k = 0; k < (int)(sizeof online_mistakes / sizeof online_mistakes[0]); k++) {
        if (k == 9 && !poly) continue;
        online_mistake(k, alt, score, v, hdp, T, hd, poly);
        int same = 1;
        for (long i = 0; same && i < (long)T * hd; i++)
            same = (isnan(got[i]) && isnan(alt[i])) || fabs(got[i] - alt[i]) <= 1e-4 * (1 + fabs(alt[i]));
        if (same) {
            what_is_wrong("%s", online_mistakes[k]);
            break;
        }
    }
    free(alt);
}

static void core_case(int pattern, int poly, const Tensor *mask, const char *what) {
    int T = 200, Tp = 256, hd = 4, hdp = 32;                 /* rows up to Tp: whole blocks of BC keys */
    float *q = calloc((size_t)Tp * hdp, sizeof *q), *k = calloc((size_t)Tp * hdp, sizeof *k);
    float *v = calloc((size_t)Tp * hdp, sizeof *v), *got = calloc((size_t)T * hd, sizeof *got);
    double *want = calloc((size_t)T * hd, sizeof *want), *w = calloc(T, sizeof *w);
    for (int t = 0; t < T; t++) {
        q[t * hdp] = 1.0f;
        q[t * hdp + 1] = pattern == CROSSING ? (t % 2 ? 1.0f : -1.0f) : 0.0f;
    }
    for (int s = 0; s < T; s++) {
        k[s * hdp] = pattern == RISING ? 0.05f * s : pattern == FALLING ? -0.05f * s
                   : pattern == JUMP ? (s == 190 ? 30.0f : 0.01f * (s % 7))
                   : pattern == LAST ? (s == 2 * BC - 1 ? 150.0f : 0.01f * (s % 7)) : 0.0f;   /* key 127 */
        k[s * hdp + 1] = pattern == CROSSING ? 0.06f * s - 6.0f : 0.0f;
        for (int d = 0; d < hd; d++) v[s * hdp + d] = (float)((s * 37 + d * 11) % 23) / 23.0f - 0.3f;
    }
    Fast f = { .D = hd, .H = 1, .hd = hd, .hdp = hdp };
    Visibility vis = visibility(mask, 0);
    FlashWork work = flash_work_new(hdp);
    STUDENT(flash_blocks(got, q, k, v, &vis, T, &f, &work, poly));
    flash_work_free(&work, hdp);
    /* the bound of a float32 pass (reference.h): each score a dot product of hd terms, an
     * online softmax over the blocks of BC keys with 2^x (its scores in units of ln 2:
     * 2^s = e^(s ln 2)) or expf, each output a weighted sum of T values */
    double *bound = ref_new((long)T * hd), *e = ref_new(T), *es = ref_new(T);
    int *hidden = calloc((size_t)T, sizeof *hidden);
    RefAttn online = { .B = 1, .T = 1, .S = T, .H = 1, .hd = hd, .blocks = (T + BC - 1) / BC, .exp_u = poly ? 6.1 : 2 };
    double unit = poly ? log(2.0) : 1.0;
    for (int t = 0; t < T; t++) {
        int any = 0;
        for (int s = 0; s < T; s++) {
            double a0 = (double)q[t * hdp] * k[s * hdp], a1 = (double)q[t * hdp + 1] * k[s * hdp + 1];
            hidden[s] = !visible(&vis, 0, 0, t, s), any |= !hidden[s];
            w[s] = (a0 + a1) * unit;
            es[s] = ref_gamma(hd) * (fabs(a0) + fabs(a1)) * unit;
        }
        if (!any) for (int s = 0; s < T; s++) hidden[s] = 0, w[s] = 0;      /* the plain average, as -1e20 makes it */
        ref_softmax_line(w, e, es, 1, T, hidden, &online);
        for (int d = 0; d < hd; d++) {
            double sum = 0.0, mag = 0.0, carried = 0.0;
            for (int s = 0; s < T; s++) {
                double vs = v[s * hdp + d];
                sum += w[s] * vs, mag += fabs(w[s] * vs), carried += e[s] * fabs(vs);
            }
            want[t * hd + d] = sum, bound[t * hd + d] = ref_gamma(T + 2) * mag + carried;
        }
    }
    tap_layout("t d", 2, (int[]){ T, hd });
    if (!within_ok(got, want, bound, (long)T * hd, "%s, %s: the core's outputs match the softmax-weighted sum in "
                   "double, within what float32 rounding allows", poly ? "2^x, the polynomial" : "e^x, libm's expf", what)) {
        double *score = malloc(sizeof(double) * (size_t)T * T);         /* as flash_block sees them */
        for (int t = 0; t < T; t++)
            for (int s = 0; s < T; s++)
                score[(long)t * T + s] = visible(&vis, 0, 0, t, s) ? (double)q[t * hdp] * k[s * hdp] +
                                         (double)q[t * hdp + 1] * k[s * hdp + 1] : -1e20;
        explain_online(got, score, v, hdp, T, hd, poly);
        free(score);
    }
    free(q); free(k); free(v); free(got); free(want); free(w); free(bound); free(e); free(es); free(hidden);
}

static void test_core(void) {
    for (int poly = 0; poly <= 1; poly++) {
        for (int p = RISING; p <= LAST; p++) core_case(p, poly, NULL, pattern_names[p]);
        Tensor mask = tensor_new2(200, 200);                  /* query 3 sees nothing; query 7 only key 190 */
        for (int t = 0; t < 200; t++)
            for (int s = 0; s < 200; s++) mask.data[t * 200 + s] = t == 3 ? 0.0f : t == 7 ? s == 190 : (s * 7 + t) % 5 != 0;
        core_case(RISING, poly, &mask, "a query that sees no key (the plain average), one that sees only key 190");
        tensor_free(&mask);
    }
}

/* ---- 2^x by a polynomial ------------------------------------------------- */

static void test_exp2(void) {
    double worst = 0.0, where = 0.0;
    for (long i = 0; i <= 1260000; i++) {
        float x = -126.0f + 126.0f * (float)i / 1260000.0f;
        double want = exp2((double)x), err = fabs(exp2_poly(x) - want) / want;
        if (err > worst) worst = err, where = x;
    }
    ok(worst < 3.6e-7, "2^x by the polynomial is within 3 units in the last place on [-126, 0] (worst %.2g at x = %g)",
       worst, where);
    ok(exp2_poly(0.0f) == 1.0f && exp2_poly(-1.0f) == 0.5f && exp2_poly(-10.0f) == 1.0f / 1024,
       "2^0 = 1, 2^-1 = 1/2 and 2^-10 = 1/1024 exactly");
    ok(exp2_poly(-127.0f) == 0.0f && exp2_poly(-200.0f) == 0.0f && exp2_poly(-1e20f) == 0.0f && exp2_poly(-INFINITY) == 0.0f,
       "at -127 and below, at -1e20 and at -inf, 2^x is exactly 0: a hidden key weighs nothing");
}

/* ---- --causal alone skips the blocks of future keys --------------------------- */

/* With --causal and no mask, flash_block stops at the block's last query; with the same
 * triangle given as a mask it visits every block, and hides the future keys one by one.
 * A skipped block would have weighed exactly 0 (its alpha exactly 1), so the two give
 * the same bits. T = 200: four blocks of queries, the last one short. */
static void test_causal_skip(void) {
    Case c = { 2, 200, 64, 4, NO_MASK, 1 };
    MHA m = {0};
    Tensor x, none, triangle = tensor_new2(c.T, c.T);                 /* (T, T): 1 for s <= t */
    make_case(&m, &x, &none, &c, 93);
    for (int t = 0; t < c.T; t++)
        for (int s = 0; s < c.T; s++) triangle.data[(long)t * c.T + s] = s <= t;
    long n = (long)c.B * c.T * c.D;
    float *skipped = calloc(n, sizeof *skipped), *visited = calloc(n, sizeof *visited);
    for (int r = 4; r <= FASTEST; r++) {
        run_rung(skipped, r, &m, x.data, &none, 1, c.B, c.T, 2);
        run_rung(visited, r, &m, x.data, &triangle, 0, c.B, c.T, 2);
        ok(!memcmp(skipped, visited, (size_t)n * sizeof *skipped),
           "rung %d (%s): --causal alone, which skips the blocks of future keys, gives the same bits "
           "as the same triangle given as a mask, which visits them all", r, rungs[r].name);
    }
    free(skipped); free(visited);
    tensor_free(&x); tensor_free(&none); tensor_free(&triangle);
    free_module(&m);
    fast_threads_done();
}

/* ---- threads, memory ------------------------------------------------------ */

static void test_threads(void) {
    Case c = { 2, 150, 64, 4, RANDOM, 1 };
    MHA m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, &c, 91);
    long n = (long)c.B * c.T * c.D;
    float *one = calloc(n, sizeof *one), *two = calloc(n, sizeof *two);
    for (int r = 3; r <= FASTEST; r++) {
        run_rung(one, r, &m, x.data, &mask, c.causal, c.B, c.T, 1);
        run_rung(two, r, &m, x.data, &mask, c.causal, c.B, c.T, 2);
        ok(!memcmp(one, two, (size_t)n * sizeof *one), "rung %d (%s) computes the same bits on one thread and on two",
           r, rungs[r].name);
    }
    free(one); free(two);
    tensor_free(&x); tensor_free(&mask);
    free_module(&m);
    fast_threads_done();
}

static void test_memory(void) {
    int B = 2, T = 100, D = 48, H = 3;
    Case c = { B, T, D, H, NO_MASK, 0 };
    MHA m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, &c, 5);
    float *out = calloc((size_t)B * T * D, sizeof *out);
    static const int counted[] = { 1, 4, FASTEST };
    for (int i = 0; i < 3; i++) {
        int r = counted[i];
        Fast f;
        long start = fast_bytes_now;
        fast_prepare(&f, &m, rung_fold(r, D / H));
        Visibility vis = visibility(NULL, 0);
        long before = fast_bytes_now;
        fast_bytes_peak = before;
        STUDENT(rungs[r].forward(out, &f, x.data, &vis, B, T, 1), fast_threads_done());
        is_int(fast_bytes_peak - before, rung_bytes(r, B, T, D, H), "rung %d (%s) holds at most rung_bytes(%d) bytes, "
               "counted by fast_alloc", r, rungs[r].name, r);
        long kept = fast_bytes_now - before;
        STUDENT(rungs[r].forward(out, &f, x.data, &vis, B, T, 1), fast_threads_done());
        long kept_again = fast_bytes_now - before;
        fast_free_prepared(&f);
        ok(fast_bytes_now == start && kept_again == kept && kept == (r >= 4 ? 4L * (3L * B * H * 128 * 32 + (long)B * T * D) : 0),
           "and gives them all back: at once (rung 1), or with the prepared weights (flash keeps q, k, v and the "
           "mixed heads between calls: %ld bytes, the same for a second call)", kept);
    }
    long flash = rung_bytes(FASTEST, 1, 32768, 768, 12), naive = rung_bytes(0, 1, 32768, 768, 12);
    ok(flash < 512L << 20 && naive > 64L << 30, "T = 32768, GPT-2 small: the flash rung holds %ld MiB, under half a GiB; "
       "chapter 5's needs %ld GiB", flash >> 20, naive >> 30);
    long f2 = rung_bytes(FASTEST, 1, 2048, 768, 12), f4 = rung_bytes(FASTEST, 1, 4096, 768, 12);
    long f8 = rung_bytes(FASTEST, 1, 8192, 768, 12);
    ok(f8 - f4 == 2 * (f4 - f2), "the flash rung's bytes grow in step with T, O(T): %ld, %ld, %ld MiB at T = 2048, 4096, 8192",
       f2 >> 20, f4 >> 20, f8 >> 20);
    free(out);
    tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* Run through the programs, in tests/test_mha_fast.c. */
static void unused_here(void) { (void)fast_print; (void)fast_weights; }

int main(void) {
    unused_here();
    /* Exercise 10.6 (the online softmax: running max, rescale, running sum): the
     * tests that say it is done */
    EXERCISE("10.6", 12, test_core());
    EXERCISE("10.6", 3 * CASES, test_rungs(4, FASTEST));
    EXERCISE("10.6", 2, test_causal_skip());
    TEST_GROUP(test_rungs(1, 3));
    TEST_GROUP(test_exp2());
    TEST_GROUP(test_threads());
    TEST_GROUP(test_memory());

    done_testing();
    return exit_status();
}
