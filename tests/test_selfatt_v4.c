/* Tests for chapter 4: SelfAttV4, the interview version.
 *
 * What chapter 3's tests cover (mask shapes, fill values, dropout's statistics)
 * is not repeated: V4 runs the very same chunks for those passes. Tested here,
 * as Exercise 4.6: the forward pass against a double-precision reference, with
 * a mask and without one; that each mistake of the chapter's checklist is
 * caught by the check it names; that the forward pass frees what it allocates;
 * and that V4 is V3 to the bit when V3's fused weight is V4's three stacked
 * (run with the real programs, $ABH_BIN/selfatt_v4 and $ABH_BIN/selfatt_v3, in
 * eval and training mode). Then V4's own files and command line. */
#define TESTING
#include <malloc.h>
#include "selfatt_v4.c"
#include "tap.h"
#include "run.h"
#define MODULE_SELFATT_V4
#include "reference.h"

/* ---- a reference in double precision, with mistakes on request ------------ */

enum {
    RIGHT = 0,
    SCALE_BY_D = 1,             /* scores / D instead of / sqrt(D) */
    MASK_AFTER_SOFTMAX = 2,     /* softmax over every key, then zero the hidden ones */
    SOFTMAX_OVER_QUERIES = 4,   /* softmax(dim=-2): each key's column sums to 1 */
    NO_OUTPUT_PROJ = 8,         /* return weights @ V */
};

/* SelfAttV4's four layers for tests/reference.h; without the last one, by mistake. */
static RefWeights weights_of(const SelfAttV4 *m, unsigned mistakes) {
    return (RefWeights){ m->query_w.data, m->query_b.data, m->key_w.data, m->key_b.data, m->value_w.data,
                         m->value_b.data, mistakes & NO_OUTPUT_PROJ ? NULL : m->out_w.data, m->out_b.data };
}

/* Each (T, T) map of a (B, T, T) array with its rows and columns swapped, in place. */
static void transpose_maps(double *a, int B, int T) {
    for (long b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int s = t + 1; s < T; s++) {
                double keep = a[(b * T + t) * T + s];
                a[(b * T + t) * T + s] = a[(b * T + s) * T + t], a[(b * T + s) * T + t] = keep;
            }
}

/* SelfAttV4 in eval mode, by tests/reference.h's steps. vis (B, T, T): 1 where a key
 * is visible, or NULL. With mistakes == RIGHT, hidden keys are left out of the
 * softmax (a row with none visible is uniform, as -1e20 makes it); other values make
 * the named mistakes. */
static void reference(double *out, double *att, const SelfAttV4 *m, const float *x, const float *vis, int B, int T,
                      unsigned mistakes) {
    int D = m->dim;
    long BT = (long)B * T, n = BT * T;
    RefWeights w = weights_of(m, mistakes);
    RefAttn a = { .B = B, .T = T, .H = 1, .hd = D, .divisor = mistakes & SCALE_BY_D ? D : sqrt((double)D),
                  .vis = mistakes & MASK_AFTER_SOFTMAX ? NULL : vis };
    double *xd = ref_doubles(x, BT * D), *q = ref_new(BT * D), *k = ref_new(BT * D);
    float *columns = NULL;
    ref_linear(q, xd, w.q_w, w.q_b, BT, D, D);
    ref_linear(k, xd, w.k_w, w.k_b, BT, D, D);
    ref_scores(att, q, k, &a);
    if (mistakes & SOFTMAX_OVER_QUERIES) {            /* softmax(dim=-2): over each column of a map */
        if (a.vis) {
            columns = malloc(sizeof *columns * (size_t)n);
            for (long i = 0; i < n; i++) columns[i] = a.vis[i / (T * T) * T * T + i % T * T + i / T % T];
            a.vis = columns;
        }
        transpose_maps(att, B, T);
        ref_softmax(att, &a);
        transpose_maps(att, B, T);
    } else ref_softmax(att, &a);
    if (mistakes & MASK_AFTER_SOFTMAX)
        for (long i = 0; vis && i < n; i++) if (!vis[i]) att[i] = 0;
    ref_output(out, att, &w, x, D, &a);
    free(xd); free(q); free(k); free(columns);
}

/* SelfAttV4's case for reference.h, in eval mode: ref_attention_err's bounds and
 * ref_explain's suspects; out and att are the student's, or NULL. */
static RefCase case_of(const SelfAttV4 *m, const float *x, const float *vis, int B, int T, const float *out,
                       const float *att) {
    return (RefCase){ weights_of(m, RIGHT), x, x, x, m->dim, { .B = B, .T = T, .H = 1, .hd = m->dim, .vis = vis },
                      out, att };
}

/* V4's layers in a dump, as reference.h's ref_dump_case reads them. */
static const char *const v4_layers[8] = { "query_proj.weight", "query_proj.bias", "key_proj.weight", "key_proj.bias",
                                          "value_proj.weight", "value_proj.bias", "output_proj.weight",
                                          "output_proj.bias" };

/* A module, its input and the notebook's padding mask, made through the program's
 * own list of tensors as its main makes them (tests/reference.h), then --causal. */
static void make_case(SelfAttV4 *m, Tensor *x, Tensor *mask, int B, int T, int D, int causal, uint64_t seed) {
    Args a = { .batch = B, .seq = T, .dim = D, .seed = seed };
    make_module(m, x, mask, &a);
    mask_final(mask, causal, T, T);
}

/* the explicit (B, T, T) pattern of a mask */
static float *visible(const Tensor *mask, int B, int T) { return ref_visible(mask, 3, (int[]){ B, T, T }); }

static double max_diff(const float *got, const double *want, long n) {
    double worst = 0;
    for (long i = 0; i < n; i++) worst = fmax(worst, fabs(got[i] - want[i]));
    return worst;
}

/* the largest |row sum - 1| over the rows of att (B*T, T) that have a visible key */
static double worst_row(const double *att, const float *vis, long rows, int T) {
    double worst = 0;
    for (long r = 0; r < rows; r++) {
        double sum = 0;
        int any = 0;
        for (int s = 0; s < T; s++) sum += att[r * T + s], any |= vis[r * T + s] != 0;
        if (any) worst = fmax(worst, fabs(sum - 1));
    }
    return worst;
}

/* ---- the forward pass against the reference ----------------------------------- */

static void test_against_reference(void) {
    struct { int B, T, D, causal; } cases[] = { { 3, 4, 2, 0 }, { 2, 7, 5, 1 }, { 1, 9, 16, 1 }, { 4, 5, 8, 0 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int B = cases[c].B, T = cases[c].T, D = cases[c].D;
        SelfAttV4 m = {0};
        Tensor x, mask;
        make_case(&m, &x, &mask, B, T, D, cases[c].causal, 40 + c);
        float *vis = visible(&mask, B, T);
        Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
        double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
        STUDENT(selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, &mask, 0.0f, NULL, B, T));
        RefCase student = case_of(&m, x.data, vis, B, T, out.data, att.data);
        double *eatt = ref_new(att.size), *eout = ref_new(out.size);
        ref_attention_err(rout, eout, ratt, eatt, &student.w, x.data, x.data, x.data, D, &student.a);
        tap_layout("b t d", 3, out.shape);
        int good = within_ok(out.data, rout, eout, out.size, "(B, T, D) = (%d, %d, %d)%s: the output matches the "
                             "reference, within what float32 rounding allows", B, T, D, cases[c].causal ? ", --causal" : "");
        tap_layout("b t s", 3, att.shape);
        good &= within_ok(att.data, ratt, eatt, att.size, "(B, T, D) = (%d, %d, %d)%s: the weights match, hidden keys at 0",
                          B, T, D, cases[c].causal ? ", --causal" : "");
        if (!good) ref_explain(&student, NULL, 0);
        free(vis); free(ratt); free(rout); free(eatt); free(eout);
        tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&mask);
        free_module(&m);
    }
}

/* no mask at all (mask NULL), in eval mode: every key visible */
static void test_without_mask(void) {
    int B = 2, T = 5, D = 6;
    SelfAttV4 m = {0};
    Tensor x, pad;
    make_case(&m, &x, &pad, B, T, D, 0, 60);
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
    STUDENT(selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, NULL, 0.0f, NULL, B, T));
    RefCase student = case_of(&m, x.data, NULL, B, T, out.data, att.data);
    double *eatt = ref_new(att.size), *eout = ref_new(out.size);
    ref_attention_err(rout, eout, ratt, eatt, &student.w, x.data, x.data, x.data, D, &student.a);
    int good = within_ok(out.data, rout, eout, out.size, "with no mask (NULL), the output matches the reference, (B, T, "
                         "D) = (%d, %d, %d)", B, T, D);
    good &= within_ok(att.data, ratt, eatt, att.size, "with no mask (NULL), the weights match the reference: every key "
                      "visible");
    if (!good) ref_explain(&student, NULL, 0);
    free(ratt); free(rout); free(eatt); free(eout);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&pad);
    free_module(&m);
}

/* ---- the forward pass gives back what it allocates ------------------------------- */

/* Bytes the C library has handed out and not had back (small blocks and mmap'd ones).
 * Under AddressSanitizer or valgrind, whose malloc is not glibc's, it may stay 0: there
 * LeakSanitizer and valgrind say the same thing more loudly. */
static long heap_in_use(void) {
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
}

static void test_frees(void) {
    int B = 3, T = 40, D = 24;                          /* (B, T, T) of 19 KiB, (B, T, D) of 11 KiB */
    SelfAttV4 m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, B, T, D, 1, 62);
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    Rng r;
    rng_seed(&r, 6);
    long kept = -1;
    STUDENT(long before = heap_in_use();
            selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, &mask, 0.2f, &r, B, T);
            kept = heap_in_use() - before);
    ok(kept == 0, "the forward pass gives back every byte it allocates (training mode, with a mask)");
    if (kept) diag("%ld bytes more in use after the call than before", kept);
    if (kept > 0) what_is_wrong("%ld bytes are still in use after the call: every tensor_new in the forward pass needs "
                                "its tensor_free before it returns (q, k, v and mixed)", kept);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* ---- the checklist: each mistake is caught by the check the chapter names ----- */

static void test_checklist(void) {
    int B = 4, T = 4, D = 8;                            /* B == T, for the (B, T) trap */
    SelfAttV4 m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, B, T, D, 0, 77);
    float *vis = visible(&mask, B, T);
    long n = (long)B * T * T;
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    STUDENT(selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, &mask, 0.0f, NULL, B, T));
    double *ratt = calloc(n, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);

    reference(rout, ratt, &m, x.data, vis, B, T, SCALE_BY_D);
    double e = max_diff(out.data, rout, out.size), ew = max_diff(att.data, ratt, n);
    ok(ew > 1e-3 && e > 1e-5, "scaling by D instead of sqrt(D) moves the weights by %.2g: the reference check catches it", ew);

    reference(rout, ratt, &m, x.data, vis, B, T, MASK_AFTER_SOFTMAX);
    double off = worst_row(ratt, vis, (long)B * T, T);
    ok(off > 1e-2, "masking after the softmax leaves a row %.2g short of 1: the row-sum check catches it", off);

    reference(rout, ratt, &m, x.data, vis, B, T, SOFTMAX_OVER_QUERIES);
    long leaks = 0;
    for (long i = 0; i < n; i++) leaks += !vis[i] && ratt[i] != 0;
    off = worst_row(ratt, vis, (long)B * T, T);
    ok(off > 1e-2 && leaks > 0, "a softmax over the queries: rows off by %.2g and %ld hidden weights nonzero", off, leaks);

    reference(rout, ratt, &m, x.data, vis, B, T, NO_OUTPUT_PROJ);
    e = max_diff(out.data, rout, out.size), ew = max_diff(att.data, ratt, n);
    ok(ew < 1e-6 && e > 1e-2, "a forgotten output projection leaves the weights right and moves the output by %.2g", e);

    Tensor pad = tensor_new2(B, T);                    /* the (B, T) mask, read as (T, S) */
    float *wrong = malloc((size_t)n * sizeof *wrong);
    for (int b = 0; b < B; b++)
        for (int s = 0; s < T; s++) pad.data[b * T + s] = vis[(long)b * T * T + s];
    for (long i = 0; i < n; i++) wrong[i] = pad.data[i % (T * T)];
    reference(rout, ratt, &m, x.data, wrong, B, T, RIGHT);
    ew = max_diff(att.data, ratt, n);
    ok(ew > 0.1, "a (B, T) mask taken as (T, S) when B == T moves weights by %.2g: the reference catches it", ew);
    free(wrong); tensor_free(&pad);

    /* dropout on the output instead of the weights: the train-mode check tells them apart */
    Rng r;
    rng_seed(&r, 5);
    STUDENT(selfatt_v4_forward(out.data, att.data, drop.data, &m, x.data, &mask, 0.5f, &r, B, T));
    double *dw = ref_doubles(drop.data, n), *want = ref_new(out.size), *ewant = ref_new(out.size);
    RefWeights layers = weights_of(&m, RIGHT);
    ref_output_err(want, ewant, dw, NULL, &layers, x.data, D, &(RefAttn){ .B = B, .T = T, .H = 1, .hd = D });
    if (!within_ok(out.data, want, ewant, out.size, "train mode: the output is output_proj(dropped weights @ V)")) {
        /* the output of the weights before dropout, or dropout applied to the output */
        double *aw = ref_doubles(att.data, n), *plain = ref_new(out.size), *eplain = ref_new(out.size);
        ref_output_err(plain, eplain, aw, NULL, &layers, x.data, D, &(RefAttn){ .B = B, .T = T, .H = 1, .hd = D });
        int before = 1, after = 1;
        for (long i = 0; i < out.size; i++) {
            before &= tap_close_enough(out.data[i], plain[i], 2 * eplain[i] + 1e-6, 0);
            after &= out.data[i] == 0.0f || fabs(out.data[i] * (1 - 0.5) - plain[i]) <= 2 * eplain[i] + 1e-6;
        }
        if (before) what_is_wrong("the output is output_proj(att @ V), the weights before dropout: V must be mixed with "
                          "att_drop, the weights that survived");
        else if (after) what_is_wrong("the output was dropped, not the weights: nn.Dropout goes on the attention weights, "
                              "before they mix V");
        free(aw); free(plain); free(eplain);
    }
    free(ewant);
    Tensor eval_out = tensor_new3(B, T, D), mutant = tensor_new3(B, T, D);
    STUDENT(selfatt_v4_forward(eval_out.data, att.data, drop.data, &m, x.data, &mask, 0.0f, NULL, B, T));
    memcpy(mutant.data, eval_out.data, (size_t)out.size * sizeof(float));
    rng_seed(&r, 5);
    dropout(mutant.data, mutant.size, 0.5f, &r);        /* the mistake: nn.Dropout on the output */
    ok(max_diff(mutant.data, want, out.size) > 1e-2, "dropout on the output instead of the weights fails that check");
    free(dw); free(want);
    tensor_free(&eval_out); tensor_free(&mutant);

    free(vis); free(ratt); free(rout);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* dir3 gets V3's files for V4's case in dir4: proj = the three layers stacked,
 * query rows first; output_proj, X and the mask copied. */
static void stack_into_v3(const char *dir4, const char *dir3) {
    static const char *const parts[2] = { "weight", "bias" };
    for (int p = 0; p < 2; p++) {
        char name[64];
        Tensor layers[3];
        const char *const who[3] = { "query", "key", "value" };
        for (int i = 0; i < 3; i++) {
            snprintf(name, sizeof name, "%s_proj.%s", who[i], parts[p]);
            layers[i] = load_npy(dir4, name);
        }
        int shape[2] = { 3 * layers[0].shape[0], layers[0].ndim == 2 ? layers[0].shape[1] : 1 };
        Tensor fused = tensor_new(layers[0].ndim, shape);          /* (3D, D) or (3D) */
        for (int i = 0; i < 3; i++) {
            memcpy(fused.data + i * layers[i].size, layers[i].data, (size_t)layers[i].size * sizeof(float));
            tensor_free(&layers[i]);
        }
        snprintf(name, sizeof name, "proj.%s", parts[p]);
        dump_tensor(dir3, name, &fused);
        tensor_free(&fused);
    }
    const char *const copied[4] = { "output_proj.weight", "output_proj.bias", "X", "attention_mask" };
    for (int i = 0; i < 4; i++) {
        Tensor t = load_npy(dir4, copied[i]);
        save_npy(dir3, copied[i], &t);
        tensor_free(&t);
    }
}

static void test_is_v3(const char *tmp) {
    static const char *const flags[][12] = {
        { NULL },
        { "--batch", "2", "--seq", "7", "--dim", "5", "--causal", NULL },
        { "--train", "--seed", "9", NULL },
        { "--batch", "4", "--seq", "16", "--dim", "32", "--train", "--dropout", "0.3", "--causal", "--seed", "3" },
    };
    static const char *const what[] = { "the default case", "(2, 7, 5) with --causal", "--train --seed 9",
                                        "(4, 16, 32), --causal, --train --dropout 0.3" };
    char d4[600], d3[600], o3[600];
    for (int c = 0; c < 4; c++) {
        const char *args[20];
        int n = 0;
        snprintf(d4, sizeof d4, "%s/v4-%d", tmp, c);
        snprintf(d3, sizeof d3, "%s/v3-%d", tmp, c);
        snprintf(o3, sizeof o3, "%s/v3-out-%d", tmp, c);
        for (int i = 0; i < 12 && flags[c][i]; i++) args[n++] = flags[c][i];
        args[n++] = "--quiet"; args[n++] = "--dump"; args[n++] = d4; args[n] = NULL;
        int s4 = run("selfatt_v4", args);
        if (s4 == 0) stack_into_v3(d4, d3);         /* else selfatt_v3 finds nothing to load */
        args[n - 1] = o3; args[n++] = "--load"; args[n++] = d3; args[n] = NULL;
        int s3 = run("selfatt_v3", args);
        int causal = c == 1 || c == 3;
        double keep = c == 2 ? 1 / (1 - 0.1) : c == 3 ? 1 / (1 - 0.3) : 0;      /* --train: 1 / (1 - p) */
        RefDump d = {0};
        int loaded = s4 == 0 && s3 == 0 && ref_dump_case(&d, d4, "X", "X", "X", v4_layers, 1, 1, causal, keep);
        char pair[200];
        snprintf(pair, sizeof pair, "%s: selfatt_v4's and selfatt_v3's", what[c]);
        int same = loaded && ref_dumps_agree(&d, d4, o3, d4, pair);
        ok(same, "%s: selfatt_v3 with V4's weights stacked writes out.npy and attn.npy that agree with V4's, within what "
           "float32 rounding allows", what[c]);
        if (!same && !loaded) diag("exit %d and %d; %s", s4, s3, run_err);
        ref_dump_free(&d);
    }
}

/* --example same-word and padded, with and without --causal, run as a reader runs
 * them: chapter 1's head in V4's three layers computes chapter 3's numbers (to float32 rounding), and
 * under both masks a row of the padded sequence stops at min(t, 4). */
static void test_by_hand(const char *tmp) {
    static const char *const cases[][2] = { { "same-word", NULL }, { "same-word", "--causal" },
                                            { "padded", NULL }, { "padded", "--causal" } };
    char d4[600], d3[600];
    int s4 = 1;
    for (int c = 0; c < 4; c++) {
        snprintf(d4, sizeof d4, "%s/v4-example-%d", tmp, c);
        snprintf(d3, sizeof d3, "%s/v3-example-%d", tmp, c);
        const char *a4[] = { "--example", cases[c][0], "--quiet", "--dump", d4, cases[c][1], NULL };
        const char *a3[] = { "--example", cases[c][0], "--quiet", "--dump", d3, cases[c][1], NULL };
        s4 = run("selfatt_v4", a4);
        int s3 = run("selfatt_v3", a3);
        RefDump d = {0};
        char pair[200];
        snprintf(pair, sizeof pair, "--example %s%s%s: selfatt_v4's and selfatt_v3's", cases[c][0],
                 cases[c][1] ? " " : "", cases[c][1] ? cases[c][1] : "");
        int loaded = s4 == 0 && s3 == 0 && ref_dump_case(&d, d4, "X", "X", "X", v4_layers, 1, 1, cases[c][1] != NULL, 0);
        ok(loaded && ref_dumps_agree(&d, d4, d3, d4, pair), "--example %s%s%s: out.npy and attn.npy equal selfatt_v3's, "
           "within what float32 rounding allows", cases[c][0], cases[c][1] ? " " : "", cases[c][1] ? cases[c][1] : "");
        ref_dump_free(&d);
    }
    /* d4: --example padded --causal; if a stub stopped it, the two tests below fail by name */
    Tensor x = load_written(d4, "X"), att = load_written(d4, "attn");         /* (2, T, 16), (2, T, T) */
    int T = s4 == 0 && x.ndim == 3 ? x.shape[1] : 0, late = 0;
    double worst_on = T > 0;
    for (long bt = 0; bt < 2L * T; bt++) {
        int t = (int)(bt % T), last = bt < T ? t : (t < 4 ? t : 4);           /* the last key row bt sees */
        double on = 0;
        for (int s = 0; s < T; s++) {
            float w = att.data[bt * T + s];
            if (s > last) late += w != 0.0f;
            else if (memcmp(&x.data[bt * SENTENCE_DIM], &x.data[(bt - t + s) * SENTENCE_DIM], WORDS * sizeof(float)) == 0)
                on += w;
        }
        worst_on = fmin(worst_on, on);
    }
    ok(att.size == 2L * 8 * 8 && late == 0, "padded --causal: every key after the diagonal, or after key 4 in the "
       "padded sequence, gets exactly 0");
    ok(worst_on >= 0.95, "padded --causal: every row puts at least 0.95 on the visible keys holding its word (%.4f)",
       worst_on);
    tensor_free(&x); tensor_free(&att);
}

/* ---- the program's own files and command line ------------------------------- */

static void test_program(const char *tmp) {
    char d1[600], d2[600], never[600], p1[1100], p2[1100];
    snprintf(d1, sizeof d1, "%s/first", tmp);
    snprintf(d2, sizeof d2, "%s/second", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    const char *prog = program_path("selfatt_v4");

    int status = run("selfatt_v4", NO_ARGS);
    ok(status == 0 && strstr(run_out, "SelfAttV4(dim=2) on X of shape (3, 4, 2), attention_mask (3, 4, 4)") &&
       strstr(run_out, "attention_weight: tensor([[[") && strstr(run_out, "parameters: 24"),
       "run without flags, the program prints the notebook's padded case and 24 parameters");
    status = run("selfatt_v4", ARGS("--train", "--dropout", "0.25"));
    ok(status == 0 && strstr(run_out, "dropout p = 0.25 ") && strstr(run_out, "row sums after dropout"),
       "--train --dropout 0.25 prints the weights after dropout and their row sums");

    status = run("selfatt_v4", ARGS("--quiet", "--dump", d1));
    run("selfatt_v4", ARGS("--load", d1, "--dump", d2, "--quiet"));
    const char *files[] = { "out", "attn", "X", "attention_mask", "query_proj.weight", "query_proj.bias",
                            "key_proj.weight", "key_proj.bias", "value_proj.weight", "value_proj.bias",
                            "output_proj.weight", "output_proj.bias" };
    int all_same = status == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (!same_file(p1, p2)) { all_same = 0; diag("%s differs", files[i]); }
    }
    ok(all_same, "--load of a --dump reproduces all twelve files byte for byte");
    Tensor mask = status == 0 ? load_npy(d1, "attention_mask") : (Tensor){0}, pad = mask_padding(3, 4);
    ok(mask.size == pad.size && !memcmp(mask.data, pad.data, (size_t)pad.size * sizeof(float)),
       "the default mask is chapter 3's: lengths 3, 2, 1");
    tensor_free(&mask); tensor_free(&pad);

    Tensor bad = tensor_new2(3, 4);                      /* (B, T) with B != T */
    dump_tensor(d1, "attention_mask", &bad);                /* makes d1 if a stopped run did not */
    tensor_free(&bad);
    refuses(prog, ARGS("--load", d1, "--dump", never), "does not broadcast", "a (B, T) mask with B != T is refused");
    ok(!file_exists(never), "and nothing is written");
    snprintf(p1, sizeof p1, "%s/attention_mask.npy", d1);
    remove(p1);
    snprintf(p1, sizeof p1, "%s/value_proj.weight.npy", d1);
    Tensor wide = tensor_new2(2, 6);
    npy_save(p1, &wide);
    tensor_free(&wide);
    refuses(prog, ARGS("--load", d1), "value_proj.weight", "a value_proj.weight of the wrong shape is refused, naming it");
    snprintf(p2, sizeof p2, "%s/value_proj.weight.npy", d2);
    rename(p2, p1);
    snprintf(p1, sizeof p1, "%s/key_proj.bias.npy", d1);
    remove(p1);
    refuses(prog, ARGS("--load", d1), "key_proj.bias", "a missing key_proj.bias is refused, naming it");
    refuses(prog, ARGS("--heads", "2"), "--heads", "--heads is refused: SelfAttV4 has one head");
    refuses(prog, ARGS("--dropout", "0.1"), "--train", "--dropout without --train is refused");
    refuses(prog, ARGS("--batch", "0"), "--batch", "a zero size is refused");
}

/* Tested through the program, not called here. */
static void unused_here(void) { (void)print_masked; }

int main(void) {
    unused_here();
    char tmp[] = "/tmp/abh-selfatt-v4-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    /* Exercise 4.6 (the forward pass, written at the interview): the tests that say it is done */
    EXERCISE("4.6", 8, test_against_reference());
    EXERCISE("4.6", 2, test_without_mask());
    EXERCISE("4.6", 7, test_checklist());
    EXERCISE("4.6", 1, test_frees());
    EXERCISE("4.6", 4, test_is_v3(tmp));
    EXERCISE("4.6", 6, test_by_hand(tmp));
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
