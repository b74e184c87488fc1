/* Tests for chapter 13: positions. rope (chapter 6's GroupedQueryAttention with rotary
 * position embedding on its queries and keys) and positions (the sinusoids).
 *
 * rope.c is included with TESTING defined. The reference is written here, in double
 * precision, on tests/reference.h's loops: q = q_proj(x) and k = k_proj(x) with the heads
 * side by side, each pair of each head turned by pos[b, t] * inv_freq[i] computed in
 * double (pairs (i, i + hd/2) or (2i, 2i + 1)), then ref_scores, ref_softmax (-inf fill)
 * and ref_output. It calls nothing of the book's but reference.h's plain loops.
 * Other checks hold the decoding to the full causal pass within 1e-5 (the bits in a note:
 * a correct Exercise 6.7 in another order may round otherwise) and run the real
 * programs: every earlier self-attention program against a reorder of its input, rope
 * against gqa, the dumps, the refusals, and positions's table. */
#define TESTING
#include "rope.c"
#include "tap.h"
#include "run.h"
#define MODULE_GQA
#include "reference.h"

/* ---- the reference, in double ------------------------------------------------------ */

/* v (BT, N*hd), heads side by side: pair i of head n of row bt turned by the angle
 * pos[bt] * inv_freq[i], in double; pairs as rope_rotate's. */
static void ref_turn(double *v, long BT, int N, int hd, const float *pos, const float *inv_freq, int pairs) {
    for (long bt = 0; bt < BT; bt++)
        for (int n = 0; n < N; n++)
            for (int i = 0; i < hd / 2; i++) {
                double *row = v + (bt * N + n) * hd, angle = (double)pos[bt] * (double)inv_freq[i];
                int one = pairs == ROPE_HALVES ? i : 2 * i, two = pairs == ROPE_HALVES ? i + hd / 2 : 2 * i + 1;
                double x1 = row[one], x2 = row[two];
                row[one] = x1 * cos(angle) - x2 * sin(angle);
                row[two] = x2 * cos(angle) + x1 * sin(angle);
            }
}

/* The forward pass with RoPE in double: out (B, T, D), att (B, H, T, T). causal: torch.tril. */
static void reference(double *out, double *att, const GQA *m, const float *x, const float *pos,
                      const float *inv_freq, int pairs, int causal, int B, int T) {
    int D = m->dim, H = m->heads, G = m->kv_heads, hd = D / H;
    long BT = (long)B * T;
    RefWeights w = { m->q_w.data, m->q_b.data, m->k_w.data, m->k_b.data, m->v_w.data, m->v_b.data,
                     m->o_w.data, m->o_b.data };
    RefAttn a = { .B = B, .T = T, .H = H, .G = G, .hd = hd, .causal = causal, .hide = REF_FILL_INF };
    double *xd = ref_doubles(x, BT * D), *q = ref_new(BT * H * hd), *k = ref_new(BT * G * hd);
    ref_linear(q, xd, w.q_w, w.q_b, BT, D, H * hd);
    ref_linear(k, xd, w.k_w, w.k_b, BT, D, G * hd);
    ref_turn(q, BT, H, hd, pos, inv_freq, pairs);
    ref_turn(k, BT, G, hd, pos, inv_freq, pairs);
    ref_scores(att, q, k, &a);
    ref_softmax(att, &a);
    ref_output(out, att, &w, x, D, &a);
    free(xd); free(q); free(k);
}

/* ---- cases ------------------------------------------------------------------------- */

enum { FROM_0, LATER, JUMP };            /* positions 0 .. T-1; 5 + 6b + t; a jump of 36 after t = 3 */
typedef struct Case { int B, T, D, H, G, positions, causal; const char *what; } Case;

static const Case cases[] = {
    { 1, 4, 16, 4, 2, FROM_0, 0, "the default case: H = 4, G = 2, hd = 4" },
    { 2, 5, 12, 3, 3, LATER, 1, "G = H = 3, hd = 4, B = 2, positions from 5 and 11, causal" },
    { 2, 6, 16, 4, 1, JUMP, 1, "G = 1, B = 2, positions that jump, causal" },
    { 3, 7, 24, 6, 2, LATER, 0, "H = 6, G = 2, B = 3, positions from 5, 11, 17" },
    { 1, 1, 8, 2, 2, FROM_0, 1, "one token: T = 1" },
    { 2, 9, 32, 4, 2, JUMP, 0, "hd = 8: four pairs, positions that jump" },
    { 1, 6, 64, 2, 1, FROM_0, 1, "hd = 32: sixteen pairs, G = 1, causal" },
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

/* A case's module and X, drawn as rope and gqa draw them; pos (B, T) and inv_freq (hd/2). */
static void make_case(GQA *m, Tensor *x, Tensor *pos, Tensor *inv_freq, const Case *c, uint64_t seed) {
    Args a = { .batch = c->B, .seq = c->T, .dim = c->D, .heads = c->H, .kv_heads = c->G, .seed = seed };
    make_module(m, x, &a);
    *pos = tensor_new2(c->B, c->T), *inv_freq = tensor_new(1, (int[]){ c->D / c->H / 2 });
    for (long i = 0; i < pos->size; i++) {
        int b = (int)(i / c->T), t = (int)(i % c->T);
        pos->data[i] = (float)(c->positions == FROM_0 ? t : c->positions == LATER ? 5 + 6 * b + t : t + (t > 3) * 36);
    }
    rope_inv_freq(inv_freq->data, c->D / c->H);
}

static void free_case(GQA *m, Tensor *x, Tensor *pos, Tensor *inv_freq) {
    free_module(m);
    tensor_free(x); tensor_free(pos); tensor_free(inv_freq);
}

/* The causal triangle (T, T), as mask_final makes it, or an empty tensor. */
static Tensor causal_mask(int causal, int T) {
    Tensor mask = {0};
    if (causal) mask_final(&mask, 1, T, T);
    return mask;
}

static int same_floats(const float *a, const float *b, long n) { return !memcmp(a, b, sizeof(float) * (size_t)n); }

/* ---- Exercise 13.6: the turn ---------------------------------------------------- */

/* rope_rotate on (B, N, T, hd) against ref_turn, in both conventions: 2 tests per shape. */
static void test_turn(void) {
    static const int shapes[][4] = { { 1, 1, 3, 2 }, { 2, 3, 5, 8 }, { 3, 2, 4, 16 } };
    for (int k = 0; k < 3; k++) {
        int B = shapes[k][0], N = shapes[k][1], T = shapes[k][2], hd = shapes[k][3];
        Tensor x = tensor_new(4, (int[]){ B, N, T, hd }), c = tensor_new3(B, T, hd / 2), s = tensor_new3(B, T, hd / 2);
        Tensor pos = tensor_new2(B, T), inv_freq = tensor_new(1, (int[]){ hd / 2 });
        for (long i = 0; i < pos.size; i++) pos.data[i] = (float)(3 * i % 11);
        rope_inv_freq(inv_freq.data, hd);
        rope_angles(c.data, s.data, pos.data, inv_freq.data, (long)B * T, hd);
        for (int pairs = ROPE_HALVES; pairs <= ROPE_NEIGHBOURS; pairs++) {
            Rng rng;
            rng_stream(&rng, 13 + k, "x");
            rand_uniform(x.data, x.size, -1.0f, 1.0f, &rng);
            double *want = ref_new(x.size);               /* (B, N, T, hd) read as (B*N*T, 1, hd) */
            for (long i = 0; i < x.size; i++) want[i] = x.data[i];
            Tensor rowpos = tensor_new(1, (int[]){ B * N * T });      /* each row's position */
            for (long r = 0; r < rowpos.size; r++) rowpos.data[r] = pos.data[r / (N * T) * T + r % T];
            ref_turn(want, rowpos.size, 1, hd, rowpos.data, inv_freq.data, pairs);
            STUDENT(rope_rotate(x.data, c.data, s.data, pairs, B, N, T, hd));
            close_ok(x.data, want, x.size, 2e-6, 0, "the turn of (%d, %d, %d, %d), pairs %s, matches a double loop",
                     B, N, T, hd, pairs == ROPE_HALVES ? "(i, i + hd/2)" : "(2i, 2i + 1)");
            free(want); tensor_free(&rowpos);
        }
        tensor_free(&x); tensor_free(&c); tensor_free(&s); tensor_free(&pos); tensor_free(&inv_freq);
    }
}

/* The forward pass against the double reference: 2 tests per case. */
static void test_forward(void) {
    for (int i = 0; i < NCASES; i++) {
        const Case *cs = &cases[i];
        GQA m = {0};
        Tensor x, pos, inv_freq, mask = causal_mask(cs->causal, cs->T);
        make_case(&m, &x, &pos, &inv_freq, cs, 40 + (uint64_t)i);
        Tensor att = tensor_new(4, (int[]){ cs->B, cs->H, cs->T, cs->T }), out = tensor_new3(cs->B, cs->T, cs->D);
        double *ratt = ref_new(att.size), *rout = ref_new(out.size);
        STUDENT(rope_forward(out.data, att.data, &m, x.data, mask.data ? &mask : NULL, pos.data, inv_freq.data,
                             ROPE_HALVES, cs->B, cs->T));
        reference(rout, ratt, &m, x.data, pos.data, inv_freq.data, ROPE_HALVES, cs->causal, cs->B, cs->T);
        close_ok(att.data, ratt, att.size, 1e-6, 0, "%s: the weights match a double reference", cs->what);
        close_ok(out.data, rout, out.size, 1e-5, 0, "%s: the output matches a double reference", cs->what);
        free(ratt); free(rout);
        tensor_free(&att); tensor_free(&out); tensor_free(&mask);
        free_case(&m, &x, &pos, &inv_freq);
    }
}

/* Meta's weights, turned in pairs of neighbours, against the same weights renumbered for
 * Hugging Face's halves (permute in the chapter): 2 tests per case. */
static void renumber(float *to, const float *from, int heads, int hd, int cols) {
    for (int h = 0; h < heads; h++)
        for (int j = 0; j < hd; j++) {
            int meta = j < hd / 2 ? 2 * j : 2 * (j - hd / 2) + 1;         /* the row Hugging Face's j came from */
            memcpy(to + ((long)h * hd + j) * cols, from + ((long)h * hd + meta) * cols, sizeof(float) * (size_t)cols);
        }
}

static void test_conventions(void) {
    for (int i = 2; i < 4; i++) {
        const Case *cs = &cases[i];
        int hd = cs->D / cs->H;
        GQA meta = {0}, hf;
        Tensor x, pos, inv_freq, mask = causal_mask(cs->causal, cs->T);
        make_case(&meta, &x, &pos, &inv_freq, cs, 60 + (uint64_t)i);
        hf = meta;
        hf.q_w = tensor_new(2, meta.q_w.shape), hf.q_b = tensor_new(1, meta.q_b.shape);
        hf.k_w = tensor_new(2, meta.k_w.shape), hf.k_b = tensor_new(1, meta.k_b.shape);
        renumber(hf.q_w.data, meta.q_w.data, cs->H, hd, cs->D);
        renumber(hf.q_b.data, meta.q_b.data, cs->H, hd, 1);
        renumber(hf.k_w.data, meta.k_w.data, cs->G, hd, cs->D);
        renumber(hf.k_b.data, meta.k_b.data, cs->G, hd, 1);
        int att_shape[4] = { cs->B, cs->H, cs->T, cs->T };
        Tensor a1 = tensor_new(4, att_shape), a2 = tensor_new(4, att_shape);
        Tensor o1 = tensor_new3(cs->B, cs->T, cs->D), o2 = tensor_new3(cs->B, cs->T, cs->D);
        const Tensor *mk = mask.data ? &mask : NULL;
        STUDENT(rope_forward(o1.data, a1.data, &meta, x.data, mk, pos.data, inv_freq.data, ROPE_NEIGHBOURS, cs->B, cs->T));
        STUDENT(rope_forward(o2.data, a2.data, &hf, x.data, mk, pos.data, inv_freq.data, ROPE_HALVES, cs->B, cs->T));
        close_ok(a2.data, a1.data, a1.size, 1e-6, 0, "%s: pairs (2i, 2i + 1) on Meta's weights, (i, i + hd/2) on "
                 "them renumbered: the same weights", cs->what);
        close_ok(o2.data, o1.data, o1.size, 1e-5, 0, "%s: and the same output", cs->what);
        tensor_free(&hf.q_w); tensor_free(&hf.q_b); tensor_free(&hf.k_w); tensor_free(&hf.k_b);
        tensor_free(&a1); tensor_free(&a2); tensor_free(&o1); tensor_free(&o2); tensor_free(&mask);
        free_case(&meta, &x, &pos, &inv_freq);
    }
}

/* Every position shifted by the same amount: the weights do not change, to float
 * rounding of the larger angles. 2 tests per case. */
static void test_shift(void) {
    for (int i = 0; i < 4; i++) {
        const Case *cs = &cases[i == 3 ? 5 : i];
        GQA m = {0};
        Tensor x, pos, inv_freq, mask = causal_mask(cs->causal, cs->T);
        make_case(&m, &x, &pos, &inv_freq, cs, 70 + (uint64_t)i);
        int att_shape[4] = { cs->B, cs->H, cs->T, cs->T };
        Tensor a0 = tensor_new(4, att_shape), a1 = tensor_new(4, att_shape), out = tensor_new3(cs->B, cs->T, cs->D);
        Tensor shifted = tensor_new2(cs->B, cs->T);
        const Tensor *mk = mask.data ? &mask : NULL;
        STUDENT(rope_forward(out.data, a0.data, &m, x.data, mk, pos.data, inv_freq.data, ROPE_HALVES, cs->B, cs->T));
        for (int by = 7; by <= 100; by += 93) {
            for (long j = 0; j < pos.size; j++) shifted.data[j] = pos.data[j] + (float)by;
            STUDENT(rope_forward(out.data, a1.data, &m, x.data, mk, shifted.data, inv_freq.data, ROPE_HALVES, cs->B,
                                 cs->T));
            close_ok(a1.data, a0.data, a0.size, 1e-5, 0, "%s: every position + %d, the same weights", cs->what, by);
        }
        tensor_free(&a0); tensor_free(&a1); tensor_free(&out); tensor_free(&shifted); tensor_free(&mask);
        free_case(&m, &x, &pos, &inv_freq);
    }
}

/* --example word-before, cell by cell: softmax over s of 32 cos((s - t + 1) pi/6); and
 * --example reversed: head 0 0.3320 on each noun, head 1 word-before's map. 2 tests. */
static void test_examples(const char *tmp) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/word-before", tmp);
    run("rope", ARGS("--example", "word-before", "--quiet", "--dump", dir));
    Tensor att = load_written(dir, "attn");
    double want[64];
    for (int t = 0; t < 8; t++) {
        double sum = 0;
        for (int s = 0; s < 8; s++) sum += want[t * 8 + s] = exp(32 * cos((s - t + 1) * acos(-1.0) / 6));
        for (int s = 0; s < 8; s++) want[t * 8 + s] /= sum;
    }
    if (same_shape(&att, 4, (int[]){ 1, 1, 8, 8 }))
        close_ok(att.data, want, 64, 1e-6, 0, "--example word-before: every weight is the softmax of 32 cos((s - t + 1) "
                 "30 degrees)");
    else ok(0, "--example word-before: every weight is the softmax of 32 cos((s - t + 1) 30 degrees)");
    snprintf(dir, sizeof dir, "%s/reversed", tmp);
    run("rope", ARGS("--example", "reversed", "--quiet", "--dump", dir));
    Tensor rev = load_written(dir, "attn");
    int good = same_shape(&rev, 4, (int[]){ 2, 2, 8, 8 });
    for (int b = 0; good && b < 2; b++)
        for (int i = 0; i < 64; i++) {
            int s = i % 8, noun = b == 0 ? s % 3 == 1 : s % 3 == 0;     /* nouns: 1, 4, 7; reversed 0, 3, 6 */
            double w0 = noun ? exp(6.0) / (3 * exp(6.0) + 5) : 1 / (3 * exp(6.0) + 5);
            good &= fabs(rev.data[(b * 2 + 0) * 64 + i] - w0) < 1e-6 && fabs(rev.data[(b * 2 + 1) * 64 + i] - want[i]) < 1e-6;
        }
    ok(good, "--example reversed: head 0 gives each noun 0.3320 where the nouns are, in both orders; head 1 keeps "
       "word-before's map in both");
    tensor_free(&att); tensor_free(&rev);
}

/* Decoding, step by step with the cache, against the full causal pass: the output and the
 * weights within 1e-5, the bits in a note (the step and the full pass run chapter 6's
 * attention, whose order of sums is a student's choice in Exercise 6.7), and the cache's
 * keys, each turned once at its position, bit for bit (one row's turn, either way). 3 per case. */
static double largest_difference(const float *a, const float *b, long n) {
    double worst = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        worst = d > worst || d != d ? d : worst;
    }
    return worst;
}
static void test_decode(void) {
    for (int i = 0; i < NCASES; i++) {
        const Case *cs = &cases[i];
        int B = cs->B, T = cs->T, H = cs->H, G = cs->G, hd = cs->D / cs->H;
        GQA m = {0};
        Tensor x, pos, inv_freq, mask = causal_mask(1, T);
        make_case(&m, &x, &pos, &inv_freq, cs, 80 + (uint64_t)i);
        int att_shape[4] = { B, H, T, T };
        Tensor a1 = tensor_new(4, att_shape), a2 = tensor_new(4, att_shape);
        Tensor o1 = tensor_new3(B, T, cs->D), o2 = tensor_new3(B, T, cs->D);
        KVCache c = kv_cache_new(B, G, T, hd);
        STUDENT(rope_forward(o1.data, a1.data, &m, x.data, &mask, pos.data, inv_freq.data, ROPE_HALVES, B, T));
        STUDENT(rope_decode(o2.data, a2.data, &c, &m, x.data, pos.data, inv_freq.data, B, T));
        double d_out = largest_difference(o1.data, o2.data, o1.size);
        double d_att = largest_difference(a1.data, a2.data, a1.size);
        ok(d_out <= 1e-5, "%s: decoding gives the full causal pass's output within 1e-5 (%.2g)", cs->what, d_out);
        ok(d_att <= 1e-5, "%s: and its weights within 1e-5 (%.2g)", cs->what, d_att);
        if (!tap_stub[0]) {
            same_bits_note(o2.data, o1.data, o1.size, "%s: the decoded outputs and the full pass's", cs->what);
            same_bits_note(a2.data, a1.data, a1.size, "%s: the decoded weights and the full pass's", cs->what);
        }
        /* the full pass's keys, turned: k_proj, split, the angles, the turn */
        Tensor k = tensor_new3(B, T, G * hd), kh = tensor_new(4, (int[]){ B, G, T, hd });
        Tensor cs_ = tensor_new3(B, T, hd / 2), sn = tensor_new3(B, T, hd / 2);
        linear(k.data, x.data, m.k_w.data, m.k_b.data, (long)B * T, cs->D, G * hd);
        ref_heads(kh.data, k.data, B, T, G, hd);
        rope_angles(cs_.data, sn.data, pos.data, inv_freq.data, (long)B * T, hd);
        STUDENT(rope_rotate(kh.data, cs_.data, sn.data, ROPE_HALVES, B, G, T, hd));
        ok(c.len == T && same_floats(c.k.data, kh.data, kh.size), "%s: the cache holds each key turned once, at its "
           "own position, bit for bit", cs->what);
        tensor_free(&k); tensor_free(&kh); tensor_free(&cs_); tensor_free(&sn);
        tensor_free(&c.k); tensor_free(&c.v);
        tensor_free(&a1); tensor_free(&a2); tensor_free(&o1); tensor_free(&o2); tensor_free(&mask);
        free_case(&m, &x, &pos, &inv_freq);
    }
}

/* ---- the earlier programs: a reorder of X reorders the maps and the output --------- */

typedef struct Program { const char *name, *input; const char *const *flags; } Program;

/* out (B = 1, T, n) rows and att's last two axes, read in order p, against the first run. */
static int reordered(const Tensor *att1, const Tensor *out1, const Tensor *att2, const Tensor *out2, const int *p,
                     int T, double tol) {
    if (!att1->data || !att2->data || !out1->data || !out2->data || att1->size != att2->size) return 0;
    int n = out1->shape[out1->ndim - 1];
    for (long r = 0; r < att1->size / ((long)T * T); r++)
        for (int t = 0; t < T; t++)
            for (int s = 0; s < T; s++)
                if (fabs(att2->data[(r * T + t) * T + s] - att1->data[(r * T + p[t]) * T + p[s]]) > tol) return 0;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < n; j++)
            if (fabs(out2->data[t * n + j] - out1->data[p[t] * n + j]) > tol) return 0;
    return 1;
}

/* Runs `name flags --load dir`, dumping to out; returns 1 if it ran. */
static int load_and_dump(const Program *pr, const char *dir, const char *out) {
    const char *args[24];
    int n = 0;
    for (int i = 0; pr->flags[i]; i++) args[n++] = pr->flags[i];
    args[n++] = "--load", args[n++] = dir, args[n++] = "--dump", args[n++] = out, args[n++] = "--quiet", args[n] = NULL;
    return run(pr->name, args) == 0;
}

static void test_reorder(const char *tmp) {
    static const int p[5] = { 3, 0, 4, 1, 2 };
    const Program programs[] = {
        { "selfatt_v1", "X", NO_ARGS }, { "selfatt_v2", "X", NO_ARGS }, { "selfatt_v3", "X", NO_ARGS },
        { "selfatt_v4", "X", NO_ARGS }, { "mha", "X", ARGS("--heads", "2") }, { "mqa", "x", ARGS("--heads", "2") },
        { "gqa", "X", ARGS("--heads", "4", "--kv-heads", "2") }, { "rope", "X", ARGS("--heads", "4", "--kv-heads", "2") },
    };
    for (int k = 0; k < (int)(sizeof programs / sizeof programs[0]); k++) {
        const Program *pr = &programs[k];
        char d0[512], d1[512], d2[512], d3[512], path[600];
        snprintf(d0, sizeof d0, "%s/%s-0", tmp, pr->name), snprintf(d1, sizeof d1, "%s/%s-1", tmp, pr->name);
        snprintf(d2, sizeof d2, "%s/%s-2", tmp, pr->name), snprintf(d3, sizeof d3, "%s/%s-3", tmp, pr->name);
        const char *args[24];
        int n = 0;
        for (int i = 0; pr->flags[i]; i++) args[n++] = pr->flags[i];
        const char *size[] = { "--batch", "1", "--seq", "5", "--dim", "8", "--seed", "7", "--quiet", "--dump", d0 };
        for (int i = 0; i < 11; i++) args[n++] = size[i];
        args[n] = NULL;
        run(pr->name, args);
        for (int m = 0; m < 2; m++) {                                    /* no mask: it would need the reorder too */
            snprintf(path, sizeof path, "%s/%s.npy", d0, m ? "mask" : "attention_mask");
            remove(path);
        }
        int ran = load_and_dump(pr, d0, d1);                             /* the case without its mask */
        Tensor x = load_written(d1, pr->input), y = {0};                 /* empty if a stub stopped the run */
        ran &= x.data != NULL && load_and_dump(pr, d1, d2);              /* d2: d1 again, then X reordered */
        if (ran) {
            int D = x.shape[2];
            y = tensor_new(x.ndim, x.shape);
            for (int t = 0; t < 5; t++) memcpy(y.data + t * D, x.data + p[t] * D, sizeof(float) * (size_t)D);
            save_npy(d2, pr->input, &y);
            ran &= load_and_dump(pr, d2, d3);
        }
        Tensor a1 = load_written(d1, "attn"), o1 = load_written(d1, "out"), a3 = load_written(d3, "attn"),
               o3 = load_written(d3, "out");
        int same = ran && reordered(&a1, &o1, &a3, &o3, p, 5, 1e-6);
        if (strcmp(pr->name, "rope"))
            ok(same, "%s: X reordered by p = [3, 0, 4, 1, 2] gives attn[p][:, p] and out[p]: attention alone does "
               "not see the order", pr->name);
        else
            ok(ran && !same, "rope: X reordered by p, its positions not, does not give attn[p][:, p]: it sees the order");
        tensor_free(&x); tensor_free(&y); tensor_free(&a1); tensor_free(&o1); tensor_free(&a3); tensor_free(&o3);
    }
}

/* ---- rope, the program -------------------------------------------------------------- */

/* With every position 0, or every frequency 0, nothing turns: rope is gqa, to the byte. 2 tests. */
static void test_is_gqa(const char *tmp) {
    char g[512], r[512];
    snprintf(g, sizeof g, "%s/gqa", tmp), snprintf(r, sizeof r, "%s/rope-on-gqa", tmp);
    run("gqa", ARGS("--batch", "2", "--seq", "5", "--dim", "16", "--heads", "4", "--kv-heads", "2", "--causal",
                    "--quiet", "--dump", g));
    Tensor zeros = tensor_new2(1, 5);
    mkdir(g, 0777);                                 /* there even when a stub stopped gqa */
    save_npy(g, "position_ids", &zeros);
    run("rope", ARGS("--load", g, "--heads", "4", "--kv-heads", "2", "--quiet", "--dump", r));
    ok(same_npy(g, r, "out") && same_npy(g, r, "attn"), "rope with position_ids all 0 writes gqa's out.npy and attn.npy, "
       "byte for byte");
    snprintf(r, sizeof r, "%s/gqa/position_ids.npy", tmp);
    remove(r);
    Tensor none = tensor_new(1, (int[]){ 2 });
    save_npy(g, "rotary_emb.inv_freq", &none);
    snprintf(r, sizeof r, "%s/rope-on-gqa-2", tmp);
    run("rope", ARGS("--load", g, "--heads", "4", "--kv-heads", "2", "--quiet", "--dump", r));
    ok(same_npy(g, r, "out") && same_npy(g, r, "attn"), "rope with inv_freq all 0 writes gqa's out.npy and attn.npy, "
       "byte for byte");
    tensor_free(&zeros); tensor_free(&none);
}

static void test_program(const char *tmp) {
    char d1[512], d2[512];
    snprintf(d1, sizeof d1, "%s/run", tmp), snprintf(d2, sizeof d2, "%s/run-again", tmp);
    int status = run("rope", ARGS("--batch", "2", "--seq", "6", "--causal", "--dump", d1));
    ok(status == 0 && strstr(run_out, "position_ids: tensor([[0., 1., 2., 3., 4., 5.],") &&
       (strstr(run_out, "the full causal pass's, bit for bit") || strstr(run_out, "within 1e-05 of the full causal pass's")),
       "rope --causal prints its positions and says decoding matched the full pass (bit for bit with the book's code; "
       "within 1e-5 with an Exercise 6.7 or 9.6 that sums in another order)");
    const Written files[] = { { "q_proj.weight", 2, { 16, 16 } }, { "k_proj.weight", 2, { 8, 16 } },
                              { "X", 3, { 2, 6, 16 } }, { "position_ids", 2, { 2, 6 } },
                              { "rotary_emb.inv_freq", 1, { 2 } }, { "attn", 4, { 2, 4, 6, 6 } },
                              { "out", 3, { 2, 6, 16 } } };
    ok(wrote_shapes(d1, files, 7), "rope --dump writes the weights, X, position_ids (B, T), rotary_emb.inv_freq "
       "(hd/2), attn and out");
    run("rope", ARGS("--load", d1, "--heads", "4", "--kv-heads", "2", "--quiet", "--dump", d2));
    ok(same_results(d1, d2) && same_npy(d1, d2, "position_ids"), "rope --load of its own dump writes the same bytes");
    run("rope", ARGS("--quiet"));
    ok(!run_out[0] && !run_err[0], "rope --quiet prints nothing");
    run("rope", ARGS("--help"));
    ok(strstr(run_out, "word-before") && strstr(run_out, "reversed") && strstr(run_out, "defaults: --batch 1 --seq 4 "
       "--dim 16 --heads 4 --kv-heads 2"), "rope --help lists its examples and its defaults");
}

static void test_refusals(const char *tmp) {
    char d[512], e[512];
    snprintf(d, sizeof d, "%s/refuse", tmp), snprintf(e, sizeof e, "%s/refused", tmp);
    run("rope", ARGS("--batch", "3", "--seq", "4", "--quiet", "--dump", d));
    Tensor two = tensor_new2(2, 4), five = tensor_new(1, (int[]){ 5 }), three = tensor_new(1, (int[]){ 3 });
    mkdir(d, 0777);                                 /* there even when a stub stopped the run */
    save_npy(d, "position_ids", &two);
    refuses(program_path("rope"), ARGS("--load", d, "--heads", "4", "--kv-heads", "2", "--dump", e),
            "position_ids must be (T), (1, T) or (B, T)", "a (2, T) position_ids for B = 3 is refused");
    save_npy(d, "position_ids", &five);
    refuses(program_path("rope"), ARGS("--load", d, "--heads", "4", "--kv-heads", "2", "--dump", e),
            "position_ids must be", "a position_ids of 5 positions for T = 4 is refused");
    snprintf(e, sizeof e, "%s/refuse/position_ids.npy", tmp);
    remove(e);
    save_npy(d, "rotary_emb.inv_freq", &three);
    snprintf(e, sizeof e, "%s/refused", tmp);
    refuses(program_path("rope"), ARGS("--load", d, "--heads", "4", "--kv-heads", "2", "--dump", e),
            "inv_freq must be (hd/2) = (2)", "an inv_freq of 3 frequencies for hd = 4 is refused");
    snprintf(e, sizeof e, "%s/refused/out.npy", tmp);
    ok(!file_exists(e), "nothing is written when rope refuses");
    refuses(program_path("rope"), ARGS("--dim", "12", "--heads", "4", "--kv-heads", "2"), "hd must be even",
            "--dim 12 --heads 4 (heads of 3) is refused: no pairs");
    refuses(program_path("rope"), ARGS("--example", "word-before", "--seq", "4"), "leave out --seq",
            "--example word-before refuses --seq");
    refuses(program_path("positions"), ARGS("--dim", "7"), "D must be even", "positions --dim 7 is refused");
    tensor_free(&two); tensor_free(&five); tensor_free(&three);
}

/* positions: the table of 2017, and row t + k as row t turned by k w_i, pair by pair. */
static void test_positions(const char *tmp) {
    char d[512];
    snprintf(d, sizeof d, "%s/pe", tmp);
    int T = 50, D = 16;
    run("positions", ARGS("--seq", "50", "--dim", "16", "--quiet", "--dump", d));
    Tensor pe = load_written(d, "pe");
    double *want = ref_new((long)T * D);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < D / 2; i++) {
            double w = pow(10000.0, -2.0 * i / D);
            want[t * D + 2 * i] = sin(t * w), want[t * D + 2 * i + 1] = cos(t * w);
        }
    if (same_shape(&pe, 2, (int[]){ T, D }))
        close_ok(pe.data, want, (long)T * D, 1e-5, 0, "positions --seq 50 --dim 16: pe[t, 2i] = sin(t w_i), "
                 "pe[t, 2i + 1] = cos(t w_i)");
    else ok(0, "positions --seq 50 --dim 16 writes pe.npy (50, 16)");
    double worst = pe.data ? 0 : 1;
    for (int t = 0; pe.data && t + 7 < T; t++)
        for (int i = 0; i < D / 2; i++) {
            double a = 7 * pow(10000.0, -2.0 * i / D), s = pe.data[t * D + 2 * i], c = pe.data[t * D + 2 * i + 1];
            worst = fmax(worst, fabs(pe.data[(t + 7) * D + 2 * i] - (s * cos(a) + c * sin(a))));
            worst = fmax(worst, fabs(pe.data[(t + 7) * D + 2 * i + 1] - (c * cos(a) - s * sin(a))));
        }
    ok(worst < 1e-5, "row t + 7 of pe is row t with each pair turned by 7 w_i (worst %.1e)", worst);
    tensor_free(&pe); free(want);
}

int main(void) {
    char tmp[] = "/tmp/abh-rope-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    (void)rope_finish; (void)rope_positions;               /* tested through the program */

    /* Exercise 13.6 (the turn): the tests that say it is done */
    EXERCISE("13.6", 6, test_turn());
    EXERCISE("13.6", 2 * NCASES, test_forward());
    EXERCISE("13.6", 4, test_conventions());
    EXERCISE("13.6", 8, test_shift());
    EXERCISE("13.6", 2, test_examples(tmp));
    EXERCISE("13.6", 3 * NCASES, test_decode());
    TEST_GROUP(test_reorder(tmp));
    TEST_GROUP(test_is_gqa(tmp));
    TEST_GROUP(test_program(tmp));
    TEST_GROUP(test_refusals(tmp));
    TEST_GROUP(test_positions(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
