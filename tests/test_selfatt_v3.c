/* Tests for chapter 3: SelfAttV3 (masks and dropout) and fill_values.
 *
 * Chapter 2's and chapter 3's programs are included with TESTING defined, so
 * their functions can be called side by side (V3 without mask or dropout must
 * be V2 to the bit). The reference, tests/reference.h's, is a separate
 * double-precision loop that never fills anything: hidden keys are simply left
 * out of the softmax.
 * The command-line checks run the real programs, $ABH_BIN/selfatt_v3 and
 * $ABH_BIN/fill_values (ABH_BIN defaults to build/bin). */
#define TESTING
#include "selfatt_v2.c"
#include "selfatt_v3.c"
#include "fill_values.c"
#include "tap.h"
#include "run.h"
#define MODULE_SELFATT_V2
#define MODULE_SELFATT_V3
#include "reference.h"

/* ---- an independent reference, in double precision ---------------------- */

/* SelfAttV3's layers for tests/reference.h: q, k and v from proj's rows 0..D-1,
 * D..2D-1 and 2D..3D-1. */
static RefWeights weights_of(const SelfAttV3 *m) {
    int D = m->dim;
    const float *w = m->proj_w.data, *b = m->proj_b.data;
    return (RefWeights){ w, b, w + D * D, b + D, w + 2 * D * D, b + 2 * D, m->out_w.data, m->out_b.data };
}

/* SelfAttV3 in eval mode. vis (B, T, T): 1 where query t of sequence b may see key
 * s, or NULL for no mask. Hidden keys are left out of the softmax and get weight 0;
 * a row with no visible key is uniform, which is what -1e20 makes of it. */
static RefCase case_of(const SelfAttV3 *m, const float *x, const float *vis, int B, int T, const float *out,
                       const float *att) {
    return (RefCase){ weights_of(m), x, x, x, m->dim, { .B = B, .T = T, .H = 1, .hd = m->dim, .vis = vis }, out, att };
}

/* The same, and in eout and eatt how far a float32 pass may be from it (reference.h). */
static void reference(double *out, double *eout, double *att, double *eatt, const SelfAttV3 *m, const float *x,
                      const float *vis, int B, int T) {
    RefCase c = case_of(m, x, vis, B, T, NULL, NULL);
    ref_attention_err(out, eout, att, eatt, &c.w, x, x, x, m->dim, &c.a);
}

/* What is wrong with a failing mask pass (Exercise 3.6): the usual suspects, and the
 * ways of broadcasting a mask that are not PyTorch's, each spelled out as its own
 * (B, T, T) pattern: the mask read as if it were (B, T, T) already, repeated as
 * numpy.resize repeats it, its axes lined up from the left. */
static void explain_mask(const RefCase *student, const Tensor *mask) {
    int B = student->a.B, T = student->a.T;
    long n = (long)B * T * T;
    float *alike[3] = { NULL, NULL, NULL };
    RefSuspect extra[3];
    int k = 0;
    const char *why[3] = { "the mask was read as if it were (B, T, T) already, element i of the scores against element "
                           "i of the mask: a smaller mask must broadcast, its axes lined up from the right",
                           "the mask was repeated (element i % size, numpy.resize's rule): PyTorch broadcasts, "
                           "stretching each axis of size 1 and lining the axes up from the right",
                           "the mask's axes were lined up from the left: PyTorch lines them up from the right, the "
                           "keys' axis last" };
    for (int rule = 0; mask && rule < 3; rule++) {
        if (rule == 0 && mask->size < n) continue;
        float *vis = malloc(sizeof *vis * (size_t)n);
        int at[3];
        for (long i = 0; i < n; i++) {
            long j = rule == 0 ? i : i % mask->size;
            if (rule == 2) {
                at[0] = (int)(i / T / T), at[1] = (int)(i / T % T), at[2] = (int)(i % T), j = 0;
                for (int d = 0; d < mask->ndim; d++) j = j * mask->shape[d] + (mask->shape[d] == 1 ? 0 : at[d]);
                if (j >= mask->size) j = 0;
            }
            vis[i] = mask->data[j] != 0.0f;
        }
        alike[k] = vis;
        extra[k] = (RefSuspect){ .c = *student };
        extra[k].c.a.vis = vis;
        snprintf(extra[k].what, sizeof extra[k].what, "%s", why[rule]);
        k++;
    }
    ref_explain(student, extra, k);
    for (int i = 0; i < 3; i++) free(alike[i]);
}

/* ---- cases ----------------------------------------------------------------- */

/* A module, its input and the notebook's padding mask, made through the
 * program's own list of tensors as its main makes them (tests/reference.h). */
static void make_case(SelfAttV3 *m, Tensor *x, Tensor *mask, int B, int T, int D, uint64_t seed) {
    Args a = { .batch = B, .seq = T, .dim = D, .seed = seed };
    make_module(m, x, mask, &a);
}

static int same_floats(const float *a, const float *b, long n) { return memcmp(a, b, (size_t)n * sizeof(float)) == 0; }

/* ---- the masked forward against the reference ------------------------------ */

static void check_masked(const char *what, const SelfAttV3 *m, const Tensor *x, const Tensor *mask, int B, int T) {
    int D = m->dim;
    long n = (long)B * T * T;
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    float *vis = malloc((size_t)n * sizeof *vis);
    double *ratt = calloc(n, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
    if (mask) ref_expand(vis, mask, 3, (int[]){ B, T, T });
    STUDENT(selfatt_v3_forward(out.data, att.data, drop.data, m, x->data, mask, 0.0f, NULL, B, T));
    double *eatt = ref_new(n), *eout = ref_new(out.size);
    reference(rout, eout, ratt, eatt, m, x->data, mask ? vis : NULL, B, T);
    tap_layout("b t d", 3, out.shape);
    int good = within_ok(out.data, rout, eout, out.size, "%s: the output matches a double-precision reference, within "
                         "what float32 rounding allows", what);
    tap_layout("b t s", 3, att.shape);
    good &= within_ok(att.data, ratt, eatt, n, "%s: the weights match the reference", what);
    long leaked = 0, rows = 0, first_leak = -1;
    double worst = 0, allowed = 1;                 /* the worst row, against the sum of its weights' bounds */
    for (long r = 0; r < (long)B * T; r++) {
        double sum = 0, bound = 0;
        int any = 0;
        for (int s = 0; s < T; s++) any |= !mask || vis[r * T + s];
        if (!any) continue;                            /* fully hidden: uniform, tested below */
        for (int s = 0; s < T; s++) {
            if (mask && !vis[r * T + s] && att.data[r * T + s] != 0.0f && !leaked++) first_leak = r * T + s;
            sum += att.data[r * T + s], bound += eatt[r * T + s];
        }
        rows++;
        if (fabs(sum - 1) / bound > worst / allowed) worst = fabs(sum - 1), allowed = bound;
    }
    ok(leaked == 0, "%s: every hidden key of a row with a visible key gets exactly 0 weight", what);
    if (leaked) diag("%ld hidden keys got weight; the first, key %ld of query %ld of sequence %ld, has %.2g", leaked,
                     first_leak % T, first_leak / T % T, first_leak / T / T, att.data[first_leak]);
    ok(worst <= allowed, "%s: each of the %ld rows with a visible key sums to 1", what, rows);
    if (worst > allowed) diag("worst row is off by %g, more than its weights' bounds add up to (%.2g)", worst, allowed);
    RefCase student = case_of(m, x->data, mask ? vis : NULL, B, T, out.data, att.data);
    if (!good || leaked || worst > allowed) explain_mask(&student, mask);
    free(vis); free(ratt); free(rout); free(eatt); free(eout);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out);
}

static void test_against_reference(void) {
    struct { int B, T, D, causal; const char *what; } cases[] = {
        { 3, 4, 2, 0, "the notebook's padded batch (3, 4, 2)" },
        { 2, 7, 5, 0, "padding (2, 7, 5)" },
        { 1, 9, 8, 1, "padding and --causal (1, 9, 8)" },
        { 5, 6, 3, 1, "padding and --causal (5, 6, 3)" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        SelfAttV3 m = {0};
        Tensor x, mask;
        make_case(&m, &x, &mask, cases[c].B, cases[c].T, cases[c].D, 10 + c);
        mask_final(&mask, cases[c].causal, cases[c].T, cases[c].T);
        check_masked(cases[c].what, &m, &x, &mask, cases[c].B, cases[c].T);
        tensor_free(&x); tensor_free(&mask);
        free_module(&m);
    }
    /* a scattered mask with some rows fully hidden: uniform there */
    SelfAttV3 m = {0};
    Tensor x, mask;
    make_case(&m, &x, &mask, 3, 5, 4, 99);
    for (long i = 0; i < mask.size; i++) mask.data[i] = ref_pattern(i, 1);
    for (int s = 0; s < 5; s++) mask.data[(1 * 5 + 2) * 5 + s] = 0;    /* query 2 of sequence 1 sees nothing */
    check_masked("a scattered mask with a fully hidden row", &m, &x, &mask, 3, 5);
    Tensor att = tensor_new3(3, 5, 5), drop = tensor_new3(3, 5, 5), out = tensor_new3(3, 5, 4);
    STUDENT(selfatt_v3_forward(out.data, att.data, drop.data, &m, x.data, &mask, 0.0f, NULL, 3, 5));
    int uniform = 1;
    for (int s = 0; s < 5; s++) uniform &= att.data[(1 * 5 + 2) * 5 + s] == 0.2f;
    ok(uniform, "a row with every key hidden by -1e20 is uniform: 0.2 each of 5, exactly");
    tensor_free(&att); tensor_free(&drop); tensor_free(&out);
    tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* ---- the three fill policies ------------------------------------------------ */

static void test_fill_policies(void) {
    Tensor att = tensor_new3(3, 3, 4);                 /* (3 policies, T = 3, S = 4); zeros if a stub stops it */
    STUDENT(tensor_free(&att); att = fill_attend());
    const float *e20 = att.data, *inf = att.data + 12, *add = att.data + 24;
    ok(att.ndim == 3 && att.shape[0] == 3 && att.shape[1] == 3 && att.shape[2] == 4,
       "fill_values attends under 3 policies, 3 queries, 4 keys");
    /* query 0: key 3 hidden; in double, softmax(1, 2, 0.5) */
    double z = exp(1.0) + exp(2.0) + exp(0.5), want0[4] = { exp(1.0) / z, exp(2.0) / z, exp(0.5) / z, 0 };
    close_ok(e20, want0, 4, 1e-7, 0, "-1e20: an ordinary row is the softmax of its visible scores");
    ok(e20[3] == 0.0f, "-1e20: the hidden key gets exactly 0");
    ok(same_floats(inf, e20, 8), "-inf: rows with a visible key are the same bits as -1e20");
    ok(same_floats(add, e20, 4), "add -10000: an ordinary row is the same bits as -1e20 (exp underflows to 0)");
    /* query 1: the hidden key's score is 10002, shifted to 2 */
    double z1 = exp(0.0) + exp(1.0) + 2 * exp(2.0);
    double want1[4] = { 1 / z1, exp(1.0) / z1, exp(2.0) / z1, exp(2.0) / z1 };
    close_ok(add + 4, want1, 4, 1e-7, 0, "add -10000: a hidden key scored 10002 leaks, weighing like score 2");
    ok(add[7] == add[6] && add[7] > 0.39f, "add -10000: the leaking hidden key weighs exactly as much as the best visible one");
    ok(e20[7] == 0.0f && inf[7] == 0.0f, "-1e20 and -inf: the same hidden key gets exactly 0");
    /* query 2: every key hidden */
    int quarter = 1, nan = 1;
    for (int s = 0; s < 4; s++) quarter &= e20[8 + s] == 0.25f, nan &= isnan(inf[8 + s]);
    ok(quarter, "-1e20: a fully hidden row is uniform, 0.25 exactly");
    ok(nan, "-inf: a fully hidden row is NaN, as in PyTorch");
    float unmasked[4] = { 1.0f, 2.0f, 0.5f, 3.0f };
    STUDENT(softmax_lastdim(unmasked, 1, 4));
    ok(same_floats(add + 8, unmasked, 4), "add -10000: a fully hidden row is the softmax with no mask at all, same bits");
    tensor_free(&att);

    /* where -10000 stops being exact: a row [0 visible, x hidden] */
    float lim[3][2] = { { 0, 9895 }, { 0, 9897 }, { 0, 9991 } };
    Tensor row = tensor_new2(1, 2), mask = tensor_new2(1, 2);
    mask.data[0] = 1;
    float hidden[3];
    for (int i = 0; i < 3; i++) {
        memcpy(row.data, lim[i], sizeof lim[i]);
        STUDENT(fill_hide(&row, &mask, FILL_ADD_NEG_10000); softmax_lastdim(row.data, 1, 2));
        hidden[i] = row.data[1];
    }
    ok(hidden[0] == 0.0f, "add -10000: a hidden score 9895 above the visible one still gets exactly 0");
    ok(hidden[1] > 0.0f && hidden[1] < 1e-44f, "add -10000: 9897 above gets a subnormal weight (exp(-103) > 0)");
    ok(hidden[2] > 1e-4f, "add -10000: 9991 above gets more than 1e-4");
    tensor_free(&row); tensor_free(&mask);
}

/* ---- mask shapes: every legal one is the explicit (B, T, T) mask ----------- */

static void test_mask_shapes(void) {
    int B = 3, T = 4, D = 5;
    static const int shapes[][4] = {   /* ndim, sizes */
        { 0 }, { 1, 1 }, { 1, 4 }, { 2, 1, 4 }, { 2, 4, 1 }, { 2, 4, 4 }, { 3, 1, 1, 4 }, { 3, 3, 1, 4 },
        { 3, 3, 4, 1 }, { 3, 1, 4, 4 }, { 3, 3, 4, 4 }, { 3, 3, 1, 1 }, { 3, 1, 4, 1 },
    };
    SelfAttV3 m = {0};
    Tensor x, pad;
    make_case(&m, &x, &pad, B, T, D, 5);
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        Tensor mask = tensor_new(shapes[c][0], shapes[c] + 1), full = tensor_new3(B, T, T);
        for (long i = 0; i < mask.size; i++) mask.data[i] = ref_pattern(i, (unsigned)c);
        ref_expand(full.data, &mask, 3, (int[]){ B, T, T });
        Tensor a1 = tensor_new3(B, T, T), a2 = tensor_new3(B, T, T), d = tensor_new3(B, T, T);
        Tensor o1 = tensor_new3(B, T, D), o2 = tensor_new3(B, T, D);
        STUDENT(selfatt_v3_forward(o1.data, a1.data, d.data, &m, x.data, &mask, 0.0f, NULL, B, T));
        STUDENT(selfatt_v3_forward(o2.data, a2.data, d.data, &m, x.data, &full, 0.0f, NULL, B, T));
        char s[64];
        shape_str(s, sizeof s, mask.ndim, mask.shape);
        int same = same_floats(a1.data, a2.data, a1.size) && same_floats(o1.data, o2.data, o1.size);
        ok(same, "a mask of shape %s gives exactly what its explicit (3, 4, 4) expansion gives", s);
        if (!same && !tap_stub[0]) {
            RefCase student = case_of(&m, x.data, full.data, B, T, o1.data, a1.data);
            explain_mask(&student, &mask);
        }
        tensor_free(&mask); tensor_free(&full); tensor_free(&a1); tensor_free(&a2); tensor_free(&d);
        tensor_free(&o1); tensor_free(&o2);
    }
    tensor_free(&x); tensor_free(&pad);
    free_module(&m);
}

/* ---- the (B, T) trap ---------------------------------------------------------- */

static void test_trap(void) {
    int B = 4, T = 4, D = 3;                            /* B == T: PyTorch says nothing */
    SelfAttV3 m = {0};
    Tensor x, repeated;
    make_case(&m, &x, &repeated, B, T, D, 8);           /* the notebook's (B, T, T), lengths 3, 2, 1, 1 */
    Tensor pad = tensor_new2(B, T);                     /* (B, T): the mask before the repeat */
    for (int b = 0; b < B; b++)
        for (int s = 0; s < T; s++) pad.data[b * T + s] = s < mask_length(b, T);
    ok(broadcastable(pad.shape, 2, (int[]){ B, T, T }, 3), "with B == T, a (B, T) mask broadcasts: nothing refuses it");
    Tensor a1 = tensor_new3(B, T, T), a2 = tensor_new3(B, T, T), d = tensor_new3(B, T, T), o = tensor_new3(B, T, D);
    STUDENT(selfatt_v3_forward(o.data, a1.data, d.data, &m, x.data, &repeated, 0.0f, NULL, B, T));
    STUDENT(selfatt_v3_forward(o.data, a2.data, d.data, &m, x.data, &pad, 0.0f, NULL, B, T));
    ok(!same_floats(a1.data, a2.data, a1.size), "with B == T, the (B, T) mask gives other weights than the repeated one");
    /* sequence 3 has one real position, but as a (T, S) mask pad[0] lets its query 0 see keys 0..2 */
    ok(a1.data[(3 * T + 0) * T + 1] == 0.0f && a2.data[(3 * T + 0) * T + 1] > 0.0f,
       "the unrepeated mask lets query 0 of a length-1 sequence see padding key 1");
    /* and sequence 0 (length 3): its query 3 sees only key 0, as pad[3] says */
    ok(a2.data[(0 * T + 3) * T + 0] == 1.0f && a1.data[(0 * T + 3) * T + 0] < 0.5f,
       "the unrepeated mask hides real keys 1 and 2 from query 3 of sequence 0");
    tensor_free(&a1); tensor_free(&a2); tensor_free(&d); tensor_free(&o); tensor_free(&pad);
    tensor_free(&x); tensor_free(&repeated);
    free_module(&m);
}

/* ---- the masks the program makes --------------------------------------------- */

static void test_masks(void) {
    Tensor pad = mask_padding(3, 4);
    static const float notebook[3][4] = { { 1, 1, 1, 0 }, { 1, 1, 0, 0 }, { 1, 0, 0, 0 } };
    int good = pad.ndim == 3 && pad.shape[0] == 3 && pad.shape[1] == 4 && pad.shape[2] == 4;
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 4; t++) good &= !memcmp(pad.data + (b * 4 + t) * 4, notebook[b], sizeof notebook[b]);
    ok(good, "the default mask is the notebook's: lengths 3, 2, 1 of 4, each row repeated per query");
    ok(mask_length(0, 6) == 5 && mask_length(3, 6) == 2 && mask_length(4, 6) == 1 && mask_length(9, 6) == 1 &&
       mask_length(0, 1) == 1, "sequence b has max(1, T - 1 - b) real positions");
    tensor_free(&pad);

    Tensor none = {0};
    mask_final(&none, 1, 5, 5);
    good = none.ndim == 2 && none.shape[0] == 5 && none.shape[1] == 5;
    for (int t = 0; t < 5 && good; t++)
        for (int s = 0; s < 5; s++) good &= none.data[t * 5 + s] == (s <= t);
    ok(good, "--causal with no mask is the (T, T) lower triangle");
    tensor_free(&none);

    Tensor keys = tensor_new3(2, 1, 4);                 /* (B, 1, T), values 2, -1, NaN, 0 */
    float vals[8] = { 2, -1, NAN, 0, 0, 1, 1, 1 };
    memcpy(keys.data, vals, sizeof vals);
    Tensor plain = keys;                                /* binarised copy, without causal */
    plain.data = malloc(sizeof vals);
    memcpy(plain.data, vals, sizeof vals);
    mask_final(&plain, 0, 4, 4);
    float bin[8] = { 1, 1, 1, 0, 0, 1, 1, 1 };
    ok(same_floats(plain.data, bin, 8) && plain.ndim == 3, "any nonzero mask value (2, -1, NaN) means visible: 1");
    free(plain.data);
    mask_final(&keys, 1, 4, 4);
    good = keys.ndim == 3 && keys.shape[0] == 2 && keys.shape[1] == 4 && keys.shape[2] == 4;
    for (int b = 0; b < 2 && good; b++)
        for (int t = 0; t < 4; t++)
            for (int s = 0; s < 4; s++) good &= keys.data[(b * 4 + t) * 4 + s] == (s <= t && bin[b * 4 + s]);
    ok(good, "--causal ANDs the triangle into a (B, 1, T) mask, giving (B, T, T)");
    tensor_free(&keys);
}

/* ---- dropout -------------------------------------------------------------------- */

static void test_dropout(void) {
    int B = 4, T = 64, D = 8;
    long n = (long)B * T * T;
    SelfAttV3 m = {0};
    Tensor x, pad;
    make_case(&m, &x, &pad, B, T, D, 21);
    Tensor att = tensor_new3(B, T, T), drop = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    Tensor att2 = tensor_new3(B, T, T), drop2 = tensor_new3(B, T, T), out2 = tensor_new3(B, T, D);
    Rng r1, r2;

    /* eval: p = 0 never draws and changes nothing */
    rng_seed(&r1, 1); rng_seed(&r2, 2);
    STUDENT(selfatt_v3_forward(out.data, att.data, drop.data, &m, x.data, NULL, 0.0f, &r1, B, T));
    STUDENT(selfatt_v3_forward(out2.data, att2.data, drop2.data, &m, x.data, NULL, 0.0f, &r2, B, T));
    ok(same_floats(drop.data, att.data, n), "eval mode: the weights that multiply V are the softmax itself");
    ok(same_floats(out.data, out2.data, out.size) && r1.state == 1 && r2.state == 2,
       "eval mode: the output does not depend on the dropout generator, which is never drawn from");

    /* train, p = 0.1 */
    float p = 0.1f;
    rng_seed(&r1, 7);
    STUDENT(selfatt_v3_forward(out2.data, att2.data, drop.data, &m, x.data, NULL, p, &r1, B, T));
    ok(same_floats(att2.data, att.data, n), "train mode: att (what --dump writes) is still the weights before dropout");
    long kept = 0, exact = 1;
    for (long i = 0; i < n; i++) {
        if (drop.data[i] == 0.0f) continue;
        kept++;
        exact &= drop.data[i] == att.data[i] * (1.0f / (float)(1.0 - p));   /* PyTorch's scaling */
    }
    double mean = n * (1 - p), sigma = sqrt(n * p * (1 - p));
    ok(fabs(kept - mean) <= 4 * sigma, "train mode: %ld of %ld weights kept, within 4 sigma of (1 - p) n = %.0f", kept, n, mean);
    ok(exact, "train mode: every kept weight is exactly w * (1 / (1 - p)) in float, as PyTorch scales it, every other one exactly 0");
    double *w = ref_doubles(drop.data, n), *rout = malloc((size_t)out.size * sizeof *rout);
    RefWeights layers = weights_of(&m);
    ref_output(rout, w, &layers, x.data, D, &(RefAttn){ .B = B, .T = T, .H = 1, .hd = D });
    close_ok(out2.data, rout, out.size, 1e-5, 0, "train mode: the output is output_proj(dropped weights @ V)");

    /* same seed, same mask; another seed, another mask */
    rng_seed(&r1, 7);
    STUDENT(selfatt_v3_forward(out.data, att.data, drop2.data, &m, x.data, NULL, p, &r1, B, T));
    ok(same_floats(drop.data, drop2.data, n), "the same dropout seed drops the same weights");
    rng_seed(&r1, 8);
    STUDENT(selfatt_v3_forward(out.data, att.data, drop2.data, &m, x.data, NULL, p, &r1, B, T));
    long differ = 0;
    for (long i = 0; i < n; i++) differ += (drop.data[i] == 0.0f) != (drop2.data[i] == 0.0f);
    ok(differ > n / 20, "another dropout seed drops other weights (%ld of %ld differ)", differ, n);

    /* p = 0.5: kept weights exactly doubled */
    rng_seed(&r1, 3);
    STUDENT(selfatt_v3_forward(out.data, att.data, drop.data, &m, x.data, NULL, 0.5f, &r1, B, T));
    exact = 1, kept = 0;
    for (long i = 0; i < n; i++) kept += drop.data[i] != 0, exact &= drop.data[i] == 0 || drop.data[i] == 2 * att.data[i];
    ok(exact && fabs(kept - n * 0.5) <= 4 * sqrt(n * 0.25), "p = 0.5: about half the weights kept, each exactly doubled");
    free(w); free(rout);
    tensor_free(&att); tensor_free(&drop); tensor_free(&out); tensor_free(&att2); tensor_free(&drop2);
    tensor_free(&out2); tensor_free(&x); tensor_free(&pad);
    free_module(&m);
}

/* ---- V3 with no mask and no dropout is V2 ---------------------------------------- */

static void test_is_v2(void) {
    static const int shapes[][3] = { { 3, 2, 4 }, { 3, 4, 2 }, { 1, 1, 1 }, { 2, 9, 16 } };
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int B = shapes[c][0], T = shapes[c][1], D = shapes[c][2];
        Args a = { .batch = B, .seq = T, .dim = D, .seed = 30 + c };
        SelfAttV2 m2 = {0};
        Tensor x;
        make_v2_module(&m2, &x, &a);
        SelfAttV3 m3 = { .dim = D, .proj_w = m2.proj_w, .proj_b = m2.proj_b, .out_w = m2.out_w, .out_b = m2.out_b };
        Tensor a2 = tensor_new3(B, T, T), o2 = tensor_new3(B, T, D);
        Tensor a3 = tensor_new3(B, T, T), d3 = tensor_new3(B, T, T), o3 = tensor_new3(B, T, D);
        STUDENT(selfatt_v2_forward(o2.data, a2.data, &m2, x.data, B, T));
        STUDENT(selfatt_v3_forward(o3.data, a3.data, d3.data, &m3, x.data, NULL, 0.0f, NULL, B, T));
        ok(same_floats(o2.data, o3.data, o2.size) && same_floats(a2.data, a3.data, a2.size),
           "with no mask and no dropout, SelfAttV3 is SelfAttV2 to the bit, (B, T, D) = (%d, %d, %d)", B, T, D);
        tensor_free(&a2); tensor_free(&o2); tensor_free(&a3); tensor_free(&d3); tensor_free(&o3);
        tensor_free(&x);
        free_v2_module(&m2);                           /* m3 only borrowed the weights */
    }
}

/* A .npy file of any dtype, written by hand: descr, shape, and n elements of size
 * bytes each at data, already little-endian. */
static void write_npy(const char *path, const char *descr, int ndim, const int *shape, const void *data, long n,
                      int size) {
    char dims[128] = "", header[256];
    for (int i = 0; i < ndim; i++)
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%d,%s", shape[i], i + 1 < ndim ? " " : "");
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims);
    while ((10 + len + 1) % 64) header[len++] = ' ';
    header[len++] = '\n';
    FILE *f = fopen(path, "wb");
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(len & 0xff, f); fputc(len >> 8, f);
    fwrite(header, 1, (size_t)len, f);
    fwrite(data, (size_t)size, (size_t)n, f);
    fclose(f);
}

static void test_program(const char *tmp) {
    char d1[600], d2[600], d3[600], never[600], p1[1100], p2[1100];
    snprintf(d1, sizeof d1, "%s/first", tmp);
    snprintf(d2, sizeof d2, "%s/second", tmp);
    snprintf(d3, sizeof d3, "%s/third", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);

    int status = run("selfatt_v3", ARGS("--seed", "42"));
    ok(status == 0 && strstr(run_out, "attention_mask (3, 4, 4)") && strstr(run_out, "attention_weight: tensor([[[") &&
       strstr(run_out, "output shape: (3, 4, 2)") && !strstr(run_out, "after dropout"),
       "run without flags, the program prints the notebook's case: mask (3, 4, 4), weights, output shape");
    status = run("selfatt_v3", ARGS("--train"));
    ok(status == 0 && strstr(run_out, "dropout p = 0.1 ") && strstr(run_out, "after dropout: tensor(") &&
       strstr(run_out, "row sums after dropout: tensor("), "--train alone uses p = 0.1 and prints the weights after dropout and their row sums");
    status = run("selfatt_v3", ARGS("--help"));
    ok(status == 0 && strstr(run_out, "--causal") && strstr(run_out, "--dropout") && strstr(run_out, "max(1, T - 1 - b)"),
       "--help lists the mask and dropout flags and the padding rule");

    /* dump, load, dump again: the same bytes */
    status = run("selfatt_v3", ARGS("--quiet", "--dump", d1));
    ok(status == 0 && !run_out[0], "--dump writes the default case");
    Tensor mask = status == 0 ? load_npy(d1, "attention_mask") : (Tensor){0}, pad = mask_padding(3, 4);
    ok(mask.ndim == 3 && same_floats(mask.data, pad.data, pad.size), "the dumped attention_mask is the notebook's (3, 4, 4) mask");
    tensor_free(&mask); tensor_free(&pad);
    status = run("selfatt_v3", ARGS("--load", d1, "--dump", d2, "--quiet"));
    const char *files[] = { "out", "attn", "X", "attention_mask", "proj.weight", "proj.bias", "output_proj.weight",
                            "output_proj.bias" };
    int all_same = status == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (!same_file(p1, p2)) { all_same = 0; diag("%s differs", files[i]); }
    }
    ok(all_same, "--load of a --dump reproduces every file byte for byte, the mask included");

    /* --train changes out, not attn */
    status = run("selfatt_v3", ARGS("--quiet", "--train", "--dropout", "0.5", "--dump", d3));
    snprintf(p1, sizeof p1, "%s/attn.npy", d1); snprintf(p2, sizeof p2, "%s/attn.npy", d3);
    int attn_same = same_file(p1, p2);
    snprintf(p1, sizeof p1, "%s/out.npy", d1); snprintf(p2, sizeof p2, "%s/out.npy", d3);
    ok(status == 0 && attn_same && !same_file(p1, p2), "--train leaves attn.npy (before dropout) alone and changes out.npy");
    snprintf(p1, sizeof p1, "%s/X.npy", d1); snprintf(p2, sizeof p2, "%s/X.npy", d3);
    ok(same_file(p1, p2), "--train does not change the X that a seed makes");

    /* --causal */
    status = run("selfatt_v3", ARGS("--quiet", "--batch", "2", "--seq", "6", "--dim", "3", "--causal", "--dump", d3));
    Tensor att = status == 0 ? load_npy(d3, "attn") : (Tensor){0};
    mask = status == 0 ? load_npy(d3, "attention_mask") : (Tensor){0};
    long upper = 0, nonzero_upper = 0;
    for (long i = 0; i < att.size; i++) {
        int s = (int)(i % 6), t = (int)(i / 6 % 6);
        if (s > t) upper++, nonzero_upper += att.data[i] != 0.0f;
    }
    ok(status == 0 && upper == 30 && nonzero_upper == 0, "--causal: every weight above the diagonal is exactly 0");
    int good = mask.ndim == 3 && mask.shape[0] == 2;
    for (long i = 0; i < mask.size && good; i++) {
        int s = (int)(i % 6), t = (int)(i / 6 % 6), b = (int)(i / 36);
        good &= mask.data[i] == (s <= t && s < mask_length(b, 6));
    }
    ok(good, "--causal with the default padding dumps their AND, (B, T, T)");
    tensor_free(&att); tensor_free(&mask);

    /* no mask file: no mask; --causal then makes a (T, T) one */
    snprintf(p1, sizeof p1, "%s/attention_mask.npy", d3);
    snprintf(p2, sizeof p2, "%s/attention_mask.npy", d2);
    remove(p1);
    remove(p2);
    status = run("selfatt_v3", ARGS("--load", d3, "--dump", d2));
    ok(status == 0 && strstr(run_out, "attention_mask none") && !file_exists(p2),
       "with --load and no attention_mask.npy there is no mask, and none is dumped");
    att = status == 0 ? load_npy(d2, "attn") : (Tensor){0};
    good = status == 0;
    for (long r = 0; r < att.size / 6; r++)
        for (int s = 0; s < 6; s++) good &= att.data[r * 6 + s] > 0.0f;
    ok(good, "with no mask every weight is positive");
    tensor_free(&att);
    status = run("selfatt_v3", ARGS("--load", d3, "--dump", d2, "--quiet", "--causal"));
    mask = status == 0 ? load_npy(d2, "attention_mask") : (Tensor){0};
    ok(status == 0 && mask.ndim == 2 && mask.shape[0] == 6 && mask.shape[1] == 6,
       "--causal with no mask file applies and dumps the (T, T) triangle");
    tensor_free(&mask);

    /* every dtype a mask file may have gives the same result (dump_tensor makes d1 if a
     * stopped run did not) */
    static const float keys[3][4] = { { 1, 1, 0, 1 }, { 1, 0, 0, 0 }, { 0, 1, 1, 1 } };
    Tensor m31 = tensor_new3(3, 1, 4);
    memcpy(m31.data, keys, sizeof keys);
    dump_tensor(d1, "attention_mask", &m31);
    status = run("selfatt_v3", ARGS("--load", d1, "--dump", d2, "--quiet"));
    snprintf(p2, sizeof p2, "%s/out.npy", d2);
    snprintf(p1, sizeof p1, "%s/out-f4.npy", tmp);
    rename(p2, p1);
    int64_t i8[12]; int32_t i4[12]; unsigned char u1[12]; double f8[12];
    for (int i = 0; i < 12; i++) {
        float v = m31.data[i];
        i8[i] = (int64_t)v * 7; i4[i] = -(int32_t)v; u1[i] = (unsigned char)(v * 255); f8[i] = v * 0.5;
    }
    struct { const char *descr; const void *data; int size; } kinds[] = {
        { "<i8", i8, 8 }, { "<i4", i4, 4 }, { "|b1", u1, 1 }, { "|u1", u1, 1 }, { "<f8", f8, 8 } };
    for (size_t k = 0; k < 5; k++) {
        unsigned char b1[12];
        for (int i = 0; i < 12; i++) b1[i] = u1[i] != 0;
        snprintf(p2, sizeof p2, "%s/attention_mask.npy", d1);
        write_npy(p2, kinds[k].descr, 3, (int[]){ 3, 1, 4 }, k == 2 ? (const void *)b1 : kinds[k].data, 12, kinds[k].size);
        status = run("selfatt_v3", ARGS("--load", d1, "--dump", d2, "--quiet"));
        snprintf(p2, sizeof p2, "%s/out.npy", d2);
        ok(status == 0 && same_file(p1, p2), "a (3, 1, 4) mask of dtype %s gives exactly what float32 ones and zeros give",
           kinds[k].descr);
    }
    tensor_free(&m31);

    /* illegal shapes, refused before anything is written */
    static const struct { int ndim, shape[4]; const char *why; } bad[] = {
        { 2, { 3, 4 }, "a (B, T) mask with B != T is refused" },
        { 3, { 2, 4, 4 }, "a (2, 4, 4) mask is refused when B = 3" },
        { 1, { 5 }, "a (5) mask is refused when T = 4" },
        { 4, { 1, 3, 4, 4 }, "a mask with more dimensions than the scores is refused" },
    };
    for (int k = 0; k < 4; k++) {
        Tensor t = tensor_new(bad[k].ndim, bad[k].shape);
        save_npy(d1, "attention_mask", &t);
        tensor_free(&t);
        refuses(program_path("selfatt_v3"), ARGS("--load", d1, "--dump", never), "does not broadcast", bad[k].why);
    }
    ok(!file_exists(never), "a refused mask leaves nothing behind: the --dump directory was never made");

    /* with B == T the (B, T) mask is accepted, and means something else */
    status = run("selfatt_v3", ARGS("--batch", "4", "--seq", "4", "--dim", "2", "--quiet", "--dump", d2));
    mask = status == 0 ? load_npy(d2, "attention_mask") : tensor_new3(4, 4, 4);
    Tensor rows = tensor_new2(4, 4);
    for (int b = 0; b < 4; b++) memcpy(rows.data + b * 4, mask.data + b * 16, 4 * sizeof(float));   /* pad[b] */
    dump_tensor(d2, "attention_mask", &rows);
    int made = status == 0;
    status = run("selfatt_v3", ARGS("--load", d2, "--dump", d3, "--quiet"));
    Tensor right = made ? load_npy(d2, "attn") : (Tensor){0}, wrong = status == 0 ? load_npy(d3, "attn") : (Tensor){0};
    ok(made && status == 0 && !same_floats(right.data, wrong.data, right.size),
       "with B == T the program accepts an unrepeated (B, T) mask, as PyTorch does, and the weights come out different");
    tensor_free(&mask); tensor_free(&rows); tensor_free(&right); tensor_free(&wrong);

    refuses(program_path("selfatt_v3"), ARGS("--dropout", "0.2"), "--train", "--dropout without --train is refused");
    refuses(program_path("selfatt_v3"), ARGS("--train", "--dropout", "1.5"), "--dropout", "--dropout 1.5 is refused");
    refuses(program_path("selfatt_v3"), ARGS("--train", "--dropout", "1"), "--dropout", "--dropout 1 is refused");
    refuses(program_path("selfatt_v3"), ARGS("--heads", "2"), "--heads", "--heads is refused: SelfAttV3 has one head");
    refuses(program_path("selfatt_v3"), ARGS("--load", d1, "--seq", "5"), "--seq", "a --seq that disagrees with the loaded X is refused");
    snprintf(p1, sizeof p1, "%s/proj.weight.npy", d1);
    Tensor wrong_w = tensor_new2(4, 2);
    npy_save(p1, &wrong_w);
    tensor_free(&wrong_w);
    refuses(program_path("selfatt_v3"), ARGS("--load", d1), "proj.weight", "a proj.weight of the wrong shape is refused, naming the file");
}

static void test_fill_program(const char *tmp) {
    char d[600];
    snprintf(d, sizeof d, "%s/fill", tmp);
    int status = run("fill_values", ARGS("--dump", d));
    ok(status == 0 && strstr(run_out, "masked_fill(-1e20): tensor(") && strstr(run_out, "nan") &&
       strstr(run_out, "add -10000: tensor("), "fill_values prints the three maps, NaN included");
    Tensor att = status == 0 ? load_npy(d, "attn") : (Tensor){0}, want = tensor_new3(3, 3, 4);
    STUDENT(tensor_free(&want); want = fill_attend());
    int same = att.ndim == 3 && att.shape[0] == 3 && att.shape[1] == 3 && att.shape[2] == 4;
    for (long i = 0; i < want.size && same; i++)
        same &= isnan(want.data[i]) ? isnan(att.data[i]) : att.data[i] == want.data[i];
    ok(same, "fill_values --dump writes attn.npy of shape (3, 3, 4): one map per policy");
    tensor_free(&att); tensor_free(&want);
    refuses(program_path("fill_values"), ARGS("--load", d), "unknown flag --load", "fill_values refuses --load: its example is fixed");
    refuses(program_path("fill_values"), ARGS("--seq", "5"), "unknown flag --seq", "fill_values refuses a size flag");
    refuses(program_path("fill_values"), ARGS("--causal"), "--causal", "fill_values refuses --causal");
}

/* ---- numbers the chapter states, against the programs ------------------------ */

/* chapters/03-selfatt-v3.md as one line (newlines read as spaces), or NULL. */
static char *chapter_text(void) {
    FILE *f = fopen("chapters/03-selfatt-v3.md", "rb");
    if (!f) return NULL;
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    for (char *c = text; *c; c++) if (*c == '\n') *c = ' ';
    return text;
}

/* The numbers printed between `from` and `to` in s: how many, and how many are not 0. */
static void count_printed(const char *s, const char *from, const char *to, int *all, int *nonzero) {
    const char *p = s ? strstr(s, from) : NULL, *end = p ? strstr(p, to) : NULL;
    *all = *nonzero = 0;
    for (p = p ? p + strlen(from) : NULL; p && p < end; p++) {
        if (!(*p >= '0' && *p <= '9') || (p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.') continue;
        char *after;
        double v = strtod(p, &after);
        (*all)++, *nonzero += v != 0.0;
        p = after - 1;
    }
}

static void test_chapter_numbers(void) {
    const char *text = chapter_text();
    ok(text != NULL, "chapters/03-selfatt-v3.md can be read from the top of the book");

    /* "After dropout, 20 of the 24 visible weights survived (the expectation is $0.9 \cdot 24 = 21.6$)" */
    int kept = -1, visible = -1, again = -1, all, seen, survived;
    const char *at = text ? strstr(text, "After dropout, ") : NULL;
    if (at) sscanf(at, "After dropout, %d of the %d visible weights survived (the expectation is $0.9 \\cdot %d",
                   &kept, &visible, &again);
    int status = run("selfatt_v3", ARGS("--train"));
    count_printed(run_out, "attention_weight:", "training:", &all, &seen);
    count_printed(run_out, "after dropout:", "row sums", &all, &survived);
    ok(status == 0 && kept == survived && visible == seen && again == seen,
       "the chapter's count of the weights that survive dropout in selfatt_v3 --train is what the program prints");
    if (kept != survived || visible != seen) diag("chapter: %d of %d; program: %d of %d", kept, visible, survived, seen);

    /* the table of the three fill policies: fill_values' maps, to the digits it shows */
    static const char *const rows[3] = { "| replace by `-1e20` |", "| replace by `-inf` |", "| add `-10000` |" };
    Tensor att = tensor_new3(3, 3, 4);
    STUDENT(tensor_free(&att); att = fill_attend());
    int cells = 0, wrong = 0;
    for (int p = 0; p < 3; p++) {
        const char *c = text ? strstr(text, rows[p]) : NULL;
        for (c = c ? c + strlen(rows[p]) : NULL; c && cells < 12 * (p + 1); c++) {
            if (*c == '|' && c[1] == ' ' && (c[2] == '|' || c[2] == ' ')) break;   /* the end of the row */
            double v;
            char *after;
            if (!strncmp(c, "NaN", 3)) v = NAN, after = (char *)c + 3;
            else if (*c >= '0' && *c <= '9') v = strtod(c, &after);
            else continue;
            float got = att.data[cells++];
            wrong += isnan(v) ? !isnan(got) : !(fabs(got - v) <= 0.5e-4);
            c = after - 1;
        }
    }
    ok(cells == 36 && wrong == 0, "the chapter's table of the three fill policies holds fill_values' 36 weights, "
                                  "to the digits it shows");
    if (cells != 36 || wrong) diag("%d cells read, %d differ", cells, wrong);
    tensor_free(&att);
}

/* The word at row t of an example's X (B, T, 16): where its word part holds the 1. */
static int word_at(const Tensor *x, long row) {
    for (int w = 0; w < WORDS; w++) if (x->data[row * SENTENCE_DIM + w] == 1.0f) return w;
    return -1;
}

/* --example same-word --causal and --example padded, run as a reader runs them:
 * chapter 2's same-word head under each mask, as the chapter's figures show it. */
static void test_by_hand(const char *tmp) {
    char dc[1024], dp[1024], d1[1024];
    snprintf(dc, sizeof dc, "%s/same-word-causal", tmp);
    snprintf(dp, sizeof dp, "%s/padded", tmp);
    snprintf(d1, sizeof d1, "%s/v1-same-word", tmp);
    int sc = run("selfatt_v3", ARGS("--example", "same-word", "--causal", "--quiet", "--dump", dc));
    int sp = run("selfatt_v3", ARGS("--example", "padded", "--quiet", "--dump", dp));
    ok(sc == 0 && sp == 0, "--example same-word --causal and --example padded run and dump their cases");
    /* a run a stub stopped wrote nothing: every test below then fails by its own name */

    /* causal: row t sees keys 0..t, and finds the copies of its word among them */
    Tensor x = load_written(dc, "X"), att = load_written(dc, "attn");         /* (1, T, 16), (1, T, T) */
    int T = sc == 0 && x.ndim == 3 ? x.shape[1] : 0, above = 0;
    double worst_on = T > 0;
    for (int t = 0; t < T; t++) {
        double on = 0;
        for (int s = 0; s < T; s++) {
            if (s > t) above += att.data[t * T + s] != 0.0f;
            else if (word_at(&x, s) == word_at(&x, t)) on += att.data[t * T + s];
        }
        worst_on = fmin(worst_on, on);
    }
    ok(worst_on >= 0.95, "causal same-word: every row puts at least 0.95 on the earlier-or-same keys of its word (%.4f)",
       worst_on);
    ok(T == 8 && above == 0, "causal same-word: every weight above the diagonal is exactly 0");
    ok(T > 0 && att.data[0] == 1.0f, "causal same-word: the first 'the' sees only itself, with weight exactly 1");
    tensor_free(&x); tensor_free(&att);

    /* padded: sequence 1 is sequence 0 with keys 5, 6, 7 hidden */
    x = load_written(dp, "X"), att = load_written(dp, "attn");               /* (2, T, 16), (2, T, T) */
    T = sp == 0 && att.size == 2L * 8 * 8 ? 8 : 0;
    int hidden = 0, worst_row = -1;
    double worst = T > 0 ? 0 : 1;
    for (int t = 0; t < T; t++) {
        const float *r0 = att.data + t * T, *r1 = att.data + (T + t) * T;    /* b = 0, b = 1 */
        double share = 0;
        for (int s = 0; s < 5; s++) share += r0[s];
        for (int s = 0; s < T; s++) {
            if (s >= 5) { hidden += r1[s] != 0.0f; continue; }
            if (fabs(r1[s] - r0[s] / share) > worst) worst = fabs(r1[s] - r0[s] / share), worst_row = t;
        }
    }
    ok(T > 0 && hidden == 0, "padded: every padding key (5, 6, 7 of sequence 1) gets exactly 0");
    ok(worst <= 1e-6, "padded: each row of sequence 1 is sequence 0's row over keys 0..4, renormalised (%.2g, row %d)",
       worst, worst_row);

    /* sequence 0 has no padding: chapter 1's map, within what float32 rounding allows
     * (twice the bound of one pass, from selfatt_v1's files); the bits, in a note */
    int s1 = run("selfatt_v1", ARGS("--example", "same-word", "--quiet", "--dump", d1));
    Tensor a1 = load_written(d1, "attn"), x1 = load_written(d1, "X"), l1[6];            /* (1, T, T), (1, T, 16) */
    const char *layers[6] = { "query_proj.weight", "query_proj.bias", "key_proj.weight", "key_proj.bias",
                              "value_proj.weight", "value_proj.bias" };
    for (int i = 0; i < 6; i++) l1[i] = load_written(d1, layers[i]);
    int near = s1 == 0 && T > 0 && a1.size == (long)T * T && x1.ndim == 3 && x1.shape[1] == T && l1[5].data;
    if (near) {
        RefWeights w1 = { l1[0].data, l1[1].data, l1[2].data, l1[3].data, l1[4].data, l1[5].data, NULL, NULL };
        double *r1 = ref_new(a1.size), *e1 = ref_new(a1.size), *o1 = ref_new(x1.size);
        ref_attention_err(o1, NULL, r1, e1, &w1, x1.data, x1.data, x1.data, x1.shape[2],
                          &(RefAttn){ .B = 1, .T = T, .H = 1, .hd = x1.shape[2] });
        for (long i = 0; i < a1.size; i++) near &= tap_close_enough(att.data[i], a1.data[i], 2 * e1[i], 0);
        free(r1); free(e1); free(o1);
    }
    ok(near, "padded: sequence 0, unpadded, is selfatt_v1 --example same-word's map, within what float32 rounding "
       "allows");
    if (s1 == 0 && T > 0 && a1.size == (long)T * T)
        same_bits_note(att.data, a1.data, a1.size, "padded: sequence 0's map and selfatt_v1 --example same-word's");
    for (int i = 0; i < 6; i++) tensor_free(&l1[i]);
    tensor_free(&a1); tensor_free(&x1); tensor_free(&x); tensor_free(&att);
}

/* Tested through the programs, not called here. */
static void unused_here(void) {
    (void)print_run; (void)selfatt_v2_params; (void)selfatt_v2_macs_all;
    (void)print_masked;
}

int main(void) {
    unused_here();
    char tmp[] = "/tmp/abh-selfatt-v3-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    /* Exercise 3.6 (pass 4, the mask): the tests that say it is done */
    EXERCISE("3.6", 21, test_against_reference());
    EXERCISE("3.6", 13, test_mask_shapes());
    EXERCISE("3.6", 7, test_by_hand(tmp));
    TEST_GROUP(test_fill_policies());
    TEST_GROUP(test_trap());
    TEST_GROUP(test_masks());
    TEST_GROUP(test_dropout());
    TEST_GROUP(test_is_v2());
    TEST_GROUP(test_program(tmp));
    TEST_GROUP(test_fill_program(tmp));
    TEST_GROUP(test_chapter_numbers());

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
