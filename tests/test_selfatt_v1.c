/* Tests for chapter 1: SelfAttV1.
 *
 * The module's functions come from the tangled chapter itself (TESTING hides
 * its main); the reference is tests/reference.h's plain double-precision loop.
 * The command-line checks run the real program, build/bin/selfatt_v1 (or
 * $ABH_BIN/selfatt_v1), as a reader would. */
#define TESTING
#include "selfatt_v1.c"
#include "tap.h"
#include "run.h"
#define MODULE_SELFATT_V1
#include "reference.h"

#include <stdlib.h>

/* ---- an independent reference, in double precision ---------------------- */

/* SelfAttV1 as reference.h's pass sees it: one head, no output projection; out and
 * att, if given, are the student's results, for ref_explain. */
static RefCase case_of(const SelfAttV1 *m, const float *x, int B, int T, const float *out, const float *att) {
    RefWeights w = { m->query_w.data, m->query_b.data, m->key_w.data, m->key_b.data, m->value_w.data,
                     m->value_b.data, NULL, NULL };
    return (RefCase){ w, x, x, x, m->dim, { .B = B, .T = T, .H = 1, .hd = m->dim }, out, att };
}

/* out (B, T, D) and att (B, T, T) for SelfAttV1, straight from the formula
 * softmax(Q K^T / sqrt(D)) V with Q = X Wq^T + bq etc., and in eout and eatt how far
 * a float32 pass, its sums in any order, may be from them (reference.h). */
static void reference(double *out, double *eout, double *att, double *eatt, const SelfAttV1 *m, const float *x,
                      int B, int T) {
    RefCase c = case_of(m, x, B, T, NULL, NULL);
    ref_attention_err(out, eout, att, eatt, &c.w, x, x, x, m->dim, &c.a);
}

/* A module and input made from a seed, with sizes B, T, D, through the
 * program's own list of tensors, as its main makes them. */
static void make_case(SelfAttV1 *m, Tensor *x, int B, int T, int D, uint64_t seed) {
    make_module(m, x, &(Args){ .batch = B, .seq = T, .dim = D, .seed = seed });
}

/* ---- the tests ------------------------------------------------------------- */

/* 1 when no call of this group has stopped at a stub (tap.h notes the one that
 * did): a comparison of two results that a stub left unwritten, zeros against
 * zeros, must not pass. After a stub, such a test fails, and is then skipped,
 * naming the exercise, unless that exercise is its own. */
static int computed(void) { return tap_stub[0] == '\0'; }

static void test_against_reference(void) {
    static const int shapes[][3] = { {3, 2, 4}, {1, 1, 1}, {2, 5, 3}, {2, 9, 16}, {1, 33, 8} };
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int B = shapes[c][0], T = shapes[c][1], D = shapes[c][2];
        SelfAttV1 m = {0};
        Tensor x;
        make_case(&m, &x, B, T, D, 100 + c);
        Tensor att = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
        STUDENT(selfatt_v1_forward(out.data, att.data, &m, x.data, B, T));
        double *ratt = ref_new(att.size), *rout = ref_new(out.size), *eatt = ref_new(att.size), *eout = ref_new(out.size);
        reference(rout, eout, ratt, eatt, &m, x.data, B, T);
        tap_layout("b t d", 3, out.shape);
        int good = within_ok(out.data, rout, eout, out.size, "output matches a double-precision reference for (B, T, D) = "
                             "(%d, %d, %d), within what float32 rounding allows", B, T, D);
        tap_layout("b t s", 3, att.shape);
        good &= within_ok(att.data, ratt, eatt, att.size, "attention weights match the reference for (B, T, D) = (%d, %d, "
                          "%d)", B, T, D);
        RefCase student = case_of(&m, x.data, B, T, out.data, att.data);
        if (!good) ref_explain(&student, NULL, 0);
        double worst = 0, allowed = 1;                   /* the worst row, against the sum of its weights' bounds */
        for (long r = 0; r < (long)B * T; r++) {
            double sum = 0, bound = 0;
            for (int s = 0; s < T; s++) sum += att.data[r * T + s], bound += eatt[r * T + s];
            if (fabs(sum - 1) / bound > worst / allowed) worst = fabs(sum - 1), allowed = bound;
        }
        ok(worst <= allowed, "every row of attention weights sums to 1 for (B, T, D) = (%d, %d, %d)", B, T, D);
        if (worst > allowed) diag("worst row is off by %g, more than its weights' bounds add up to (%.2g)", worst, allowed);
        free(ratt); free(rout); free(eatt); free(eout);
        tensor_free(&att); tensor_free(&out); tensor_free(&x);
        free_module(&m);
    }
}

static void test_hand_worked(void) {
    /* D = 1, T = 2, all weights 1 and biases 0: q = k = v = x. With x = (0, 2):
     * scores [[0, 0], [0, 4]], so row 0 is uniform and row 1 is softmax(0, 4). */
    SelfAttV1 m = { .dim = 1 };
    Tensor *ws[] = { &m.query_w, &m.key_w, &m.value_w }, *bs[] = { &m.query_b, &m.key_b, &m.value_b };
    for (int i = 0; i < 3; i++) {
        *ws[i] = tensor_new2(1, 1); ws[i]->data[0] = 1;
        *bs[i] = tensor_new1(1);
    }
    float x[2] = { 0, 2 }, att[4] = { 0 }, out[2] = { 0 };   /* zeros if a stub stops the pass */
    STUDENT(selfatt_v1_forward(out, att, &m, x, 1, 2));
    double e4 = exp(4.0), w1 = e4 / (1 + e4);
    ok(fabs(att[0] - 0.5) < 1e-7 && fabs(att[1] - 0.5) < 1e-7, "a query orthogonal to every key attends uniformly");
    ok(fabs(att[3] - w1) < 1e-6 && fabs(att[2] - (1 - w1)) < 1e-6, "a hand-worked 2x2 case gives softmax(0, 4) = (0.018, 0.982)");
    ok(fabs(out[0] - 1.0) < 1e-6 && fabs(out[1] - 2 * w1) < 1e-6, "the output is the weighted average of the values");
    free_module(&m);
}

/* --example same-word, the chapter's figure, run as a reader runs it: each row
 * puts nearly all its weight on the keys that hold the query's word, in equal
 * shares, and X is the sentence's word and position parts. */
static void test_same_word(const char *tmp) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/same-word", tmp);
    int status = run("selfatt_v1", ARGS("--example", "same-word", "--quiet", "--dump", dir));
    ok(status == 0, "--example same-word runs and dumps its case");
    if (status != 0) {                           // a stub stopped it: each test fails by name
        ok(0, "the sentence's X: each row one 1 in the word part and one at WORDS + t, zeros elsewhere");
        ok(0, "same-word: every row puts at least 0.95 on the keys of its own word");
        ok(0, "same-word: the keys of one word share a row's weight equally");
        ok(0, "same-word: the lone 'dog' keeps 0.983 on itself, as the chapter says");
        return;
    }
    Tensor x = load_npy(dir, "X");                                         // (1, T, 16)
    Tensor att = load_npy(dir, "attn");                                    // (1, T, T)
    int T = x.shape[1], ones = x.shape[2] == SENTENCE_DIM && T == sentence_length(SENTENCE);
    for (int t = 0; ones && t < T; t++) {
        int word_ones = 0, place_ones = 0;
        for (int d = 0; d < SENTENCE_DIM; d++) {
            float v = x.data[t * SENTENCE_DIM + d];
            ones &= v == 0.0f || v == 1.0f;
            if (d < WORDS) word_ones += v == 1.0f; else place_ones += v == 1.0f;
        }
        ones &= word_ones == 1 && place_ones == 1 && x.data[t * SENTENCE_DIM + WORDS + t] == 1.0f;
    }
    ok(ones, "the sentence's X: each row one 1 in the word part and one at WORDS + t, zeros elsewhere");
    double worst_on, worst_spread;
    same_word_share(&x, att.data, T, &worst_on, &worst_spread);
    ok(worst_on >= 0.95, "same-word: every row puts at least 0.95 on the keys of its own word (%.4f)", worst_on);
    ok(worst_spread <= 1e-6, "same-word: the keys of one word share a row's weight equally");
    ok(fabs(att.data[4 * T + 4] - 0.9829) < 1e-3, "same-word: the lone 'dog' keeps 0.983 on itself, as the chapter says");
    tensor_free(&x);
    tensor_free(&att);
}

static void test_permutation(void) {
    int B = 2, T = 5, D = 6;
    int perm[5] = { 3, 0, 4, 1, 2 };
    SelfAttV1 m = {0};
    Tensor x;
    make_case(&m, &x, B, T, D, 7);
    Tensor xp = tensor_new3(B, T, D);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            memcpy(xp.data + (b * T + t) * D, x.data + (b * T + perm[t]) * D, D * sizeof(float));
    Tensor att = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
    Tensor attp = tensor_new3(B, T, T), outp = tensor_new3(B, T, D);
    STUDENT(selfatt_v1_forward(out.data, att.data, &m, x.data, B, T));
    STUDENT(selfatt_v1_forward(outp.data, attp.data, &m, xp.data, B, T));
    double worst = 0, worst_att = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            for (int i = 0; i < D; i++)
                worst = fmax(worst, fabs(outp.data[(b * T + t) * D + i] - out.data[(b * T + perm[t]) * D + i]));
            for (int s = 0; s < T; s++)
                worst_att = fmax(worst_att, fabs(attp.data[(b * T + t) * T + s] -
                                                 att.data[(b * T + perm[t]) * T + perm[s]]));
        }
    ok(computed() && worst <= 1e-6, "permuting the input positions permutes the output rows the same way");
    if (worst > 1e-6) diag("max abs difference %g", worst);
    ok(computed() && worst_att <= 1e-6, "permuting the input positions permutes the weights' rows and columns");
    tensor_free(&x); tensor_free(&xp); tensor_free(&att); tensor_free(&out);
    tensor_free(&attp); tensor_free(&outp);
    free_module(&m);
}

static void test_counts(void) {
    is_int(selfatt_v1_params(4), 60, "SelfAttV1(4) has 60 parameters, as thop printed");
    is_int(selfatt_v1_macs_thop(3, 2, 4), 288, "SelfAttV1(4) on X (3, 2, 4) costs 288 MACs as thop counts them");
    is_int(selfatt_v1_macs_all(3, 2, 4), 384, "adding Q @ K^T and weights @ V gives 384 MACs");
    /* independent count: each nn.Linear(D, D) on B*T rows is B*T*D*D MACs */
    is_int(selfatt_v1_macs_thop(5, 7, 3), 3L * 5 * 7 * 3 * 3, "thop's count is three layers of B*T*D*D MACs");
    is_int(selfatt_v1_params(1), 6, "SelfAttV1(1) has 6 parameters");
}

/* In process: dump a case, load it back, run it again: the same bits. */
static void test_dump_load(const char *tmp) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/in-process", tmp);
    SelfAttV1 m = {0}, m2 = {0};
    Tensor x, att, out, x2, att2, out2;
    Tensors list = {0}, list2 = {0};
    Args a = { .batch = 2, .seq = 3, .dim = 5, .seed = 11, .dump = dir }, a2 = { .load = dir };
    selfatt_v1_tensors(&list, &m, &x, &att, &out);
    tensors_open(&list, &a);
    m.dim = 5;
    STUDENT(selfatt_v1_forward(out.data, att.data, &m, x.data, 2, 3));
    selfatt_v1_tensors(&list2, &m2, &x2, &att2, &out2);
    tensors_close(&list, &a);                                      /* writes dir, frees */
    tensors_open(&list2, &a2);
    ok(a2.batch == 2 && a2.seq == 3 && a2.dim == 5, "loading takes B, T and D from X.npy");
    m2.dim = a2.dim;
    STUDENT(selfatt_v1_forward(out2.data, att2.data, &m2, x2.data, 2, 3));
    Tensor att1 = load_npy(dir, "attn"), out1 = load_npy(dir, "out");
    ok(computed() && memcmp(out1.data, out2.data, out1.size * sizeof(float)) == 0 &&
       memcmp(att1.data, att2.data, att1.size * sizeof(float)) == 0,
       "a loaded dump computes the same output and weights, bit for bit");
    tensor_free(&att1); tensor_free(&out1);
    tensors_close(&list2, &(Args){0});
}

/* Chapter 2's promise: selfatt_v2, given V1's layers stacked and an identity
 * output_proj, computes what selfatt_v1 computes. selfatt_v2's passes are chapter 0's
 * kernels: the D products of a score added in order in a float, times 1.0f / sqrtf(D)
 * rounded once, softmax_lastdim, the T products of an output added in order. A correct
 * pass 2 to 4 in another order agrees with them within twice the bound of one float32
 * pass (reference.h), which is what is scored; whether it is their very bits is said
 * in a note beside the test. (D = 4 cannot tell a division by sqrt(D) = 2 from the
 * multiplication by 1/2; D = 5 and 32 can.) */
static void test_kernels(void) {
    static const int cases[][4] = { {3, 2, 4, 42}, {2, 7, 5, 1}, {1, 16, 32, 3} };
    for (int c = 0; c < 3; c++) {
        int B = cases[c][0], T = cases[c][1], D = cases[c][2];
        long BT = (long)B * T;
        SelfAttV1 m = {0};
        Tensor x;
        make_case(&m, &x, B, T, D, (uint64_t)cases[c][3]);
        Tensor att = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
        Tensor q = tensor_new3(B, T, D), k = tensor_new3(B, T, D), v = tensor_new3(B, T, D);
        Tensor katt = tensor_new3(B, T, T), kout = tensor_new3(B, T, D);
        STUDENT(selfatt_v1_forward(out.data, att.data, &m, x.data, B, T));
        linear(q.data, x.data, m.query_w.data, m.query_b.data, BT, D, D);
        linear(k.data, x.data, m.key_w.data, m.key_b.data, BT, D, D);
        linear(v.data, x.data, m.value_w.data, m.value_b.data, BT, D, D);
        matmul_bt(katt.data, q.data, k.data, B, T, T, D, 1.0f / sqrtf((float)D));
        STUDENT(softmax_lastdim(katt.data, BT, T));
        matmul(kout.data, katt.data, v.data, B, T, D, T);
        double *ratt = ref_new(att.size), *rout = ref_new(out.size), *eatt = ref_new(att.size), *eout = ref_new(out.size);
        reference(rout, eout, ratt, eatt, &m, x.data, B, T);
        int near = computed();
        for (long i = 0; near && i < att.size; i++) near = tap_close_enough(att.data[i], katt.data[i], 2 * eatt[i], 0);
        for (long i = 0; near && i < out.size; i++) near = tap_close_enough(out.data[i], kout.data[i], 2 * eout[i], 0);
        ok(near, "(B, T, D) = (%d, %d, %d), seed %d: the weights and the output agree with chapter 0's matmul_bt scaled "
           "by 1.0f / sqrtf(D), softmax_lastdim and matmul, which selfatt_v2 runs, within what float32 rounding allows",
           B, T, D, cases[c][3]);
        RefCase student = case_of(&m, x.data, B, T, out.data, att.data);
        if (!near) ref_explain(&student, NULL, 0);
        if (computed()) {
            same_bits_note(att.data, katt.data, att.size, "(B, T, D) = (%d, %d, %d): the weights and chapter 0's kernels'",
                           B, T, D);
            same_bits_note(out.data, kout.data, out.size, "(B, T, D) = (%d, %d, %d): the output and chapter 0's kernels'",
                           B, T, D);
        }
        free(ratt); free(rout); free(eatt); free(eout);
        tensor_free(&att); tensor_free(&out); tensor_free(&q); tensor_free(&k); tensor_free(&v);
        tensor_free(&katt); tensor_free(&kout); tensor_free(&x);
        free_module(&m);
    }
}

/* print_run writes to stdout, which is the TAP stream here; it is tested
 * through the program in test_program below. */
static void (*const print_is_tested_below)(const char *, const Tensor *, const Tensor *, const Args *, long, long, long) = print_run;

static const char *prog;   /* the program, build/bin/selfatt_v1 */

static void test_program(const char *tmp) {
    (void)print_is_tested_below;
    char d1[1024], d2[1024], d3[1024], p1[1100], p2[1100], out[8192], err[4096];
    snprintf(d1, sizeof d1, "%s/first", tmp);
    snprintf(d2, sizeof d2, "%s/second", tmp);
    snprintf(d3, sizeof d3, "%s/never", tmp);

    int status = run_program(prog, NO_ARGS, out, sizeof out, err, sizeof err);
    ok(status == 0 && strstr(out, "attention_weight: tensor([[[") && strstr(out, "output shape: (3, 2, 4)"),
       "run without flags, the program prints the weights and the output shape");
    ok(strstr(out, "parameters: 60\n") && strstr(out, "(nn.Linear only): 288\n"),
       "the default run prints 60 parameters and 288 MACs");
    run_program(prog, ARGS("--quiet"), out, sizeof out, err, sizeof err);
    ok(out[0] == 0 && err[0] == 0, "--quiet prints nothing");
    status = run_program(prog, ARGS("--help"), out, sizeof out, err, sizeof err);
    ok(status == 0 && strstr(out, "--load"), "--help prints the usage and exits 0");
    refuses(prog, ARGS("--seq", "3", "--seq", "4"), "--seq is given twice", "a flag given twice is refused");
    status = run_program(prog, ARGS("--seq=3", "--batch=1", "--quiet", "--dump", d2), out, sizeof out, err, sizeof err);
    Tensor x3 = status == 0 ? load_npy(d2, "X") : (Tensor){0};
    ok(x3.ndim == 3 && x3.shape[0] == 1 && x3.shape[1] == 3, "--seq=3 --batch=1 is read as --seq 3 --batch 1");
    tensor_free(&x3);

    status = run_program(prog, ARGS("--batch", "2", "--seq", "5", "--dim", "3", "--quiet", "--dump", d1),
                         out, sizeof out, err, sizeof err);
    ok(status == 0, "--dump writes a case");
    status = run_program(prog, ARGS("--load", d1, "--dump", d2, "--quiet"),
                         out, sizeof out, err, sizeof err);
    ok(status == 0, "--load reads a dumped case back");
    const char *files[] = { "out", "attn", "X", "query_proj.weight", "query_proj.bias", "key_proj.weight",
                            "key_proj.bias", "value_proj.weight", "value_proj.bias" };
    int all_same = 1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (!same_file(p1, p2)) { all_same = 0; diag("%s differs", files[i]); }
    }
    ok(all_same, "--load of a --dump reproduces every file byte for byte");

    refuses(prog, ARGS("--frobnicate"), "--frobnicate", "an unknown flag is refused");
    refuses(prog, ARGS("--heads", "2"), "--heads", "--heads is refused: SelfAttV1 has no heads");
    refuses(prog, ARGS("--causal"), "--causal", "--causal is refused: SelfAttV1 takes no mask");
    refuses(prog, ARGS("--dim", "0"), "--dim", "a zero size is refused");
    refuses(prog, ARGS("--seq", "-3"), "--seq", "a negative size is refused");
    refuses(prog, ARGS("--batch", "two"), "--batch", "a size that is not a number is refused");
    refuses(prog, ARGS("--dim", "4x"), "--dim", "a size with trailing junk is refused");
    refuses(prog, ARGS("--dim"), "--dim", "a flag missing its value is refused");
    refuses(prog, ARGS("--load", d3, "--dump", d3), "X.npy", "a missing --load directory is refused");
    ok(!file_exists(d3), "a refused run writes nothing to --dump");
    refuses(prog, ARGS("--load", d1, "--dim", "4"), "--dim",
            "a --dim that disagrees with the loaded X is refused");

    /* an X of width 4 beside weights of width 3: the message names both files (in a
     * handout whose stub stopped the dump, d1 is made here, and the refusals that
     * follow are skipped under their own names) */
    snprintf(p1, sizeof p1, "%s/X.npy", d1);
    Tensor wide = tensor_new3(2, 5, 4), orig = file_exists(p1) ? load_npy(d1, "X") : (Tensor){0};
    dump_tensor(d1, "X", &wide);
    char both[1400];
    snprintf(both, sizeof both, "query_proj.weight.npy: shape (3, 3), expected (4, 4) from the sizes read before it "
             "(%s/X.npy gives --batch 2, --seq 5, --dim 4): the files disagree", d1);
    refuses(prog, ARGS("--load", d1), both, "an X.npy wider than the weights: the message names X.npy's width and the weight's");
    if (orig.data) save_npy(d1, "X", &orig);
    tensor_free(&wide); tensor_free(&orig);

    /* a weight of the wrong shape: (2, 3) where (D, D) = (3, 3) belongs */
    snprintf(p1, sizeof p1, "%s/key_proj.weight.npy", d1);
    Tensor bad = tensor_new2(2, 3);
    npy_save(p1, &bad);
    tensor_free(&bad);
    refuses(prog, ARGS("--load", d1), "key_proj.weight", "a weight of the wrong shape is refused, naming the file");
    snprintf(p1, sizeof p1, "%s/value_proj.bias.npy", d1);
    remove(p1);
    snprintf(p2, sizeof p2, "%s/key_proj.weight.npy", d2);
    snprintf(p1, sizeof p1, "%s/key_proj.weight.npy", d1);
    rename(p2, p1);
    refuses(prog, ARGS("--load", d1), "value_proj.bias", "a missing parameter file is refused, naming it");
}

int main(void) {
    prog = program_path("selfatt_v1");
    char tmp[] = "/tmp/abh-selfatt-v1-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    /* Exercise 1.6 (passes 2 to 4): the tests that say it is done */
    EXERCISE("1.6", 15, test_against_reference());
    EXERCISE("1.6", 3, test_hand_worked());
    EXERCISE("1.6", 3, test_kernels());
    EXERCISE("1.6", 5, test_same_word(tmp));
    TEST_GROUP(test_permutation());
    TEST_GROUP(test_counts());
    TEST_GROUP(test_dump_load(tmp));
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
