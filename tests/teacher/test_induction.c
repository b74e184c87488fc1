/* Hidden tests for teachers: Exercise 12.4 in induction (the body of adam_update, one
 * step of torch.optim.Adam).
 *
 * A student handout leaves this folder out, so a solution cannot be tuned to these
 * cases; `make test` and `make grade` run it like tests/test_induction.c. The cases
 * are ones the public tests do not use: numbers printed by PyTorch itself (other
 * betas and eps), an eps large enough to matter, betas of 0 (sign descent), two thousand
 * steps, lengths that are no multiple of anything, and the memory around the arrays. */
#define TESTING
#include "induction.c"
#include "tap.h"
#include "run.h"
#include "reference.h"

/* `steps` steps of adam_update and of the reference on n weights from seed, each step's
 * gradient u * scale, u uniform in [-1, 1); the largest |w - reference| at the end, as a
 * fraction of the bound of a float32 pass (tests/reference.h's ref_adam_err). */
static double run_against_reference(const Adam *given, long n, int steps, float scale, uint64_t seed) {
    float *w = malloc(sizeof(float) * n), *m = calloc(n, sizeof(float)), *v = calloc(n, sizeof(float));
    float *g = malloc(sizeof(float) * n);
    double *wd = malloc(sizeof(double) * n), *md = calloc(n, sizeof(double)), *vd = calloc(n, sizeof(double));
    double *ew = calloc(n, sizeof(double)), *em = calloc(n, sizeof(double)), *ev = calloc(n, sizeof(double));
    Adam o = *given;
    Rng r;
    rng_seed(&r, seed);
    rand_uniform(w, n, -1.0f, 1.0f, &r);
    for (long i = 0; i < n; i++) wd[i] = w[i];
    for (int t = 1; t <= steps; t++) {
        rand_uniform(g, n, -scale, scale, &r);
        o.t = t;
        STUDENT(adam_update(w, m, v, g, n, &o));
        ref_adam_err(wd, ew, md, em, vd, ev, g, n, o.lr, o.beta1, o.beta2, o.eps, t);
    }
    double worst = 0;
    for (long i = 0; i < n; i++) worst = isnan(w[i]) ? INFINITY : fmax(worst, fabs(w[i] - wd[i]) / ew[i]);
    free(w); free(m); free(v); free(g); free(wd); free(md); free(vd); free(ew); free(em); free(ev);
    return worst;
}

/* Three steps of torch.optim.Adam(lr=0.1, betas=(0.8, 0.99), eps=1e-3) on five weights,
 * as PyTorch 1.13 printed them (float32): a zero gradient, a tiny one near eps, one that
 * turns around. */
static void test_pytorch_numbers(void) {
    float w[5] = { 0.5f, -0.25f, 1.0f, 0.0f, -2.0f }, m[5] = {0}, v[5] = {0};
    static const float g[3][5] = { { 0.3f, -0.02f, 4.0f, 0.0f, -1e-4f }, { -0.1f, -0.02f, 2.0f, 0.5f, -1e-4f },
                                   { 0.2f, 0.05f, -3.0f, 0.5f, 2e-3f } };
    static const float want_w[5] = { 0.306610107f, -0.0848752558f, 0.793256819f, -0.168054849f, -2.01697922f };
    Adam o = { .lr = 0.1f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-3f };
    for (int t = 1; t <= 3; t++) {
        o.t = t;
        STUDENT(adam_update(w, m, v, g[t - 1], 5, &o));
    }
    /* PyTorch's float32 steps and the student's, each within the bound of a float32 pass of
     * the exact ones: within twice it of each other, and half a unit for the printing */
    double wd[5], md[5] = {0}, vd[5] = {0}, ew[5] = {0}, em[5] = {0}, ev[5] = {0}, bound[5];
    static const float w0[5] = { 0.5f, -0.25f, 1.0f, 0.0f, -2.0f };
    for (int i = 0; i < 5; i++) wd[i] = w0[i];
    for (int t = 1; t <= 3; t++) ref_adam_err(wd, ew, md, em, vd, ev, g[t - 1], 5, o.lr, o.beta1, o.beta2, o.eps, t);
    for (int i = 0; i < 5; i++) bound[i] = 2 * ew[i] + 0.5e-9 * fabs(want_w[i]);
    within_ok(w, want_w, bound, 5, "three steps with betas (0.8, 0.99), eps 1e-3, lr 0.1 give the weights "
              "torch.optim.Adam printed, within what float32 rounding allows");
}

/* eps = 0.5 against gradients of 0.01 to 1: the step is lr * m_hat / (sqrt(v_hat) + eps),
 * far from lr, and the first step is lr * |g| / (|g| + eps) exactly on paper. */
static void test_large_eps(void) {
    enum { N = 6 };
    float w[N] = {0}, m[N] = {0}, v[N] = {0}, g[N] = { 0.01f, -0.03f, 0.1f, -0.3f, 1.0f, -1.0f }, want[N];
    Adam o = { .lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 0.5f, .t = 1 };
    double wd[N] = {0}, md[N] = {0}, vd[N] = {0}, ew[N] = {0}, em[N] = {0}, ev[N] = {0};
    (void)want;
    ref_adam_err(wd, ew, md, em, vd, ev, g, N, o.lr, o.beta1, o.beta2, o.eps, 1);   /* lr * g / (|g| + eps) on paper */
    STUDENT(adam_update(w, m, v, g, N, &o));
    within_ok(w, wd, ew, N, "eps 0.5: the first step is lr * g / (|g| + eps), eps added after the square "
              "root of v_hat (a gradient of 0.01 moves 0.002, not lr), within what float32 rounding allows");
    double worst = run_against_reference(&o, 20, 10, 0.5f, 1202);
    ok(worst <= 1, "eps 0.5: 10 steps on 20 weights are torch's, within what float32 rounding allows (%.2g of the "
       "bound)", worst);
}

/* beta1 = beta2 = 0: m = g, v = g^2, no correction (1 - 0^t = 1): sign descent. */
static void test_sign_descent(void) {
    enum { N = 7 };
    float w[N] = {0}, m[N] = {0}, v[N] = {0}, g[N];
    Adam o = { .lr = 0.25f, .beta1 = 0.0f, .beta2 = 0.0f, .eps = 1e-8f };
    int exact = 1;
    for (int t = 1; t <= 4; t++) {
        for (int i = 0; i < N; i++) g[i] = (float)((i + t) % 3 - 1) * (float)(i + 1);   /* -1, 0, 1 times i + 1 */
        float before[N];
        memcpy(before, w, sizeof w);
        o.t = t;
        STUDENT(adam_update(w, m, v, g, N, &o));
        for (int i = 0; i < N; i++) {
            float moved = w[i] - before[i], want = g[i] > 0 ? -0.25f : g[i] < 0 ? 0.25f : 0.0f;
            exact &= fabsf(moved - want) <= 1e-6f;
        }
    }
    ok(exact, "betas (0, 0): every step moves each weight by lr * sign(g), or not at all for g = 0, at steps 1 to 4");
}

/* Two thousand steps of one gradient per weight: m_hat = g and v_hat = g^2 at every step,
 * so each weight moves lr * sign(g) per step, 2000 lr in all; and torch's loop agrees. */
static void test_many_steps(void) {
    enum { N = 5, STEPS = 2000 };
    float w[N] = {0}, m[N] = {0}, v[N] = {0}, g[N] = { 3.0f, -0.5f, 1e-3f, -40.0f, 0.2f };
    Adam o = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    for (int t = 1; t <= STEPS; t++) {
        o.t = t;
        STUDENT(adam_update(w, m, v, g, N, &o));
    }
    double worst = 0;
    for (int i = 0; i < N; i++) worst = isnan(w[i]) ? INFINITY : fmax(worst, fabs(w[i] + (g[i] > 0 ? 2.0 : -2.0)));
    ok(worst <= 1e-3, "2000 steps of a constant gradient move each weight by 2000 * lr * sign(g) = 2 within 1e-3 "
       "(%.2g): the corrections keep every step at lr, early and late", worst);
    double ref = run_against_reference(&o, 9, STEPS, 1.0f, 1203);
    ok(ref <= 1, "2000 steps of changing gradients on 9 weights end at torch's weights, within what float32 rounding "
       "allows (%.2g of the bound)", ref);
}

/* Lengths that are no multiple of anything, and the memory around the arrays. */
static void test_lengths(void) {
    Adam o = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    static const long lengths[] = { 1, 3, 7, 131, 1021 };
    double worst = 0;
    for (int k = 0; k < 5; k++) worst = fmax(worst, run_against_reference(&o, lengths[k], 3, 2.0f, 1210 + k));
    ok(worst <= 1, "n = 1, 3, 7, 131 and 1021: every weight, the last one too, is torch's after 3 steps, within what "
       "float32 rounding allows (%.2g of the bound)", worst);
    enum { N = 13 };
    float w[N + 2], m[N + 2], v[N + 2], g[N + 2];
    for (int i = 0; i < N + 2; i++) w[i] = m[i] = v[i] = 7.0f, g[i] = 0.5f;
    o.t = 1;
    STUDENT(adam_update(w + 1, m + 1, v + 1, g + 1, N, &o));
    ok(w[0] == 7.0f && m[0] == 7.0f && v[0] == 7.0f && w[N + 1] == 7.0f && m[N + 1] == 7.0f && v[N + 1] == 7.0f &&
       w[1] != 7.0f && w[N] != 7.0f, "adam_update writes its n weights and nothing before or after them");
}

int main(void) {
    (void)train_step; (void)progress; (void)report; (void)dump_example; (void)model_dump; (void)model_load;
    (void)layers_in; (void)silence_head; (void)model_init; (void)model_free; (void)model_like;
    EXERCISE("12.4", 1, test_pytorch_numbers());
    EXERCISE("12.4", 2, test_large_eps());
    EXERCISE("12.4", 1, test_sign_descent());
    EXERCISE("12.4", 2, test_many_steps());
    EXERCISE("12.4", 2, test_lengths());
    done_testing();
    return exit_status();
}
