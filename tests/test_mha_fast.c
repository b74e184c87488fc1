/* Tests for chapter 10: fast attention on a CPU.
 *
 * Every rung of the ladder against chapter 5's mha_forward (rung 0) to 1e-4, and
 * the fastest against a double-precision reference written here, on shapes whose
 * sizes are not multiples of the tiles (hd of 3 and 8, T of 5, 37, 100, 130), with
 * the masks mha takes ((B, H, T, T), (B, 1, 1, T), (H, T, T), (T) padding),
 * --causal alone and on padding, and a query that sees no key. The online-softmax
 * core (Exercise 10.6) on scores made to rise, fall and jump across key blocks; the
 * polynomial 2^x against exp2 in double; the same bits on one thread and on two;
 * the bytes each rung holds, counted, against the chapter's formula; and the
 * program against mha through --load and --dump, with its refusals. */
#define TESTING
#include "mha_fast.c"
#include "tap.h"
#include "run.h"
#define MODULE_MHA
#include "reference.h"

/* ---- a reference in double precision, one head at a time ---------------- */

/* MHA in eval mode, in double: tests/reference.h's pass. vis (B, H, T, T): 1 where a
 * key is visible, or NULL; causal: keys after the query hidden too. Hidden keys are
 * left out of the softmax; a query that sees none gets the plain average of every
 * value, as -1e20 makes it. */
static void reference(double *out, const MHA *m, const float *x, const float *vis, int causal, int B, int T) {
    RefWeights w = { m->query_w.data, m->query_b.data, m->key_w.data, m->key_b.data, m->value_w.data,
                     m->value_b.data, m->out_w.data, m->out_b.data };
    ref_attention(out, NULL, &w, x, x, x, m->dim, &(RefAttn){ .B = B, .T = T, .H = m->heads, .hd = m->dim / m->heads,
                                                               .vis = vis, .causal = causal });
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
        for (int r = first; r <= last; r++) {
            run_rung(got, r, &m, x.data, &mask, k->causal, k->B, k->T, 2);
            close_ok(got, naive, n, 1e-4, 0, "%s: rung %d (%s) agrees with chapter 5's mha to 1e-4", what, r, rungs[r].name);
        }
        if (last == FASTEST) {
            float *vis = ref_visible(mask.data ? &mask : NULL, 4, (int[]){ k->B, k->H, k->T, k->T });
            double *want = calloc(n, sizeof *want);
            reference(want, &m, x.data, vis, k->causal, k->B, k->T);
            close_ok(got, want, n, 1e-4, 0, "%s: the fastest rung agrees with a double-precision reference", what);
            free(vis); free(want);
        }
        free(naive); free(got);
        tensor_free(&x); tensor_free(&mask);
        free_module(&m);
    }
    fast_threads_done();
}

/* ---- the online-softmax core, one head at a time ---------------------------- */

/* The core on one head: every block of BR queries of T, with 2^x (poly) or expf. */
static void flash_blocks(float *got, const float *q, const float *k, const float *v, const Visibility *vis, int T,
                         const Fast *f, FlashWork *work, int poly) {
    for (int t0 = 0; t0 < T; t0 += BR) {
        if (poly) flash_block_exp2(got, q, k, v, vis, 0, 0, t0, T, f, work);
        else flash_block_expf(got, q, k, v, vis, 0, 0, t0, T, f, work);
    }
}

/* One head of T queries and keys, hd = 4 (hdp = 32), whose scores q_t . k_s are
 * pattern(t, s) exactly: q_t = (1, a_t, 0, 0), k_s = (u_s, w_s, 0, 0). Values are
 * fixed numbers. The core runs block by block; the reference takes base^(score)
 * (2 for the polynomial core, e for expf's) over the visible keys, in double. */
enum { RISING, FALLING, JUMP, CROSSING, LAST };
static const char *const pattern_names[] = {
    "scores rising along the keys (a new max in every block)", "scores falling along the keys (the max comes first)",
    "one key of the last block far above the rest", "half the queries rising, half falling",
    "the last key of a block 150 above the rest (left out of the max, it overflows)" };

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
    for (int t = 0; t < T; t++) {
        double best = -INFINITY, total = 0.0;
        for (int s = 0; s < T; s++) {
            double score = (double)q[t * hdp] * k[s * hdp] + (double)q[t * hdp + 1] * k[s * hdp + 1];
            w[s] = visible(&vis, 0, 0, t, s) ? score : -INFINITY;
            best = fmax(best, w[s]);
        }
        for (int s = 0; s < T; s++) total += w[s] = best == -INFINITY ? 1.0 : (poly ? exp2(w[s] - best) : exp(w[s] - best));
        for (int d = 0; d < hd; d++) {
            double sum = 0.0;
            for (int s = 0; s < T; s++) sum += w[s] / total * v[s * hdp + d];
            want[t * hd + d] = sum;
        }
    }
    close_ok(got, want, (long)T * hd, 1e-5, 0, "%s, %s: the core's outputs match the softmax-weighted sum in double",
             poly ? "2^x, the polynomial" : "e^x, libm's expf", what);
    free(q); free(k); free(v); free(got); free(want); free(w);
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

/* ---- the program, against mha -------------------------------------------- */

/* 1 if the directory holds no file at all (or does not exist) */
static int empty_dir(const char *dir) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' 2>/dev/null)\"", dir);
    return system(cmd) == 0;
}

/* DIR1/out.npy and DIR2/out.npy within 1e-4, as one test named by fmt; when either
 * run (exit status s1, s2) failed, the test fails without reading them. */
static TAP_PRINTF(5, 6) void outs_agree(const char *d1, const char *d2, int s1, int s2, const char *fmt, ...) {
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (s1 != 0 || s2 != 0) {
        ok(0, "%s (exit %d, %d)", name, s1, s2);
        return;
    }
    Tensor o1 = load_npy(d1, "out"), o2 = load_npy(d2, "out");
    close_ok(o2.data, o1.data, o1.size, 1e-4, 0, "%s (exit %d, %d)", name, s1, s2);
    tensor_free(&o1); tensor_free(&o2);
}

/* mha --dump a case, mha_fast --load it: out.npy within 1e-4, every other file the same bytes. */
static void same_as_mha(const char *tmp, const char *what, const char *const *flags, const char *heads, int causal) {
    char d1[600], d2[600], p1[1100], p2[1100];
    const char *args[24];
    int n = 0;
    snprintf(d1, sizeof d1, "%s/mha", tmp);
    snprintf(d2, sizeof d2, "%s/fast", tmp);
    remove_tree(d1); remove_tree(d2);
    for (int i = 0; flags[i]; i++) args[n++] = flags[i];
    args[n++] = "--quiet"; args[n++] = "--dump"; args[n++] = d1; args[n] = NULL;
    int s1 = run("mha", args);
    const char *fast[] = { "--load", d1, "--heads", heads, "--quiet", "--dump", d2, causal ? "--causal" : NULL, NULL };
    int s2 = run("mha_fast", fast);
    outs_agree(d1, d2, s1, s2, "%s: mha_fast's out.npy agrees with mha's to 1e-4", what);
    const char *files[] = { "attn", "X", "attention_mask", "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                            "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };
    int all_same = s1 == 0 && s2 == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (file_exists(p1) != file_exists(p2) || (file_exists(p1) && !same_file(p1, p2))) {
            all_same = 0;
            diag("%s differs", files[i]);
        }
    }
    ok(all_same, "%s: attn.npy, from a pass of its own, and every parameter and input are mha's, byte for byte", what);
}

static void test_program(const char *tmp) {
    char dir[600], never[600], path[1100];
    snprintf(dir, sizeof dir, "%s/mha", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    const char *prog = program_path("mha_fast");
    same_as_mha(tmp, "the notebook's case, a random (B, H, T, T) mask", ARGS("--batch", "3"), "8", 0);
    same_as_mha(tmp, "(2, 70, 96), 3 heads, --causal", ARGS("--batch", "2", "--seq", "70", "--dim", "96", "--heads", "3",
                                                            "--causal", "--seed", "4"), "3", 1);

    /* a padding mask the program did not make, with --causal on top */
    mkdir(dir, 0777);                                 /* there to write to even if mha stopped at a stub */
    Tensor pad = tensor_new(4, (int[]){ 2, 1, 1, 70 });
    for (long i = 0; i < pad.size; i++) pad.data[i] = i < 70 || i % 70 < 40;
    save_npy(dir, "attention_mask", &pad);
    tensor_free(&pad);
    char out1[600], out2[600];
    snprintf(out1, sizeof out1, "%s/pad-mha", tmp);
    snprintf(out2, sizeof out2, "%s/pad-fast", tmp);
    int s1 = run("mha", ARGS("--load", dir, "--heads", "3", "--causal", "--quiet", "--dump", out1));
    int s2 = run("mha_fast", ARGS("--load", dir, "--heads", "3", "--causal", "--quiet", "--dump", out2));
    outs_agree(out1, out2, s1, s2, "a (B, 1, 1, T) padding mask and --causal: out.npy as mha's");
    same_as_mha(tmp, "(1, 50, 12), 4 heads of 3", ARGS("--batch", "1", "--seq", "50", "--dim", "12", "--heads", "4"), "4", 0);

    int status = run("mha_fast", NO_ARGS);
    ok(status == 0 && strstr(run_out, "mha_fast: MultiHeadAttention(hidden_dim=128, nums_head=8), head_dim 16") &&
       strstr(run_out, "output shape: (3, 2, 128)\n") && strstr(run_out, "parameters: 66048"),
       "run without flags, mha_fast makes mha's case and prints its output's corner and shape");
    status = run("mha_fast", ARGS("--quiet"));
    ok(status == 0 && run_out[0] == '\0' && run_err[0] == '\0', "--quiet prints nothing");
    refuses(prog, ARGS("--train"), "the flash rung never stores them", "--train is refused, saying why");
    refuses(prog, ARGS("--dim", "12", "--heads", "5"), "--heads 5 does not divide --dim 12", "--heads 5 with --dim 12 is refused");
    refuses(prog, ARGS("--kv-heads", "2"), "--kv-heads", "--kv-heads is refused: that is chapter 6's");
    Tensor bad = tensor_new3(2, 50, 50);
    mkdir(dir, 0777);
    save_npy(dir, "attention_mask", &bad);
    tensor_free(&bad);
    refuses(prog, ARGS("--load", dir, "--heads", "4", "--dump", never), "does not broadcast",
            "a (2, T, T) mask for 4 heads is refused, as mha refuses it");
    ok(empty_dir(never), "and nothing is written");
    snprintf(path, sizeof path, "%s/attention_mask.npy", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/o_proj.weight.npy", dir);
    Tensor wide = tensor_new2(12, 6);
    npy_save(path, &wide);
    tensor_free(&wide);
    refuses(prog, ARGS("--load", dir, "--heads", "4", "--dump", never), "o_proj.weight",
            "an o_proj.weight of the wrong shape is refused, naming it");
    ok(empty_dir(never), "and nothing is written");
}

/* The bench's figure table: the formula, at the sizes of the figure. */
static void test_memory_table(void) {
    int status = run("mha_bench", ARGS("--memory"));
    char line[128];
    snprintf(line, sizeof line, "\n32768 %.3f %.3f %.3f\n", rung_bytes(0, 1, 32768, 768, 12) / 1048576.0,
             rung_bytes(1, 1, 32768, 768, 12) / 1048576.0, rung_bytes(FASTEST, 1, 32768, 768, 12) / 1048576.0);
    ok(status == 0 && strstr(run_out, line), "mha_bench --memory prints rung_bytes for the figure (T = 32768:%s)", line + 6);
}

/* mha_bench --load DIR: the fastest rung alone on mha_fast's files, timed, and its output
 * (--out) the bits mha_fast --load writes, causal or not (one thread or two compute the
 * same bits). */
static void test_bench_load(const char *tmp) {
    char c[700], d[800], out[800];
    snprintf(c, sizeof c, "%s/bench-case", tmp);
    snprintf(out, sizeof out, "%s/bench-out.npy", tmp);
    run("mha_fast", ARGS("--batch", "2", "--seq", "70", "--dim", "96", "--heads", "4", "--seed", "6", "--quiet",
                         "--dump", c));
    snprintf(d, sizeof d, "%s/attention_mask.npy", c);
    remove(d);                                                  /* the case is X and the weights */
    for (int causal = 0; causal <= 1; causal++) {
        snprintf(d, sizeof d, "%s/bench-fast%d", tmp, causal);
        run("mha_fast", ARGS("--load", c, "--heads", "4", "--quiet", "--dump", d, causal ? "--causal" : NULL));
        int status = run("mha_bench", ARGS("--load", c, "--heads", "4", "--threads", "2", "--runs", "3", "--out", out,
                                           causal ? "--causal" : NULL));
        Tensor got = status == 0 ? load_written(tmp, "bench-out") : (Tensor){0}, want = load_written(d, "out");
        ok(status == 0 && strstr(run_out, "median") && got.data && want.data && got.size == want.size &&
           !memcmp(got.data, want.data, (size_t)got.size * sizeof *got.data),
           "mha_bench --load%s times the fastest rung on mha_fast's files, and --out writes mha_fast's out.npy, "
           "bit for bit", causal ? " --causal" : "");
        tensor_free(&got); tensor_free(&want);
        remove(out);
    }
}

/* mha_bench's refusals, each one line, before anything is timed or written; the case is
 * an X (1, 3, 8) alone, which is read before the heads are checked. */
static void test_bench_refusals(const char *tmp) {
    char c[700], out[800];
    snprintf(c, sizeof c, "%s/bench-x", tmp);
    snprintf(out, sizeof out, "%s/bench-refused.npy", tmp);
    mkdir(c, 0755);
    Tensor x = tensor_new3(1, 3, 8);
    save_npy(c, "X", &x);
    tensor_free(&x);
    const char *bench = program_path("mha_bench");
    refuses(bench, ARGS("--load", c), "--load needs --heads", "mha_bench --load without --heads is refused");
    refuses(bench, ARGS("--heads", "4"), "give --load DIR", "mha_bench --heads without --load is refused");
    refuses(bench, ARGS("--memory", "--load", c), "--memory times nothing", "mha_bench --memory --load is refused");
    refuses(bench, ARGS("--load", c, "--heads", "4", "--runs", "9x"), "not a whole number",
            "mha_bench --runs 9x is refused, not read as 9");
    refuses(bench, ARGS("--load", c, "--heads", "4", "--threads"), "needs a value",
            "mha_bench --threads with no value is refused");
    refuses(bench, ARGS("--load", c, "--heads", "3", "--out", out), "does not divide",
            "mha_bench --load with --heads that do not divide D is refused");
    refuses(bench, ARGS("--bogus"), "not a flag of mha_bench", "mha_bench --bogus is refused");
    refuses(bench, ARGS("--load", c, "--heads", "4", "--out", "/nonexistent-abh/out.npy"), "cannot write in",
            "mha_bench --out into a directory that does not exist is refused before anything is timed");
    ok(!file_exists(out), "and none of them wrote --out");
}

/* Tested through the program, not called here. */
static void unused_here(void) { (void)fast_print; (void)fast_weights; }

/* PROGRAM --causal on its own case (no --load): every query t sees keys 0..t, the weights
 * above the diagonal are exactly 0, those on and below it are not, and every row sums to 1;
 * no random mask hides a row (which -1e20 would make uniform). */
static void test_causal_default(const char *program, const char *tmp) {
    char d[700];
    snprintf(d, sizeof d, "%s/%s-causal", tmp, program);
    int status = run(program, ARGS("--causal", "--seq", "4", "--batch", "1", "--dim", "16", "--heads", "4",
                                   "--quiet", "--dump", d));
    Tensor att = status == 0 ? load_npy(d, "attn") : (Tensor){0};
    long above = 0, hidden_below = 0, T = 4;
    double worst = 0;
    for (long r = 0; r < att.size / T; r++) {
        double sum = 0;
        for (long s = 0; s < T; s++) {
            float w = att.data[r * T + s];
            above += s > r % T && w != 0.0f;
            hidden_below += s <= r % T && w == 0.0f;
            sum += w;
        }
        worst = fmax(worst, fabs(sum - 1));
    }
    ok(status == 0 && att.size == 64 && above == 0 && hidden_below == 0 && worst < 1e-6,
       "%s --causal --seq 4 (no --load): exactly 0 above the diagonal, no key hidden below it, rows sum to 1",
       program);
    if (status) diag("%s", run_err);
    tensor_free(&att);
}

int main(void) {
    unused_here();
    char tmp[] = "/tmp/abh-mha-fast-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    /* Exercise 10.6 (the online softmax: running max, rescale, running sum): the
     * tests that say it is done */
    EXERCISE("10.6", 12, test_core());
    EXERCISE("10.6", 3 * CASES, test_rungs(4, FASTEST));
    EXERCISE("10.6", 2, test_causal_skip());
    TEST_GROUP(test_rungs(1, 3));
    TEST_GROUP(test_exp2());
    TEST_GROUP(test_threads());
    TEST_GROUP(test_memory());
    TEST_GROUP(test_program(tmp));
    TEST_GROUP(test_causal_default("mha_fast", tmp));
    TEST_GROUP(test_memory_table());
    EXERCISE("10.6", 2, test_bench_load(tmp));
    TEST_GROUP(test_bench_refusals(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
