/* Numerics under stress: the tensor helper and the programs of chapters 1 to 4
 * on the inputs that break careless attention code.
 *
 *   - scores of 1e4 and -1e4 (softmax must not overflow: it subtracts the max);
 *   - a dimension of 1 and a sequence of 1;
 *   - rows whose every key is hidden, under each fill policy of the sources:
 *     -1e20 gives a uniform row, -inf gives NaN, adding -10000 gives the row
 *     as if nothing were hidden (all three as PyTorch does);
 *   - NaN and inf in an input file. The policy is PyTorch's: they are not
 *     refused but propagate. A NaN in X[b, t] reaches every score of sequence
 *     b (its query row and its key column), so all of b's weights and outputs
 *     become NaN, and the other sequences are untouched, bit for bit. An inf
 *     does the same (inf - inf is NaN in the softmax). A NaN in a mask keeps
 *     the key, as `mask == 0` is false for NaN.
 *
 * The programs run as a reader runs them (tests/run.h), on files written here
 * with the helper's npy_save, and their dumps are read back with npy_load. */
#include "tensor.h"
#include "tap.h"
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char tmp[64];   /* this run's directory */

/* ---- helpers ------------------------------------------------------------- */

/* tmp/a/b into a static buffer (two at a time). */
static const char *at(const char *a, const char *b) {
    static char buf[2][512];
    static int which;
    which ^= 1;
    snprintf(buf[which], sizeof buf[which], b ? "%s/%s/%s" : "%s/%s", tmp, a, b);
    return buf[which];
}

/* Save values (or, if NULL, uniform numbers in [-0.5, 0.5) from seed) as DIR/NAME.npy. */
static void save(const char *dir, const char *name, int ndim, const int *shape, const float *values, uint64_t seed) {
    char path[600];
    Tensor t = tensor_new(ndim, shape);
    if (values) memcpy(t.data, values, (size_t)t.size * sizeof(float));
    else {
        Rng r;
        rng_seed(&r, seed);
        rand_uniform(t.data, t.size, -0.5f, 0.5f, &r);
    }
    mkdir(at(dir, NULL), 0777);
    snprintf(path, sizeof path, "%s/%s.npy", at(dir, NULL), name);
    npy_save(path, &t);
    tensor_free(&t);
}

/* A linear layer's two files, NAME.weight (out, in) and NAME.bias (out), random. */
static void save_linear(const char *dir, const char *name, int out, int in, uint64_t seed) {
    char key[128];
    snprintf(key, sizeof key, "%s.weight", name);
    save(dir, key, 2, (int[]){ out, in }, NULL, seed);
    snprintf(key, sizeof key, "%s.bias", name);
    save(dir, key, 1, (int[]){ out }, NULL, seed + 1);
}

/* The parameters of program (selfatt_v1 .. selfatt_v4) for width D, into dir. */
static void save_params(const char *program, const char *dir, int D) {
    if (!strcmp(program, "selfatt_v1") || !strcmp(program, "selfatt_v4")) {
        save_linear(dir, "query_proj", D, D, 10);
        save_linear(dir, "key_proj", D, D, 20);
        save_linear(dir, "value_proj", D, D, 30);
    } else {
        save_linear(dir, "proj", 3 * D, D, 40);
    }
    if (strcmp(program, "selfatt_v1") != 0) save_linear(dir, "output_proj", D, D, 50);
}

/* Run program with args; 1 if it exited 0 (else a diagnostic). */
static int runs(const char *program, const char *const *args) {
    char out[8192], err[8192];
    int status = run_program(program_path(program), args, out, sizeof out, err, sizeof err);
    if (status != 0) diag("%s exited %d: %s", program, status, err);
    return status == 0;
}

/* DIR/NAME.npy as a tensor (a zeroed one if it is missing: the test then fails). */
static Tensor load(const char *dir, const char *name) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s.npy", at(dir, NULL), name);
    if (!file_exists(path)) return tensor_new1(1);
    return npy_load(path, NPY_FLOAT);
}

static int all_nan(const float *x, long n) {
    for (long i = 0; i < n; i++) if (!isnan(x[i])) return 0;
    return n > 0;
}

static int all_finite(const float *x, long n) {
    for (long i = 0; i < n; i++) if (!isfinite(x[i])) return 0;
    return 1;
}

/* ---- the helper ---------------------------------------------------------- */

static void softmax_extremes(void) {
    float row[3] = { 1e4f, -1e4f, 100.0f };
    STUDENT(softmax_lastdim(row, 1, 3));
    ok(row[0] == 1.0f && row[1] == 0.0f && row[2] == 0.0f, "softmax of scores 1e4, -1e4, 100 is 1, 0, 0 (no overflow)");

    float low[2] = { -1e4f, -1e4f }, high[3] = { 1e4f, 1e4f, 1e4f };
    STUDENT(softmax_lastdim(low, 1, 2));
    STUDENT(softmax_lastdim(high, 1, 3));
    ok(low[0] == 0.5f && low[1] == 0.5f, "softmax of two scores of -1e4 is 0.5 each (no underflow to 0/0)");
    close_ok(high, ((float[]){ 1 / 3.0f, 1 / 3.0f, 1 / 3.0f }), 3, 1e-7, 0, "softmax of three scores of 1e4 is uniform");

    float near[2] = { 1e4f, 1e4f - 1.0f };
    STUDENT(softmax_lastdim(near, 1, 2));
    close_ok(near, ((float[]){ 0.7310586f, 0.2689414f }), 2, 1e-6, 0, "softmax of 1e4 and 1e4 - 1 keeps their difference");

    float ones[4] = { 1e4f, -1e4f, NAN, 0 };
    STUDENT(softmax_lastdim(ones, 3, 1));
    ok(ones[0] == 1.0f && ones[1] == 1.0f && isnan(ones[2]), "softmax over one key is 1, whatever the score (NaN stays NaN)");
}

static void softmax_nan_inf(void) {
    float x[3][3] = { { 0.5f, NAN, 1.0f }, { 0.5f, INFINITY, 1.0f }, { 0.5f, -INFINITY, 1.0f } };
    float ok_row[3] = { 0.5f, 1.0f, 2.0f };
    float rows[4][3];
    memcpy(rows, x, sizeof x);
    memcpy(rows[3], ok_row, sizeof ok_row);
    STUDENT(softmax_lastdim(&rows[0][0], 4, 3));
    ok(all_nan(rows[0], 3), "a NaN score makes its whole softmax row NaN, as in PyTorch");
    ok(all_nan(rows[1], 3), "a +inf score makes its whole softmax row NaN (inf - inf), as in PyTorch");
    ok(rows[2][1] == 0.0f && all_finite(rows[2], 3), "a -inf score gets weight 0 and the row stays finite");
    ok(all_finite(rows[3], 3), "a NaN in one row leaves the next row alone");
}

/* All three fill policies of chapter 3 on a row whose keys are all hidden. */
static void all_masked_rows(void) {
    const float scores[2][4] = { { 1, 2, 0.5f, 3 }, { 1, 2, 0.5f, 3 } };
    const float vis[2][4] = { { 1, 1, 0, 1 }, { 0, 0, 0, 0 } };     /* row 1: every key hidden */
    Tensor mask = tensor_new2(2, 4), x[3], plain = tensor_new2(2, 4);
    memcpy(mask.data, vis, sizeof vis);
    memcpy(plain.data, scores, sizeof scores);
    STUDENT(softmax_lastdim(plain.data, 2, 4));
    for (int p = 0; p < 3; p++) {
        x[p] = tensor_new2(2, 4);
        memcpy(x[p].data, scores, sizeof scores);
    }
    masked_fill(&x[0], &mask, -1e20f);
    masked_fill(&x[1], &mask, -INFINITY);
    for (long i = 0; i < x[2].size; i++) if (mask.data[i] == 0) x[2].data[i] += -10000.0f;
    for (int p = 0; p < 3; p++) STUDENT(softmax_lastdim(x[p].data, 2, 4));
    close_ok(x[0].data + 4, ((float[]){ 0.25f, 0.25f, 0.25f, 0.25f }), 4, 1e-7, 0,
             "all keys hidden with masked_fill(-1e20): the row is uniform, 1/S each");
    ok(all_nan(x[1].data + 4, 4), "all keys hidden with masked_fill(-inf): the row is NaN, as in PyTorch");
    close_ok(x[2].data + 4, plain.data + 4, 4, 1e-6, 0,
             "all keys hidden by adding -10000: the row is what it would be with nothing hidden");
    ok(x[0].data[2] == 0.0f && x[1].data[2] == 0.0f && x[2].data[2] < 1e-4f,
       "a row with some keys visible gives a hidden key weight 0 (-1e20, -inf) or nearly (-10000)");
    for (int p = 0; p < 3; p++) tensor_free(&x[p]);
    tensor_free(&mask);
    tensor_free(&plain);

    /* the same, from chapter 3's own program */
    ok(runs("fill_values", ARGS("--quiet", "--dump", at("fill", NULL))), "fill_values --dump runs");
    Tensor att = load("fill", "attn");                 /* (3 policies, T = 3, S = 4) */
    int good = att.ndim == 3 && att.shape[0] == 3 && att.shape[1] == 3 && att.shape[2] == 4;
    ok(good && att.data[2 * 4] == 0.25f && att.data[2 * 4 + 3] == 0.25f,
       "fill_values: the all-hidden query is uniform under -1e20");
    ok(good && all_nan(att.data + 12 + 8, 4), "fill_values: the all-hidden query is NaN under -inf");
    ok(good && all_finite(att.data + 24 + 8, 4) && fabsf(att.data[24 + 8] + att.data[24 + 9] + att.data[24 + 10] + att.data[24 + 11] - 1) < 1e-6f,
       "fill_values: the all-hidden query is an ordinary softmax under -10000");
    tensor_free(&att);
}

static void npy_keeps_nan_inf(void) {
    float v[4] = { NAN, INFINITY, -INFINITY, -0.0f };
    save("nan", "v", 1, (int[]){ 4 }, v, 0);
    Tensor t = load("nan", "v");
    ok(t.size == 4 && isnan(t.data[0]) && t.data[1] == INFINITY && t.data[2] == -INFINITY && signbit(t.data[3]),
       "npy_load reads NaN, inf, -inf and -0 as they are (not refused)");
    tensor_free(&t);
}

/* ---- the programs -------------------------------------------------------- */

static const char *const programs[] = { "selfatt_v1", "selfatt_v2", "selfatt_v3", "selfatt_v4" };

/* --batch 1 --seq 1 --dim 1: one query, one key of one number. */
static void tiny_sizes(void) {
    for (int p = 0; p < 4; p++) {
        char dir[64];
        snprintf(dir, sizeof dir, "tiny-%s", programs[p]);
        int ran = runs(programs[p], ARGS("--batch", "1", "--seq", "1", "--dim", "1", "--quiet", "--dump", at(dir, NULL)));
        Tensor att = load(dir, "attn"), out = load(dir, "out");
        ok(ran && att.size == 1 && att.data[0] == 1.0f && out.size == 1 && all_finite(out.data, 1),
           "%s --batch 1 --seq 1 --dim 1: the one weight is exactly 1 and the output finite", programs[p]);
        tensor_free(&att);
        tensor_free(&out);
        snprintf(dir, sizeof dir, "seq1-%s", programs[p]);
        ran = runs(programs[p], ARGS("--batch", "2", "--seq", "1", "--dim", "3", "--quiet", "--dump", at(dir, NULL)));
        att = load(dir, "attn");
        ok(ran && att.size == 2 && att.data[0] == 1.0f && att.data[1] == 1.0f,
           "%s --seq 1: every query attends to its only key with weight 1", programs[p]);
        tensor_free(&att);
    }
}

/* selfatt_v1 with D = 1, identity projections: X = 100, -100, 1 gives scores
 * q * k of 1e4 and -1e4. */
static void huge_scores(void) {
    float one = 1, zero = 0, x[3] = { 100, -100, 1 };
    const char *names[] = { "query_proj", "key_proj", "value_proj" };
    for (int i = 0; i < 3; i++) {
        char key[64];
        snprintf(key, sizeof key, "%s.weight", names[i]);
        save("huge", key, 2, (int[]){ 1, 1 }, &one, 0);
        snprintf(key, sizeof key, "%s.bias", names[i]);
        save("huge", key, 1, (int[]){ 1 }, &zero, 0);
    }
    save("huge", "X", 3, (int[]){ 1, 3, 1 }, x, 0);
    int ran = runs("selfatt_v1", ARGS("--load", at("huge", NULL), "--dump", at("huge-out", NULL), "--quiet"));
    Tensor att = load("huge-out", "attn"), out = load("huge-out", "out");
    ok(ran && att.size == 9 && all_finite(att.data, 9) && all_finite(out.data, out.size),
       "selfatt_v1 with scores of 1e4 and -1e4: weights and output are finite");
    ok(att.size == 9 && att.data[0] == 1.0f && att.data[1] == 0.0f && att.data[4] == 1.0f && att.data[3] == 0.0f,
       "scores of 1e4 and -1e4: the largest key takes all the weight, the smallest none");
    close_ok(out.data, ((float[]){ 100, -100, 100 }), out.size == 3 ? 3 : 0, 1e-3, 0,
             "scores of 1e4 and -1e4: each query copies the value of its largest key");
    tensor_free(&att);
    tensor_free(&out);
}

/* selfatt_v3 and v4 with a mask whose row (b = 0, t = 1) hides every key: -1e20
 * makes that row uniform, and no NaN appears anywhere. */
static void all_masked_programs(void) {
    enum { B = 2, T = 3, D = 4 };
    float mask[B * T * T];
    for (int i = 0; i < B * T * T; i++) mask[i] = 1;
    for (int s = 0; s < T; s++) mask[1 * T + s] = 0;
    for (int p = 2; p < 4; p++) {
        char in[64], outd[64];
        snprintf(in, sizeof in, "masked-%s", programs[p]);
        snprintf(outd, sizeof outd, "masked-%s-out", programs[p]);
        save_params(programs[p], in, D);
        save(in, "X", 3, (int[]){ B, T, D }, NULL, 7);
        save(in, "attention_mask", 3, (int[]){ B, T, T }, mask, 0);
        int ran = runs(programs[p], ARGS("--load", at(in, NULL), "--dump", at(outd, NULL), "--quiet"));
        Tensor att = load(outd, "attn"), out = load(outd, "out");
        ok(ran && att.size == B * T * T && all_finite(att.data, att.size) && all_finite(out.data, out.size),
           "%s with a query whose every key is hidden: no NaN anywhere", programs[p]);
        close_ok(att.size == B * T * T ? att.data + T : att.data, ((float[]){ 1 / 3.0f, 1 / 3.0f, 1 / 3.0f }), 3, 1e-7, 0,
                 "%s: that query's weights are uniform (-1e20 fill)", programs[p]);
        tensor_free(&att);
        tensor_free(&out);
    }
}

/* X with a NaN (or inf) in sequence 0 only: sequence 0 becomes NaN in attn and
 * out, sequence 1 is what a clean run gives, bit for bit. */
static void nan_inf_inputs(const char *program, float bad, const char *what) {
    enum { B = 2, T = 3, D = 4 };
    char clean[64], dirty[64], clean_out[64], dirty_out[64];
    snprintf(clean, sizeof clean, "%s-clean", program);
    snprintf(dirty, sizeof dirty, "%s-%s", program, what);
    snprintf(clean_out, sizeof clean_out, "%s-clean-out", program);
    snprintf(dirty_out, sizeof dirty_out, "%s-%s-out", program, what);
    float x[B * T * D];
    Rng r;
    rng_seed(&r, 3);
    rand_uniform(x, B * T * D, 0, 1, &r);
    save_params(program, clean, D);
    save(clean, "X", 3, (int[]){ B, T, D }, x, 0);
    x[1 * D + 2] = bad;                                 /* X[0, 1, 2] */
    save_params(program, dirty, D);
    save(dirty, "X", 3, (int[]){ B, T, D }, x, 0);
    int ran = runs(program, ARGS("--load", at(clean, NULL), "--dump", at(clean_out, NULL), "--quiet")) &&
              runs(program, ARGS("--load", at(dirty, NULL), "--dump", at(dirty_out, NULL), "--quiet"));
    ok(ran, "%s runs on X holding %s (not refused: PyTorch computes with it too)", program, what);
    Tensor ca = load(clean_out, "attn"), co = load(clean_out, "out"), da = load(dirty_out, "attn"), dout = load(dirty_out, "out");
    int sizes = ca.size == B * T * T && da.size == B * T * T && co.size == B * T * D && dout.size == B * T * D;
    ok(sizes && all_nan(da.data, T * T) && all_nan(dout.data, T * D),
       "%s: %s in sequence 0 makes all its weights and outputs NaN, as in PyTorch", program, what);
    ok(sizes && !memcmp(da.data + T * T, ca.data + T * T, T * T * sizeof(float)) &&
           !memcmp(dout.data + T * D, co.data + T * D, T * D * sizeof(float)),
       "%s: %s in sequence 0 leaves sequence 1 as it was, bit for bit", program, what);
    tensor_free(&ca); tensor_free(&co); tensor_free(&da); tensor_free(&dout);
}

/* A NaN in a mask keeps the key: the result is that of a mask of ones. */
static void nan_in_mask(void) {
    enum { B = 1, T = 3, D = 2 };
    float ones[T * T], nans[T * T];
    for (int i = 0; i < T * T; i++) ones[i] = 1, nans[i] = i % 2 ? NAN : 1;
    save_params("selfatt_v4", "mask-ones", D);
    save("mask-ones", "X", 3, (int[]){ B, T, D }, NULL, 9);
    save("mask-ones", "attention_mask", 2, (int[]){ T, T }, ones, 0);
    save_params("selfatt_v4", "mask-nan", D);
    save("mask-nan", "X", 3, (int[]){ B, T, D }, NULL, 9);
    save("mask-nan", "attention_mask", 2, (int[]){ T, T }, nans, 0);
    int ran = runs("selfatt_v4", ARGS("--load", at("mask-ones", NULL), "--dump", at("mask-ones-out", NULL), "--quiet")) &&
              runs("selfatt_v4", ARGS("--load", at("mask-nan", NULL), "--dump", at("mask-nan-out", NULL), "--quiet"));
    Tensor a1 = load("mask-ones-out", "attn"), a2 = load("mask-nan-out", "attn");
    ok(ran && a1.size == T * T && a2.size == T * T && !memcmp(a1.data, a2.data, sizeof(float) * T * T),
       "selfatt_v4: a NaN in the mask keeps the key, like a 1 (mask == 0 is false for NaN)");
    tensor_free(&a1);
    tensor_free(&a2);
}

int main(void) {
    snprintf(tmp, sizeof tmp, "/tmp/abh-stress-XXXXXX");
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    TEST_GROUP(softmax_extremes());
    TEST_GROUP(softmax_nan_inf());
    TEST_GROUP(all_masked_rows());
    TEST_GROUP(npy_keeps_nan_inf());
    TEST_GROUP(tiny_sizes());
    TEST_GROUP(huge_scores());
    TEST_GROUP(all_masked_programs());
    for (int p = 0; p < 4; p++) {
        TEST_GROUP(nan_inf_inputs(programs[p], NAN, "NaN"));
        TEST_GROUP(nan_inf_inputs(programs[p], INFINITY, "inf"));
    }
    TEST_GROUP(nan_in_mask());

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
