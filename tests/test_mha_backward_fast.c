/* Tests for chapter 11's "How fast": src/backward_fast.h.
 *
 * The fast forward plus backward pass against mha_backward's plain one (forward_keep
 * keeping the weights, then gqa_backward, with G = H): the output, dx and every weight's
 * gradient within 1e-4 of the largest entry (of the tensor, or of dx for a gradient that
 * is 0 in exact arithmetic, the key bias's). Shapes that cut the backward blocks short
 * (T of 5, 37, 100, 130, 200, 300), heads of 3, 8, 32, 64 and 96 numbers; one
 * thread and two give the same bits; the extra bytes grow as T, not T^2.
 *
 * mha_backward.c and mha_fast.c both hold chapter 10's Visibility: mha_backward's copy is
 * renamed here, so that the two programs can be included in one test; and each brings
 * functions only its own main calls. */
#pragma GCC diagnostic ignored "-Wunused-function"
#define TESTING
#define Visibility plain_visibility_t
#define visibility plain_visibility
#define visible plain_visible
#include "mha_backward.c"
#undef Visibility
#undef visibility
#undef visible
#include "backward_fast.h"
#include "tap.h"
#include "run.h"

/* ---- the two passes on one case --------------------------------------------- */

typedef struct Case {
    int B, T, D, H;
    GQA g;                        /* the weights, as mha_backward holds them */
    MHA m;                        /* the same tensors, as mha_fast holds them */
    Tensor x, dout;               /* (B, T, D) each */
} Case;

static Case case_new(int B, int T, int D, int H, uint64_t seed) {
    Case c = { .B = B, .T = T, .D = D, .H = H, .g = { .dim = D, .heads = H, .kv_heads = H } };
    Rng rng;
    rng_seed(&rng, seed);
    Tensor *w[8];
    gqa_weights(&c.g, w);
    for (int i = 0; i < 8; i++) {
        *w[i] = i % 2 ? tensor_new(1, (int[]){ D }) : tensor_new2(D, D);
        rand_uniform(w[i]->data, w[i]->size, -0.3f, 0.3f, &rng);
    }
    c.m = (MHA){ .dim = D, .heads = H, .query_w = c.g.q_w, .query_b = c.g.q_b,
                 .key_w = c.g.k_w, .key_b = c.g.k_b, .value_w = c.g.v_w, .value_b = c.g.v_b,
                 .out_w = c.g.o_w, .out_b = c.g.o_b };
    c.x = tensor_new3(B, T, D), c.dout = tensor_new3(B, T, D);
    rand_uniform(c.x.data, c.x.size, -1.0f, 1.0f, &rng);
    rand_uniform(c.dout.data, c.dout.size, -1.0f, 1.0f, &rng);
    return c;
}

static void case_free(Case *c) {
    Tensor *w[8];
    gqa_weights(&c->g, w);
    for (int i = 0; i < 8; i++) tensor_free(w[i]);
    tensor_free(&c->x); tensor_free(&c->dout);
}

/* The gradients of a run: out, dx, then the eight of the weights in GQA's order. */
typedef struct Grads { Tensor t[10]; } Grads;

static Grads grads_new(const Case *c) {
    Grads g;
    g.t[0] = tensor_new3(c->B, c->T, c->D), g.t[1] = tensor_new3(c->B, c->T, c->D);
    for (int i = 0; i < 8; i++)
        g.t[2 + i] = i % 2 ? tensor_new(1, (int[]){ c->D }) : tensor_new2(c->D, c->D);
    return g;
}

static void grads_free(Grads *g) {
    for (int i = 0; i < 10; i++) tensor_free(&g->t[i]);
}

static const char *const grad_names[10] = { "out", "dx", "q_proj.weight", "q_proj.bias",
    "k_proj.weight", "k_proj.bias", "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };

/* mha_backward's plain pass: the weights kept, every step a loop. */
static Grads plain(const Case *c) {
    Grads r = grads_new(c);
    GQA grad = { .dim = c->D, .heads = c->H, .kv_heads = c->H };
    Tensor *w[8];
    gqa_weights(&grad, w);
    for (int i = 0; i < 8; i++) *w[i] = r.t[2 + i];        /* gqa_backward adds to zeros */
    int BHTT[4] = { c->B, c->H, c->T, c->T };
    Tensor att = tensor_new(4, BHTT), dscores = tensor_new(4, BHTT);
    Saved s = {0};
    STUDENT(s = forward_keep(r.t[0].data, att.data, &c->g, c->x.data, NULL, c->B, c->T),
            gqa_backward(&grad, r.t[1].data, dscores.data, &c->g, &s, c->x.data, c->dout.data,
                         NULL, c->B, c->T));
    saved_free(&s); tensor_free(&att); tensor_free(&dscores);
    return r;
}

/* The fast pass on `threads` threads; *extra: the bytes it held beyond q, k, v and mixed. */
static Grads fast(const Case *c, int threads, long *extra) {
    Grads r = grads_new(c);
    MHA grad = c->m;
    Tensor *w[8] = { &grad.query_w, &grad.query_b, &grad.key_w, &grad.key_b, &grad.value_w,
                     &grad.value_b, &grad.out_w, &grad.out_b };
    for (int i = 0; i < 8; i++) *w[i] = r.t[2 + i];
    Fast f;
    fast_prepare(&f, &c->m, rung_fold(FASTEST, c->D / c->H));
    Kept s = kept_new(&f, c->B, c->T);
    long held = fast_bytes_now - 4L * c->B * c->H * s.Tp;          /* lse is extra */
    fast_bytes_peak = fast_bytes_now;
    /* a stub met on the way (a handout's) leaves the gradients 0: the tests say so */
    STUDENT(forward_keep_fast(r.t[0].data, &s, &f, c->x.data, threads),
            backward_fast(&grad, r.t[1].data, &s, &f, c->x.data, c->dout.data, threads),
            fast_threads_done());
    if (extra) *extra = fast_bytes_peak - held;
    kept_free(&s, &f);
    fast_free_prepared(&f);
    return r;
}

/* largest(t), the largest |entry| of t, is chapter 11's (mha_backward.c). */

/* ---- the tests ------------------------------------------------------------- */

static void test_against_plain(int B, int T, int D, int H) {
    Case c = case_new(B, T, D, H, (uint64_t)(1000 * T + D + H));
    Grads want = plain(&c), got[2];
    for (int th = 1; th <= 2; th++) {
        got[th - 1] = fast(&c, th, NULL);
        for (int i = 0; i < 10; i++) {
            float unit = i == 0 ? largest(&want.t[0]) : fmaxf(largest(&want.t[i]), largest(&want.t[1]));
            close_ok(got[th - 1].t[i].data, want.t[i].data, want.t[i].size, 1e-4 * unit, 0.0,
                     "B = %d, T = %d, D = %d, H = %d, %d thread(s): %s as mha_backward's",
                     B, T, D, H, th, grad_names[i]);
        }
    }
    int same = 1;
    for (int i = 0; i < 10; i++)
        same &= !memcmp(got[0].t[i].data, got[1].t[i].data, (size_t)got[0].t[i].size * 4);
    ok(same, "B = %d, T = %d, D = %d, H = %d: the same bits on one thread and on two", B, T, D, H);
    grads_free(&want); grads_free(&got[0]); grads_free(&got[1]);
    case_free(&c);
}

static void test_bytes_grow_as_t(void) {
    long extra[2] = { 0, 0 };
    for (int i = 0; i < 2; i++) {
        Case c = case_new(1, 384 << (2 * i), 128, 2, 5);               /* T = 384 and 1536 */
        Grads g = fast(&c, 1, &extra[i]);
        grads_free(&g);
        case_free(&c);
    }
    ok(extra[0] > 0 && extra[1] < 5 * extra[0], "four times the tokens, at most five times the extra bytes "
       "(%ld, then %ld): O(T), no T x T", extra[0], extra[1]);
}

int main(void) {
    /* Each case in a child (TEST_GROUP): in a handout, a stub of chapter 5, 6 or 10 that the
     * plain or the fast pass runs into skips the rest of the case, not the whole file. */
    TEST_GROUP(test_against_plain(2, 37, 64, 2));    /* hd 32: one short block of each */
    TEST_GROUP(test_against_plain(1, 100, 128, 2));  /* hd 64, the copy compiled for it */
    TEST_GROUP(test_against_plain(3, 5, 24, 8));     /* hd 3, padded to 32 */
    TEST_GROUP(test_against_plain(1, 200, 96, 1));   /* hd 96: three panels; three key blocks */
    TEST_GROUP(test_against_plain(2, 300, 256, 32)); /* hd 8, 32 heads */
    TEST_GROUP(test_against_plain(1, 130, 768, 12)); /* GPT-2 small's heads, three query blocks */
    TEST_GROUP(test_bytes_grow_as_t());
    done_testing();
    return exit_status();
}
