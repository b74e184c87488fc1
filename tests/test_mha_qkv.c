/* Tests for chapter 8: mha_qkv, the self/cross-attention notes' multi-head
 * attention with three inputs.
 *
 * The forward pass against an independent double-precision reference (queries,
 * keys and values from separate tensors, S != T, masks of every legal shape, the
 * -inf fill and its NaN rows); the MHA/MQA notebook's single-input MHA computed
 * by the real program on three copies of one tensor; chapter 5's $ABH_BIN/mha, byte for
 * byte, when it is built (skipped otherwise); and the program's files and
 * refusals. */
#define TESTING
#include "mha_qkv.c"
#include "tap.h"
#include "run.h"
#include "reference.h"

/* ---- references, in double precision ----------------------------------------- */

/* The notes' forward in double, tests/reference.h's pass: out (B, T, D), att
 * (B, H, T, S). vis (B, H, T, S): 1 where a key is visible, or NULL. Hidden keys are
 * left out of the softmax; a row with none visible is NaN, as -inf makes it. Heads
 * are read in place from the projections: head h of position t is numbers
 * h*hd .. h*hd + hd - 1. */
static void reference(double *out, double *att, const MhaQkv *m, const float *qf, const float *kf, const float *vf,
                      const float *vis, int B, int T, int S) {
    RefWeights w = { m->wq.data, m->bq.data, m->wk.data, m->bk.data, m->wv.data, m->bv.data, m->wo.data, m->bo.data };
    ref_attention(out, att, &w, qf, kf, vf, m->dim, &(RefAttn){ .B = B, .T = T, .S = S, .H = m->heads,
                                                                 .hd = m->dim / m->heads, .vis = vis,
                                                                 .hide = REF_FILL_INF });
}

/* The MHA/MQA notebook's MultiHeadAttention in double, written its way: one x, projected three
 * times, view (B, T, H, hd) and transpose, a (T, T) mask or none. */
static void reference_000(double *out, const MhaQkv *m, const float *xf, const float *tril, int B, int T) {
    int D = m->dim, H = m->heads, hd = D / H;
    double *x = ref_doubles(xf, (long)B * T * D), *proj[3], *o = calloc((size_t)B * T * D, sizeof *o);
    const Tensor *w[3] = { &m->wq, &m->wk, &m->wv }, *bias[3] = { &m->bq, &m->bk, &m->bv };
    for (int i = 0; i < 3; i++) {
        proj[i] = malloc(sizeof(double) * B * T * D);
        ref_linear(proj[i], x, w[i]->data, bias[i]->data, (long)B * T, D, D);
    }
#define AT(p, b, h, t, i) (p)[(((long)(b) * T + (t)) * H + (h)) * hd + (i)]   /* Q.view(B, T, H, hd)[b, t, h, i] */
    double *scores = malloc(sizeof(double) * T);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                double best = -INFINITY, total = 0;
                for (int s = 0; s < T; s++) {
                    double dot = 0;
                    for (int i = 0; i < hd; i++) dot += AT(proj[0], b, h, t, i) * AT(proj[1], b, h, s, i);
                    scores[s] = tril && tril[t * T + s] == 0 ? -INFINITY : dot / sqrt((double)hd);
                    best = fmax(best, scores[s]);
                }
                for (int s = 0; s < T; s++) total += scores[s] = exp(scores[s] - best);
                for (int s = 0; s < T; s++)
                    for (int i = 0; i < hd; i++) AT(o, b, h, t, i) += scores[s] / total * AT(proj[2], b, h, s, i);
            }
#undef AT
    ref_linear(out, o, m->wo.data, m->bo.data, (long)B * T, D, D);
    for (int i = 0; i < 3; i++) free(proj[i]);
    free(x); free(o); free(scores);
}

/* The state_dict() keys of the notes' module, in order: the files a case holds. */
static const char *const qkv_names[8] = { "W_q.weight", "W_q.bias", "W_k.weight", "W_k.bias",
                                          "W_v.weight", "W_v.bias", "W_o.weight", "W_o.bias" };

/* A module and its three inputs made from a seed, or read from args->load,
 * through the program's own list of tensors, as its main makes them; *mask is
 * the mask read (none when made). */
static void open_case(MhaQkv *m, Tensor *q, Tensor *k, Tensor *v, Tensor *mask, Args *a) {
    Tensors list = {0};
    Tensor att, out;
    mha_qkv_tensors(&list, m, q, k, v, mask, &att, &out);
    tensors_open(&list, a);
    m->dim = a->dim, m->heads = a->heads;
    tensor_free(&att); tensor_free(&out);
}

static void make_case(MhaQkv *m, Tensor *q, Tensor *k, Tensor *v, int B, int T, int S, int D, int H, uint64_t seed) {
    Args a = { .batch = B, .seq = T, .kv_seq = S, .dim = D, .heads = H, .seed = seed };
    Tensor none;
    open_case(m, q, k, v, &none, &a);
}

/* Free a module's weights through the same list. */
static void free_module(MhaQkv *m) {
    Tensors list = {0};
    Tensor none = {0};
    mha_qkv_tensors(&list, m, &none, &none, &none, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}

/* the explicit (B, H, T, S) pattern of a mask that broadcasts to it */
static float *visible(const Tensor *mask, int B, int H, int T, int S) {
    return ref_visible(mask, 4, (int[]){ B, H, T, S });     /* the caller frees */
}

/* 1 if the weights were written at all: a forward pass stopped at a stub (in a
 * handout) leaves them zero, and two such runs are equal to no purpose. */
static int written(const float *att, long n) {
    for (long i = 0; i < n; i++) if (att[i] != 0.0f) return 1;
    return 0;
}

/* ---- the forward pass against the reference ----------------------------------- */

static void test_against_reference(void) {
    struct { int B, T, S, D, H, causal; } cases[] = {
        { 2, 4, 4, 8, 2, 0 }, { 1, 4, 6, 8, 2, 0 }, { 3, 5, 2, 12, 3, 1 }, { 2, 7, 9, 16, 4, 1 }, { 1, 3, 5, 6, 1, 0 },
        { 2, 6, 6, 32, 8, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int B = cases[c].B, T = cases[c].T, S = cases[c].S, D = cases[c].D, H = cases[c].H;
        MhaQkv m = {0};
        Tensor q, k, v, mask = {0};
        make_case(&m, &q, &k, &v, B, T, S, D, H, 80 + c);
        mask_final(&mask, cases[c].causal, T, S);
        float *vis = mask.data ? visible(&mask, B, H, T, S) : NULL;
        Tensor att = tensor_new(4, (int[]){ B, H, T, S }), out = tensor_new3(B, T, D);
        double *ratt = malloc(sizeof(double) * att.size), *rout = malloc(sizeof(double) * out.size);
        STUDENT(mha_qkv_forward(out.data, att.data, &m, q.data, k.data, v.data, mask.data ? &mask : NULL, B, T, S));
        reference(rout, ratt, &m, q.data, k.data, v.data, vis, B, T, S);
        close_ok(out.data, rout, out.size, 1e-5, 0, "(B, T, S, D, H) = (%d, %d, %d, %d, %d)%s: the output matches the reference",
                 B, T, S, D, H, cases[c].causal ? ", causal" : "");
        close_ok(att.data, ratt, att.size, 1e-6, 0, "(B, T, S, D, H) = (%d, %d, %d, %d, %d)%s: the weights match",
                 B, T, S, D, H, cases[c].causal ? ", causal" : "");
        free(vis); free(ratt); free(rout);
        tensor_free(&att); tensor_free(&out); tensor_free(&q); tensor_free(&k); tensor_free(&v); tensor_free(&mask);
        free_module(&m);
    }
}

/* Every legal mask shape gives the result of its explicit (B, H, T, S) form; a
 * fully hidden row is NaN, and only that query's output is NaN. */
static void test_masks(void) {
    int B = 2, H = 2, T = 3, S = 5, D = 8;
    MhaQkv m = {0};
    Tensor q, k, v;
    make_case(&m, &q, &k, &v, B, T, S, D, H, 11);
    int shapes[][5] = { { 2, T, S }, { 4, B, 1, 1, S }, { 4, B, H, T, S }, { 4, 1, H, 1, S }, { 1, S }, { 3, H, T, S } };
    Rng r;
    rng_seed(&r, 4);
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        Tensor mask = tensor_new(shapes[c][0], shapes[c] + 1);
        for (long i = 0; i < mask.size; i++) mask.data[i] = rng_uniform(&r) < 0.7f;
        mask.data[0] = 1;                             /* every (T, S) map keeps key 0 of query 0 ... */
        for (long i = 0; i < mask.size; i += S) mask.data[i] = 1;    /* ... and every row keeps key 0 */
        float *vis = visible(&mask, B, H, T, S);
        Tensor full = { .ndim = 4, .shape = { B, H, T, S }, .size = (long)B * H * T * S, .data = vis };
        Tensor a1 = tensor_new(4, full.shape), a2 = tensor_new(4, full.shape), o1 = tensor_new3(B, T, D), o2 = tensor_new3(B, T, D);
        STUDENT(mha_qkv_forward(o1.data, a1.data, &m, q.data, k.data, v.data, &mask, B, T, S));
        STUDENT(mha_qkv_forward(o2.data, a2.data, &m, q.data, k.data, v.data, &full, B, T, S));
        char s[64];
        shape_str(s, sizeof s, mask.ndim, mask.shape);
        ok(written(a1.data, a1.size) && !memcmp(o1.data, o2.data, sizeof(float) * o1.size) &&
           !memcmp(a1.data, a2.data, sizeof(float) * a1.size),
           "a %s mask gives the bits of its explicit (B, H, T, S) form", s);
        free(vis); tensor_free(&mask); tensor_free(&a1); tensor_free(&a2); tensor_free(&o1); tensor_free(&o2);
    }
    ok(!broadcastable((int[]){ B, T, S }, 3, (int[]){ B, H + 1, T, S }, 4),
       "a (B, T, S) mask does not broadcast to (B, H, T, S) when B != H");

    Tensor mask = tensor_new(4, (int[]){ B, 1, T, S });
    for (long i = 0; i < mask.size; i++) mask.data[i] = 1;
    for (int s = 0; s < S; s++) mask.data[(long)1 * T * S + 2 * S + s] = 0;    /* b = 1, query 2 sees nothing */
    Tensor att = tensor_new(4, (int[]){ B, H, T, S }), out = tensor_new3(B, T, D);
    STUDENT(mha_qkv_forward(out.data, att.data, &m, q.data, k.data, v.data, &mask, B, T, S));
    long nan_att = 0, nan_out = 0, nan_elsewhere = 0;
    for (long i = 0; i < att.size; i++) nan_att += isnan(att.data[i]);
    for (long i = 0; i < out.size; i++) {
        int row = (int)(i / D);                      /* (b, t) = (row / T, row % T) */
        if (row == 1 * T + 2) nan_out += isnan(out.data[i]);
        else nan_elsewhere += isnan(out.data[i]);
    }
    ok(nan_att == (long)H * S && nan_out == D && nan_elsewhere == 0,
       "-inf fill: a query that sees no key gets NaN weights in every head (%ld) and a NaN output row (%ld), nothing else",
       nan_att, nan_out);
    tensor_free(&mask); tensor_free(&att); tensor_free(&out);
    tensor_free(&q); tensor_free(&k); tensor_free(&v);
    free_module(&m);
}

/* The program on three copies of one X is the MHA/MQA notebook's MHA, causal mask included. */
static void test_one_input(const char *tmp) {
    char d1[600], d2[600], d3[600];
    snprintf(d1, sizeof d1, "%s/000-made", tmp);
    snprintf(d2, sizeof d2, "%s/000-in", tmp);
    snprintf(d3, sizeof d3, "%s/000-out", tmp);
    int B = 2, T = 5, D = 12, H = 3;
    int s1 = run("mha_qkv", ARGS("--batch", "2", "--seq", "5", "--kv-seq", "5", "--dim", "12", "--heads", "3",
                                 "--quiet", "--dump", d1));
    if (s1 == 0) {
        for (int i = 0; i < 8; i++) copy_npy(d1, qkv_names[i], d2, qkv_names[i]);
        copy_npy(d1, "Q", d2, "Q"); copy_npy(d1, "Q", d2, "K"); copy_npy(d1, "Q", d2, "V");
    }
    mkdir(d2, 0777);                                                  /* there even after a stub */
    Tensor tril = tensor_new2(T, T);
    for (int t = 0; t < T; t++)
        for (int s = 0; s <= t; s++) tril.data[t * T + s] = 1;      /* torch.tril(torch.ones(T, T)) */
    save_npy(d2, "mask", &tril);
    int s2 = run("mha_qkv", ARGS("--load", d2, "--heads", "3", "--quiet", "--dump", d3));
    ok(s1 == 0 && s2 == 0, "mha_qkv runs on Q = K = V with a (T, T) tril mask");
    const char *is_000 = "with three copies of x and tril, it is the MHA/MQA notebook's MultiHeadAttention";
    const char *to_the_bit = "and the program's out.npy is mha_qkv_forward(x, x, x), to the bit";
    if (s1 || s2) {                   /* a run stopped (at a stub, in a handout): nothing to compare */
        ok(0, "%s", is_000);
        ok(0, "%s", to_the_bit);
        tensor_free(&tril);
        return;
    }
    MhaQkv m = {0};
    Tensor x, k, v, mask, got = load_npy(d3, "out");
    open_case(&m, &x, &k, &v, &mask, &(Args){ .load = d2, .heads = H });     /* the weights the run read */
    ok(m.dim == D && x.shape[0] == B && x.shape[1] == T && mask.data && !memcmp(mask.data, tril.data, sizeof(float) * T * T),
       "the program's list reads that case back: B, T, D from Q.npy, the tril from mask.npy");
    double *want = malloc(sizeof(double) * B * T * D);
    reference_000(want, &m, x.data, tril.data, B, T);
    close_ok(got.data, want, got.size, 1e-5, 0, "%s", is_000);
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), direct = tensor_new3(B, T, D);
    STUDENT(mha_qkv_forward(direct.data, att.data, &m, x.data, x.data, x.data, &tril, B, T, T));
    ok(!memcmp(direct.data, got.data, sizeof(float) * got.size), "%s", to_the_bit);
    free(want);
    tensor_free(&att); tensor_free(&direct); tensor_free(&x); tensor_free(&k); tensor_free(&v); tensor_free(&mask);
    tensor_free(&got); tensor_free(&tril);
    free_module(&m);
}

/* Chapter 5's mha with the same weights and X three times: the same numbers, to float32
 * rounding (mha's arithmetic is Exercise 5.6's, which a student may order otherwise; the
 * bytes are compared in a note). */
static void test_against_mha(const char *tmp) {
    if (!file_exists(program_path("mha"))) {
        skip(3, "%s is not built (chapter 5)", program_path("mha"));
        return;
    }
    static const char *const mha_names[8] = { "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                                              "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };
    static const char *const flags[3][10] = {
        { "--batch", "2", "--seq", "5", "--dim", "8", "--heads", "2", NULL },
        { "--batch", "1", "--seq", "7", "--dim", "12", "--heads", "3", "--causal", NULL },
        { "--batch", "3", "--seq", "4", "--dim", "16", "--heads", "4", "--causal", NULL },
    };
    for (int c = 0; c < 3; c++) {
        char dm[600], dm2[600], dq[600], oq[600], p1[1100];
        const char *args[20];
        int n = 0, causal = 0;
        snprintf(dm, sizeof dm, "%s/mha-%d", tmp, c);
        snprintf(dm2, sizeof dm2, "%s/mha-again-%d", tmp, c);
        snprintf(dq, sizeof dq, "%s/mha-qkv-in-%d", tmp, c);
        snprintf(oq, sizeof oq, "%s/mha-qkv-out-%d", tmp, c);
        for (int i = 0; flags[c][i]; i++) {
            if (!strcmp(flags[c][i], "--causal")) causal = 1;
            else args[n++] = flags[c][i];
        }
        args[n++] = "--quiet"; args[n++] = "--dump"; args[n++] = dm; args[n] = NULL;
        int s1 = run("mha", args);
        /* mha's made-up case carries a random mask that can hide a whole row, where
         * -1e20 (mha) and -inf (mha_qkv) rightly differ: compare without it, and
         * give both programs the same --causal instead. */
        snprintf(p1, sizeof p1, "%s/attention_mask.npy", dm);
        if (s1 == 0 && file_exists(p1)) remove(p1);
        const char *heads = flags[c][7];
        if (s1 == 0)
            s1 = causal ? run("mha", ARGS("--load", dm, "--heads", heads, "--causal", "--quiet", "--dump", dm2))
                        : run("mha", ARGS("--load", dm, "--heads", heads, "--quiet", "--dump", dm2));
        for (int i = 0; s1 == 0 && i < 8; i++) copy_npy(dm, mha_names[i], dq, qkv_names[i]);
        if (s1 == 0) { copy_npy(dm, "X", dq, "Q"); copy_npy(dm, "X", dq, "K"); copy_npy(dm, "X", dq, "V"); }
        int s2 = causal ? run("mha_qkv", ARGS("--load", dq, "--heads", heads, "--causal", "--quiet", "--dump", oq))
                        : run("mha_qkv", ARGS("--load", dq, "--heads", heads, "--quiet", "--dump", oq));
        RefDump d = {0};
        char pair[200];
        snprintf(pair, sizeof pair, "mha %s...%s: mha_qkv's and mha's", flags[c][1], causal ? " --causal" : "");
        int loaded = s1 == 0 && s2 == 0 && ref_dump_case(&d, dm2, "X", "X", "X", mha_names, atoi(heads), atoi(heads),
                                                          causal, 0);
        int same = loaded && ref_dumps_agree(&d, dm2, oq, dm2, pair);
        ok(same, "mha %s...: mha_qkv on X three times writes mha's out.npy and attn.npy, within what float32 rounding "
           "allows%s", flags[c][1], causal ? " (both --causal)" : "");
        if (!loaded) diag("exit %d and %d; %s", s1, s2, run_err);
        ref_dump_free(&d);
    }
}

static void test_program(const char *tmp) {
    char d1[600], d2[600], never[600], p1[1100], p2[1100];
    snprintf(d1, sizeof d1, "%s/first", tmp);
    snprintf(d2, sizeof d2, "%s/second", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    const char *prog = program_path("mha_qkv");

    int status = run("mha_qkv", NO_ARGS);
    ok(status == 0 && strstr(run_out, "Q (1, 4, 8), K and V (1, 6, 8), mask none") && strstr(run_out, "attn: tensor([[[[") &&
       strstr(run_out, "parameters: 288"), "run without flags, the program prints four queries against six keys, 288 parameters");

    status = run("mha_qkv", ARGS("--batch", "3", "--causal", "--quiet", "--dump", d1));
    run("mha_qkv", ARGS("--load", d1, "--heads", "2", "--dump", d2, "--quiet"));
    const char *files[] = { "out", "attn", "Q", "K", "V", "mask", "W_q.weight", "W_q.bias", "W_k.weight", "W_k.bias",
                            "W_v.weight", "W_v.bias", "W_o.weight", "W_o.bias" };
    int all_same = status == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (!same_file(p1, p2)) { all_same = 0; diag("%s differs", files[i]); }
    }
    ok(all_same, "--load of a --causal --dump reproduces all fourteen files byte for byte");
    mkdir(d1, 0777);                  /* there even if the run stopped at a stub, for the files written below */
    Tensor mask = load_written(d1, "mask");
    int tri = mask.ndim == 2 && mask.shape[0] == 4 && mask.shape[1] == 6;
    for (long i = 0; tri && i < mask.size; i++) tri = mask.data[i] == (i % 6 <= i / 6);
    ok(tri, "--causal with T = 4, S = 6 is tril(ones(4, 6))");
    tensor_free(&mask);

    status = run("mha_qkv", ARGS("--load", d1, "--heads", "4", "--quiet"));
    ok(status == 0, "a (D, D) projection fits any H: the same files load with --heads 4");
    refuses(prog, ARGS("--load", d1, "--heads", "3", "--dump", never), "--heads 3", "--heads 3 with D = 8 is refused");
    refuses(prog, ARGS("--heads", "5"), "does not divide", "--heads 5 with the default D = 8 is refused");
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--seq", "5"), "--seq 5", "--seq disagreeing with Q.npy is refused");

    Tensor bad = tensor_new3(3, 4, 6);                /* (B, T, S): its B = 3 meets H = 2 */
    save_npy(d1, "mask", &bad);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "does not broadcast to the scores (B, H, T, S) = (3, 2, 4, 6)",
            "a (B, T, S) mask with B = 3, H = 2 is refused: it does not broadcast to the scores (B, H, T, S)");
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "a padding mask is (B, 1, 1, S)",
            "and the message says how a padding mask is written");
    tensor_free(&bad);
    snprintf(p1, sizeof p1, "%s/mask.npy", d1);
    remove(p1);
    Tensor shortv = tensor_new3(3, 5, 8);
    save_npy(d1, "V", &shortv);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "/V.npy: shape (3, 5, 8), expected (B, S, D) = (3, 6, 8)",
            "V with another length than K is refused, naming V.npy, its shape and K's length");
    tensor_free(&shortv);
    snprintf(p2, sizeof p2, "%s/V.npy", d2);
    if (file_exists(p2)) copy_npy(d2, "V", d1, "V");       /* put back, if the dump wrote it */
    Tensor widek = tensor_new3(3, 6, 4);
    save_npy(d1, "K", &widek);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "/K.npy: shape (3, 6, 4), expected (B, S, D) = (3, 6, 8)",
            "K with another width than Q is refused, naming K.npy and both shapes");
    tensor_free(&widek);
    snprintf(p2, sizeof p2, "%s/K.npy", d2);
    if (file_exists(p2)) copy_npy(d2, "K", d1, "K");       /* put back, if the dump wrote it */
    snprintf(p1, sizeof p1, "%s/W_o.bias.npy", d1);
    remove(p1);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "W_o.bias", "a missing W_o.bias is refused, naming it");
    ok(!file_exists(never), "and no refusal wrote anything");
    refuses(prog, ARGS("--train"), "--train", "--train is refused: the notes' module has no dropout");
}

/* Tested through the program, not called here. */
static void unused_here(void) { (void)mha_qkv_print; }

/* --example find-words: "the dog saw a" against the sentence. Head 0 puts at least 0.95 of
 * each row on the keys of its word, and "a", which the sentence lacks, exactly 1/8 on every
 * key; head 1 puts at least 0.95 of every row on the two "saw"s (keys 2 and 5). */
static void test_find_words(const char *tmp) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/find-words", tmp);
    int status = run("mha_qkv", ARGS("--example", "find-words", "--quiet", "--dump", dir));
    ok(status == 0, "--example find-words runs and dumps its case");
    if (status != 0) return;
    Tensor q = load_npy(dir, "Q"), k = load_npy(dir, "K"), att = load_npy(dir, "attn");   // attn (1, 2, T, S)
    int T = q.shape[1], S = k.shape[1];
    double word_on = 1, saw_on = 1, uniform = 0;
    for (int t = 0; t < T - 1; t++) {                 // the, dog, saw: words the sentence holds
        double on = 0;
        for (int s = 0; s < S; s++)
            if (!memcmp(&q.data[t * SENTENCE_DIM], &k.data[s * SENTENCE_DIM], WORDS * sizeof(float)))
                on += att.data[t * S + s];
        word_on = fmin(word_on, on);
    }
    for (int s = 0; s < S; s++) uniform = fmax(uniform, fabs(att.data[(T - 1) * S + s] - 1.0 / S));
    for (int t = 0; t < T; t++) saw_on = fmin(saw_on, att.data[(T + t) * S + 2] + att.data[(T + t) * S + 5]);
    ok(T == 4 && S == 8, "find-words: 4 query words against the sentence's 8");
    ok(word_on >= 0.95, "find-words, head 0: the, dog and saw put at least 0.95 on the keys of their word (%.4f)", word_on);
    ok(uniform <= 1e-6, "find-words, head 0: 'a', not in the sentence, puts 1/8 on every key");
    ok(saw_on >= 0.95, "find-words, head 1: every row puts at least 0.95 on the two 'saw's (%.4f)", saw_on);
    tensor_free(&q); tensor_free(&k); tensor_free(&att);
}

int main(void) {
    unused_here();
    char tmp[] = "/tmp/abh-mha-qkv-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    TEST_GROUP(test_against_reference());
    TEST_GROUP(test_masks());
    TEST_GROUP(test_one_input(tmp));
    TEST_GROUP(test_against_mha(tmp));
    TEST_GROUP(test_find_words(tmp));
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
