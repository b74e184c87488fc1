/* Tests for chapter 5: MultiHeadAttention.
 *
 * The forward pass against a double-precision reference computed one head at a
 * time, on several (B, T, D, H); rows sum to 1 and hidden keys get 0; the wrong
 * scale sqrt(D) is caught and is flatter; each head sees only its own rows of
 * q_proj; every legal mask shape is its explicit (B, H, T, T) expansion; with
 * H = 1, mha is selfatt_v4 to the bit (run with the real programs, eval and
 * training); --causal; dropout's scaling; the program's own files and errors.
 * Dropout's statistics are chapter 3's chunk, tested there. */
#define TESTING
#include "mha.c"
#include "tap.h"
#include "run.h"
#define MODULE_MHA
#include "reference.h"

/* ---- a reference in double precision, one head at a time ------------------ */

/* MHA's four layers, for tests/reference.h's pass. */
static RefWeights weights_of(const MHA *m) {
    return (RefWeights){ m->query_w.data, m->query_b.data, m->key_w.data, m->key_b.data, m->value_w.data,
                         m->value_b.data, m->out_w.data, m->out_b.data };
}

/* MHA in eval mode. vis (B, H, T, T): 1 where a key is visible, or NULL. Head h
 * of position t is columns h*hd .. h*hd + hd - 1 of the projections, read in place
 * (no split, no merge). Hidden keys are left out of the softmax; a row with none
 * visible is uniform, as -1e20 makes it. scale_dim: the d of 1/sqrt(d). */
static RefCase case_of(const MHA *m, const float *x, const float *vis, int B, int T, int scale_dim, const float *out,
                       const float *att) {
    return (RefCase){ weights_of(m), x, x, x, m->dim, { .B = B, .T = T, .H = m->heads, .hd = m->dim / m->heads,
                                                         .divisor = sqrt((double)scale_dim), .vis = vis }, out, att };
}

static void reference(double *out, double *att, const MHA *m, const float *x, const float *vis, int B, int T,
                      int scale_dim) {
    RefCase c = case_of(m, x, vis, B, T, scale_dim, NULL, NULL);
    ref_attention(out, att, &c.w, x, x, x, m->dim, &c.a);
}

/* The same, and in eout and eatt how far a float32 pass, its sums in any order, may be
 * from it (reference.h). */
static void reference_err(double *out, double *eout, double *att, double *eatt, const MHA *m, const float *x,
                          const float *vis, int B, int T) {
    RefCase c = case_of(m, x, vis, B, T, m->dim / m->heads, NULL, NULL);
    ref_attention_err(out, eout, att, eatt, &c.w, x, x, x, m->dim, &c.a);
}

/* MHA's layers in a dump, as reference.h's ref_dump_case reads them. */
static const char *const mha_layers[8] = { "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                                           "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };

/* A module, its input and the SelfAttV1-V4 notebook's random mask, made through the
 * program's own list of tensors as its main makes them (without --causal, so the mask
 * is drawn; tests/reference.h), then --causal if asked. */
static void make_case(MHA *m, Tensor *x, Tensor *mask, int B, int T, int D, int H, int causal, uint64_t seed) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .seed = seed };
    make_module(m, x, mask, &a);
    mask_final(mask, causal, T, T);
}

/* vis (B, H, T, T) spelled out from a mask of any shape that broadcasts to it. */
static void expand(float *vis, const Tensor *mask, int B, int H, int T) {
    ref_expand(vis, mask, 4, (int[]){ B, H, T, T });
}

/* A 0/1 pattern that looks random but is fixed. */
static float pattern(long i, unsigned salt) { return ((i * 2654435761u + salt * 40503u) >> 7) % 3 != 0; }

static int same_floats(const float *a, const float *b, long n) { return !memcmp(a, b, (size_t)n * sizeof *a); }

static Tensor scores_tensor(int B, int H, int T) { return tensor_new(4, (int[]){ B, H, T, T }); }

/* ---- the forward pass against the reference ----------------------------------- */

static void test_against_reference(void) {
    struct { int B, T, D, H, causal, masked; } cases[] = {
        { 3, 2, 128, 8, 0, 1 },      /* the notebook's example, random (B, H, T, T) mask */
        { 2, 5, 12, 3, 1, 0 },       /* --causal alone */
        { 1, 7, 16, 4, 0, 0 },       /* no mask */
        { 4, 3, 6, 6, 1, 1 },        /* hd = 1, random mask and --causal */
        { 2, 4, 8, 1, 0, 1 },        /* one head */
        { 2, 9, 64, 8, 0, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int B = cases[c].B, T = cases[c].T, D = cases[c].D, H = cases[c].H;
        MHA m = {0};
        Tensor x, mask;
        make_case(&m, &x, &mask, B, T, D, H, 0, 60 + c);
        if (!cases[c].masked) tensor_free(&mask);
        mask_final(&mask, cases[c].causal, T, T);
        Tensor att = scores_tensor(B, H, T), drop = scores_tensor(B, H, T), out = tensor_new3(B, T, D);
        float *vis = mask.data ? malloc((size_t)att.size * sizeof *vis) : NULL;
        if (vis) expand(vis, &mask, B, H, T);
        double *ratt = calloc(att.size, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
        STUDENT(mha_forward(out.data, att.data, drop.data, &m, x.data, mask.data ? &mask : NULL, 0.0f, NULL, B, T));
        double *eatt = ref_new(att.size), *eout = ref_new(out.size);
        reference_err(rout, eout, ratt, eatt, &m, x.data, vis, B, T);
        char what[96];
        snprintf(what, sizeof what, "(B, T, D, H) = (%d, %d, %d, %d)%s%s", B, T, D, H,
                 cases[c].masked ? ", random mask" : "", cases[c].causal ? ", --causal" : "");
        tap_layout("b t d", 3, out.shape);
        int good = within_ok(out.data, rout, eout, out.size, "%s: the output matches the per-head reference, within "
                             "what float32 rounding allows", what);
        tap_layout("b h t s", 4, att.shape);
        good &= within_ok(att.data, ratt, eatt, att.size, "%s: the weights (B, H, T, T) match", what);
        double worst = 0, allowed = 1;           /* the worst row, against the sum of its weights' bounds */
        long leaked = 0;
        for (long r = 0; r < att.size / T; r++) {
            double sum = 0, bound = 0;
            int any = 0;
            for (int s = 0; s < T; s++) sum += att.data[r * T + s], bound += eatt[r * T + s], any |= !vis || vis[r * T + s] != 0;
            if (!any) continue;                      /* a fully hidden row is uniform, by design */
            if (fabs(sum - 1) / bound > worst / allowed) worst = fabs(sum - 1), allowed = bound;
            for (int s = 0; s < T; s++) leaked += vis && !vis[r * T + s] && att.data[r * T + s] != 0.0f;
        }
        ok(worst <= allowed && leaked == 0, "%s: every row with a visible key sums to 1 (off by %.1g), hidden keys get 0",
           what, worst);
        RefCase student = case_of(&m, x.data, vis, B, T, D / H, out.data, att.data);
        if (!good || worst > allowed || leaked) ref_explain(&student, NULL, 0);
        free(vis); free(ratt); free(rout); free(eatt); free(eout);
        tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&mask);
        free_module(&m);
    }
}

/* ---- the scale: sqrt(hd), and what sqrt(D) does ---------------------------- */

static double entropy(const double *w, int n) {
    double e = 0;
    for (int i = 0; i < n; i++) if (w[i] > 0) e -= w[i] * log(w[i]);
    return e;
}

static void test_scale(void) {
    int B = 2, T = 6, D = 64, H = 8;
    MHA m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, B, T, D, H, 0, 11);
    tensor_free(&mask);
    /* sharper weights than a fresh module's, so the difference is not only in the 3rd digit */
    for (long i = 0; i < m.query_w.size; i++) m.query_w.data[i] *= 4, m.key_w.data[i] *= 4;
    Tensor att = scores_tensor(B, H, T), drop = scores_tensor(B, H, T), out = tensor_new3(B, T, D);
    double *right = calloc(att.size, sizeof *right), *wrong = calloc(att.size, sizeof *wrong);
    double *rout = calloc(out.size, sizeof *rout);
    STUDENT(mha_forward(out.data, att.data, drop.data, &m, x.data, NULL, 0.0f, NULL, B, T));
    double *eright = ref_new(att.size), *eout = ref_new(out.size);
    reference_err(rout, eout, right, eright, &m, x.data, NULL, B, T);
    tap_layout("b h t s", 4, att.shape);
    if (!within_ok(att.data, right, eright, att.size, "the program scales by sqrt(hd) = sqrt(%d)", D / H)) {
        RefCase student = case_of(&m, x.data, NULL, B, T, D / H, out.data, att.data);
        ref_explain(&student, NULL, 0);
    }
    free(eright); free(eout);
    reference(rout, wrong, &m, x.data, NULL, B, T, D);
    double moved = 0;
    long flatter = 0, rows = att.size / T;
    for (long i = 0; i < att.size; i++) moved = fmax(moved, fabs(att.data[i] - wrong[i]));
    for (long r = 0; r < rows; r++) flatter += entropy(wrong + r * T, T) >= entropy(right + r * T, T) - 1e-12;
    ok(moved > 1e-2, "scaling by sqrt(D) instead moves weights by %.2g: the reference check catches it", moved);
    ok(flatter == rows, "with sqrt(D), all %ld rows are flatter (higher entropy): %ld are", rows, flatter);
    free(right); free(wrong); free(rout);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

/* ---- each head sees only its own rows of q_proj ------------------------------ */

static void test_heads_independent(void) {
    int B = 2, T = 5, D = 24, H = 4, hd = D / H;
    MHA m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, B, T, D, H, 0, 21);
    Tensor before = scores_tensor(B, H, T), after = scores_tensor(B, H, T), drop = scores_tensor(B, H, T);
    Tensor out = tensor_new3(B, T, D);
    STUDENT(mha_forward(out.data, before.data, drop.data, &m, x.data, &mask, 0.0f, NULL, B, T));
    for (int h = 0; h < H; h++) {
        Tensor saved = tensor_new1(hd * D);
        float *rows = m.query_w.data + (long)h * hd * D;      /* q_proj.weight rows h*hd .. h*hd + hd - 1 */
        memcpy(saved.data, rows, (size_t)saved.size * sizeof(float));
        for (long i = 0; i < saved.size; i++) rows[i] = rows[i] * -3.0f + 0.25f;
        STUDENT(mha_forward(out.data, after.data, drop.data, &m, x.data, &mask, 0.0f, NULL, B, T));
        memcpy(rows, saved.data, (size_t)saved.size * sizeof(float));
        tensor_free(&saved);
        int others_same = 1, own_changed = 0;
        long block = (long)T * T;
        for (int b = 0; b < B; b++)
            for (int g = 0; g < H; g++) {
                const float *p = before.data + ((long)b * H + g) * block, *q = after.data + ((long)b * H + g) * block;
                if (g == h) own_changed |= !same_floats(p, q, block);
                else others_same &= same_floats(p, q, block);
            }
        ok(own_changed && others_same, "changing head %d's rows of q_proj.weight changes head %d's weights and no other head's",
           h, h);
    }
    tensor_free(&before); tensor_free(&after); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* ---- mask shapes: every legal one is its explicit (B, H, T, T) expansion ----- */

static void test_mask_shapes(void) {
    int B = 2, H = 3, T = 4, D = 12;
    static const int shapes[][5] = {   /* ndim, sizes */
        { 1, 4 }, { 2, 4, 4 }, { 2, 1, 4 }, { 3, 3, 4, 4 }, { 3, 3, 1, 4 }, { 3, 1, 4, 4 }, { 4, 2, 1, 1, 4 },
        { 4, 2, 1, 4, 4 }, { 4, 2, 3, 4, 4 }, { 4, 1, 3, 1, 4 }, { 4, 2, 3, 4, 1 }, { 4, 1, 1, 1, 1 },
    };
    MHA m = {0};
    Tensor x, random;
    make_case(&m, &x, &random, B, T, D, H, 0, 5);
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        Tensor mask = tensor_new(shapes[c][0], shapes[c] + 1), full = scores_tensor(B, H, T);
        for (long i = 0; i < mask.size; i++) mask.data[i] = pattern(i, (unsigned)c);
        expand(full.data, &mask, B, H, T);
        Tensor a1 = scores_tensor(B, H, T), a2 = scores_tensor(B, H, T), d = scores_tensor(B, H, T);
        Tensor o1 = tensor_new3(B, T, D), o2 = tensor_new3(B, T, D);
        STUDENT(mha_forward(o1.data, a1.data, d.data, &m, x.data, &mask, 0.0f, NULL, B, T));
        STUDENT(mha_forward(o2.data, a2.data, d.data, &m, x.data, &full, 0.0f, NULL, B, T));
        char s[64];
        shape_str(s, sizeof s, mask.ndim, mask.shape);
        ok(same_floats(a1.data, a2.data, a1.size) && same_floats(o1.data, o2.data, o1.size),
           "a mask of shape %s gives exactly what its explicit (2, 3, 4, 4) expansion gives", s);
        tensor_free(&mask); tensor_free(&full); tensor_free(&a1); tensor_free(&a2); tensor_free(&d);
        tensor_free(&o1); tensor_free(&o2);
    }
    tensor_free(&x); tensor_free(&random);
    free_module(&m);
}

/* ---- --causal ------------------------------------------------------------------- */

static void test_causal(void) {
    int B = 2, T = 6, D = 16, H = 4;
    MHA m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, B, T, D, H, 0, 31);
    tensor_free(&mask);
    mask_final(&mask, 1, T, T);
    int good = mask.ndim == 2 && mask.shape[0] == T && mask.shape[1] == T;
    Tensor att = scores_tensor(B, H, T), drop = scores_tensor(B, H, T), out = tensor_new3(B, T, D);
    STUDENT(mha_forward(out.data, att.data, drop.data, &m, x.data, &mask, 0.0f, NULL, B, T));
    long above = 0;
    for (long i = 0; i < att.size; i++) above += i % T > i / T % T && att.data[i] != 0.0f;
    ok(good && above == 0, "--causal alone: a (T, T) mask, and every weight above the diagonal is exactly 0");
    tensor_free(&mask);

    Tensor pad = tensor_new(4, (int[]){ B, 1, 1, T });     /* padding: sequence 1 has 4 real positions */
    for (long i = 0; i < pad.size; i++) pad.data[i] = i / T == 0 || i % T < 4;
    mask_final(&pad, 1, T, T);
    ok(pad.ndim == 4 && pad.shape[0] == B && pad.shape[1] == 1 && pad.shape[2] == T && pad.shape[3] == T &&
       pad.data[1 * T * T + 5 * T + 3] == 1 && pad.data[1 * T * T + 5 * T + 4] == 0 && pad.data[1 * T * T + 2 * T + 3] == 0,
       "--causal on a (B, 1, 1, T) padding mask gives (B, 1, T, T): padding AND the triangle");
    tensor_free(&pad);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

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

/* ---- dropout: the same chunk as chapter 3's, on (B, H, T, T) ------------------ */

static void test_dropout(void) {
    int B = 2, T = 5, D = 8, H = 2;
    float p = 0.3f;
    MHA m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, B, T, D, H, 0, 41);
    Tensor att = scores_tensor(B, H, T), drop = scores_tensor(B, H, T), out = tensor_new3(B, T, D);
    Rng r;
    rng_seed(&r, 3);
    STUDENT(mha_forward(out.data, att.data, drop.data, &m, x.data, &mask, p, &r, B, T));
    float scale = 1.0f / (float)(1.0 - p);
    long kept = 0, wrong = 0;
    for (long i = 0; i < att.size; i++) {
        if (drop.data[i] != 0.0f) kept++;
        if (drop.data[i] != 0.0f && drop.data[i] != att.data[i] * scale) wrong++;
    }
    ok(wrong == 0 && kept > 0 && kept < att.size, "train mode: each weight is dropped or kept * 1/(1 - p) exactly (%ld of %ld kept)",
       kept, att.size);
    /* the output is o_proj(merge(dropped weights @ v)), in double */
    double *dropped = ref_doubles(drop.data, drop.size), *want = ref_new(out.size), *ewant = ref_new(out.size);
    RefWeights w = weights_of(&m);
    ref_output_err(want, ewant, dropped, NULL, &w, x.data, D, &(RefAttn){ .B = B, .T = T, .H = H, .hd = D / H });
    if (!within_ok(out.data, want, ewant, out.size, "train mode: the output is o_proj(merged heads of dropped weights @ v)")) {
        double *before = ref_doubles(att.data, att.size), *plain = ref_new(out.size), *eplain = ref_new(out.size);
        ref_output_err(plain, eplain, before, NULL, &w, x.data, D, &(RefAttn){ .B = B, .T = T, .H = H, .hd = D / H });
        int same = 1;
        for (long i = 0; i < out.size; i++) same &= tap_close_enough(out.data[i], plain[i], 2 * eplain[i] + 1e-6, 0);
        if (same) what_is_wrong("the output is o_proj(att @ v), the weights before dropout: v must be mixed with "
                                "att_drop, the weights that survived");
        free(before); free(plain); free(eplain);
    }
    free(dropped); free(want); free(ewant);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* 1 if the directory holds no file at all (or does not exist) */
static int empty_dir(const char *dir) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' 2>/dev/null)\"", dir);
    return system(cmd) == 0;
}

/* dirm gets MHA's files for V4's case in dir4: the layers renamed, X copied, the
 * (B, T, T) mask given a head axis, (B, 1, T, T): the same bytes of data. */
static void rename_into_mha(const char *dir4, const char *dirm) {
    static const char *const from[8] = { "query_proj.weight", "query_proj.bias", "key_proj.weight", "key_proj.bias",
        "value_proj.weight", "value_proj.bias", "output_proj.weight", "output_proj.bias" };
    static const char *const to[8] = { "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
        "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };
    for (int i = 0; i < 8; i++) {
        Tensor t = load_npy(dir4, from[i]);
        dump_tensor(dirm, to[i], &t);
        tensor_free(&t);
    }
    Tensor x = load_npy(dir4, "X"), mask = load_npy(dir4, "attention_mask");
    save_npy(dirm, "X", &x);
    if (mask.ndim == 3) {
        mask.ndim = 4;
        mask.shape[3] = mask.shape[2]; mask.shape[2] = mask.shape[1]; mask.shape[1] = 1;
    }
    save_npy(dirm, "attention_mask", &mask);
    tensor_free(&x); tensor_free(&mask);
}

static void test_is_v4(const char *tmp) {
    static const char *const flags[][12] = {
        { NULL },
        { "--batch", "2", "--seq", "7", "--dim", "5", "--causal", NULL },
        { "--train", "--seed", "9", NULL },
        { "--batch", "4", "--seq", "16", "--dim", "32", "--train", "--dropout", "0.3", "--causal", "--seed", "3" },
    };
    static const char *const what[] = { "the default V4 case", "(2, 7, 5) with --causal", "--train --seed 9",
                                        "(4, 16, 32), --causal, --train --dropout 0.3" };
    char d4[600], dm[600], om[600];
    for (int c = 0; c < 4; c++) {
        const char *args[24];
        int n = 0;
        snprintf(d4, sizeof d4, "%s/v4-%d", tmp, c);
        snprintf(dm, sizeof dm, "%s/mha-%d", tmp, c);
        snprintf(om, sizeof om, "%s/mha-out-%d", tmp, c);
        for (int i = 0; i < 12 && flags[c][i]; i++) args[n++] = flags[c][i];
        args[n++] = "--quiet"; args[n++] = "--dump"; args[n++] = d4; args[n] = NULL;
        int s4 = run("selfatt_v4", args);
        if (s4 == 0) rename_into_mha(d4, dm);       /* else mha finds nothing to load */
        args[n - 1] = om; args[n++] = "--load"; args[n++] = dm; args[n++] = "--heads"; args[n++] = "1"; args[n] = NULL;
        int sm = run("mha", args);
        Tensor a4 = s4 == 0 ? load_npy(d4, "attn") : (Tensor){0}, am = sm == 0 ? load_npy(om, "attn") : (Tensor){0};
        int shaped = a4.ndim == 3 && am.ndim == 4 && am.shape[0] == a4.shape[0] && am.shape[1] == 1 &&
                     am.shape[2] == a4.shape[1] && am.shape[3] == a4.shape[2];
        int causal = c == 1 || c == 3;
        double keep = c == 2 ? 1 / (1 - 0.1) : c == 3 ? 1 / (1 - 0.3) : 0;      /* --train: 1 / (1 - p) */
        RefDump d = {0};
        char pair[200];
        snprintf(pair, sizeof pair, "%s: mha --heads 1's and selfatt_v4's", what[c]);
        int loaded = shaped && ref_dump_case(&d, dm, "X", "X", "X", mha_layers, 1, 1, causal, keep);
        int same = loaded && ref_dumps_agree(&d, om, d4, om, pair);
        ok(same, "%s: mha --heads 1 on V4's files writes V4's out.npy, and attn.npy (B, 1, T, T) holds V4's (B, T, T), "
           "within what float32 rounding allows", what[c]);
        if (!loaded) diag("exit %d and %d; %s", s4, sm, run_err);
        ref_dump_free(&d);
        tensor_free(&a4); tensor_free(&am);
    }
}

static void test_program(const char *tmp) {
    char d1[600], d2[600], never[600], p1[1100], p2[1100];
    snprintf(d1, sizeof d1, "%s/first", tmp);
    snprintf(d2, sizeof d2, "%s/second", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    const char *prog = program_path("mha");

    int status = run("mha", NO_ARGS);
    ok(status == 0 && strstr(run_out, "MultiHeadAttention(hidden_dim=128, nums_head=8), head_dim 16, on X of shape "
                                  "(3, 2, 128), attention_mask (3, 8, 2, 2)") &&
       strstr(run_out, "attention_weight: tensor([[[[") && strstr(run_out, "parameters: 66048 "),
       "run without flags, the program makes the notebook's case: X (3, 2, 128), 8 heads, a random (3, 8, 2, 2) mask");
    status = run("mha", ARGS("--batch", "1", "--seq", "1", "--dim", "768", "--heads", "12"));
    ok(status == 0 && strstr(run_out, "parameters: 2362368 "), "D = 768, H = 12: 2,362,368 parameters, as PyTorch counts them");
    status = run("mha", ARGS("--batch", "1", "--seq", "1", "--dim", "768", "--heads", "1"));
    ok(status == 0 && strstr(run_out, "parameters: 2362368 "), "and with H = 1, the same number");
    status = run("mha", ARGS("--batch", "3", "--seq", "2", "--dim", "4", "--heads", "2"));
    ok(status == 0 && strstr(run_out, "thop counts them (nn.Linear only): 384\n") && strstr(run_out, "weights @ V: 480\n"),
       "X (3, 2, 4): 384 MACs as thop counts them, 480 with the two matrix products");
    status = run("mha", ARGS("--train", "--dropout", "0.25"));
    ok(status == 0 && strstr(run_out, "dropout p = 0.25 ") && strstr(run_out, "row sums after dropout"),
       "--train --dropout 0.25 prints the weights after dropout and their row sums");

    status = run("mha", ARGS("--batch", "2", "--seq", "4", "--dim", "12", "--heads", "3", "--quiet", "--dump", d1));
    run("mha", ARGS("--load", d1, "--heads", "3", "--dump", d2, "--quiet"));
    const char *files[] = { "out", "attn", "X", "attention_mask", "q_proj.weight", "q_proj.bias", "k_proj.weight",
                            "k_proj.bias", "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };
    int all_same = status == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (!same_file(p1, p2)) { all_same = 0; diag("%s differs", files[i]); }
    }
    ok(all_same, "--load of a --dump reproduces all twelve files byte for byte");
    Tensor mask = status == 0 ? load_npy(d1, "attention_mask") : (Tensor){0};
    Tensor attn = status == 0 ? load_npy(d1, "attn") : (Tensor){0};
    long ones = 0;
    for (long i = 0; i < mask.size; i++) ones += mask.data[i] == 1.0f;
    ok(mask.ndim == 4 && mask.shape[1] == 3 && ones > 0 && ones < mask.size && attn.ndim == 4 && attn.shape[1] == 3,
       "the made mask is random 0/1 of shape (B, H, T, T), and attn.npy is (B, H, T, T)");
    tensor_free(&mask); tensor_free(&attn);

    /* legal masks through the program: (B, 1, 1, T) is its explicit (B, H, T, T) */
    Tensor pad = tensor_new(4, (int[]){ 2, 1, 1, 4 }), full = scores_tensor(2, 3, 4);
    for (long i = 0; i < pad.size; i++) pad.data[i] = i % 4 < (i < 4 ? 3 : 2);
    expand(full.data, &pad, 2, 3, 4);
    dump_tensor(d1, "attention_mask", &pad);            /* makes d1 if a stopped run did not */
    run("mha", ARGS("--load", d1, "--heads", "3", "--dump", d2, "--quiet"));
    save_npy(d1, "attention_mask", &full);
    snprintf(p1, sizeof p1, "%s/out.npy", d2);
    snprintf(p2, sizeof p2, "%s/explicit/out.npy", tmp);
    char explicit_dir[600];
    snprintf(explicit_dir, sizeof explicit_dir, "%s/explicit", tmp);
    run("mha", ARGS("--load", d1, "--heads", "3", "--dump", explicit_dir, "--quiet"));
    ok(same_file(p1, p2), "the program with a (B, 1, 1, T) padding mask writes what the explicit (B, H, T, T) gives");
    tensor_free(&pad); tensor_free(&full);

    /* illegal masks: one line, nothing written */
    static const int bad[][5] = { { 3, 2, 4, 4 }, { 2, 2, 4 }, { 4, 2, 2, 4, 4 }, { 4, 2, 3, 4, 5 }, { 4, 3, 3, 4, 4 } };
    static const char *const why[] = { "chapter 3's (B, T, T) mask, B = 2 meeting H = 3",
                                       "a (B, T) padding mask without its new axes", "(B, 2, T, T) with H = 3",
                                       "(B, H, T, S) with S = 5 for T = 4", "(3, H, T, T) for B = 2" };
    for (int c = 0; c < 5; c++) {
        Tensor m = tensor_new(bad[c][0], bad[c] + 1);
        save_npy(d1, "attention_mask", &m);
        tensor_free(&m);
        refuses(prog, ARGS("--load", d1, "--heads", "3", "--dump", never), "does not broadcast", "%s is refused", why[c]);
        ok(empty_dir(never), "and nothing is written");
    }
    /* a 3-d mask whose first size is H is legal: it is read as (H, T, T), whatever was meant */
    Tensor per_head = tensor_new3(3, 4, 4);
    for (long i = 0; i < per_head.size; i++) per_head.data[i] = pattern(i, 9);
    save_npy(d1, "attention_mask", &per_head);
    tensor_free(&per_head);
    status = run("mha", ARGS("--load", d1, "--heads", "3", "--quiet"));
    ok(status == 0, "a (3, 4, 4) mask with H = 3 is taken, as one (T, T) pattern per head");

    snprintf(p1, sizeof p1, "%s/attention_mask.npy", d1);
    remove(p1);
    refuses(prog, ARGS("--load", d1, "--dump", never), "--load needs --heads",
            "loading without --heads is refused, saying the files do not hold H");
    refuses(prog, ARGS("--load", d1, "--heads", "8", "--dump", never), "give it beside --load",
            "loading D = 12 with --heads 8: 8 does not divide 12, and the message says --heads goes beside --load");
    refuses(prog, ARGS("--dim", "10", "--heads", "4"), "--heads 4 does not divide --dim 10", "--heads 4 with --dim 10 is refused");
    refuses(prog, ARGS("--load", d1, "--heads", "5", "--dump", never), "--heads 5 does not divide --dim 12",
            "--heads 5 beside a D = 12 case is refused");
    ok(empty_dir(never), "and nothing is written");
    snprintf(p1, sizeof p1, "%s/v_proj.weight.npy", d1);
    Tensor wide = tensor_new2(12, 6);
    npy_save(p1, &wide);
    tensor_free(&wide);
    refuses(prog, ARGS("--load", d1, "--heads", "3"), "v_proj.weight", "a v_proj.weight of the wrong shape is refused, naming it");
    snprintf(p1, sizeof p1, "%s/o_proj.bias.npy", d1);
    remove(p1);
    snprintf(p1, sizeof p1, "%s/v_proj.weight.npy", d2);
    snprintf(p2, sizeof p2, "%s/v_proj.weight.npy", d1);
    rename(p1, p2);
    refuses(prog, ARGS("--load", d1, "--heads", "3"), "o_proj.bias", "a missing o_proj.bias is refused, naming it");
    refuses(prog, ARGS("--kv-heads", "2"), "--kv-heads", "--kv-heads is refused: that is chapter 6's");
    refuses(prog, ARGS("--dropout", "0.1"), "--train", "--dropout without --train is refused");
}

/* ---- the B == H trap, in C ------------------------------------------------------ */

static void test_trap(void) {
    int B = 3, H = 3, T = 4, D = 12;
    MHA m = {0};
    Tensor x, random;
    make_case(&m, &x, &random, B, T, D, H, 0, 51);
    Tensor per_seq = tensor_new3(B, T, T);                /* meant: a pattern per sequence */
    for (long i = 0; i < per_seq.size; i++) per_seq.data[i] = i % T <= (i / T) % T || i / (T * T) == 0;
    ok(broadcastable(per_seq.shape, 3, (int[]){ B, H, T, T }, 4), "with B == H, a (B, T, T) mask broadcasts: nothing refuses it");
    Tensor meant = tensor_new(4, (int[]){ B, 1, T, T });
    memcpy(meant.data, per_seq.data, (size_t)per_seq.size * sizeof(float));
    Tensor a1 = scores_tensor(B, H, T), a2 = scores_tensor(B, H, T), d = scores_tensor(B, H, T), o = tensor_new3(B, T, D);
    STUDENT(mha_forward(o.data, a1.data, d.data, &m, x.data, &meant, 0.0f, NULL, B, T));
    STUDENT(mha_forward(o.data, a2.data, d.data, &m, x.data, &per_seq, 0.0f, NULL, B, T));
    /* sequence 0 has no mask; read as (H, T, T), head 1 of sequence 0 gets sequence 1's triangle */
    ok(a1.data[((0 * H + 1) * T + 0) * T + 3] > 0.0f && a2.data[((0 * H + 1) * T + 0) * T + 3] == 0.0f,
       "with B == H, sequence 1's mask lands on head 1 of sequence 0, which was meant to see everything");
    tensor_free(&per_seq); tensor_free(&meant); tensor_free(&a1); tensor_free(&a2); tensor_free(&d); tensor_free(&o);
    tensor_free(&x); tensor_free(&random);
    free_module(&m);
}

/* ---- --example four-heads, the chapter's figure, run as a reader runs it ------- */

/* Head 0 looks one word back, head 1 for its own word, head 2 at the first word,
 * head 3 at every word alike; each head's value is the word, o_proj the identity. */
static void test_four_heads(const char *tmp) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/four-heads", tmp);
    int status = run("mha", ARGS("--example", "four-heads", "--quiet", "--dump", dir));
    ok(status == 0, "--example four-heads runs and dumps its case");
    Tensor x = status == 0 ? load_npy(dir, "X") : (Tensor){0};              // (1, T, 16)
    Tensor att = status == 0 ? load_npy(dir, "attn") : (Tensor){0};         // (1, 4, T, T)
    Tensor out = status == 0 ? load_npy(dir, "out") : (Tensor){0};          // (1, T, 16)
    int T = x.shape[1], D = SENTENCE_DIM, word[PLACES] = {0};
    int shaped = x.ndim == 3 && T == 8 && x.shape[2] == D && att.ndim == 4 && att.shape[1] == 4 && out.shape[2] == D;
    ok(shaped, "four-heads: the sentence's 8 words, D = 16, 4 heads");
    for (int t = 0; shaped && t < T; t++)                      // each position's word, from X's word part
        for (int w = 0; w < WORDS; w++) if (x.data[t * D + w] == 1.0f) word[t] = w;
    /* the smallest share where a head should look, the largest error elsewhere; failing values without a case */
    double worst_before = shaped, row0 = shaped ? att.data[0] : 0, worst_same = shaped, worst_first = shaped;
    double worst_alike = !shaped, worst_out = !shaped, worst_mix = !shaped;
    for (int t = 0; shaped && t < T; t++) {
        const float *before = &att.data[t * T], *same = before + T * T, *first = same + T * T, *alike = first + T * T;
        if (t > 0) worst_before = fmin(worst_before, before[t - 1]);
        double on = 0;
        for (int s = 0; s < T; s++) {
            if (word[s] == word[t]) on += same[s];
            worst_alike = fmax(worst_alike, fabs(alike[s] - 1.0 / T));
        }
        worst_same = fmin(worst_same, on);
        worst_first = fmin(worst_first, first[0]);
        for (int w = 0; w < 4; w++) {
            double share = 0;                                  // word w's share of the sentence
            for (int s = 0; s < T; s++) share += word[s] == w;
            worst_mix = fmax(worst_mix, fabs(out.data[t * D + 12 + w] - share / T));
            if (t > 0) worst_out = fmax(worst_out, fabs(out.data[t * D + w] - (word[t - 1] == w)));
        }
    }
    ok(worst_before >= 0.9, "head 0 puts at least 0.9 of each row t >= 1 on key t - 1 (%.4f)", worst_before);
    ok(row0 >= 0.9, "head 0's row 0 has no word before it and puts at least 0.9 on key 0, itself (%.5f)", row0);
    ok(worst_same >= 0.9, "head 1 puts at least 0.9 of each row on the keys of its own word (%.4f)", worst_same);
    ok(worst_first >= 0.9, "head 2 puts at least 0.9 of each row on key 0 (%.4f)", worst_first);
    ok(worst_alike <= 1e-7, "head 3 gives every key exactly 1/T (off by %.2g)", worst_alike);
    ok(worst_out <= 0.05 && worst_mix <= 1e-6, "out: head 0's columns hold the word before (off by %.3f), head 3's "
       "each word's share of the sentence, 3/8 2/8 2/8 1/8 (off by %.2g)", worst_out, worst_mix);
    tensor_free(&x); tensor_free(&att); tensor_free(&out);
}

/* Tested through the program, not called here. */
static void unused_here(void) { (void)mha_print; }

int main(void) {
    unused_here();
    char tmp[] = "/tmp/abh-mha-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    /* Exercise 5.6 (the heads: split, scores scaled by 1/sqrt(hd), weighted sum, merge):
     * the tests that say it is done */
    EXERCISE("5.6", 18, test_against_reference());
    EXERCISE("5.6", 3, test_scale());
    EXERCISE("5.6", 4, test_heads_independent());
    TEST_GROUP(test_mask_shapes());
    TEST_GROUP(test_causal());
    TEST_GROUP(test_causal_default("mha", tmp));
    EXERCISE("5.6", 2, test_dropout());
    TEST_GROUP(test_trap());
    EXERCISE("5.6", 4, test_is_v4(tmp));
    EXERCISE("5.6", 8, test_four_heads(tmp));
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
