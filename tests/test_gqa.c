/* Tests for chapter 6, part 2: GroupedQueryAttention (gqa).
 *
 * gqa.c is included with TESTING defined. The reference, tests/reference.h's,
 * is a double-precision loop over query heads, one at a time, in which head h
 * reads key/value head h / (H/G), PyTorch's repeat_interleave; hidden keys are
 * left out of the softmax and a query that sees no key gets NaN, as -inf makes
 * it. The
 * cross-program checks run the real binaries: gqa --kv-heads 1 against
 * $ABH_BIN/mqa, and gqa --kv-heads H against chapter 5's $ABH_BIN/mha, within
 * twice the bound of one float32 pass (the same bits, or not, said in a note). */
#define TESTING
#include "gqa.c"
#include "tap.h"
#include "run.h"
#define MODULE_GQA
#include "reference.h"

/* ---- an independent reference, in double precision ---------------------- */

/* GQA in double: tests/reference.h's pass. vis (B, H, T, T) or NULL. att (B, H, T, T),
 * out (B, T, D). k and v are (B, T, G*hd): key head g of position (b, s) is
 * k[(b*T + s)*G*hd + g*hd ..], and query head h reads key head h / (H/G). */
static RefCase case_of(const GQA *m, const float *x, const float *vis, int B, int T, const float *out,
                       const float *att) {
    RefWeights w = { m->q_w.data, m->q_b.data, m->k_w.data, m->k_b.data, m->v_w.data, m->v_b.data, m->o_w.data,
                     m->o_b.data };
    RefAttn a = { .B = B, .T = T, .H = m->heads, .G = m->kv_heads, .hd = m->dim / m->heads, .vis = vis,
                  .hide = REF_FILL_INF };
    return (RefCase){ w, x, x, x, m->dim, a, out, att };
}

/* The reference, and in eout and eatt how far a float32 pass, its sums in any order,
 * may be from it (reference.h). */
static void reference(double *out, double *eout, double *att, double *eatt, const GQA *m, const float *x,
                      const float *vis, int B, int T) {
    RefCase c = case_of(m, x, vis, B, T, NULL, NULL);
    ref_attention_err(out, eout, att, eatt, &c.w, x, x, x, m->dim, &c.a);
}

/* gqa's layers in a dump, as reference.h's ref_dump_case reads them. */
static const char *const gqa_layers[8] = { "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                                           "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };

/* What is wrong with a failing grouped pass (Exercise 6.7): the usual suspects, and
 * one query head per group (rows = T): heads h of a group past the first get no
 * weights at all. */
static void explain_groups(const RefCase *student) {
    if (!student->att || tap_stub[0]) return;
    RefAttn a = ref_usual(&student->a);
    long map = (long)a.T * a.S;
    for (int b = 0; b < a.B && a.T > 1 && a.S > 1; b++)
        for (int h = 0; h < a.H; h++) {                /* a head whose scores were never written: all 0 */
            int unwritten = 1;
            for (long i = 0; i < map; i++) {
                float w = student->att[((long)b * a.H + h) * map + i], first = student->att[((long)b * a.H + h) * map + i / a.S * a.S];
                unwritten &= w == 0.0f || (w == first && w > 0.0f);   /* ... or a softmax of zeros, uniform */
            }
            if (unwritten) {
                what_is_wrong("head %d of sequence %d has no weights of its own: its scores were never written "
                              "(all 0, or a uniform softmax of them); each group's R = H/G = %d query heads are R*T rows "
                              "against their key head, and the (b, g) products number B*G", h, b,
                              a.H / a.G);
                return;
            }
        }
    ref_explain(student, NULL, 0);
}

/* ---- cases and masks ------------------------------------------------------- */

/* A module and its input X as gqa makes them from a seed (tests/reference.h). */
static void make_case(GQA *m, Tensor *x, int B, int T, int D, int H, int G, uint64_t seed) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .kv_heads = G, .seed = seed };
    make_module(m, x, &a);
}

/* vis (B, H, T, T) from a mask of any shape that broadcasts to it. */
static void expand(float *vis, const Tensor *mask, int B, int H, int T) {
    ref_expand(vis, mask, 4, (int[]){ B, H, T, T });
}

static int same_floats(const float *a, const float *b, long n) { return memcmp(a, b, (size_t)n * sizeof(float)) == 0; }

/* 1 if the weights were written at all: a forward pass stopped at a stub (in a
 * handout) leaves them zero, and two such runs are equal to no purpose. */
static int written(const float *att, long n) {
    for (long i = 0; i < n; i++) if (att[i] != 0.0f) return 1;
    return 0;
}

/* ---- the forward pass against the reference ------------------------------------ */

static void check(const char *what, const GQA *m, const Tensor *x, const Tensor *mask, int B, int T) {
    int D = m->dim, H = m->heads;
    long n = (long)B * H * T * T;
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    float *vis = malloc((size_t)n * sizeof *vis);
    double *ratt = calloc(n, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
    if (mask) expand(vis, mask, B, H, T);
    STUDENT(gqa_forward(out.data, att.data, m, x->data, mask, B, T));
    double *eatt = ref_new(n), *eout = ref_new(out.size);
    reference(rout, eout, ratt, eatt, m, x->data, mask ? vis : NULL, B, T);
    tap_layout("b t d", 3, out.shape);
    int good = within_ok(out.data, rout, eout, out.size, "%s: the output matches a head-by-head double reference, "
                         "within what float32 rounding allows", what);
    tap_layout("b h t s", 4, att.shape);
    good &= within_ok(att.data, ratt, eatt, n, "%s: the weights (B, H, T, T) match the reference", what);
    long leaked = 0, rows = 0;
    double worst = 0, allowed = 1;             /* the worst row, against the sum of its weights' bounds */
    for (long r = 0; r < n / T; r++) {
        double sum = 0, bound = 0;
        int any = 0;
        for (int s = 0; s < T; s++) any |= !mask || vis[r * T + s];
        if (!any) continue;
        for (int s = 0; s < T; s++) {
            if (mask && !vis[r * T + s]) leaked += att.data[r * T + s] != 0.0f;
            sum += att.data[r * T + s], bound += eatt[r * T + s];
        }
        rows++;
        if (!(fabs(sum - 1) / bound <= worst / allowed)) worst = fabs(sum - 1), allowed = bound;
    }
    ok(leaked == 0 && worst <= allowed, "%s: hidden keys get exactly 0, and each of %ld rows sums to 1", what, rows);
    if ((leaked || !(worst <= allowed)) && !tap_stub[0]) diag("%ld hidden keys got weight; worst row off by %g", leaked, worst);
    RefCase student = case_of(m, x->data, mask ? vis : NULL, B, T, out.data, att.data);
    if (!good || leaked || !(worst <= allowed)) explain_groups(&student);
    free(vis); free(ratt); free(rout); free(eatt); free(eout);
    tensor_free(&att); tensor_free(&out);
}

static void test_against_reference(void) {
    struct { int B, T, D, H, G, causal; const char *what; } cases[] = {
        { 1, 4, 8, 4, 2, 0, "the default case: H = 4, G = 2" },
        { 1, 4, 8, 4, 2, 1, "the default case with --causal" },
        { 2, 5, 12, 6, 3, 0, "(2, 5, 12), H = 6, G = 3" },
        { 2, 6, 16, 4, 1, 1, "G = 1 (MQA), --causal" },
        { 3, 5, 16, 4, 4, 1, "G = H = 4 (MHA), --causal" },
        { 2, 7, 24, 8, 2, 0, "H = 8, G = 2: four query heads per group" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        GQA m = {0};
        Tensor x, mask = {0};
        make_case(&m, &x, cases[c].B, cases[c].T, cases[c].D, cases[c].H, cases[c].G, 30 + c);
        mask_final(&mask, cases[c].causal, cases[c].T, cases[c].T);
        check(cases[c].what, &m, &x, mask.data ? &mask : NULL, cases[c].B, cases[c].T);
        tensor_free(&x); tensor_free(&mask);
        free_module(&m);
    }
    GQA m = {0};
    Tensor x, mask = tensor_new(4, (int[]){ 2, 1, 5, 5 });
    make_case(&m, &x, 2, 5, 12, 6, 2, 41);
    for (long i = 0; i < mask.size; i++) mask.data[i] = ref_pattern(i, 5);
    for (long r = 0; r < mask.size / 5; r++) mask.data[r * 5 + r % 5] = 1;
    check("a scattered (B, 1, T, T) mask, H = 6, G = 2", &m, &x, &mask, 2, 5);
    tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* ---- grouping is repeat_interleave, bit for bit ----------------------------------- */

/* The same module with its G key/value heads repeated R times each (k0 k0 k1 k1 ...),
 * as PyTorch's repeat_interleave does, run as G' = H: must give the same bits. */
static void test_grouping_is_repeat(void) {
    int B = 2, T = 5, D = 12, H = 6, G = 2, hd = 2, R = 3;
    GQA m = {0}, rep = { .dim = D, .heads = H, .kv_heads = H };
    Tensor x;
    make_case(&m, &x, B, T, D, H, G, 12);
    rep.q_w = tensor_new2(D, D); rep.q_b = tensor_new1(D); rep.o_w = tensor_new2(D, D); rep.o_b = tensor_new1(D);
    memcpy(rep.q_w.data, m.q_w.data, sizeof(float) * D * D); memcpy(rep.q_b.data, m.q_b.data, sizeof(float) * D);
    memcpy(rep.o_w.data, m.o_w.data, sizeof(float) * D * D); memcpy(rep.o_b.data, m.o_b.data, sizeof(float) * D);
    rep.k_w = tensor_new2(D, D); rep.k_b = tensor_new1(D); rep.v_w = tensor_new2(D, D); rep.v_b = tensor_new1(D);
    for (int h = 0; h < H; h++) {                              /* head h <- kv head h / R */
        int g = h / R;
        memcpy(rep.k_w.data + h * hd * D, m.k_w.data + g * hd * D, sizeof(float) * hd * D);
        memcpy(rep.v_w.data + h * hd * D, m.v_w.data + g * hd * D, sizeof(float) * hd * D);
        memcpy(rep.k_b.data + h * hd, m.k_b.data + g * hd, sizeof(float) * hd);
        memcpy(rep.v_b.data + h * hd, m.v_b.data + g * hd, sizeof(float) * hd);
    }
    Tensor causal = {0};
    mask_final(&causal, 1, T, T);
    Tensor a1 = tensor_new(4, (int[]){ B, H, T, T }), a2 = tensor_new(4, (int[]){ B, H, T, T });
    Tensor o1 = tensor_new3(B, T, D), o2 = tensor_new3(B, T, D);
    STUDENT(gqa_forward(o1.data, a1.data, &m, x.data, &causal, B, T));
    STUDENT(gqa_forward(o2.data, a2.data, &rep, x.data, &causal, B, T));
    double *ratt = ref_new(a1.size), *eatt = ref_new(a1.size), *rout = ref_new(o1.size), *eout = ref_new(o1.size);
    RefCase grouped = case_of(&m, x.data, NULL, B, T, o1.data, a1.data);
    grouped.a.causal = 1;
    ref_attention_err(rout, eout, ratt, eatt, &grouped.w, x.data, x.data, x.data, D, &grouped.a);
    int near = written(a1.data, a1.size);
    for (long i = 0; near && i < a1.size; i++) near = tap_close_enough(a1.data[i], a2.data[i], 2 * eatt[i], 0);
    for (long i = 0; near && i < o1.size; i++) near = tap_close_enough(o1.data[i], o2.data[i], 2 * eout[i], 0);
    ok(near, "G = 2 grouped gives what its key/value heads repeat_interleaved to G = H = 6 give, within what float32 "
       "rounding allows");
    if (!near) explain_groups(&grouped);
    if (written(a1.data, a1.size)) {
        same_bits_note(a1.data, a2.data, a1.size, "G = 2 and its repeat_interleave to G = 6: the weights");
        same_bits_note(o1.data, o2.data, o1.size, "G = 2 and its repeat_interleave to G = 6: the output");
    }
    free(ratt); free(eatt); free(rout); free(eout);
    tensor_free(&a1); tensor_free(&a2); tensor_free(&o1); tensor_free(&o2); tensor_free(&causal);
    tensor_free(&x);
    free_module(&m); free_module(&rep);
}

/* ---- masks ------------------------------------------------------------------------ */

static void test_mask_shapes(void) {
    int B = 2, H = 4, G = 2, T = 4, D = 8;
    static const int shapes[][5] = {
        { 1, 4 }, { 2, 4, 4 }, { 3, 4, 4, 4 }, { 4, 2, 1, 1, 4 }, { 4, 2, 1, 4, 4 }, { 4, 2, 4, 4, 4 }, { 4, 1, 4, 4, 1 },
    };
    GQA m = {0};
    Tensor x;
    make_case(&m, &x, B, T, D, H, G, 7);
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        Tensor mask = tensor_new(shapes[c][0], shapes[c] + 1), full = tensor_new(4, (int[]){ B, H, T, T });
        for (long i = 0; i < mask.size; i++) mask.data[i] = ref_pattern(i, 10 + (unsigned)c);
        expand(full.data, &mask, B, H, T);
        Tensor a1 = tensor_new(4, (int[]){ B, H, T, T }), a2 = tensor_new(4, (int[]){ B, H, T, T });
        Tensor o1 = tensor_new3(B, T, D), o2 = tensor_new3(B, T, D);
        STUDENT(gqa_forward(o1.data, a1.data, &m, x.data, &mask, B, T));
        STUDENT(gqa_forward(o2.data, a2.data, &m, x.data, &full, B, T));
        char s[64];
        shape_str(s, sizeof s, mask.ndim, mask.shape);
        ok(written(a1.data, a1.size) && same_floats(a1.data, a2.data, a1.size) && same_floats(o1.data, o2.data, o1.size),
           "a mask of shape %s gives exactly what its explicit (2, 4, 4, 4) expansion gives", s);
        tensor_free(&mask); tensor_free(&full); tensor_free(&a1); tensor_free(&a2);
        tensor_free(&o1); tensor_free(&o2);
    }
    /* -inf: one query of one head sees nothing */
    Tensor mask = tensor_new(4, (int[]){ 1, H, T, T });
    for (long i = 0; i < mask.size; i++) mask.data[i] = 1;
    for (int s = 0; s < T; s++) mask.data[(3 * T + 1) * T + s] = 0;       /* head 3, query 1 */
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    STUDENT(gqa_forward(out.data, att.data, &m, x.data, &mask, B, T));
    int nan_row = 1, finite_else = 1;
    for (long i = 0; i < att.size; i++) {
        int h = (int)(i / (T * T) % H), t = (int)(i / T % T);
        if (h == 3 && t == 1) nan_row &= isnan(att.data[i]) != 0;
        else finite_else &= isfinite(att.data[i]) != 0;
    }
    for (long i = 0; i < out.size; i++) {
        int t = (int)(i / D % T);
        if (t == 1) nan_row &= isnan(out.data[i]) != 0;
        else finite_else &= isfinite(out.data[i]) != 0;
    }
    ok(nan_row, "-inf: a query that sees no key gets NaN weights, and NaN in all D outputs of its position");
    ok(finite_else && written(att.data, att.size), "every other weight and output is finite, the other head of its group included");
    tensor_free(&att); tensor_free(&out); tensor_free(&mask);
    tensor_free(&x);
    free_module(&m);
}

/* DIR1/NAME1.npy -> DIR2/NAME2.npy, byte for byte; 0 if the source is missing. */
static int copy_bytes(const char *d1, const char *n1, const char *d2, const char *n2) {
    char p1[1400], p2[1400];
    snprintf(p1, sizeof p1, "%s/%s.npy", d1, n1);
    snprintf(p2, sizeof p2, "%s/%s.npy", d2, n2);
    FILE *in = fopen(p1, "rb");
    if (!in) return 0;
    FILE *to = fopen(p2, "wb");
    int c;
    while ((c = fgetc(in)) != EOF) fputc(c, to);
    fclose(in); fclose(to);
    return 1;
}

static const char *const cases[][12] = {       /* gqa flags, without --kv-heads */
    { "--heads", "4", NULL },
    { "--batch", "2", "--seq", "5", "--dim", "12", "--heads", "6", "--causal", NULL },
    { "--batch", "3", "--seq", "7", "--dim", "16", "--heads", "8", "--causal", "--seed", "9", NULL },
};

/* argv for gqa: the case's flags, then --kv-heads G --dump DIR --quiet. */
static const char *const *gqa_argv(const char **argv, int c, const char *G, const char *dir) {
    int n = 0;
    while (cases[c][n]) argv[n] = cases[c][n], n++;
    argv[n++] = "--kv-heads", argv[n++] = G, argv[n++] = "--dump", argv[n++] = dir, argv[n++] = "--quiet";
    argv[n] = NULL;
    return argv;
}

static const char *heads_of(int c) {
    for (int i = 0; cases[c][i]; i++) if (!strcmp(cases[c][i], "--heads")) return cases[c][i + 1];
    return "4";
}

static void test_is_mqa(const char *tmp) {
    char g[600], m[600], m2[600];
    static const char *const names[][2] = {
        { "q_proj.weight", "W_Q.weight" }, { "q_proj.bias", "W_Q.bias" }, { "k_proj.weight", "W_K.weight" },
        { "k_proj.bias", "W_K.bias" }, { "v_proj.weight", "W_V.weight" }, { "v_proj.bias", "W_V.bias" },
        { "o_proj.weight", "W_O.weight" }, { "o_proj.bias", "W_O.bias" }, { "X", "x" }, { "attention_mask", "mask" },
    };
    for (int c = 0; c < 3; c++) {
        const char *argv[24];
        snprintf(g, sizeof g, "%s/g1-%d", tmp, c);
        snprintf(m, sizeof m, "%s/m-%d", tmp, c);
        snprintf(m2, sizeof m2, "%s/m2-%d", tmp, c);
        int status = run("gqa", gqa_argv(argv, c, "1", g));
        mkdir(m, 0777);
        for (int i = 0; i < 10; i++) copy_bytes(g, names[i][0], m, names[i][1]);
        status |= run("mqa", ARGS("--load", m, "--heads", heads_of(c), "--dump", m2, "--quiet"));
        RefDump d = {0};
        char pair[120];
        snprintf(pair, sizeof pair, "case %d: gqa --kv-heads 1's and mqa's", c);
        ok(status == 0 && ref_dump_case(&d, g, "X", "X", "X", gqa_layers, atoi(heads_of(c)), 1, c > 0, 0) &&
           ref_dumps_agree(&d, g, m2, g, pair), "gqa --kv-heads 1 and mqa on the same files (renamed), case %d: "
           "out.npy and attn.npy agree within what float32 rounding allows", c);
        ref_dump_free(&d);
    }
}

/* Without chapter 5's mha there is nothing to compare with: the n tests are
 * skipped, so that the exercise keeps its count. */
static int have_mha(int n) {
    if (file_exists(program_path("mha"))) return 1;
    skip(n, "chapter 5's %s is not built, to compare with", program_path("mha"));
    return 0;
}

static void test_is_mha(const char *tmp) {
    if (!have_mha(3)) return;
    char g[600], h[600];
    for (int c = 0; c < 3; c++) {
        const char *argv[24];
        snprintf(g, sizeof g, "%s/gh-%d", tmp, c);
        snprintf(h, sizeof h, "%s/h-%d", tmp, c);
        int status = run("gqa", gqa_argv(argv, c, heads_of(c), g));
        status |= run("mha", ARGS("--load", g, "--heads", heads_of(c), "--dump", h, "--quiet"));
        if (status) diag("mha: %s", run_err);
        RefDump d = {0};
        char pair[120];
        snprintf(pair, sizeof pair, "case %d: gqa --kv-heads H's and mha's", c);
        int H = atoi(heads_of(c));
        ok(status == 0 && ref_dump_case(&d, g, "X", "X", "X", gqa_layers, H, H, c > 0, 0) &&
           ref_dumps_agree(&d, g, h, g, pair), "gqa --kv-heads H and mha on the same files, case %d: out.npy and "
           "attn.npy agree within what float32 rounding allows", c);
        ref_dump_free(&d);
    }
}

/* A query that sees nothing: -1e20 makes it uniform, -inf NaN; the rest still agrees. */
static void test_nan_unlike_mha(const char *tmp) {
    if (!have_mha(1)) return;
    char g[600], h[600];
    snprintf(g, sizeof g, "%s/gh-nan", tmp);
    snprintf(h, sizeof h, "%s/h-nan", tmp);
    int status = run("gqa", ARGS("--heads", "4", "--kv-heads", "4", "--dump", g, "--quiet"));
    mkdir(g, 0777);                                                      /* there even after a stub */
    Tensor rows = tensor_new(4, (int[]){ 1, 1, 4, 1 });
    for (int t = 0; t < 4; t++) rows.data[t] = t != 2;                    /* query 2 sees nothing */
    save_npy(g, "attention_mask", &rows);
    tensor_free(&rows);
    status |= run("gqa", ARGS("--load", g, "--heads", "4", "--kv-heads", "4", "--dump", g, "--quiet"));
    status |= run("mha", ARGS("--load", g, "--heads", "4", "--dump", h, "--quiet"));
    Tensor ga = load_written(g, "attn"), ha = load_written(h, "attn");
    RefDump d = {0};
    int differs_right = status == 0 && ga.data && ha.data && ga.size == ha.size &&
                        ref_dump_case(&d, g, "X", "X", "X", gqa_layers, 4, 4, 0, 0) && d.natt == ga.size;
    for (long i = 0; differs_right && i < ga.size; i++) {
        int t = (int)(i / 4 % 4);
        differs_right &= t == 2 ? isnan(ga.data[i]) && ha.data[i] == 0.25f
                                : tap_close_enough(ga.data[i], ha.data[i], 2 * d.eatt[i], 0);
    }
    ok(differs_right, "a fully hidden query: mha's row is uniform (-1e20), gqa's NaN (-inf); every other weight the "
       "same, within what float32 rounding allows");
    ref_dump_free(&d);
    tensor_free(&ga); tensor_free(&ha);
}

static void test_program(const char *tmp) {
    char d1[600], d2[600], never[600], p1[1400];
    snprintf(d1, sizeof d1, "%s/one", tmp);
    snprintf(d2, sizeof d2, "%s/two", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    int status = run("gqa", ARGS("--batch", "2", "--seq", "5", "--dim", "12", "--heads", "6", "--kv-heads", "3",
                                 "--causal", "--dump", d1));
    ok(status == 0 && strstr(run_out, "GroupedQueryAttention(dim=12, heads=6, kv_heads=3)") &&
       strstr(run_out, "0-1 -> 0, 2-3 -> 1, 4-5 -> 2") && strstr(run_out, "cached per position: 12 numbers of K and V (MHA: 24)"),
       "gqa runs and prints which query heads read which key/value head");
    mkdir(d1, 0777);                  /* there even if the run stopped at a stub, for the files written below */
    mkdir(d2, 0777);
    Tensor k = load_written(d1, "k_proj.weight"), a = load_written(d1, "attn"), mask = load_written(d1, "attention_mask");
    ok(k.ndim == 2 && k.shape[0] == 6 && k.shape[1] == 12 && a.ndim == 4 && a.shape[0] == 2 && a.shape[1] == 6 &&
       a.shape[2] == 5 && a.shape[3] == 5 && mask.ndim == 2,
       "--dump writes k_proj.weight (G*hd, D) = (6, 12), attn (B, H, T, T) and the (T, T) mask");
    tensor_free(&k); tensor_free(&a); tensor_free(&mask);

    refuses(program_path("gqa"), ARGS("--load", d1, "--heads", "6", "--dump", never), "--load needs --kv-heads",
            "--load without --kv-heads is refused: the files do not say G without H");
    status = run("gqa", ARGS("--load", d1, "--heads", "6", "--kv-heads", "3", "--dump", d2, "--quiet"));
    ok(status == 0 && same_results(d1, d2), "--load with an agreeing --kv-heads 3: same bytes");

    refuses(program_path("gqa"), ARGS("--heads", "4", "--kv-heads", "3", "--dump", never), "does not divide --heads",
            "--kv-heads 3 with --heads 4 is refused");
    refuses(program_path("gqa"), ARGS("--heads", "4", "--kv-heads", "8", "--dump", never), "does not divide --heads",
            "--kv-heads 8 with --heads 4 is refused");
    refuses(program_path("gqa"), ARGS("--heads", "3", "--kv-heads", "1", "--dump", never), "does not divide --dim",
            "--heads 3 with --dim 8 is refused");
    refuses(program_path("gqa"), ARGS("--load", d1, "--heads", "6", "--kv-heads", "2", "--dump", never),
            "k_proj.weight.npy: shape (6, 12), expected (4, 12)",
            "--kv-heads 2 beside a dump with G = 3 is refused, naming k_proj.weight and both shapes");
    refuses(program_path("gqa"), ARGS("--load", d1, "--heads", "3", "--kv-heads", "3", "--dump", never),
            "k_proj.weight.npy: shape (6, 12), expected (12, 12)",
            "--heads 3 beside that dump is refused: with hd = 4, k_proj's 6 rows are no G*hd it could say");
    refuses(program_path("gqa"), ARGS("--train"), "--train", "--train is refused: this GQA has no dropout");

    Tensor odd = tensor_new2(5, 12);                                     /* 5 rows: not a multiple of hd = 2 */
    save_npy(d1, "k_proj.weight", &odd);
    tensor_free(&odd);
    refuses(program_path("gqa"), ARGS("--load", d1, "--heads", "6", "--kv-heads", "3", "--dump", never),
            "k_proj.weight.npy: shape (5, 12), expected (6, 12)",
            "a k_proj.weight whose rows are not a multiple of hd is refused, naming it and both shapes");
    Tensor four = tensor_new2(4, 12), four_b = tensor_new1(4);         /* k says G = 2, v still has G = 3 */
    save_npy(d1, "k_proj.weight", &four);
    save_npy(d1, "k_proj.bias", &four_b);
    tensor_free(&four); tensor_free(&four_b);
    refuses(program_path("gqa"), ARGS("--load", d1, "--heads", "6", "--kv-heads", "2", "--dump", never),
            "v_proj.weight.npy: shape (6, 12), expected (4, 12)",
            "a v_proj.weight of another shape than k_proj's is refused, naming the file");
    Tensor bad = tensor_new3(2, 5, 5);                                    /* (B, T, T): B = 2 meets H = 6 */
    save_npy(d2, "attention_mask", &bad);
    tensor_free(&bad);
    refuses(program_path("gqa"), ARGS("--load", d2, "--heads", "6", "--kv-heads", "3", "--dump", never),
            "attention_mask.npy: shape (2, 5, 5) does not broadcast to the scores (B, H, T, T) = (2, 6, 5, 5)",
            "a (B, T, T) mask is refused against (B, H, T, T), naming the file and both shapes");
    snprintf(p1, sizeof p1, "%s/attention_mask.npy", d2);
    remove(p1);
    ok(!file_exists(never), "no refused run left anything behind: the --dump directory was never made");
}

/* ---- the case set by hand: gqa --example two-groups ---------------------- */

/* The vocabulary index of the word in row t of the sentence's X (1, T, 16). */
static int word_at(const Tensor *x, int t) {
    for (int w = 0; w < WORDS; w++)
        if (x->data[t * SENTENCE_DIM + w] == 1.0f) return w;
    return -1;
}

static int is_noun(const Tensor *x, int s) {
    const char *w = vocabulary[word_at(x, s)];
    return !strcmp(w, "cat") || !strcmp(w, "dog");
}

/* The least weight map (T, T) puts in a row on the keys that pick(x, t, s) chooses, and
 * whether each row shares it equally among them. */
static double least_on_keys(const float *map, const Tensor *x, int T, int (*pick)(const Tensor *, int, int),
                            int *equal) {
    double least = 1;
    for (int t = 0; t < T; t++) {
        double on = 0, one = -1;
        for (int s = 0; s < T; s++) {
            if (!pick(x, t, s)) continue;
            on += map[t * T + s];
            if (one < 0) one = map[t * T + s];
            *equal &= fabs(map[t * T + s] - one) <= 1e-6;
        }
        least = fmin(least, on);
    }
    return least;
}

static int key_before(const Tensor *x, int t, int s) { (void)x; return s == (t ? t - 1 : 0); }
static int key_first(const Tensor *x, int t, int s) { (void)x; (void)t; return s == 0; }
static int key_same_word(const Tensor *x, int t, int s) { return word_at(x, s) == word_at(x, t); }
static int key_noun(const Tensor *x, int t, int s) { (void)t; return is_noun(x, s); }

/* Every test runs, and fails by its own name, when the program did not write the case
 * (in a handout, before Exercise 6.7 is done). */
static void test_two_groups(const char *tmp) {
    char dir[1024], mdir[1024];
    snprintf(dir, sizeof dir, "%s/two-groups", tmp);
    snprintf(mdir, sizeof mdir, "%s/two-groups-mqa", tmp);
    int status = run("gqa", ARGS("--example", "two-groups", "--quiet", "--dump", dir));
    ok(status == 0, "--example two-groups runs and dumps its case");
    Tensor x = load_written(dir, "X"), att = load_written(dir, "attn");     /* (1, T, 16), (1, 4, T, T) */
    int T = sentence_length(SENTENCE), equal[4] = { 1, 1, 1, 1 };
    int good = status == 0 && x.size == T * SENTENCE_DIM && att.size == 4 * T * T;
    double least[4] = {0};
    if (good) {
        least[0] = least_on_keys(att.data, &x, T, key_before, &equal[0]);
        least[1] = least_on_keys(att.data + T * T, &x, T, key_first, &equal[1]);
        least[2] = least_on_keys(att.data + 2 * T * T, &x, T, key_same_word, &equal[2]);
        least[3] = least_on_keys(att.data + 3 * T * T, &x, T, key_noun, &equal[3]);
    }
    ok(least[0] >= 0.99, "two-groups: head 0 (key head 0, places) puts at least 0.99 on key t - 1, row 0 on key 0 "
       "(%.4f)", least[0]);
    ok(least[1] >= 0.99, "two-groups: head 1 (key head 0, places) puts at least 0.99 on key 0 (%.4f)", least[1]);
    ok(least[2] >= 0.98 && equal[2], "two-groups: head 2 (key head 1, words) puts at least 0.98 of each row on the "
       "keys of its own word, shared equally (%.4f, the lone 'dog')", least[2]);
    ok(least[3] >= 0.99 && equal[3], "two-groups: head 3 (key head 1, words) puts at least 0.99 of each row on the "
       "nouns, cat and dog, shared equally (%.4f)", least[3]);
    if (!file_exists(program_path("mqa"))) {
        skip(1, "%s is not built, to compare with", program_path("mqa"));
    } else {
        status = run("mqa", ARGS("--example", "shared-key", "--quiet", "--dump", mdir));
        Tensor m = load_written(mdir, "attn");                             /* (1, 4, T, T) */
        long map = (long)T * T;
        RefDump d = {0};
        int near = good && status == 0 && m.size == att.size &&
                   ref_dump_case(&d, dir, "X", "X", "X", gqa_layers, 4, 2, 0, 0) && d.natt == att.size;
        for (long i = 0; near && i < 2 * map; i++)       /* gqa's heads 0 and 1 against mqa's 0 and 2 */
            near = tap_close_enough(att.data[i], m.data[i < map ? i : i + map], 2 * d.eatt[i], 0);
        ok(near, "two-groups: group 0's maps are mqa --example shared-key's heads 0 and 2, within what float32 "
           "rounding allows");
        if (good && status == 0 && m.size == att.size) {
            same_bits_note(att.data, m.data, map, "two-groups: gqa's head 0 and mqa --example shared-key's head 0");
            same_bits_note(att.data + map, m.data + 2 * map, map, "two-groups: gqa's head 1 and mqa's head 2");
        }
        ref_dump_free(&d);
        tensor_free(&m);
    }
    tensor_free(&x); tensor_free(&att);
}

int main(void) {
    char tmp[] = "/tmp/abh-gqa-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    (void)gqa_print;                                      /* tested through the program */

    /* Exercise 6.7 (each group's query rows against its key head): the tests
     * that say it is done, the agreements with mqa and mha among them */
    EXERCISE("6.7", 21, test_against_reference());
    EXERCISE("6.7", 1, test_grouping_is_repeat());
    EXERCISE("6.7", 3, test_is_mqa(tmp));
    EXERCISE("6.7", 3, test_is_mha(tmp));
    EXERCISE("6.7", 6, test_two_groups(tmp));
    TEST_GROUP(test_mask_shapes());
    TEST_GROUP(test_nan_unlike_mha(tmp));
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
