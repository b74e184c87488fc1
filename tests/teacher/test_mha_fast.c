/* Hidden tests for teachers: Exercise 10.6 in mha_fast (step 4 of flash_block:
 * the running maximum, the rescale alpha and the running sum).
 *
 * A student handout leaves this folder out, so a solution cannot be tuned to
 * these cases; `make test` and `make grade` run it like tests/test_mha_fast.c.
 * The cases are ones the public tests do not use: heads of 8 on 129 keys, whose
 * last block holds one key; scores that drop by hundreds between blocks (the
 * new weights must be exactly 0, not NaN); scores all equal to -150 over five
 * blocks (a maximum that starts from 0 makes every weight 0, and 0 / 0);
 * and both flash rungs on (2, 97, 40, 5) with q and k weights made 4 times
 * larger, a (B, H, 1, T) mask and --causal, so that some queries see only key 0.
 * Each is checked against a double-precision reference: written here for the core,
 * tests/reference.h's for the module. */
#define TESTING
#include "mha_fast.c"
#include "tap.h"
#include "run.h"
#define MODULE_MHA
#include "reference.h"
#include "flash_blocks.h"    /* flash_blocks: the core over one head */

/* ---- one head through the core ------------------------------------------ */

/* Scores q_t . k_s = score(t, s) exactly (q_t = (1, 0, ...), k_s = (score, ...)
 * with score independent of t, or q_t = (1, t) for the two-column patterns); the
 * reference weighs the values by base^(score - max) over the keys, in double. */
typedef double (*Score)(int t, int s);

static double drop(int t, int s) { return s < 64 ? 40.0 + 0.01 * (s % 5) : -300.0 + 0.02 * ((s + t) % 7); }
static double flat(int t, int s) { (void)t; (void)s; return -150.0; }

static void core_case(const char *what, Score score, int T, int poly) {
    int hd = 8, hdp = 32, Tp = (T + BC - 1) / BC * BC;
    float *q = calloc((size_t)Tp * hdp, sizeof *q), *k = calloc((size_t)Tp * hdp, sizeof *k);
    float *v = calloc((size_t)Tp * hdp, sizeof *v), *got = calloc((size_t)T * hd, sizeof *got);
    double *want = calloc((size_t)T * hd, sizeof *want), *w = calloc(T, sizeof *w);
    for (int t = 0; t < T; t++) q[t * hdp] = 1.0f, q[t * hdp + 1] = (float)(t % 7);
    for (int s = 0; s < T; s++) {
        k[s * hdp] = (float)score(0, s);                     /* score(t, s) - score(0, s) = (t % 7) * k[s][1] */
        k[s * hdp + 1] = (float)((score(7, s) - score(0, s)) / 7.0);
        for (int d = 0; d < hd; d++) v[s * hdp + d] = (float)((s * 13 + d * 5) % 17) / 17.0f - 0.4f;
    }
    Fast f = { .D = hd, .H = 1, .hd = hd, .hdp = hdp };
    Visibility vis = visibility(NULL, 0);
    FlashWork work = flash_work_new(hdp);
    STUDENT(flash_blocks(got, q, k, v, &vis, T, &f, &work, poly));
    flash_work_free(&work, hdp);
    /* the bound of a float32 pass (tests/reference.h): each score a dot product of hd
     * terms, an online softmax over the blocks of BC keys with 2^x (within 3.6e-7, 6.1
     * units of u; its scores in units of ln 2) or expf, each output a sum of T values */
    double *bound = calloc((size_t)T * hd, sizeof *bound), *e = calloc(T, sizeof *e), *es = calloc(T, sizeof *es);
    int *hidden = calloc((size_t)T, sizeof *hidden);
    RefAttn online = { .B = 1, .T = 1, .S = T, .H = 1, .hd = hd, .blocks = (T + BC - 1) / BC, .exp_u = poly ? 6.1 : 2 };
    double unit = poly ? log(2.0) : 1.0;
    for (int t = 0; t < T; t++) {
        for (int s = 0; s < T; s++) {
            double a0 = (double)q[t * hdp] * k[s * hdp], a1 = (double)q[t * hdp + 1] * k[s * hdp + 1];
            w[s] = (a0 + a1) * unit;
            es[s] = ref_gamma(hd) * (fabs(a0) + fabs(a1)) * unit;
        }
        ref_softmax_line(w, e, es, 1, T, hidden, &online);
        for (int d = 0; d < hd; d++) {
            double sum = 0.0, mag = 0.0, carried = 0.0;
            for (int s = 0; s < T; s++) {
                double vs = v[s * hdp + d];
                sum += w[s] * vs, mag += fabs(w[s] * vs), carried += e[s] * fabs(vs);
            }
            want[t * hd + d] = sum, bound[t * hd + d] = ref_gamma(T + 2) * mag + carried;
        }
    }
    within_ok(got, want, bound, (long)T * hd, "%s, %s: the core matches the softmax-weighted sum in double, within "
              "what float32 rounding allows", poly ? "2^x" : "e^x", what);
    free(q); free(k); free(v); free(got); free(want); free(w); free(bound); free(e); free(es); free(hidden);
}

static void test_drop(void) {
    for (int poly = 0; poly <= 1; poly++)
        core_case("129 keys, the last block one key, scores dropping by 340 after the first block", drop, 129, poly);
}

static void test_flat(void) {
    for (int poly = 0; poly <= 1; poly++) core_case("300 keys of equal scores, all -150: the plain average", flat, 300, poly);
}

/* ---- both flash rungs on a whole module ---------------------------------- */

static void test_module(void) {
    int B = 2, T = 97, D = 40, H = 5, hd = D / H;
    MHA m = {0};
    Tensor x;
    make_module(&m, &x, NULL, &(Args){ .batch = B, .seq = T, .dim = D, .heads = H, .seed = 2024 });   /* as mha does */
    for (long i = 0; i < m.query_w.size; i++) m.query_w.data[i] *= 4.0f, m.key_w.data[i] *= 4.0f;
    Tensor mask = tensor_new(4, (int[]){ B, H, 1, T });        /* per sequence and head, the same for every query */
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int s = 0; s < T; s++) mask.data[(b * H + h) * T + s] = s == 0 || (s * 3 + b + h) % 4 != 0;
    /* the reference: tests/reference.h's, heads one at a time, in double, hidden keys left out */
    long n = (long)B * T * D;
    double *want = calloc(n, sizeof *want), *bound = calloc(n, sizeof *bound);
    float *seen = ref_visible(&mask, 4, (int[]){ B, H, T, T });
    RefWeights w = { m.query_w.data, m.query_b.data, m.key_w.data, m.key_b.data, m.value_w.data, m.value_b.data,
                     m.out_w.data, m.out_b.data };
    float *got = calloc(n, sizeof *got);
    Visibility vis = visibility(&mask, 1);
    for (int r = 4; r <= FASTEST; r++) {
        /* the bound of an online softmax over blocks of BC keys, with expf or 2^x (6.1 units of u) */
        RefAttn a = { .B = B, .T = T, .H = H, .hd = hd, .vis = seen, .causal = 1, .blocks = (T + BC - 1) / BC,
                      .exp_u = r == 5 ? 6.1 : 2 };
        ref_attention_err(want, bound, NULL, NULL, &w, x.data, x.data, x.data, D, &a);
        Fast f;
        fast_prepare(&f, &m, rung_fold(r, hd));
        STUDENT(rungs[r].forward(got, &f, x.data, &vis, B, T, 2), fast_threads_done());   /* threads gone: forks are safe */
        within_ok(got, want, bound, n, "(2, 97, 40, 5), q and k x4, a (B, H, 1, T) mask and --causal: rung %d (%s) "
                  "matches a double-precision reference, within what float32 rounding allows", r, rungs[r].name);
        fast_free_prepared(&f);
    }
    fast_threads_done();
    free(want); free(seen); free(got); free(bound);
    tensor_free(&mask); tensor_free(&x);
    free_module(&m);
}

int main(void) {
    (void)mha_mask_random; (void)fast_print; (void)fast_weights;   /* tested through the program */
    EXERCISE("10.6", 2, test_drop());
    EXERCISE("10.6", 2, test_flat());
    EXERCISE("10.6", 2, test_module());
    done_testing();
    return exit_status();
}
