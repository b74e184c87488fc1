/* Tests for chapter 8: mhsa_relu (the ReLU MHSA notebook's MultiHeadSelfAttention) and
 * scale_study (the sqrt(d) figure).
 *
 * mhsa_relu: the forward pass against a double-precision reference (no scale,
 * the additive causal mask, the ReLU), also with scores tens of thousands
 * apart, where adding -10000 and filling part ways; the zeros the ReLU makes;
 * the program's files and refusals. scale_study: its table against a separate
 * computation of the same draws in double precision, the facts the chapter
 * reads off it, and its command line. */
#define TESTING
#include "mhsa_relu.c"
#include "scale_study.c"
#include "tap.h"
#include "run.h"
#define MODULE_MHSA_RELU
#include "reference.h"

/* ---- mhsa_relu: a reference in double ------------------------------------------- */

/* mhsa_relu's attention for tests/reference.h: no scale, and with causal set, -10000
 * added to the scores of keys after the query, in double. */
static RefAttn attention_of(const MhsaRelu *m, int causal, int B, int T) {
    return (RefAttn){ .B = B, .T = T, .H = m->heads, .hd = m->dim / m->heads, .divisor = 1.0, .causal = causal,
                      .hide = REF_ADD_10000 };
}

static RefCase case_of(const MhsaRelu *m, const float *xf, int causal, int B, int T, const float *att) {
    RefWeights w = { m->wq.data, m->bq.data, m->wk.data, m->bk.data, m->wv.data, m->bv.data, m->wo.data, m->bo.data };
    return (RefCase){ w, xf, xf, xf, m->dim, attention_of(m, causal, B, T), NULL, att };
}

/* out (B, T, D) before (pre) and after the ReLU; att (B, H, T, T); in eout and eatt
 * how far a float32 pass, its sums in any order, may be from them (reference.h): the
 * ReLU moves no two numbers further apart, so out's bound is pre's. */
static void reference(double *out, double *pre, double *att, double *eout, double *eatt, const MhsaRelu *m,
                      const float *xf, int causal, int B, int T) {
    RefCase c = case_of(m, xf, causal, B, T, NULL);
    ref_attention_err(pre, eout, att, eatt, &c.w, xf, xf, xf, m->dim, &c.a);
    for (long i = 0; i < (long)B * T * m->dim; i++) out[i] = pre[i] > 0 ? pre[i] : 0;
}

/* 1 if the weights were written at all: a forward pass stopped at a stub (in a
 * handout) leaves them zero, and a check of its zeros passes to no purpose. */
static int written(const float *att, long n) {
    for (long i = 0; i < n; i++) if (att[i] != 0.0f) return 1;
    return 0;
}

/* A module and its input made from a seed through the program's own list of
 * tensors, as its main makes them (tests/reference.h). */
static void make_case(MhsaRelu *m, Tensor *x, int B, int T, int D, int H, uint64_t seed) {
    make_module(m, x, &(Args){ .batch = B, .seq = T, .dim = D, .heads = H, .seed = seed });
}

static void test_against_reference(void) {
    struct { int B, T, D, H, causal; } cases[] = {
        { 2, 3, 8, 2, 0 }, { 5, 3, 8, 2, 1 }, { 1, 6, 64, 2, 1 }, { 3, 7, 12, 3, 0 }, { 2, 9, 32, 4, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int B = cases[c].B, T = cases[c].T, D = cases[c].D, H = cases[c].H;
        MhsaRelu m = {0};
        Tensor x;
        make_case(&m, &x, B, T, D, H, 60 + c);
        Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
        double *ratt = malloc(sizeof(double) * att.size), *rout = malloc(sizeof(double) * out.size);
        double *pre = malloc(sizeof(double) * out.size), *eatt = ref_new(att.size), *eout = ref_new(out.size);
        STUDENT(mhsa_relu_forward(out.data, att.data, &m, x.data, cases[c].causal, B, T));
        reference(rout, pre, ratt, eout, eatt, &m, x.data, cases[c].causal, B, T);
        tap_layout("b t d", 3, out.shape);
        int good = within_ok(out.data, rout, eout, out.size, "(B, T, D, H) = (%d, %d, %d, %d)%s: the output matches the "
                             "reference, within what float32 rounding allows", B, T, D, H, cases[c].causal ? ", causal" : "");
        tap_layout("b h t s", 4, att.shape);
        good &= within_ok(att.data, ratt, eatt, att.size, "(B, T, D, H) = (%d, %d, %d, %d)%s: the weights match",
                          B, T, D, H, cases[c].causal ? ", causal" : "");
        RefCase student = case_of(&m, x.data, cases[c].causal, B, T, att.data);
        if (!good) ref_explain(&student, NULL, 0);
        long exact = 0, negative = 0;
        for (long i = 0; i < out.size; i++) {               /* beyond its bound, a sign is certain */
            negative += pre[i] < -eout[i];
            exact += pre[i] < -eout[i] ? out.data[i] == 0.0f : pre[i] > eout[i] ? out.data[i] > 0 : 1;
        }
        ok(exact == out.size, "(B, T, D, H) = (%d, %d, %d, %d)%s: the ReLU zeroes exactly the %ld negative outputs",
           B, T, D, H, cases[c].causal ? ", causal" : "", negative);
        if (cases[c].causal) {
            long hidden = 0, zero = 0;
            for (long r = 0; r < (long)B * H * T; r++)
                for (int s = (int)(r % T) + 1; s < T; s++) hidden++, zero += att.data[r * T + s] == 0.0f;
            ok(written(att.data, att.size) && zero == hidden, "(B, T, D, H) = (%d, %d, %d, %d), causal: the additive "
               "-10000 gives each of the %ld later keys exactly 0", B, T, D, H, hidden);
        }
        free(ratt); free(rout); free(pre); free(eatt); free(eout);
        tensor_free(&att); tensor_free(&out); tensor_free(&x);
        free_module(&m);
    }
}

/* The notebook's mask adds -10000 to a hidden score; it does not replace it. For
 * ordinary scores the difference never shows: exp(-10000) is 0 in any float, so
 * filling with -inf, -1e20 or -10000 gives the same bits. It shows when scores
 * are tens of thousands apart, which an unscaled module reaches when its
 * queries grow: a hidden score more than about 10000 above its row's visible
 * ones keeps its weight, and a row whose visible scores all lie far below
 * -10000 must still give its hidden keys nothing. Queries multiplied by 1e5
 * give rows of both kinds, counted here from the reference's own scores (the
 * weights test fails if the case ever loses them). */
static void test_huge_scores(void) {
    int B = 2, T = 6, D = 8, H = 2;
    MhsaRelu m = {0};
    Tensor x;
    make_case(&m, &x, B, T, D, H, 71);
    for (long i = 0; i < m.wq.size; i++) m.wq.data[i] *= 1e5f;
    for (long i = 0; i < m.bq.size; i++) m.bq.data[i] *= 1e5f;
    Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
    double *ratt = malloc(sizeof(double) * att.size), *rout = malloc(sizeof(double) * out.size);
    double *pre = malloc(sizeof(double) * out.size), *eatt = ref_new(att.size), *eout = ref_new(out.size);
    STUDENT(mhsa_relu_forward(out.data, att.data, &m, x.data, 1, B, T));
    reference(rout, pre, ratt, eout, eatt, &m, x.data, 1, B, T);

    /* tell the rows apart by their raw scores q . k, projected again in double */
    double *xd = ref_doubles(x.data, x.size), *q = ref_new(x.size), *k = ref_new(x.size);
    double *raw = ref_new(att.size);
    ref_linear(q, xd, m.wq.data, m.bq.data, (long)B * T, D, D);
    ref_linear(k, xd, m.wk.data, m.bk.data, (long)B * T, D, D);
    RefAttn a = attention_of(&m, 1, B, T);
    ref_scores(raw, q, k, &a);                             /* q . k, no scale: (B, H, T, T) */
    long comes_back = 0, far_below = 0;
    for (long r = 0; r < (long)B * H * T; r++) {
        int t = (int)(r % T);
        if (t == T - 1) continue;                          /* the last query hides nothing */
        double seen = -INFINITY, hidden = -INFINITY;
        for (int s = 0; s < T; s++)
            if (s <= t) seen = fmax(seen, raw[r * T + s]);
            else hidden = fmax(hidden, raw[r * T + s]);
        comes_back += hidden - 10000 > seen + 100;         /* a hidden key wins, by far */
        far_below += seen < -10100;                        /* -10000 put in its place would win */
    }
    double worst = 0;                              /* the largest error, as a fraction of its bound */
    long at = 0;
    for (long i = 0; i < att.size; i++)
        if (!(fabs(att.data[i] - ratt[i]) <= worst * eatt[i])) worst = fabs(att.data[i] - ratt[i]) / eatt[i], at = i;
    ok(worst <= 1 && comes_back > 0 && far_below > 0, "queries times 1e5, causal: the weights match the reference "
       "within what float32 rounding allows (scores this large round by whole hundredths), in the %ld rows where a "
       "hidden key is over 10000 above the visible ones and the %ld where every visible score is below -10100 too",
       comes_back, far_below);
    if (!(worst <= 1)) diag("weight %ld: %.6g, the reference %.6g, bound %.2g", at, att.data[at], ratt[at], eatt[at]);
    RefCase student = case_of(&m, x.data, 1, B, T, att.data);
    if (!(worst <= 1)) ref_explain(&student, NULL, 0);
    within_ok(out.data, rout, eout, out.size, "queries times 1e5, causal: the output matches the reference");
    free(xd); free(q); free(k); free(raw); free(ratt); free(rout); free(pre); free(eatt); free(eout);
    tensor_free(&att); tensor_free(&out); tensor_free(&x);
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

/* About half of the outputs are zero, and whole columns tend to be; the chapter
 * states both percentages. */
static void test_zeros(void) {
    long zeros = 0, total = 0, dead = 0, columns = 0, agree = 0;
    for (int seed = 0; seed < 20; seed++) {
        int B = 4, T = 8, D = 32, H = 4;
        MhsaRelu m = {0};
        Tensor x;
        make_case(&m, &x, B, T, D, H, 200 + seed);
        Tensor att = tensor_new(4, (int[]){ B, H, T, T }), out = tensor_new3(B, T, D);
        STUDENT(mhsa_relu_forward(out.data, att.data, &m, x.data, 0, B, T));
        long z, d, z_before = zeros, d_before = dead;
        for (long i = 0; i < out.size; i++) zeros += out.data[i] == 0.0f;
        total += out.size;
        for (int j = 0; j < D; j++) {
            long r = 0;
            while (r < (long)B * T && out.data[r * D + j] == 0.0f) r++;
            dead += r == (long)B * T;
        }
        columns += D;
        relu_zeros(&out, D, &z, &d);                    /* what the program prints */
        agree += z == zeros - z_before && d == dead - d_before;
        tensor_free(&att); tensor_free(&out); tensor_free(&x);
        free_module(&m);
    }
    double frac = (double)zeros / total, dead_frac = (double)dead / columns;
    ok(frac > 0.35 && frac < 0.65, "over 20 fresh modules, %.0f%% of the outputs are zero: about half", 100 * frac);
    ok(frac < 1 && dead_frac > 0.25, "and %.0f%% of the output columns are zero at all 32 positions", 100 * dead_frac);
    ok(agree == 20, "the program's relu_zeros counts the same zeros and columns in all %ld modules", agree);
    char said[256], *text = chapter_text("chapters/08-variants.md");
    snprintf(said, sizeof said, "the test counts %.0f%% of the outputs at zero, and %.0f%% of the columns zero at every one "
             "of 32 positions", 100 * frac, 100 * dead_frac);
    ok(strstr(text, said) != NULL, "chapter 8 says: %s", said);
    free(text);
}

/* ---- scale_study: the same draws, recomputed in double --------------------------- */

/* The table (9, 5) scale_study writes for N queries of T keys from seed, in double. */
static void reference_study(double *table, int N, int T, uint64_t seed) {
    Rng rng;
    rng_seed(&rng, seed);
    float lim = sqrtf(3.0f);
    for (int i = 0; i < 9; i++) {
        int d = 4 << i;
        float *q = malloc(sizeof *q * d), *k = malloc(sizeof *k * (size_t)T * d);
        double *s = malloc(sizeof *s * T), sum[2] = { 0, 0 }, sq[2] = { 0, 0 }, peak[2] = { 0, 0 };
        for (int n = 0; n < N; n++) {
            rand_uniform(q, d, -lim, lim, &rng);
            rand_uniform(k, (long)T * d, -lim, lim, &rng);
            for (int c = 0; c < 2; c++) {
                double best = -INFINITY, total = 0;
                for (int j = 0; j < T; j++) {
                    double dot = 0;
                    for (int e = 0; e < d; e++) dot += (double)q[e] * k[(long)j * d + e];
                    s[j] = c ? dot / sqrt((double)d) : dot;
                    sum[c] += s[j], sq[c] += s[j] * s[j];
                    best = fmax(best, s[j]);
                }
                for (int j = 0; j < T; j++) total += exp(s[j] - best);
                peak[c] += 1.0 / total;                 /* the largest weight: exp(0) / total */
            }
        }
        double *row = table + i * 5;
        row[0] = d;
        for (int c = 0; c < 2; c++) {
            double mean = sum[c] / ((double)N * T);
            row[1 + c] = sqrt(sq[c] / ((double)N * T) - mean * mean);
            row[3 + c] = peak[c] / N;
        }
        free(q); free(k); free(s);
    }
}

static void test_scale_study(const char *tmp) {
    char d1[600], d2[600], never[600], p1[1100], p2[1100];
    snprintf(d1, sizeof d1, "%s/study", tmp);
    snprintf(d2, sizeof d2, "%s/study-again", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    int status = run("scale_study", ARGS("--batch", "300", "--seq", "16", "--seed", "5", "--quiet", "--dump", d1));
    Tensor t = load_written(d1, "scale");
    int table = status == 0 && t.ndim == 2 && t.shape[0] == 9 && t.shape[1] == 5;
    ok(table, "scale_study --dump writes scale.npy, (9, 5)");
    const char *again = "its table is the same draws computed again in double precision";
    if (table) {
        double want[45];
        reference_study(want, 300, 16, 5);
        close_ok(t.data, want, 45, 1e-6, 1e-4, "%s", again);
    } else {                          /* the run stopped (at a stub, in a handout): no table */
        ok(0, "%s", again);
    }
    int spread = table, flat = table, rising = table;
    for (int i = 0; table && i < 9; i++) {
        const float *r = t.data + i * 5;
        spread &= fabs(r[1] / sqrt(r[0]) - 1) < 0.1;
        flat &= fabs(r[2] - 1) < 0.1 && r[4] > 0.15 && r[4] < 0.35;
        if (i) rising &= r[3] > r[3 - 5];
    }
    ok(spread, "the std of q.k is sqrt(d) within 10%% at every width, 4 to 1024");
    ok(flat, "scaled, the std stays within 10%% of 1 and the largest weight between 0.15 and 0.35");
    ok(rising && t.data[8 * 5 + 3] > 0.9, "unscaled, the largest weight rises with d, to %.3f at d = 1024", table ? t.data[8 * 5 + 3] : 0.0);
    tensor_free(&t);

    run("scale_study", ARGS("--batch", "300", "--seq", "16", "--seed", "5", "--quiet", "--dump", d2));
    snprintf(p1, sizeof p1, "%s/scale.npy", d1);
    snprintf(p2, sizeof p2, "%s/scale.npy", d2);
    ok(table && same_file(p1, p2), "the same seed gives the same bytes");
    status = run("scale_study", ARGS("--batch", "50", "--seq", "4"));
    ok(status == 0 && strstr(run_out, "50 queries per width, each against 4 keys") && strstr(run_out, "  1024 ") &&
       strstr(run_out, "a uniform row of 4 keys: 0.2500"), "scale_study prints its table, d = 4 .. 1024");
    const char *prog = program_path("scale_study");
    refuses(prog, ARGS("--dim", "8", "--dump", never), "--dim", "--dim is refused: the study sweeps d");
    refuses(prog, ARGS("--load", d1), "unknown flag --load", "--load is refused: the study draws its own numbers");
    refuses(prog, ARGS("--heads", "2"), "--heads", "--heads is refused");
    ok(!file_exists(never), "and nothing is written");
}

/* ---- the mhsa_relu program ----------------------------------------------------- */

static void test_program(const char *tmp) {
    char d1[600], d2[600], never[600], p1[1100], p2[1100];
    snprintf(d1, sizeof d1, "%s/first", tmp);
    snprintf(d2, sizeof d2, "%s/second", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    const char *prog = program_path("mhsa_relu");

    int status = run("mhsa_relu", NO_ARGS);
    ok(status == 0 && strstr(run_out, "num_header=2, masked=False) on x (2, 3, 8)") && strstr(run_out, "output: tensor([[[") &&
       strstr(run_out, "zeros in the output: ") && strstr(run_out, "parameters: 288"), "run without flags: the notebook's sizes, the zeros counted");
    status = run("mhsa_relu", ARGS("--causal", "--batch", "3", "--quiet", "--dump", d1));
    run("mhsa_relu", ARGS("--load", d1, "--heads", "2", "--causal", "--dump", d2, "--quiet"));
    const char *files[] = { "out", "attn", "x", "wq.0.weight", "wq.0.bias", "wk.0.weight", "wk.0.bias",
                            "wv.0.weight", "wv.0.bias", "wo.0.weight", "wo.0.bias" };
    int all_same = status == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (!same_file(p1, p2)) { all_same = 0; diag("%s differs", files[i]); }
    }
    ok(all_same, "--load of a --causal --dump, with --causal again, reproduces all eleven files byte for byte");
    snprintf(p1, sizeof p1, "%s/out.npy", d1);
    snprintf(p2, sizeof p2, "%s/mask.npy", d1);
    ok(file_exists(p1) && !file_exists(p2), "no mask file: the notebook's mask is made from T inside forward");
    status = run("mhsa_relu", ARGS("--load", d1, "--heads", "2", "--quiet", "--dump", d2));
    Tensor a1 = load_written(d1, "attn"), a2 = load_written(d2, "attn");
    ok(status == 0 && a1.data && a2.data && a1.size == a2.size && memcmp(a1.data, a2.data, sizeof(float) * a1.size) != 0,
       "the same files without --causal attend to later keys");
    tensor_free(&a1); tensor_free(&a2);

    refuses(prog, ARGS("--heads", "3"), "does not divide", "--heads 3 with D = 8 is refused");
    refuses(prog, ARGS("--kv-seq", "4"), "--kv-seq", "--kv-seq is refused: self-attention");
    refuses(prog, ARGS("--train"), "--train", "--train is refused: the notebook's module has no dropout");
    mkdir(d1, 0777);                  /* there even if the run stopped at a stub, for the files written below */
    Tensor bad = tensor_new2(3, 8);
    snprintf(p1, sizeof p1, "%s/x.npy", d1);
    npy_save(p1, &bad);
    tensor_free(&bad);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "x.npy", "a 2-d x is refused, naming x.npy");
    Tensor x = load_written(d2, "x");                  /* put back, if the dump wrote it */
    if (x.data) npy_save(p1, &x);
    tensor_free(&x);
    snprintf(p1, sizeof p1, "%s/wo.0.weight.npy", d1);
    remove(p1);
    refuses(prog, ARGS("--load", d1, "--heads", "2", "--dump", never), "wo.0.weight", "a missing wo.0.weight is refused, naming it");
    ok(!file_exists(never), "and no refusal wrote anything");
}

/* ---- --example recent-words and recent-words-scaled: what no scale does to a map ----- */

/* Both runs' weights, (1, 1, T, T): query t's row puts at least 0.99 on key t-1 without the
 * scale, and at most 0.8 on any key with wq divided by 4 (rows 2..T-1; row 0 has one visible
 * key, row 1 two). Later keys get exactly 0 in both. */
static void test_recent_words(const char *tmp) {
    char raw[1024], scaled[1024];
    snprintf(raw, sizeof raw, "%s/recent-words", tmp);
    snprintf(scaled, sizeof scaled, "%s/recent-words-scaled", tmp);
    int status = run("mhsa_relu", ARGS("--example", "recent-words", "--quiet", "--dump", raw));
    status |= run("mhsa_relu", ARGS("--example", "recent-words-scaled", "--quiet", "--dump", scaled));
    ok(status == 0, "--example recent-words and recent-words-scaled run and dump their cases");
    /* a run a stub stopped wrote nothing: every test below then fails by its own name */
    Tensor a = load_written(raw, "attn"), b = load_written(scaled, "attn"), wa = load_written(raw, "wq.0.weight"),
           wb = load_written(scaled, "wq.0.weight");
    int T = status == 0 && a.ndim == 4 && b.size == a.size ? a.shape[3] : 0, quarter = T > 0 && wa.size == wb.size;
    for (long i = 0; quarter && i < wa.size; i++) quarter = wb.data[i] == wa.data[i] * 0.25f;
    ok(quarter && T == sentence_length(SENTENCE), "recent-words-scaled is recent-words with wq times 1/sqrt(16)");
    double least_raw = T > 0, most_scaled = T > 0 ? 0 : 1;
    int on_previous = T > 0, later_zero = T > 0;
    for (int t = 2; t < T; t++)
        for (int s = 0; s < T; s++) {
            double x = a.data[t * T + s], y = b.data[t * T + s];
            if (s == t - 1) least_raw = fmin(least_raw, x), on_previous &= y > 0.5;
            most_scaled = fmax(most_scaled, y);
            if (s > t) later_zero &= x == 0.0 && y == 0.0;
        }
    ok(least_raw >= 0.99, "no scale: from query 2 on, every row puts at least 0.99 on key t-1 (%.4f)", least_raw);
    ok(most_scaled <= 0.8 && on_previous,
       "wq / 4: from query 2 on, no row puts more than 0.8 on any key (%.4f), the most on key t-1", most_scaled);
    ok(later_zero, "masked: every key after its query gets exactly 0 in both");
    tensor_free(&a); tensor_free(&b); tensor_free(&wa); tensor_free(&wb);
}

/* Tested through the programs, not called here. */
static void unused_here(void) { (void)mhsa_relu_print; (void)study_one_width; (void)study_width; }

int main(void) {
    unused_here();
    char tmp[] = "/tmp/abh-mhsa-relu-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    /* Exercise 8.6 (passes 3 to 5: no scale, the additive -10000, the softmax): the tests that say it is done */
    EXERCISE("8.6", 18, test_against_reference());
    EXERCISE("8.6", 2, test_huge_scores());
    EXERCISE("8.6", 5, test_recent_words(tmp));
    TEST_GROUP(test_zeros());
    TEST_GROUP(test_scale_study(tmp));
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
