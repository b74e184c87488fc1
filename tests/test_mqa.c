/* Tests for chapter 6, part 1: MultiQueryAttention (mqa) and the KV-cache table (kv_cache).
 *
 * mqa.c and kv_cache.c are included with TESTING defined. The reference,
 * tests/reference.h's, is a separate double-precision loop over heads, one at a
 * time, that never fills anything: hidden keys are left out of the softmax, and a
 * query that sees no key gets NaN, which is what -inf makes of it. The
 * command-line checks run the real programs, $ABH_BIN/mqa and $ABH_BIN/kv_cache.
 * gqa's equalities with mqa and mha are in test_gqa.c. */
#define TESTING
#include "mqa.c"
#include "kv_cache.c"
#include "tap.h"
#include "run.h"
#define MODULE_MQA
#include "reference.h"

/* ---- an independent reference, in double precision ---------------------- */

/* MQA in double: tests/reference.h's pass with one key and value head, K (B, T, hd)
 * and V (B, T, hd), that every head h reads. vis (B, H, T, T): 1 where a key is
 * visible, or NULL. Hidden keys are left out of the softmax, and a query that sees
 * no key gets NaN, as -inf makes it. att (B, H, T, T), out (B, T, D). */
static RefCase case_of(const MQA *m, const float *x, const float *vis, int B, int T, const float *out,
                       const float *att) {
    RefWeights w = { m->q_w.data, m->q_b.data, m->k_w.data, m->k_b.data, m->v_w.data, m->v_b.data, m->o_w.data,
                     m->o_b.data };
    RefAttn a = { .B = B, .T = T, .H = m->heads, .G = 1, .hd = m->dim / m->heads, .vis = vis, .hide = REF_FILL_INF };
    return (RefCase){ w, x, x, x, m->dim, a, out, att };
}

/* The reference, and in eout and eatt how far a float32 pass, its sums in any order,
 * may be from it (reference.h). */
static void reference(double *out, double *eout, double *att, double *eatt, const MQA *m, const float *x,
                      const float *vis, int B, int T) {
    RefCase c = case_of(m, x, vis, B, T, NULL, NULL);
    ref_attention_err(out, eout, att, eatt, &c.w, x, x, x, m->dim, &c.a);
}

/* What is wrong with a failing pass (Exercise 6.7): the usual suspects, then a query
 * head with no weights at all: one query head per group (rows = T). */
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
                what_is_wrong("head %d of sequence %d has no weights of its own: its scores were never written (all "
                              "0, or a uniform softmax of them); the H = %d query heads share one key head, H*T rows "
                              "against it, one product per sequence", h, b, a.H);
                return;
            }
        }
    ref_explain(student, NULL, 0);
}

/* ---- cases and masks ------------------------------------------------------- */

/* A module and its input x as mqa makes them from a seed (tests/reference.h). */
static void make_case(MQA *m, Tensor *x, int B, int T, int D, int H, uint64_t seed) {
    Args a = { .batch = B, .seq = T, .dim = D, .heads = H, .seed = seed };
    make_module(m, x, &a);
}

/* vis (B, H, T, T) spelled out from a mask of any shape that broadcasts to it. */
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

static void check(const char *what, const MQA *m, const Tensor *x, const Tensor *mask, int B, int T) {
    int D = m->dim, H = m->heads;
    long n = (long)B * H * T * T;
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    float *vis = malloc((size_t)n * sizeof *vis);
    double *ratt = calloc(n, sizeof *ratt), *rout = calloc(out.size, sizeof *rout);
    if (mask) expand(vis, mask, B, H, T);
    STUDENT(mqa_forward(out.data, att.data, m, x->data, mask, B, T));
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
        if (!any) continue;                              /* NaN rows: tested separately */
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
    struct { int B, T, D, H, causal; const char *what; } cases[] = {
        { 1, 4, 8, 4, 0, "the default case (1, 4, 8), H = 4" },
        { 1, 4, 8, 4, 1, "the default case with --causal" },
        { 2, 5, 12, 3, 0, "(2, 5, 12), H = 3" },
        { 3, 7, 16, 8, 1, "(3, 7, 16), H = 8, --causal" },
        { 2, 6, 6, 1, 1, "one head: H = 1, hd = D" },
        { 2, 3, 10, 10, 0, "hd = 1: H = D = 10" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        MQA m = {0};
        Tensor x, mask = {0};
        make_case(&m, &x, cases[c].B, cases[c].T, cases[c].D, cases[c].H, 20 + c);
        mask_final(&mask, cases[c].causal, cases[c].T, cases[c].T);
        check(cases[c].what, &m, &x, mask.data ? &mask : NULL, cases[c].B, cases[c].T);
        tensor_free(&x); tensor_free(&mask);
        free_module(&m);
    }
    /* a scattered full (B, H, T, T) mask */
    MQA m = {0};
    Tensor x, mask = tensor_new(4, (int[]){ 2, 4, 5, 5 });
    make_case(&m, &x, 2, 5, 8, 4, 77);
    for (long i = 0; i < mask.size; i++) mask.data[i] = ref_pattern(i, 3);
    for (long r = 0; r < mask.size / 5; r++) mask.data[r * 5 + r % 5] = 1;   /* every query sees a key */
    check("a scattered (B, H, T, T) mask", &m, &x, &mask, 2, 5);
    tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* ---- the trick: stacked heads are the head-by-head computation ---------------- */

static void test_trick(void) {
    int B = 2, T = 5, D = 12, H = 4, hd = 3;
    MQA m = {0};
    Tensor x;
    make_case(&m, &x, B, T, D, H, 5);
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    STUDENT(mqa_forward(out.data, att.data, &m, x.data, NULL, B, T));
    /* head by head: Q[b, h] (T, hd) against K[b] (T, hd), one unscaled matmul_bt of batch 1
     * each, then every dot product times 1/sqrt(hd), as matmul_bt applies its alpha */
    Tensor q = tensor_new3(B, T, D), qh = tensor_new(4, (int[]){ B, H, T, hd }), k = tensor_new3(B, T, hd);
    Tensor each = tensor_new(4, (int[]){ B, H, T, T });
    linear(q.data, x.data, m.q_w.data, m.q_b.data, (long)B * T, D, D);
    linear(k.data, x.data, m.k_w.data, m.k_b.data, (long)B * T, D, hd);
    ref_heads(qh.data, q.data, B, T, H, hd);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            matmul_bt(each.data + ((long)b * H + h) * T * T, qh.data + ((long)b * H + h) * T * hd,
                      k.data + (long)b * T * hd, 1, T, T, hd, 1.0f);
    for (long i = 0; i < each.size; i++) each.data[i] = (1.0f / sqrtf((float)hd)) * each.data[i];
    STUDENT(softmax_lastdim(each.data, (long)B * H * T, T));     /* chapter 0's, Exercise 0.7 */
    double *ratt = ref_new(att.size), *eatt = ref_new(att.size), *rout = ref_new(out.size);
    RefCase student = case_of(&m, x.data, NULL, B, T, out.data, att.data);
    ref_attention_err(rout, NULL, ratt, eatt, &student.w, x.data, x.data, x.data, D, &student.a);
    int near = written(att.data, att.size);
    for (long i = 0; near && i < att.size; i++) near = tap_close_enough(att.data[i], each.data[i], 2 * eatt[i], 0);
    ok(near, "one matmul_bt over H*T stacked query rows gives the weights of H separate products, within what "
       "float32 rounding allows");
    if (!near) explain_groups(&student);
    if (written(att.data, att.size))
        same_bits_note(att.data, each.data, att.size, "the stacked product's weights and the H separate products'");
    free(ratt); free(eatt); free(rout);
    tensor_free(&q); tensor_free(&qh); tensor_free(&k); tensor_free(&each);
    tensor_free(&att); tensor_free(&out); tensor_free(&x);
    free_module(&m);
}

/* ---- mask shapes: every legal one is its explicit (B, H, T, T) expansion ---- */

static void test_mask_shapes(void) {
    int B = 2, H = 3, T = 4, D = 9;
    static const int shapes[][5] = {   /* ndim, sizes */
        { 1, 4 }, { 2, 1, 4 }, { 2, 4, 4 }, { 2, 4, 1 }, { 3, 3, 4, 4 }, { 3, 1, 4, 4 }, { 4, 2, 1, 1, 4 },
        { 4, 2, 1, 4, 4 }, { 4, 2, 3, 4, 4 }, { 4, 1, 3, 1, 4 }, { 4, 2, 3, 4, 1 }, { 4, 1, 1, 1, 1 },
    };
    MQA m = {0};
    Tensor x;
    make_case(&m, &x, B, T, D, H, 6);
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        Tensor mask = tensor_new(shapes[c][0], shapes[c] + 1), full = tensor_new(4, (int[]){ B, H, T, T });
        for (long i = 0; i < mask.size; i++) mask.data[i] = ref_pattern(i, (unsigned)c);
        expand(full.data, &mask, B, H, T);
        Tensor a1 = tensor_new(4, (int[]){ B, H, T, T }), a2 = tensor_new(4, (int[]){ B, H, T, T });
        Tensor o1 = tensor_new3(B, T, D), o2 = tensor_new3(B, T, D);
        STUDENT(mqa_forward(o1.data, a1.data, &m, x.data, &mask, B, T));
        STUDENT(mqa_forward(o2.data, a2.data, &m, x.data, &full, B, T));
        char s[64];
        shape_str(s, sizeof s, mask.ndim, mask.shape);
        /* NaN rows (all hidden) compare equal as bytes: the same NaN from the same code */
        ok(written(a1.data, a1.size) && same_floats(a1.data, a2.data, a1.size) && same_floats(o1.data, o2.data, o1.size),
           "a mask of shape %s gives exactly what its explicit (2, 3, 4, 4) expansion gives", s);
        tensor_free(&mask); tensor_free(&full); tensor_free(&a1); tensor_free(&a2);
        tensor_free(&o1); tensor_free(&o2);
    }
    tensor_free(&x);
    free_module(&m);

    Tensor pad = tensor_new(4, (int[]){ 3, 1, 1, 5 });
    for (int i = 0; i < 15; i++) pad.data[i] = i % 5 < 3 ? 7.0f : 0.0f;        /* nonzero means visible */
    mask_final(&pad, 1, 5, 5);
    int right = pad.ndim == 4 && pad.shape[0] == 3 && pad.shape[1] == 1 && pad.shape[2] == 5 && pad.shape[3] == 5;
    for (long i = 0; right && i < pad.size; i++) right &= pad.data[i] == (float)(i % 5 <= i / 5 % 5 && i % 5 < 3);
    ok(right, "--causal on a (B, 1, 1, T) padding mask gives (B, 1, T, T): triangle AND padding, as 0s and 1s");
    Tensor none = {0};
    mask_final(&none, 1, 3, 3);
    ok(none.ndim == 2 && none.shape[0] == 3 && none.data[1] == 0.0f && none.data[3] == 1.0f,
       "--causal with no mask is the MHA/MQA notebook's torch.tril(torch.ones(T, T))");
    tensor_free(&pad); tensor_free(&none);
}

/* ---- -inf: a query that sees nothing ------------------------------------------- */

static void test_nan_rows(void) {
    int B = 2, T = 4, D = 8, H = 2;
    MQA m = {0};
    Tensor x, mask = tensor_new3(H, T, T);                       /* (H, T, T): per head */
    make_case(&m, &x, B, T, D, H, 9);
    for (long i = 0; i < mask.size; i++) mask.data[i] = 1;
    for (int s = 0; s < T; s++) mask.data[(1 * T + 2) * T + s] = 0;   /* head 1, query 2: no key */
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    STUDENT(mqa_forward(out.data, att.data, &m, x.data, &mask, B, T));
    int nan_row = 1, nan_out = 1, finite_else = 1;
    for (int b = 0; b < B; b++) {
        for (int s = 0; s < T; s++) nan_row &= isnan(att.data[(((long)b * H + 1) * T + 2) * T + s]) != 0;
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++)
                for (int s = 0; s < T; s++)
                    if (!(h == 1 && t == 2)) finite_else &= isfinite(att.data[(((long)b * H + h) * T + t) * T + s]) != 0;
        for (int t = 0; t < T; t++)
            for (int o = 0; o < D; o++) {
                float y = out.data[((long)b * T + t) * D + o];
                if (t == 2) nan_out &= isnan(y) != 0;
                else finite_else &= isfinite(y) != 0;
            }
    }
    ok(nan_row, "-inf: a query that sees no key gets a row of NaN weights, as in PyTorch");
    ok(nan_out, "the NaN reaches all D outputs of that position: W_O mixes every head");
    ok(finite_else && written(att.data, att.size), "every other weight and output stays finite: NaN does not cross positions");
    tensor_free(&att); tensor_free(&out); tensor_free(&x); tensor_free(&mask);
    free_module(&m);
}

/* ---- the KV-cache table ------------------------------------------------------------ */

static void test_kv_cache(void) {
    /* worked out by hand: 2 x layers x kv_heads x hd x 2 bytes */
    static const struct { const char *name; long own, mha; const char *kind; } want[] = {
        { "GPT-2 small", 36864, 36864, "MHA" },       /* 2*12*12*64*2 = 36 KiB */
        { "Llama-2-7B", 524288, 524288, "MHA" },      /* 2*32*32*128*2 = 512 KiB */
        { "Llama-2-70B", 327680, 2621440, "GQA" },    /* 2*80*8*128*2 = 320 KiB; 64 heads: 2.5 MiB */
        { "Falcon-7B", 8192, 581632, "MQA" },         /* 2*32*1*64*2 = 8 KiB; 71 heads: 568 KiB */
    };
    is_int(KV_MODELS, 4, "the table has four models");
    for (int i = 0; i < 4 && i < KV_MODELS; i++) {
        const KvModel *mo = &kv_models[i];
        ok(!strcmp(mo->name, want[i].name) && kv_bytes_per_token(mo->layers, mo->kv_heads, mo->hd, KV_BYTES) == want[i].own &&
           kv_bytes_per_token(mo->layers, mo->heads, mo->hd, KV_BYTES) == want[i].mha && !strcmp(kv_kind(mo), want[i].kind),
           "%s: %ld bytes per token, %ld as MHA, %s", want[i].name, want[i].own, want[i].mha, want[i].kind);
    }
    ok(kv_bytes_per_token(80, 64, 128, 2) * 4096 == 10737418240L, "the long product does not overflow: 10 GiB");
    char out[8192], err[8192];
    int status = run_program(program_path("kv_cache"), NO_ARGS, out, sizeof out, err, sizeof err);
    ok(status == 0 && strstr(out, "327680") && strstr(out, "2621440") && strstr(out, "581632") && strstr(out, "71x"),
       "kv_cache prints the table with the numbers above");
    refuses(program_path("kv_cache"), ARGS("--seq", "5"), "unknown flag --seq", "kv_cache refuses a size flag");
    refuses(program_path("kv_cache"), ARGS("--heads", "2"), "--heads", "kv_cache refuses --heads");
}

static int has_shape(const Tensor *t, int ndim, const int *shape) {
    return t->ndim == ndim && !memcmp(t->shape, shape, (size_t)ndim * sizeof(int));
}

static void test_program(const char *tmp) {
    char d1[600], d2[600], never[600], p1[1200], p2[1200];
    snprintf(d1, sizeof d1, "%s/one", tmp);
    snprintf(d2, sizeof d2, "%s/two", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    int status = run("mqa", ARGS("--batch", "2", "--seq", "5", "--dim", "12", "--heads", "3", "--causal", "--dump", d1));
    ok(status == 0 && strstr(run_out, "MultiQueryAttention(d_model=12, num_heads=3)") && strstr(run_out, "attn_scores: tensor(") &&
       strstr(run_out, "cached per position: 8 numbers of K and V (MHA: 24)"), "mqa runs and prints the weights and the cache");
    mkdir(d1, 0777);                  /* there even if the run stopped at a stub, for the files written below */
    mkdir(d2, 0777);
    static const struct { const char *name; int ndim, shape[4]; } files[] = {
        { "W_Q.weight", 2, { 12, 12 } }, { "W_Q.bias", 1, { 12 } }, { "W_K.weight", 2, { 4, 12 } }, { "W_K.bias", 1, { 4 } },
        { "W_V.weight", 2, { 4, 12 } }, { "W_V.bias", 1, { 4 } }, { "W_O.weight", 2, { 12, 12 } }, { "W_O.bias", 1, { 12 } },
        { "x", 3, { 2, 5, 12 } }, { "mask", 2, { 5, 5 } }, { "attn", 4, { 2, 3, 5, 5 } }, { "out", 3, { 2, 5, 12 } },
    };
    int shapes_ok = 1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        Tensor t = load_written(d1, files[i].name);
        if (!has_shape(&t, files[i].ndim, files[i].shape)) { shapes_ok = 0; diag("%s is missing or has the wrong shape", files[i].name); }
        tensor_free(&t);
    }
    ok(shapes_ok, "--dump writes the state_dict keys, x, mask, attn (B, H, T, T) and out at their shapes");

    status = run("mqa", ARGS("--load", d1, "--heads", "3", "--dump", d2, "--quiet"));
    int same = status == 0 && run_out[0] == 0;
    for (const char *f = "out\0attn\0"; *f; f += strlen(f) + 1) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, f);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, f);
        same &= same_file(p1, p2);
    }
    ok(same, "--load of a dump (its mask included) gives the same out.npy and attn.npy, byte for byte");

    /* the reference on the program's own files (out.npy is written last) */
    const char *name = "the program's out.npy matches the double reference, within what float32 rounding allows";
    Tensor got = load_written(d1, "out");
    if (got.data && shapes_ok) {
        MQA m = { .dim = 12, .heads = 3 };
        m.q_w = load_npy(d1, "W_Q.weight"); m.q_b = load_npy(d1, "W_Q.bias"); m.k_w = load_npy(d1, "W_K.weight"); m.k_b = load_npy(d1, "W_K.bias");
        m.v_w = load_npy(d1, "W_V.weight"); m.v_b = load_npy(d1, "W_V.bias"); m.o_w = load_npy(d1, "W_O.weight"); m.o_b = load_npy(d1, "W_O.bias");
        Tensor x = load_npy(d1, "x"), mask = load_npy(d1, "mask");
        float vis[2 * 3 * 5 * 5];
        double rout[2 * 5 * 12], ratt[2 * 3 * 5 * 5], eout[2 * 5 * 12], eatt[2 * 3 * 5 * 5];
        expand(vis, &mask, 2, 3, 5);
        reference(rout, eout, ratt, eatt, &m, x.data, vis, 2, 5);
        within_ok(got.data, rout, eout, got.size, "%s", name);
        tensor_free(&x); tensor_free(&mask);
        free_module(&m);
    } else {
        ok(0, "%s", name);
    }
    tensor_free(&got);

    /* a fully hidden query row: NaN in the files too */
    Tensor rows = tensor_new(4, (int[]){ 2, 1, 5, 1 });
    for (int i = 0; i < 10; i++) rows.data[i] = i != 6;                  /* b = 1, query 1 sees nothing */
    save_npy(d2, "mask", &rows);
    status = run("mqa", ARGS("--load", d2, "--heads", "3", "--dump", d2, "--quiet"));
    Tensor att = load_written(d2, "attn"), o = load_written(d2, "out");
    int nan_ok = status == 0 && att.size == 2 * 3 * 5 * 5 && o.size == 2 * 5 * 12;
    for (int h = 0; nan_ok && h < 3; h++)
        for (int s = 0; s < 5; s++) nan_ok &= isnan(att.data[((1 * 3 + h) * 5 + 1) * 5 + s]) != 0;
    nan_ok = nan_ok && isnan(o.data[(1 * 5 + 1) * 12]) && isfinite(o.data[(1 * 5 + 2) * 12]);
    ok(nan_ok, "a (B, 1, T, 1) mask hiding one query's every key: attn.npy has NaN there, in every head");
    tensor_free(&att); tensor_free(&o); tensor_free(&rows);

    /* refusals: one line each, nothing written */
    refuses(program_path("mqa"), ARGS("--heads", "3", "--dump", never), "does not divide --dim",
            "--heads 3 with --dim 8 is refused: D/H would not be whole");
    refuses(program_path("mqa"), ARGS("--load", d1, "--heads", "5", "--dump", never), "does not divide --dim",
            "--heads 5 beside a D = 12 dump is refused");
    refuses(program_path("mqa"), ARGS("--kv-heads", "2"), "--kv-heads", "--kv-heads is refused: MQA has one kv head");
    refuses(program_path("mqa"), ARGS("--train"), "--train", "--train is refused: the MHA/MQA notebook's MQA has no dropout");
    refuses(program_path("mqa"), ARGS("--load", d1, "--heads", "3", "--seq", "4"), "--seq",
            "a --seq that disagrees with x.npy is refused");
    Tensor bad = tensor_new3(2, 5, 5);                                    /* (B, T, T): B = 2 meets H = 3 */
    save_npy(d1, "mask", &bad);
    tensor_free(&bad);
    refuses(program_path("mqa"), ARGS("--load", d1, "--heads", "3", "--dump", never),
            "mask.npy: shape (2, 5, 5) does not broadcast to the scores (B, H, T, T) = (2, 3, 5, 5)",
            "a (B, T, T) mask is refused against (B, H, T, T), naming the file and both shapes");
    snprintf(p1, sizeof p1, "%s/mask.npy", d1);
    remove(p1);
    Tensor wide = tensor_new2(12, 12);                                    /* an MHA checkpoint's W_K */
    save_npy(d1, "W_K.weight", &wide);
    tensor_free(&wide);
    refuses(program_path("mqa"), ARGS("--load", d1, "--heads", "3", "--dump", never), "W_K.weight.npy: shape (12, 12), expected (4, 12)",
            "a (D, D) W_K is refused, naming the file and both shapes");
    ok(!file_exists(never), "no refused run left anything behind: the --dump directory was never made");
}

/* ---- the case set by hand: mqa --example shared-key ---------------------- */

/* The vocabulary index of the word in row t of the sentence's x (1, T, 16). */
static int word_at(const Tensor *x, int t) {
    for (int w = 0; w < WORDS; w++)
        if (x->data[t * SENTENCE_DIM + w] == 1.0f) return w;
    return -1;
}

static int word_is(const Tensor *x, int t, const char *word) { return !strcmp(vocabulary[word_at(x, t)], word); }

/* The least weight that map (T, T) puts on key[t] in row t, over the rows. */
static double least_on_key(const float *map, int T, const int *key) {
    double least = 1;
    for (int t = 0; t < T; t++) least = fmin(least, map[t * T + key[t]]);
    return least;
}

/* Head 3 of shared-key, chapter 1's same-word query against a key of places: the largest
 * excess of a row's weight on its own word over the uniform share, and whether the rows of
 * saw and dog are flat, rows of one word identical, and a the / cat at the last / first key. */
static double own_word_excess(const Tensor *x, const float *map3, int T, int *flat, int *same, int *ends) {
    int count[WORDS] = {0};
    double over = -1;
    for (int t = 0; t < T; t++) count[word_at(x, t)]++;
    *flat = *same = *ends = 1;
    for (int t = 0; t < T; t++) {
        double own = 0;
        for (int s = 0; s < T; s++) {
            if (word_at(x, s) == word_at(x, t)) own += map3[t * T + s];
            if (word_is(x, t, "saw") || word_is(x, t, "dog")) *flat &= fabs(map3[t * T + s] - 1.0 / T) <= 1e-6;
        }
        over = fmax(over, own - (double)count[word_at(x, t)] / T);
        for (int u = 0; u < t; u++)
            if (word_at(x, u) == word_at(x, t)) *same &= !memcmp(&map3[u * T], &map3[t * T], (size_t)T * sizeof(float));
        if (word_is(x, t, "the")) *ends &= map3[t * T + T - 1] >= 0.99;
        if (word_is(x, t, "cat")) *ends &= map3[t * T] >= 0.99;
    }
    return over;
}

/* Every test runs, and fails by its own name, when the program did not write the case
 * (in a handout, before Exercise 6.7 is done). */
static void test_shared_key(const char *tmp) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/shared-key", tmp);
    int status = run("mqa", ARGS("--example", "shared-key", "--quiet", "--dump", dir));
    ok(status == 0, "--example shared-key runs and dumps its case");
    Tensor x = load_written(dir, "x"), att = load_written(dir, "attn"), out = load_written(dir, "out");
    int T = sentence_length(SENTENCE), before[PLACES], here[PLACES], first[PLACES] = {0};
    int good = status == 0 && x.size == T * SENTENCE_DIM && att.size == 4 * T * T && out.size == T * SENTENCE_DIM;
    double least[3] = {0}, over = 1, fetched = 0;
    int flat = 0, same = 0, ends = 0;
    for (int t = 0; t < T; t++) before[t] = t ? t - 1 : 0, here[t] = t;
    if (good) {
        least[0] = least_on_key(att.data, T, before);
        least[1] = least_on_key(att.data + T * T, T, here);
        least[2] = least_on_key(att.data + 2 * T * T, T, first);
        over = own_word_excess(&x, att.data + 3 * T * T, T, &flat, &same, &ends);
        fetched = 1;                                   /* out = merged heads: numbers 0..3 are head 0's */
        for (int t = 0; t < T; t++) fetched = fmin(fetched, out.data[t * SENTENCE_DIM + word_at(&x, before[t])]);
    }
    ok(least[0] >= 0.99, "shared-key: head 0 puts at least 0.99 of each row on key t - 1, row 0 on key 0 (%.4f)",
       least[0]);
    ok(least[1] >= 0.99, "shared-key: head 1 puts at least 0.99 of each row on key t (%.4f)", least[1]);
    ok(least[2] >= 0.99, "shared-key: head 2 puts at least 0.99 of each row on key 0 (%.4f)", least[2]);
    ok(over <= 1e-6, "shared-key: no row of head 3 puts more than its uniform share (its word's count / T) "
       "on the keys of its own word (largest excess %+.4f)", over);
    ok(flat, "shared-key: head 3's rows of 'saw' and 'dog' meet the key's zeros: exactly 1/T on every key");
    ok(same, "shared-key: head 3's rows of one word have the same map, bit for bit: the key holds no word");
    ok(ends, "shared-key: head 3 sends a 'the' to the last key and a 'cat' to the first, at least 0.99");
    ok(fetched >= 0.99, "shared-key: out's numbers 0..3 in row t are the word before t, at least 0.99 of it (%.4f)",
       fetched);
    tensor_free(&x); tensor_free(&att); tensor_free(&out);
}

int main(void) {
    char tmp[] = "/tmp/abh-mqa-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    (void)mqa_print;                                      /* tested through the program */

    /* Exercise 6.7 (query heads stacked as rows on the shared key head): the
     * tests that say it is done */
    EXERCISE("6.7", 21, test_against_reference());
    EXERCISE("6.7", 1, test_trick());
    EXERCISE("6.7", 9, test_shared_key(tmp));
    TEST_GROUP(test_mask_shapes());
    TEST_GROUP(test_nan_rows());
    TEST_GROUP(test_kv_cache());
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
