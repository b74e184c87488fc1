/* Tests for chapter 12's Exercise 12.4: Adam, and a short run of the program it trains.
 *
 * adam_update against torch.optim.Adam's formula in double, with the bound of a float32
 * step beside it (tests/reference.h: several steps, the first step, a zero gradient);
 * adam_step over a whole model; then the program as a reader runs it for 12 steps: its
 * progress lines, the files --dump
 * writes, the same bits a second time, and --load of what it wrote. Every result
 * here goes through adam_update, so every test sits in EXERCISE("12.4", ...): in a
 * handout each fails under that name until the exercise is done. The model's other
 * parts are tests/test_induction.c's, and the trained models
 * tests/test_induction_models.c's. */
#define TESTING
#include "induction.c"
#include "tap.h"
#include "run.h"
#include "induction_cases.h"
#include "reference.h"

/* ---- Adam (Exercise 12.4) ---------------------------------------------------------------- */

/* Gradients of every size from 1e-6 to 1e2, of both signs: each entry i is
 * u * 10^(i mod 9 - 6), u in [-1, 1) (near eps, where it matters, and far above). */
static void draw_gradient(float *g, long n, Rng *r) {
    for (long i = 0; i < n; i++) g[i] = (2 * rng_uniform(r) - 1) * powf(10.0f, (float)(i % 9 - 6));
}

/* The chapter's list of Adam's mistakes, each made in double on the same steps: the
 * weights after `steps` steps of gradients g (steps rows of n) from w0. */
static const char *const adam_mistakes[] = {
    "no bias correction: w -= lr * m / (sqrt(v) + eps), so the first steps are a tenth of lr",
    "m is corrected and v is not: the first steps are about 32 times too long",
    "eps is inside the square root, sqrt(v_hat + eps): it belongs after it, sqrt(v_hat) + eps",
    "beta1 and beta2 are swapped in the running averages",
    "v averages the gradient, not its square",
    "v's correction is applied without its square root: sqrt(v) / c2, where sqrt(v) / sqrt(c2) belongs",
    "the step count is off by one: beta^(t - 1), so the first step divides by 1 - 1 = 0",
    "the step count is off by one: beta^(t + 1), as if counted from 0",
    "m is updated after w: each step uses the mean of the steps before it",
    "the last weight is left out of the loop",
};

static void adam_mistake(int k, double *w, const float *g, int n, int steps, const Adam *o) {
    double *m = calloc((size_t)n, sizeof *m), *v = calloc((size_t)n, sizeof *v);
    double b1 = k == 3 ? o->beta2 : o->beta1, b2 = k == 3 ? o->beta1 : o->beta2;
    for (int t = 1; t <= steps; t++) {
        int tc = k == 6 ? t - 1 : k == 7 ? t + 1 : t;
        double c1 = 1 - pow(o->beta1, tc), c2 = 1 - pow(o->beta2, tc);
        for (int i = 0; i < n - (k == 9); i++) {
            double gi = g[(t - 1) * n + i], old_m = m[i];
            m[i] = b1 * m[i] + (1 - b1) * gi;
            v[i] = b2 * v[i] + (1 - b2) * (k == 4 ? gi : gi * gi);
            double mm = k == 8 ? old_m : m[i];
            double step = k == 0 ? o->lr * mm / (sqrt(v[i]) + o->eps)
                        : k == 1 ? o->lr / c1 * mm / (sqrt(v[i]) + o->eps)
                        : k == 2 ? o->lr / c1 * mm / sqrt(v[i] / c2 + o->eps)
                        : k == 5 ? o->lr / c1 * mm / (sqrt(v[i]) / c2 + o->eps)
                        : o->lr / c1 * mm / (sqrt(v[i]) / sqrt(c2) + o->eps);
            w[i] -= step;
        }
    }
    free(m); free(v);
}

/* What is wrong with Adam's numbers: the listed mistake they match, if one does, else which
 * of w, m and v are off. wd, md and vd are torch's; w0 and g (steps rows of n) the run's. */
static void explain_adam(const float *w, const float *m, const float *v, const double *wd, const double *md,
                         const double *vd, int n, const float *w0, const float *g, int steps, const Adam *o) {
    if (tap_stub[0]) return;
    double *alt = malloc(sizeof *alt * (size_t)n);
    for (int k = 0; k < (int)(sizeof adam_mistakes / sizeof adam_mistakes[0]); k++) {
        double worst = 0;
        for (int i = 0; i < n; i++) alt[i] = w0[i];
        adam_mistake(k, alt, g, n, steps, o);
        for (int i = 0; i < n; i++) worst = isnan(w[i]) != isnan(alt[i]) ? INFINITY : fmax(worst, fabs(w[i] - alt[i]));
        if (worst <= 1e-5 && !(isnan(worst))) {
            what_is_wrong("%s", adam_mistakes[k]);
            free(alt);
            return;
        }
    }
    free(alt);
    double mr = 0, vr = 0, wr = 0;                     /* the largest relative differences */
    for (int i = 0; i < n; i++) {
        mr = fmax(mr, fabs(m[i] - md[i]) / (fabs(md[i]) + 1e-30));
        vr = fmax(vr, fabs(v[i] - vd[i]) / (fabs(vd[i]) + 1e-30));
        wr = fmax(wr, fabs(w[i] - wd[i]));
    }
    if (mr > 1e-3 && vr > 1e-3)
        what_is_wrong("m and v are both off (by up to %.2g and %.2g of themselves): the running averages are wrong, "
                      "m = beta1 m + (1 - beta1) g and v = beta2 v + (1 - beta2) g^2", mr, vr);
    else if (vr > 1e-3)
        what_is_wrong("v is off by up to %.2g of itself while m is right: v averages the squared gradient, "
                      "v = beta2 v + (1 - beta2) g^2", vr);
    else if (mr > 1e-3)
        what_is_wrong("m is off by up to %.2g of itself while v is right: m = beta1 m + (1 - beta1) g, updated "
                      "before w uses it", mr);
    else
        what_is_wrong("m and v are right and the weights are not (off by up to %.3g): the step is lr / (1 - beta1^t) "
                      "* m / (sqrt(v) / sqrt(1 - beta2^t) + eps), eps added after the square root", wr);
}

static void test_adam_against_torch(void) {
    enum { N = 45, STEPS = 8 };
    float w[N], w0[N], m[N] = {0}, v[N] = {0}, g[N], all[STEPS * N];
    double wd[N], md[N] = {0}, vd[N] = {0}, ew[N] = {0}, em[N] = {0}, ev[N] = {0};
    Rng r;
    rng_seed(&r, 61);
    rand_uniform(w, N, -1.0f, 1.0f, &r);
    for (int i = 0; i < N; i++) wd[i] = w0[i] = w[i];
    Adam o = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    for (int t = 1; t <= STEPS; t++) {
        draw_gradient(g, N, &r);
        if (t == 4) for (int i = 0; i < N; i++) g[i] = -g[i] * 3;     /* a gradient that turns */
        memcpy(all + (t - 1) * N, g, sizeof g);
        o.t = t;
        STUDENT(adam_update(w, m, v, g, N, &o));
        ref_adam_err(wd, ew, md, em, vd, ev, g, N, o.lr, o.beta1, o.beta2, o.eps, t);   /* torch's, in double */
    }
    int good = within_ok(w, wd, ew, N, "adam_update: after %d steps with changing gradients (1e-6 to 1e2, one step "
                         "turning them around), the %d weights are torch.optim.Adam's (double), within what float32 "
                         "rounding allows", STEPS, N);
    good &= within_ok(m, md, em, N, "the running mean m (exp_avg) is torch's, within what float32 rounding allows");
    good &= within_ok(v, vd, ev, N, "the running mean of squares v (exp_avg_sq) is torch's, within what float32 "
                      "rounding allows");
    if (!good) explain_adam(w, m, v, wd, md, vd, N, w0, all, STEPS, &o);
}

/* The first step, worked by hand: m = (1 - b1) g and v = (1 - b2) g^2, so m / c1 = g and
 * sqrt(v / c2) = |g|: every weight moves by lr * sign(g), whatever |g| (well above eps). */
static void test_adam_first_step(void) {
    enum { N = 40 };
    float w[N], w0[N], m[N] = {0}, v[N] = {0}, g[N], want[N];
    Rng r;
    rng_seed(&r, 62);
    rand_uniform(w, N, -1.0f, 1.0f, &r);
    memcpy(w0, w, sizeof w);
    for (int i = 0; i < N; i++) {
        g[i] = (i % 2 ? -1.0f : 1.0f) * powf(10.0f, (float)(i % 5 - 2)) * (1 + rng_uniform(&r));   /* 1e-2 .. 2e2 */
        want[i] = w0[i] - 0.05f * (g[i] > 0 ? 1.0f : -1.0f);
    }
    Adam o = { .lr = 0.05f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .t = 1 };
    STUDENT(adam_update(w, m, v, g, N, &o));
    close_ok(w, want, N, 1e-6, 0, "adam_update's first step (t = 1, lr 0.05) moves every weight by lr * sign(g) "
             "within 1e-6, for gradients from 1e-2 to 2e2: the bias corrections undo the zero start");
    double worst = 0, a1 = 1 - (double)o.beta1, a2 = 1 - (double)o.beta2;    /* 0.1 and 0.001, as floats hold them */
    for (int i = 0; i < N; i++)
        worst = fmax(worst, fmax(fabs(m[i] - a1 * g[i]) / fabs(a1 * g[i]),
                                 fabs(v[i] - a2 * g[i] * g[i]) / (a2 * g[i] * g[i])));
    ok(written(m, N) && worst <= 1e-5, "after it m = (1 - beta1) g and v = (1 - beta2) g^2, within 1e-5 of "
       "themselves (%.2g)", worst);
}

/* A zero gradient from a zero start: m and v stay 0, and so the step is 0 / (0 + eps). */
static void test_adam_zero_gradient(void) {
    enum { N = 12 };
    float w[N], w0[N], m[N] = {0}, v[N] = {0}, g[N] = {0};
    Rng r;
    rng_seed(&r, 63);
    rand_uniform(w, N, -1.0f, 1.0f, &r);
    memcpy(w0, w, sizeof w);
    for (int i = 0; i < N; i += 3) g[i] = 0.5f;                      /* a third of them move */
    Adam o = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .t = 1 };
    STUDENT(adam_update(w, m, v, g, N, &o));
    int kept = 1, moved = 1;
    for (int i = 0; i < N; i++) {
        if (i % 3) kept &= w[i] == w0[i] && m[i] == 0.0f && v[i] == 0.0f;
        else moved &= w[i] != w0[i];
    }
    ok(kept && moved, "a weight whose gradient is 0 (from m = v = 0) is left exactly as it was, m and v with it, "
       "while the weights beside it with a gradient move");
}

/* adam_step: every weight of a model takes its first step, lr * sign(grad), and the
 * gradients are cleared for the next batch. */
static void test_adam_step(void) {
    Model m = model_new(5, 8, 2, 2, 64, 1.0f), before, grad, mean, square;
    Tensor *w[MAX_PARAMS], *b[MAX_PARAMS], *g[MAX_PARAMS];
    char name[MAX_PARAMS][40];
    model_like(&before, &m), model_like(&grad, &m), model_like(&mean, &m), model_like(&square, &m);
    int n = model_params(&m, w, name);
    model_params(&before, b, name), model_params(&grad, g, name);
    Rng r;
    rng_seed(&r, 65);
    for (int i = 0; i < n; i++) {
        memcpy(b[i]->data, w[i]->data, sizeof(float) * (size_t)w[i]->size);
        rand_uniform(g[i]->data, g[i]->size, -1.0f, 1.0f, &r);
    }
    Adam o = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    STUDENT(adam_step(&m, &grad, &mean, &square, &o));
    int cleared = 1;
    double worst = 0;
    long entries = 0;
    for (int i = 0; i < n; i++)
        for (long j = 0; j < w[i]->size; j++, entries++) {
            cleared &= g[i]->data[j] == 0.0f;
            worst = fmax(worst, fabs(fabs(w[i]->data[j] - b[i]->data[j]) - 0.01));
        }
    ok(o.t == 1 && worst <= 1e-6, "adam_step moves all %ld weights of a 2-layer model by lr = 0.01 on its first "
       "step (within %.2g), and counts the step", entries, worst);
    ok(cleared, "it clears every gradient for the next batch, as optimizer.zero_grad()");
    model_free(&m), model_free(&before), model_free(&grad), model_free(&mean), model_free(&square);
}

/* ---- the program, as a reader runs it ------------------------------------------------- */

/* Every file a run of `--steps 30 --every 10` dumps with the default sizes
 * (B = 16, T = 32, D = 32, H = 2, L = 2), and its shape. */
static const Written run_files[] = {
    { "history", 2, { 3, 6 } },        { "losses", 1, { 12 } },          { "tokens", 3, { 12, 16, 33 } },
    { "counted", 3, { 12, 16, 32 } },  { "example", 2, { 2, 33 } },      { "attn", 4, { 2, 2, 32, 32 } },
    { "tok_emb.weight", 2, { 32, 32 } }, { "pos_emb.weight", 2, { 32, 32 } },
    { "layers.1.k_proj.weight", 2, { 32, 32 } }, { "unembed.bias", 1, { 32 } },
};
enum { NRUN_FILES = sizeof run_files / sizeof run_files[0] };



/* Every file of a dump of L layers (weights, and `extra` of run_files' others) the same. */
static int same_dump(const char *d1, const char *d2, int L, int extra) {
    char name[MAX_PARAMS][40];
    int n = weight_names(L, name), same = 1;
    for (int i = 0; i < n; i++) same &= same_npy(d1, d2, name[i]);
    for (int i = 0; i < extra; i++) same &= same_npy(d1, d2, run_files[i].name);
    return same;
}

/* The lines from "held-out:" to the end of a run's printout, or "" if none. */
static const char *held_out(const char *out) {
    const char *at = strstr(out, "held-out:");
    return at ? at : "";
}

static void test_program(const char *tmp) {
    char a[600], b[600], c[600], out_a[16384];
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(b, sizeof b, "%s/b", tmp);
    snprintf(c, sizeof c, "%s/c", tmp);
    int status = run("induction", ARGS("--steps", "12", "--every", "4", "--dump", a));
    snprintf(out_a, sizeof out_a, "%s", run_out);
    int lines = 0;
    for (const char *p = run_out; (p = strstr(p, "step ")); p++) lines++;
    ok(status == 0 && lines == 3 && strstr(run_out, "step     4  loss ") && strstr(run_out, "step    12  loss ") &&
       strstr(run_out, "held-out: loss ") && strstr(run_out, "layer 1 head 1 "),
       "induction --steps 12 --every 4 prints a progress line at steps 4, 8 and 12, then the held-out scores of "
       "every head");
    int shapes = wrote_shapes(a, run_files, NRUN_FILES);
    ok(status == 0 && shapes, "--dump writes history (3, 6), losses (12), tokens (12, 16, 33), counted (12, 16, 32), "
       "example (2, 33), attn (2, 2, 32, 32) and every weight under its state_dict name");
    Tensor history = load_written(a, "history"), losses = load_written(a, "losses");
    int rows = history.data && losses.data && history.size == 18 && losses.size == 12;
    for (int k = 0; rows && k < 3; k++)
        rows &= history.data[k * 6] == 4.0f * (k + 1) && history.data[k * 6 + 1] == losses.data[4 * k + 3];
    ok(rows, "history.npy's rows are steps 4, 8 and 12, each with the training loss losses.npy holds for its step");
    tensor_free(&history), tensor_free(&losses);
    int again = run("induction", ARGS("--steps", "12", "--every", "4", "--dump", b));
    ok(status == 0 && again == 0 && !strcmp(run_out, out_a) && same_dump(a, b, 2, NRUN_FILES),
       "a second run prints the same and dumps the same files, byte for byte: training is deterministic");
    mkdir(a, 0777);                         /* there even after a stub, for --load to read */
    status = run("induction", ARGS("--load", a, "--heads", "2", "--steps", "0", "--dump", c));
    ok(status == 0 && held_out(out_a)[0] && !strcmp(held_out(run_out), held_out(out_a)),
       "--load of that dump with --heads 2 --steps 0 prints the same held-out loss, accuracy and head scores");
    ok(status == 0 && same_dump(a, c, 2, 0) && same_npy(a, c, "attn") && same_npy(a, c, "example"),
       "and dumps the same weights, example.npy and attn.npy, byte for byte (--steps 0 trains nothing)");
}

/* A refused run: exit status 1, nothing on stdout, one line on stderr containing
 * part, and its --dump directory (`never`) not made. */

/* Run through the program, or tested in tests/test_induction.c. */
static void unused_here(void) {
    (void)train_step; (void)progress; (void)report; (void)dump_example; (void)model_dump; (void)model_load;
    (void)silence_head; (void)layers_in;
}

int main(void) {
    char tmp[] = "/tmp/abh-induction-train-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }
    unused_here();
    EXERCISE("12.4", 3, test_adam_against_torch());
    EXERCISE("12.4", 2, test_adam_first_step());
    EXERCISE("12.4", 1, test_adam_zero_gradient());
    EXERCISE("12.4", 2, test_adam_step());
    EXERCISE("12.4", 6, test_program(tmp));
    remove_tree(tmp);
    done_testing();
    return exit_status();
}
