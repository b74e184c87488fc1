/* Tests for chapter 2: SelfAttV2, the fused QKV projection.
 *
 * Both programs are included (TESTING hides their mains), so that V2 can be
 * checked against V1's passes in the special case where they must agree. The
 * reference is tests/reference.h's separate double-precision loop. */
#define TESTING
/* Both programs print with chapter 1's print_run: V1's copy is renamed here. */
#define print_run print_run_v1
#include "selfatt_v1.c"
#undef print_run
#include "selfatt_v2.c"
#include "tap.h"
#include "run.h"
#define MODULE_SELFATT_V2
#include "reference.h"

/* ---- an independent reference, in double precision ---------------------- */

/* out (B, T, D) and att (B, T, T) for SelfAttV2: qkv = X W^T + b, split into q, k,
 * v by columns, softmax(q k^T / sqrt(D)) v, then output_proj. tests/reference.h's
 * pass reads q, k and v from proj's three blocks of rows. */
static RefCase case_of(const SelfAttV2 *m, const float *x, int B, int T, const float *out, const float *att) {
    int D = m->dim;
    const float *w = m->proj_w.data, *b = m->proj_b.data;
    RefWeights ws = { w, b, w + D * D, b + D, w + 2 * D * D, b + 2 * D, m->out_w.data, m->out_b.data };
    return (RefCase){ ws, x, x, x, D, { .B = B, .T = T, .H = 1, .hd = D }, out, att };
}

/* The reference, and in eout and eatt how far a float32 pass may be from it. */
static void reference(double *out, double *eout, double *att, double *eatt, const SelfAttV2 *m, const float *x,
                      int B, int T) {
    RefCase c = case_of(m, x, B, T, NULL, NULL);
    ref_attention_err(out, eout, att, eatt, &c.w, x, x, x, m->dim, &c.a);
}

/* SelfAttV1's case (no output projection) for the reference: what V2 with V1's
 * layers stacked and an identity output_proj computes, the identity adding no
 * rounding (each output is one product by 1, and zeros). */
static RefCase v1_case(const float *w[3], const float *b[3], const float *x, int B, int T, int D) {
    RefWeights ws = { w[0], b[0], w[1], b[1], w[2], b[2], NULL, NULL };
    return (RefCase){ ws, x, x, x, D, { .B = B, .T = T, .H = 1, .hd = D }, NULL, NULL };
}

/* 1 if a and b (n floats) are within twice bound of each other: two float32 passes of
 * the same formula. */
static int agree(const float *a, const float *b, const double *bound, long n) {
    for (long i = 0; i < n; i++) if (!tap_close_enough(a[i], b[i], 2 * bound[i], 0)) return 0;
    return 1;
}

/* SelfAttV2 and its input X as selfatt_v2 makes them (tests/reference.h). */
static void make_v2(SelfAttV2 *m, Tensor *x, int B, int T, int D, uint64_t seed) {
    Args a = { .batch = B, .seq = T, .dim = D, .seed = seed };
    make_v2_module(m, x, &a);
}

/* What is wrong with a failing split (Exercise 2.6): the usual suspects, and the ways
 * of reading qkv (B, T, 3D) that the chapter warns of, each a stacking of proj's rows. */
static void explain_split(const RefCase *student, const SelfAttV2 *m) {
    int D = m->dim;
    const float *w = m->proj_w.data, *b = m->proj_b.data;
    RefSuspect extra[3] = { { .c = *student }, { .c = *student }, { .c = *student } };
    extra[0].c.w.k_w = w + 2 * D * D, extra[0].c.w.k_b = b + 2 * D, extra[0].c.w.v_w = w + D * D, extra[0].c.w.v_b = b + D;
    snprintf(extra[0].what, sizeof extra[0].what, "the keys and the values are swapped: k was taken from qkv's columns "
             "[2D, 3D) and v from [D, 2D); a row of qkv is q, then k, then v");
    extra[1].c.w.k_w = w, extra[1].c.w.k_b = b;
    snprintf(extra[1].what, sizeof extra[1].what, "the keys were copied from the queries' columns [0, D): each "
             "query is scored against the queries");
    extra[2].c.w.q_w = w + D * D, extra[2].c.w.q_b = b + D, extra[2].c.w.k_w = w, extra[2].c.w.k_b = b;
    snprintf(extra[2].what, sizeof extra[2].what, "the queries and the keys are swapped: q was taken from columns "
             "[D, 2D) and k from [0, D)");
    if (!ref_explain(student, extra, 3) && student->att) {
        long rows = (long)student->a.B * student->a.T, bad = -1;    /* a row of weights never written */
        for (long r = rows - 1; r >= 0 && bad < 0; r--) {
            double sum = 0;
            for (int s = 0; s < student->a.T; s++) sum += student->att[r * student->a.T + s];
            if (fabs(sum - 1) > 1e-3) bad = r;
        }
        if (bad >= 0) what_is_wrong("the weights of row %ld do not sum to 1: q, k and v were not all copied (is every one of "
                            "the B * T = %ld rows of qkv split, with D floats, not D bytes?)", bad, rows);
    }
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
        SelfAttV2 m = {0};
        Tensor x;
        make_v2(&m, &x, B, T, D, 200 + c);
        Tensor att = tensor_new3(B, T, T), out = tensor_new3(B, T, D);
        STUDENT(selfatt_v2_forward(out.data, att.data, &m, x.data, B, T));
        double *ratt = ref_new(att.size), *rout = ref_new(out.size), *eatt = ref_new(att.size), *eout = ref_new(out.size);
        reference(rout, eout, ratt, eatt, &m, x.data, B, T);
        tap_layout("b t d", 3, out.shape);
        int good = within_ok(out.data, rout, eout, out.size, "output matches a double-precision reference for (B, T, D) = "
                             "(%d, %d, %d), within what float32 rounding allows", B, T, D);
        tap_layout("b t s", 3, att.shape);
        good &= within_ok(att.data, ratt, eatt, att.size, "attention weights match the reference for (B, T, D) = (%d, %d, "
                          "%d)", B, T, D);
        RefCase student = case_of(&m, x.data, B, T, out.data, att.data);
        if (!good) explain_split(&student, &m);
        free(ratt); free(rout); free(eatt); free(eout);
        tensor_free(&att); tensor_free(&out); tensor_free(&x);
        free_v2_module(&m);
    }
}

/* SelfAttV1's four passes: its three layers, chapter 0's kernels for the scores
 * and the softmax, and the weighted sum as a loop that adds in matmul's order (each
 * output a float sum over the keys, first to last). Called here rather than
 * selfatt_v1_forward, so that these tests hold the split to V1's bits whatever the
 * state of Exercise 1.6 (whose own tests hold selfatt_v1_forward to those bits). */
static void v1_by_kernels(float *out, float *att, const SelfAttV1 *m, const float *x, int B, int T) {
    int D = m->dim;
    long BT = (long)B * T;
    Tensor q = tensor_new3(B, T, D), k = tensor_new3(B, T, D), v = tensor_new3(B, T, D);
    linear(q.data, x, m->query_w.data, m->query_b.data, BT, D, D);
    linear(k.data, x, m->key_w.data, m->key_b.data, BT, D, D);
    linear(v.data, x, m->value_w.data, m->value_b.data, BT, D, D);
    matmul_bt(att, q.data, k.data, B, T, T, D, 1.0f / sqrtf((float)D));
    softmax_lastdim(att, BT, T);
    for (long bt = 0; bt < BT; bt++)                    /* row t of sequence b */
        for (int d = 0; d < D; d++) {
            const float *w = att + bt * T, *v_b = v.data + (bt / T) * T * D;
            float sum = 0.0f;
            for (int s = 0; s < T; s++) sum += w[s] * v_b[(long)s * D + d];
            out[bt * D + d] = sum;
        }
    tensor_free(&q); tensor_free(&k); tensor_free(&v);
}

/* V2 whose proj stacks V1's query, key and value weights (in that order) and
 * whose output_proj is the identity with zero bias computes exactly V1. */
static void v2_from_v1(SelfAttV2 *m2, const SelfAttV1 *m1, int swap_qk) {
    int D = m1->dim;
    const Tensor *w[3] = { &m1->query_w, &m1->key_w, &m1->value_w };
    const Tensor *b[3] = { &m1->query_b, &m1->key_b, &m1->value_b };
    if (swap_qk) { const Tensor *t = w[0]; w[0] = w[1]; w[1] = t; t = b[0]; b[0] = b[1]; b[1] = t; }
    m2->dim = D;
    m2->proj_w = tensor_new2(3 * D, D);
    m2->proj_b = tensor_new1(3 * D);
    for (int p = 0; p < 3; p++) {
        memcpy(m2->proj_w.data + (long)p * D * D, w[p]->data, (size_t)D * D * sizeof(float));
        memcpy(m2->proj_b.data + (long)p * D, b[p]->data, (size_t)D * sizeof(float));
    }
    m2->out_w = tensor_new2(D, D);
    m2->out_b = tensor_new1(D);                /* zeroed */
    for (int i = 0; i < D; i++) m2->out_w.data[i * D + i] = 1.0f;
}

static void test_reduces_to_v1(void) {
    static const int shapes[][3] = { {3, 2, 4}, {2, 7, 5}, {1, 16, 32} };
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int B = shapes[c][0], T = shapes[c][1], D = shapes[c][2];
        SelfAttV1 m1 = {0};
        SelfAttV2 m2 = {0};
        Tensor x;
        Tensors cv1 = {0};
        Tensor att_v1, out_v1;
        Args a = { .batch = B, .seq = T, .dim = D, .seed = 300 + c };
        selfatt_v1_tensors(&cv1, &m1, &x, &att_v1, &out_v1);   /* V1's weights, as selfatt_v1 makes them */
        tensors_open(&cv1, &a);
        m1.dim = D;
        tensor_free(&att_v1); tensor_free(&out_v1);
        v2_from_v1(&m2, &m1, 0);
        Tensor att1 = tensor_new3(B, T, T), out1 = tensor_new3(B, T, D);
        Tensor att2 = tensor_new3(B, T, T), out2 = tensor_new3(B, T, D);
        STUDENT(v1_by_kernels(out1.data, att1.data, &m1, x.data, B, T));
        STUDENT(selfatt_v2_forward(out2.data, att2.data, &m2, x.data, B, T));
        const float *w[3] = { m1.query_w.data, m1.key_w.data, m1.value_w.data };
        const float *b[3] = { m1.query_b.data, m1.key_b.data, m1.value_b.data };
        RefCase v1 = v1_case(w, b, x.data, B, T, D);
        double *ratt = ref_new(att1.size), *rout = ref_new(out1.size), *eatt = ref_new(att1.size), *eout = ref_new(out1.size);
        ref_attention_err(rout, eout, ratt, eatt, &v1.w, x.data, x.data, x.data, D, &v1.a);
        int same_att = computed() && agree(att1.data, att2.data, eatt, att1.size);
        int same_out = computed() && agree(out1.data, out2.data, eout, out1.size);
        ok(same_att, "with V1's weights stacked, V2's weights equal V1's within what float32 rounding allows, (B, T, D) "
           "= (%d, %d, %d)", B, T, D);
        ok(same_out, "with V1's weights stacked and an identity output_proj, V2's output equals V1's within what float32 "
           "rounding allows, (%d, %d, %d)", B, T, D);
        RefCase student = case_of(&m2, x.data, B, T, out2.data, att2.data);
        if (!same_att || !same_out) explain_split(&student, &m2);
        if (computed()) {
            same_bits_note(att2.data, att1.data, att1.size, "(B, T, D) = (%d, %d, %d): V2's weights and V1's", B, T, D);
            same_bits_note(out2.data, out1.data, out1.size, "(B, T, D) = (%d, %d, %d): V2's output and V1's", B, T, D);
        }
        if (c == 0) {
            /* the split order matters: keys first gives the transposed scores */
            SelfAttV2 swapped = {0};
            v2_from_v1(&swapped, &m1, 1);
            STUDENT(selfatt_v2_forward(out2.data, att2.data, &swapped, x.data, B, T));
            ok(computed() && !agree(att1.data, att2.data, eatt, att1.size),
               "stacking keys before queries gives different weights: the split order is part of the weight");
            free_v2_module(&swapped);
        }
        free(ratt); free(rout); free(eatt); free(eout);
        tensor_free(&att1); tensor_free(&out1); tensor_free(&att2); tensor_free(&out2); tensor_free(&x);
        tensor_free(&m1.query_w); tensor_free(&m1.query_b); tensor_free(&m1.key_w);
        tensor_free(&m1.key_b); tensor_free(&m1.value_w); tensor_free(&m1.value_b);
        free_v2_module(&m2);
    }
}

/* --example same-word, run as a reader runs it: chapter 1's hand-set head, its
 * three matrices stacked in proj.weight and output_proj the identity, gives
 * selfatt_v1's --example same-word to the bit. */
static void test_same_word(const char *tmp) {
    char d1[1024], d2[1024];
    snprintf(d1, sizeof d1, "%s/v1-same-word", tmp);
    snprintf(d2, sizeof d2, "%s/v2-same-word", tmp);
    int s1 = run("selfatt_v1", ARGS("--example", "same-word", "--quiet", "--dump", d1));
    int s2 = run("selfatt_v2", ARGS("--example", "same-word", "--quiet", "--dump", d2));
    ok(s1 == 0 && s2 == 0, "selfatt_v1 and selfatt_v2 --example same-word run and dump their cases");
    /* a run a stub stopped wrote nothing: every test below then fails by its own name */
    Tensor w = load_written(d2, "proj.weight"), b = load_written(d2, "proj.bias");  /* (3D, D), (3D) */
    Tensor wo = load_written(d2, "output_proj.weight"), bo = load_written(d2, "output_proj.bias");
    const char *names[3] = { "query_proj.weight", "key_proj.weight", "value_proj.weight" };
    int D = wo.ndim == 2 ? wo.shape[0] : 0, stacked = s1 == 0 && D > 0 && w.ndim == 2 && w.shape[0] == 3 * D &&
        w.shape[1] == D, zero = b.size > 0 && bo.size > 0, eye = D > 0;
    for (int p = 0; p < 3 && stacked; p++) {
        Tensor w1 = load_npy(d1, names[p]);                                      /* (D, D) */
        stacked = w1.size == (long)D * D && !memcmp(w.data + (long)p * D * D, w1.data, w1.size * sizeof(float));
        tensor_free(&w1);
    }
    for (long i = 0; i < b.size; i++) zero &= b.data[i] == 0.0f;
    for (long i = 0; i < bo.size; i++) zero &= bo.data[i] == 0.0f;
    for (long i = 0; i < wo.size; i++) eye &= wo.data[i] == (i / D == i % D);
    ok(stacked, "same-word: proj.weight is chapter 1's query, key and value weights stacked, in that order");
    ok(eye && zero, "same-word: output_proj is the identity and every bias is 0");
    /* the bounds of V1's case, from selfatt_v1's own files */
    Tensor x = load_written(d1, "X"), a1 = load_written(d1, "attn"), o1 = load_written(d1, "out");
    Tensor a2 = load_written(d2, "attn"), o2 = load_written(d2, "out"), l1[6];
    const char *layers[6] = { "query_proj.weight", "key_proj.weight", "value_proj.weight", "query_proj.bias",
                              "key_proj.bias", "value_proj.bias" };
    for (int i = 0; i < 6; i++) l1[i] = load_written(d1, layers[i]);
    int shaped = s1 == 0 && s2 == 0 && x.ndim == 3 && l1[5].data && a1.size == a2.size && o1.size == o2.size &&
                 o1.size == x.size && a1.size == (long)x.shape[0] * x.shape[1] * x.shape[1];
    int near = 0;
    if (shaped) {
        const float *lw[3] = { l1[0].data, l1[1].data, l1[2].data }, *lb[3] = { l1[3].data, l1[4].data, l1[5].data };
        RefCase v1 = v1_case(lw, lb, x.data, x.shape[0], x.shape[1], x.shape[2]);
        double *ratt = ref_new(a1.size), *rout = ref_new(o1.size), *eatt = ref_new(a1.size), *eout = ref_new(o1.size);
        ref_attention_err(rout, eout, ratt, eatt, &v1.w, x.data, x.data, x.data, x.shape[2], &v1.a);
        near = agree(a1.data, a2.data, eatt, a1.size) && agree(o1.data, o2.data, eout, o1.size);
        free(ratt); free(rout); free(eatt); free(eout);
    }
    ok(near, "same-word: attn.npy and out.npy equal selfatt_v1's within what float32 rounding allows");
    if (shaped) {
        same_bits_note(a2.data, a1.data, a1.size, "same-word: selfatt_v2's attn.npy and selfatt_v1's");
        same_bits_note(o2.data, o1.data, o1.size, "same-word: selfatt_v2's out.npy and selfatt_v1's");
    }
    for (int i = 0; i < 6; i++) tensor_free(&l1[i]);
    tensor_free(&x); tensor_free(&a1); tensor_free(&o1); tensor_free(&a2); tensor_free(&o2);
    tensor_free(&w); tensor_free(&b); tensor_free(&wo); tensor_free(&bo);
}

static void test_counts(void) {
    is_int(selfatt_v2_params(4), 80, "SelfAttV2(4) has 80 parameters, as thop printed");
    is_int(selfatt_v2_macs_thop(3, 2, 4), 384, "SelfAttV2(4) on X (3, 2, 4) costs 384 MACs as thop counts them");
    is_int(selfatt_v2_macs_all(3, 2, 4), 480, "adding Q @ K^T and weights @ V gives 480 MACs");
    /* independent: proj is B*T*(3D)*D MACs, output_proj B*T*D*D */
    is_int(selfatt_v2_macs_thop(5, 7, 3), 5L * 7 * 3 * 3 * 3 + 5L * 7 * 3 * 3, "thop's count is proj's B*T*3D*D plus output_proj's B*T*D*D");
    is_int(selfatt_v2_params(4) - selfatt_v1_params(4), 20, "V2 has one more (D, D) layer than V1: 20 parameters more at D = 4");
}

static const char *prog;

static void test_program(const char *tmp) {
    char d1[1024], d2[1024], p1[1100], p2[1100], out[8192], err[4096];
    snprintf(d1, sizeof d1, "%s/first", tmp);
    snprintf(d2, sizeof d2, "%s/second", tmp);

    int status = run_program(prog, NO_ARGS, out, sizeof out, err, sizeof err);
    ok(status == 0 && strstr(out, "attention_weight: tensor([[[") && strstr(out, "parameters: 80\n") &&
       strstr(out, "(nn.Linear only): 384\n"), "run without flags, the program prints the weights, 80 parameters and 384 MACs");
    status = run_program(prog, ARGS("--batch", "2", "--seq", "5", "--dim", "3", "--quiet", "--dump", d1),
                         out, sizeof out, err, sizeof err);
    ok(status == 0, "--dump writes a case");
    status = run_program(prog, ARGS("--load", d1, "--dump", d2, "--quiet"), out, sizeof out, err, sizeof err);
    ok(status == 0, "--load reads a dumped case back");
    const char *files[] = { "out", "attn", "X", "proj.weight", "proj.bias", "output_proj.weight", "output_proj.bias" };
    int all_same = 1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (!same_file(p1, p2)) { all_same = 0; diag("%s differs", files[i]); }
    }
    ok(all_same, "--load of a --dump reproduces every file byte for byte");

    refuses(prog, ARGS("--heads", "2"), "--heads", "--heads is refused: SelfAttV2 has no heads");
    refuses(prog, ARGS("--train"), "--train", "--train is refused: SelfAttV2 has no dropout");
    /* a fused weight stored the other way round, (D, 3D), is refused by name */
    snprintf(p1, sizeof p1, "%s/proj.weight.npy", d1);
    Tensor t = tensor_new2(3, 9);
    dump_tensor(d1, "proj.weight", &t);       /* p1; makes d1 if a stub stopped the dump */
    tensor_free(&t);
    refuses(prog, ARGS("--load", d1), "proj.weight", "a transposed fused weight (D, 3D) is refused, naming the file");
    snprintf(p2, sizeof p2, "%s/proj.weight.npy", d2);
    rename(p2, p1);
    snprintf(p1, sizeof p1, "%s/output_proj.bias.npy", d1);
    remove(p1);
    refuses(prog, ARGS("--load", d1), "output_proj.bias", "a missing output_proj.bias is refused, naming it");
}


int main(void) {
    (void)print_run; (void)print_run_v1;      /* tested through the programs */
    (void)selfatt_v1_macs_all; (void)selfatt_v2_macs_all;
    (void)selfatt_v1_forward;                 /* tested in tests/test_selfatt_v1.c */
    prog = program_path("selfatt_v2");
    char tmp[] = "/tmp/abh-selfatt-v2-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    /* Exercise 2.6 (pass 2, the split): the tests that say it is done */
    EXERCISE("2.6", 10, test_against_reference());
    EXERCISE("2.6", 7, test_reduces_to_v1());
    EXERCISE("2.6", 4, test_same_word(tmp));
    TEST_GROUP(test_counts());
    TEST_GROUP(test_program(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
