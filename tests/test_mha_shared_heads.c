/* Tests for chapter 8: mha_shared_heads, the einsum MHA post's multi-head
 * attention with heads split before projecting and one (hd, hd) projection
 * shared by all heads.
 *
 * The forward pass against the post's einsums computed one at a time, index by
 * index, in double precision with tests/reference.h's steps (fill -1e20 before
 * the scale sqrt(D), fully hidden rows uniform); the block-diagonal reading of the module, by running
 * $ABH_BIN/mha_qkv on block-diagonal weights; the parameter counts; the
 * flattening the wrong scale causes, row by row; and the program's files and
 * refusals. */
#define TESTING
#include "mha_shared_heads.c"
#include "tap.h"
#include "run.h"
#include "reference.h"

/* ---- the post's einsums, one at a time, in double ----------------------------- */

/* out (B, T, D), att (B, H, T, S), by tests/reference.h's steps. vis (B, H, T, S) or
 * NULL: 0 = hidden, filled with -1e20 (in effect: left out of the softmax, a row with
 * no key visible uniform). divisor: what the energy is divided by after the fill (the
 * post: sqrt(D)). */
static void reference(double *out, double *att, const MhaSharedHeads *m, const float *query, const float *keys,
                      const float *values, const float *vis, double divisor, int B, int T, int S) {
    int D = m->dim, H = m->heads, hd = D / H;
    RefAttn a = { .B = B, .T = T, .S = S, .H = H, .hd = hd, .divisor = divisor, .vis = vis };
    double *xq = ref_doubles(query, (long)B * T * D), *xk = ref_doubles(keys, (long)B * S * D);
    double *xv = ref_doubles(values, (long)B * S * D), *q = ref_new((long)B * T * D), *k = ref_new((long)B * S * D);
    double *v = ref_new((long)B * S * D), *o = ref_new((long)B * T * D);
    /* queries[n, l, h, :] = query.reshape(B, T, H, hd)[n, l, h, :] @ queries.weight^T, no bias: every (hd)
     * row of the input through the one (hd, hd) layer, which leaves q as (B, T, H*hd) */
    ref_linear(q, xq, m->queries_w.data, NULL, (long)B * T * H, hd, hd);
    ref_linear(k, xk, m->keys_w.data, NULL, (long)B * S * H, hd, hd);
    ref_linear(v, xv, m->values_w.data, NULL, (long)B * S * H, hd, hd);
    ref_scores(att, q, k, &a);                            /* einsum("nqhd,nkhd->nhqk") / divisor */
    ref_softmax(att, &a);
    ref_mix(o, att, v, &a);                               /* einsum("nhql,nlhd->nqhd") */
    ref_linear(out, o, m->fc_w.data, m->fc_b.data, (long)B * T, D, D);   /* fc_out */
    free(xq); free(xk); free(xv); free(q); free(k); free(v); free(o);
}

/* 1 if the weights were written at all: a forward pass stopped at a stub (in a
 * handout) leaves them zero, and a check of them passes to no purpose. */
static int written(const float *att, long n) {
    for (long i = 0; i < n; i++) if (att[i] != 0.0f) return 1;
    return 0;
}

/* A module and its inputs made from a seed through the program's own list of
 * tensors, as its main makes them; no mask. */
static void make_case(MhaSharedHeads *m, Tensor *q, Tensor *k, Tensor *v, int B, int T, int S, int D, int H,
                      uint64_t seed) {
    Args a = { .batch = B, .seq = T, .kv_seq = S, .dim = D, .heads = H, .seed = seed };
    Tensors list = {0};
    Tensor mask, att, out;
    mha_shared_heads_tensors(&list, m, q, k, v, &mask, &att, &out);
    tensors_open(&list, &a);
    m->dim = D, m->heads = H;
    tensor_free(&att); tensor_free(&out);
}

/* Free a module's weights through the same list. */
static void free_module(MhaSharedHeads *m) {
    Tensors list = {0};
    Tensor none = {0};
    mha_shared_heads_tensors(&list, m, &none, &none, &none, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}

/* the explicit (B, H, T, S) pattern of a mask that broadcasts to it */
static float *visible(const Tensor *mask, int B, int H, int T, int S) {
    return ref_visible(mask, 4, (int[]){ B, H, T, S });
}

static void test_against_reference(void) {
    struct { int B, T, S, D, H, causal; } cases[] = {
        { 1, 4, 4, 8, 2, 0 }, { 2, 5, 7, 12, 3, 1 }, { 3, 6, 6, 16, 4, 1 }, { 2, 10, 10, 256, 8, 0 }, { 1, 3, 2, 6, 1, 0 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int B = cases[c].B, T = cases[c].T, S = cases[c].S, D = cases[c].D, H = cases[c].H;
        MhaSharedHeads m = {0};
        Tensor q, k, v, mask = {0};
        make_case(&m, &q, &k, &v, B, T, S, D, H, 30 + c);
        mask_final(&mask, cases[c].causal, T, S);
        float *vis = mask.data ? visible(&mask, B, H, T, S) : NULL;
        Tensor att = tensor_new(4, (int[]){ B, H, T, S }), out = tensor_new3(B, T, D);
        double *ratt = malloc(sizeof(double) * att.size), *rout = malloc(sizeof(double) * out.size);
        STUDENT(mha_shared_heads_forward(out.data, att.data, &m, q.data, k.data, v.data, mask.data ? &mask : NULL,
                                         sqrtf((float)D), B, T, S));
        reference(rout, ratt, &m, q.data, k.data, v.data, vis, sqrt((double)D), B, T, S);
        close_ok(out.data, rout, out.size, 1e-5, 0, "(B, T, S, D, H) = (%d, %d, %d, %d, %d)%s: the output matches the post's einsums",
                 B, T, S, D, H, cases[c].causal ? ", causal" : "");
        close_ok(att.data, ratt, att.size, 1e-6, 0, "(B, T, S, D, H) = (%d, %d, %d, %d, %d)%s: the weights match",
                 B, T, S, D, H, cases[c].causal ? ", causal" : "");
        free(vis); free(ratt); free(rout);
        tensor_free(&att); tensor_free(&out); tensor_free(&q); tensor_free(&k); tensor_free(&v); tensor_free(&mask);
        free_module(&m);
    }
}

/* -1e20 before the scale: a fully hidden row is uniform, the others untouched. */
static void test_fill(void) {
    int B = 2, T = 3, S = 4, D = 8, H = 2;
    MhaSharedHeads m = {0};
    Tensor q, k, v;
    make_case(&m, &q, &k, &v, B, T, S, D, H, 9);
    Tensor mask = tensor_new(4, (int[]){ B, 1, T, S });
    for (long i = 0; i < mask.size; i++) mask.data[i] = 1;
    for (int s = 0; s < S; s++) mask.data[(long)(1 * T + 1) * S + s] = 0;     /* b = 1, query 1 sees nothing */
    mask.data[2] = 0;                                                          /* b = 0, query 0 loses key 2 */
    Tensor att = tensor_new(4, (int[]){ B, H, T, S }), out = tensor_new3(B, T, D);
    STUDENT(mha_shared_heads_forward(out.data, att.data, &m, q.data, k.data, v.data, &mask, sqrtf((float)D), B, T, S));
    int uniform = 1;
    for (int h = 0; h < H; h++)
        for (int s = 0; s < S; s++) uniform &= att.data[(((long)1 * H + h) * T + 1) * S + s] == 0.25f;
    ok(uniform, "a query that sees no key gets exactly 1/S = 0.25 for every key in every head");
    ok(written(att.data, att.size) && att.data[2] == 0.0f && att.data[(long)T * S + 2] == 0.0f,
       "a hidden key of an ordinary row gets exactly 0");
    tensor_free(&mask); tensor_free(&att); tensor_free(&out);
    tensor_free(&q); tensor_free(&k); tensor_free(&v);
    free_module(&m);
}

/* The text of a chapter, its line breaks read as spaces (a sentence may wrap
 * anywhere); "" if it cannot be read. The caller frees. */
static char *chapter_text(const char *path) {
    FILE *f = fopen(path, "rb");
    char *text = calloc(1, 1 << 20);
    size_t n = f ? fread(text, 1, (1 << 20) - 1, f) : 0;
    if (f) fclose(f);
    for (size_t i = 0; i < n; i++) if (text[i] == '\n') text[i] = ' ';
    for (char *r = text, *w = text; ; r++) {          /* runs of spaces become one */
        if (!(*r == ' ' && w > text && w[-1] == ' ')) *w++ = *r;
        if (!*r) break;
    }
    return text;
}

/* The wrong scale flattens every row: a smaller largest weight, a larger entropy.
 * The first case is the chapter's run, mha_shared_heads --batch 64 --seq 10
 * --dim 256 --heads 8 (seed 1), whose numbers the chapter states. */
static void test_flattening(void) {
    struct { int B, T, D, H; uint64_t seed; } cases[] = { { 64, 10, 256, 8, 1 }, { 4, 6, 8, 2, 51 }, { 4, 16, 64, 4, 52 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int B = cases[c].B, T = cases[c].T, D = cases[c].D, H = cases[c].H, hd = D / H;
        MhaSharedHeads m = {0};
        Tensor q, k, v;
        make_case(&m, &q, &k, &v, B, T, T, D, H, cases[c].seed);
        Tensor seed = tensor_new(4, (int[]){ B, H, T, T }), right = tensor_new(4, (int[]){ B, H, T, T });
        Tensor out = tensor_new3(B, T, D);
        STUDENT(mha_shared_heads_forward(out.data, seed.data, &m, q.data, k.data, v.data, NULL, sqrtf((float)D), B, T, T));
        STUDENT(mha_shared_heads_forward(out.data, right.data, &m, q.data, k.data, v.data, NULL, sqrtf((float)hd), B, T, T));
        long rows = (long)B * H * T, flatter = 0;
        for (long r = 0; r < rows; r++) {
            double m1, e1, m2, e2;
            weight_stats(seed.data + r * T, 1, T, &m1, &e1);
            weight_stats(right.data + r * T, 1, T, &m2, &e2);
            flatter += m1 <= m2 + 1e-7 && e1 >= e2 - 1e-6;
        }
        double mw[2], ent[2];
        weight_stats(seed.data, rows, T, &mw[0], &ent[0]);
        weight_stats(right.data, rows, T, &mw[1], &ent[1]);
        ok(flatter == rows && mw[0] < mw[1] && ent[0] > ent[1],
           "D = %d, H = %d: sqrt(D) flattens all %ld rows: mean largest weight %.4f < %.4f, entropy %.4f > %.4f",
           D, H, rows, mw[0], mw[1], ent[0], ent[1]);
        double cmp_w[2] = { 0, 0 }, cmp_e[2] = { 0, 0 };
        STUDENT(mha_shared_heads_compare(cmp_w, cmp_e, &m, &q, &k, &v, &(Tensor){0}, &seed, B, T, T));
        ok(written(seed.data, seed.size) && !memcmp(cmp_w, mw, sizeof mw) && !memcmp(cmp_e, ent, sizeof ent),
           "D = %d, H = %d: the program's mha_shared_heads_compare prints these very measures", D, H);
        if (c == 0) {
            double deficit[2] = { log((double)T) - ent[0], log((double)T) - ent[1] };
            ok(deficit[1] > 4 * deficit[0], "D = 256, H = 8: the distance from uniform in entropy shrinks %.1f times "
               "(near uniform it goes as the square of the scale, H = 8)", deficit[1] / deficit[0]);
            char said[256], *text = chapter_text("chapters/08-variants.md");
            snprintf(said, sizeof said, "the post's rows are %.5f nats from uniform and `mha`'s %.4f, %.1f times farther",
                     deficit[0], deficit[1], deficit[1] / deficit[0]);
            ok(written(seed.data, seed.size) && strstr(text, said), "chapter 8 says of this run: %s", said);
            free(text);
        }
        tensor_free(&seed); tensor_free(&right); tensor_free(&out);
        tensor_free(&q); tensor_free(&k); tensor_free(&v);
        free_module(&m);
    }
}

/* W (D, D): H copies of w (hd, hd) down the diagonal, times factor; b (D) zeros. */
static void block_diagonal(const char *dir, const char *name, const Tensor *w, int H, float factor) {
    int hd = w->shape[0], D = hd * H;
    char key[64];
    Tensor W = tensor_new2(D, D), b = tensor_new1(D);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < hd; i++)
            for (int j = 0; j < hd; j++) W.data[(long)(h * hd + i) * D + h * hd + j] = w->data[i * hd + j] * factor;
    snprintf(key, sizeof key, "%s.weight", name);
    dump_tensor(dir, key, &W);
    snprintf(key, sizeof key, "%s.bias", name);
    dump_tensor(dir, key, &b);
    tensor_free(&W); tensor_free(&b);
}

/* mha_qkv with block-diagonal W_q / sqrt(H), W_k, W_v and W_o = fc_out is this module. */
static void test_block_diagonal(const char *tmp) {
    static const char *const flags[3][14] = {
        { "--batch", "2", "--seq", "5", "--kv-seq", "7", "--dim", "12", "--heads", "3", "--causal", NULL },
        { "--batch", "1", "--seq", "6", "--dim", "8", "--heads", "2", NULL },
        { "--batch", "2", "--seq", "10", "--dim", "256", "--heads", "8", NULL },
    };
    for (int c = 0; c < 3; c++) {
        char ds[600], dq[600], oq[600];
        const char *args[20];
        int n = 0, H = 0;
        snprintf(ds, sizeof ds, "%s/shared-%d", tmp, c);
        snprintf(dq, sizeof dq, "%s/as-qkv-%d", tmp, c);
        snprintf(oq, sizeof oq, "%s/as-qkv-out-%d", tmp, c);
        for (int i = 0; flags[c][i]; i++) {
            args[n++] = flags[c][i];
            if (!strcmp(flags[c][i], "--heads")) H = atoi(flags[c][i + 1]);
        }
        args[n++] = "--quiet"; args[n++] = "--dump"; args[n++] = ds; args[n] = NULL;
        int s1 = run("mha_shared_heads", args);
        const char *small[3] = { "queries.weight", "keys.weight", "values.weight" }, *big[3] = { "W_q", "W_k", "W_v" };
        for (int i = 0; s1 == 0 && i < 3; i++) {
            Tensor w = load_npy(ds, small[i]);
            block_diagonal(dq, big[i], &w, H, i == 0 ? 1.0f / sqrtf((float)H) : 1.0f);   /* sqrt(hd) * sqrt(H) = sqrt(D) */
            tensor_free(&w);
        }
        char p[1100];
        snprintf(p, sizeof p, "%s/mask.npy", ds);
        if (s1 == 0) {
            copy_npy(ds, "fc_out.weight", dq, "W_o.weight"); copy_npy(ds, "fc_out.bias", dq, "W_o.bias");
            copy_npy(ds, "query", dq, "Q"); copy_npy(ds, "keys", dq, "K"); copy_npy(ds, "values", dq, "V");
            if (file_exists(p)) copy_npy(ds, "mask", dq, "mask");
        }
        char hs[8];
        snprintf(hs, sizeof hs, "%d", H);
        int s2 = run("mha_qkv", ARGS("--load", dq, "--heads", hs, "--quiet", "--dump", oq));
        Tensor a1 = load_written(ds, "attn"), a2 = load_written(oq, "attn"), o1 = load_written(ds, "out"), o2 = load_written(oq, "out");
        int both = s1 == 0 && s2 == 0 && a1.data && a2.data && a1.size == a2.size && o1.size == o2.size;
        ok(both, "case %d: both programs run", c);
        if (both) {
            close_ok(a2.data, a1.data, a1.size, 1e-6, 0, "case %d (D = %s, H = %d): mha_qkv with block-diagonal weights "
                     "and W_q / sqrt(H) gives the same weights", c, flags[c][c == 0 ? 7 : 5], H);
            close_ok(o2.data, o1.data, o1.size, 1e-5, 0, "case %d: and the same output", c);
        } else {                      /* a run stopped (at a stub, in a handout): nothing to compare */
            ok(0, "case %d (D = %s, H = %d): mha_qkv with block-diagonal weights and W_q / sqrt(H) gives the same weights",
               c, flags[c][c == 0 ? 7 : 5], H);
            ok(0, "case %d: and the same output", c);
        }
        tensor_free(&a1); tensor_free(&a2); tensor_free(&o1); tensor_free(&o2);
    }
}

static void test_program(const char *tmp) {
    char d1[600], d2[600], never[600], p1[1100], p2[1100];
    snprintf(d1, sizeof d1, "%s/first", tmp);
    snprintf(d2, sizeof d2, "%s/second", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    const char *prog = program_path("mha_shared_heads");

    int status = run("mha_shared_heads", NO_ARGS);
    ok(status == 0 && strstr(run_out, "attention: tensor([[[[") && strstr(run_out, "parameters: 120 = 3 hd^2 + D^2 + D (mha: 288"),
       "run without flags: the weights, and 120 parameters against mha's 288");
    status = run("mha_shared_heads", ARGS("--batch", "2", "--seq", "10", "--dim", "256", "--heads", "8"));
    ok(status == 0 && strstr(run_out, "parameters: 68864 = 3 hd^2 + D^2 + D (mha: 263168 = 4D^2 + 4D)") &&
       strstr(run_out, "over 10 keys"), "the post's sizes: 68864 parameters against 263168; keys as long as the query");

    status = run("mha_shared_heads", ARGS("--batch", "2", "--kv-seq", "6", "--causal", "--quiet", "--dump", d1));
    run("mha_shared_heads", ARGS("--load", d1, "--heads", "2", "--dump", d2, "--quiet"));
    const char *files[] = { "out", "attn", "query", "keys", "values", "mask", "values.weight", "keys.weight",
                            "queries.weight", "fc_out.weight", "fc_out.bias" };
    int all_same = status == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (!same_file(p1, p2)) { all_same = 0; diag("%s differs", files[i]); }
    }
    ok(all_same, "--load of a --dump (S = 6 != T = 4, --causal) reproduces all eleven files byte for byte");
    mkdir(d1, 0777);                  /* there even if the run stopped at a stub, for the files written below */
    Tensor w = load_written(d1, "values.weight");
    ok(w.ndim == 2 && w.shape[0] == 4 && w.shape[1] == 4, "values.weight is (hd, hd) = (4, 4)");
    tensor_free(&w);

    refuses(prog, ARGS("--load", d1, "--heads", "4", "--dump", never), "values.weight",
            "the same files with --heads 4 are refused: the (hd, hd) layers fix H");
    refuses(prog, ARGS("--heads", "3"), "does not divide", "--heads 3 with D = 8 is refused");
    Tensor bad = tensor_new3(2, 7, 8);                /* S = 7 against keys' 6 */
    save_npy(d1, "values", &bad);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "values.npy gives --batch 2, --kv-seq 7, --dim 8): the files disagree",
            "values longer than keys are refused, naming the file and the length it gives");
    tensor_free(&bad);
    snprintf(p2, sizeof p2, "%s/values.npy", d2);
    if (file_exists(p2)) copy_npy(d2, "values", d1, "values");  /* put back, if the dump wrote it */
    bad = tensor_new2(3, 6);
    save_npy(d1, "mask", &bad);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "does not broadcast", "a (3, S) mask against T = 4 is refused");
    tensor_free(&bad);
    snprintf(p2, sizeof p2, "%s/mask.npy", d2);
    if (file_exists(p2)) copy_npy(d2, "mask", d1, "mask");  /* put back, if the dump wrote it */
    snprintf(p1, sizeof p1, "%s/fc_out.bias.npy", d1);
    remove(p1);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "fc_out.bias", "a missing fc_out.bias is refused, naming it");
    ok(!file_exists(never), "and no refusal wrote anything");
    refuses(prog, ARGS("--train"), "--train", "--train is refused: the post's module has no dropout");
}

/* Tested through the program, not called here. */
static void unused_here(void) { (void)mha_shared_heads_print; }

/* --example slices: one (8, 8) matrix for both heads. Head 0 sees the word part and puts at
 * least 0.98 of each row on the keys of its word, shared equally; head 1 sees the position
 * part and puts at least 0.98 on its own position. */
static void test_slices(const char *tmp) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/slices", tmp);
    int status = run("mha_shared_heads", ARGS("--example", "slices", "--quiet", "--dump", dir));
    ok(status == 0, "--example slices runs and dumps its case");
    if (status != 0) return;
    Tensor x = load_npy(dir, "query"), att = load_npy(dir, "attn");        // (1, T, 16), (1, 2, T, T)
    int T = x.shape[1];
    double word_on, word_spread, self_on = 1;
    same_word_share(&x, att.data, T, &word_on, &word_spread);           // head 0
    for (int t = 0; t < T; t++) self_on = fmin(self_on, att.data[(T + t) * T + t]);   // head 1
    ok(att.shape[1] == 2 && T == sentence_length(SENTENCE), "slices: two heads over the sentence's %d words", T);
    ok(word_on >= 0.98 && word_spread <= 1e-6,
       "slices, head 0 (the word part): every row puts at least 0.98 on the keys of its word, equally (%.4f)", word_on);
    ok(self_on >= 0.98, "slices, head 1 (the position part): every row puts at least 0.98 on itself (%.4f)", self_on);
    tensor_free(&x); tensor_free(&att);
}

int main(void) {
    unused_here();
    char tmp[] = "/tmp/abh-mha-shared-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    TEST_GROUP(test_against_reference());
    TEST_GROUP(test_fill());
    TEST_GROUP(test_flattening());
    TEST_GROUP(test_block_diagonal(tmp));
    TEST_GROUP(test_slices(tmp));
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
