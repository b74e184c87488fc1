/* Tests for chapter 10: the fast programs, built as a reader builds them (-O3).
 *
 * mha_fast against mha through --load and --dump, and the refusals of both mha_fast
 * and mha_bench; mha_bench's memory table against the chapter's formula, and its
 * --load run against mha_fast's bits. The rungs themselves, called in the process,
 * are tests/test_mha_fast_core.c's. */
#define TESTING
#include "mha_fast.c"
#include "tap.h"
#include "run.h"
#define MODULE_MHA
#include "reference.h"

/* ---- the program, against mha -------------------------------------------- */

/* 1 if the directory holds no file at all (or does not exist) */
static int empty_dir(const char *dir) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' 2>/dev/null)\"", dir);
    return system(cmd) == 0;
}

/* DIR1/out.npy and DIR2/out.npy within 1e-4, as one test named by fmt; when either
 * run (exit status s1, s2) failed, the test fails without reading them. */
static TAP_PRINTF(5, 6) void outs_agree(const char *d1, const char *d2, int s1, int s2, const char *fmt, ...) {
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (s1 != 0 || s2 != 0) {
        ok(0, "%s (exit %d, %d)", name, s1, s2);
        return;
    }
    Tensor o1 = load_npy(d1, "out"), o2 = load_npy(d2, "out");
    close_ok(o2.data, o1.data, o1.size, 1e-4, 0, "%s (exit %d, %d)", name, s1, s2);
    tensor_free(&o1); tensor_free(&o2);
}

/* mha --dump a case, mha_fast --load it: out.npy within 1e-4, every other file the same bytes. */
static void same_as_mha(const char *tmp, const char *what, const char *const *flags, const char *heads, int causal) {
    char d1[600], d2[600], p1[1100], p2[1100];
    const char *args[24];
    int n = 0;
    snprintf(d1, sizeof d1, "%s/mha", tmp);
    snprintf(d2, sizeof d2, "%s/fast", tmp);
    remove_tree(d1); remove_tree(d2);
    for (int i = 0; flags[i]; i++) args[n++] = flags[i];
    args[n++] = "--quiet"; args[n++] = "--dump"; args[n++] = d1; args[n] = NULL;
    int s1 = run("mha", args);
    const char *fast[] = { "--load", d1, "--heads", heads, "--quiet", "--dump", d2, causal ? "--causal" : NULL, NULL };
    int s2 = run("mha_fast", fast);
    outs_agree(d1, d2, s1, s2, "%s: mha_fast's out.npy agrees with mha's to 1e-4", what);
    const char *files[] = { "attn", "X", "attention_mask", "q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                            "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias" };
    int all_same = s1 == 0 && s2 == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, files[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, files[i]);
        if (file_exists(p1) != file_exists(p2) || (file_exists(p1) && !same_file(p1, p2))) {
            all_same = 0;
            diag("%s differs", files[i]);
        }
    }
    ok(all_same, "%s: attn.npy, from a pass of its own, and every parameter and input are mha's, byte for byte", what);
}

static void test_program(const char *tmp) {
    char dir[600], never[600], path[1100];
    snprintf(dir, sizeof dir, "%s/mha", tmp);
    snprintf(never, sizeof never, "%s/never", tmp);
    const char *prog = program_path("mha_fast");
    same_as_mha(tmp, "the notebook's case, a random (B, H, T, T) mask", ARGS("--batch", "3"), "8", 0);
    same_as_mha(tmp, "(2, 70, 96), 3 heads, --causal", ARGS("--batch", "2", "--seq", "70", "--dim", "96", "--heads", "3",
                                                            "--causal", "--seed", "4"), "3", 1);

    /* a padding mask the program did not make, with --causal on top */
    mkdir(dir, 0777);                                 /* there to write to even if mha stopped at a stub */
    Tensor pad = tensor_new(4, (int[]){ 2, 1, 1, 70 });
    for (long i = 0; i < pad.size; i++) pad.data[i] = i < 70 || i % 70 < 40;
    save_npy(dir, "attention_mask", &pad);
    tensor_free(&pad);
    char out1[600], out2[600];
    snprintf(out1, sizeof out1, "%s/pad-mha", tmp);
    snprintf(out2, sizeof out2, "%s/pad-fast", tmp);
    int s1 = run("mha", ARGS("--load", dir, "--heads", "3", "--causal", "--quiet", "--dump", out1));
    int s2 = run("mha_fast", ARGS("--load", dir, "--heads", "3", "--causal", "--quiet", "--dump", out2));
    outs_agree(out1, out2, s1, s2, "a (B, 1, 1, T) padding mask and --causal: out.npy as mha's");
    same_as_mha(tmp, "(1, 50, 12), 4 heads of 3", ARGS("--batch", "1", "--seq", "50", "--dim", "12", "--heads", "4"), "4", 0);

    int status = run("mha_fast", NO_ARGS);
    ok(status == 0 && strstr(run_out, "mha_fast: MultiHeadAttention(hidden_dim=128, nums_head=8), head_dim 16") &&
       strstr(run_out, "output shape: (3, 2, 128)\n") && strstr(run_out, "parameters: 66048"),
       "run without flags, mha_fast makes mha's case and prints its output's corner and shape");
    status = run("mha_fast", ARGS("--quiet"));
    ok(status == 0 && run_out[0] == '\0' && run_err[0] == '\0', "--quiet prints nothing");
    refuses(prog, ARGS("--train"), "the flash rung never stores them", "--train is refused, saying why");
    refuses(prog, ARGS("--dim", "12", "--heads", "5"), "--heads 5 does not divide --dim 12", "--heads 5 with --dim 12 is refused");
    refuses(prog, ARGS("--kv-heads", "2"), "--kv-heads", "--kv-heads is refused: that is chapter 6's");
    Tensor bad = tensor_new3(2, 50, 50);
    mkdir(dir, 0777);
    save_npy(dir, "attention_mask", &bad);
    tensor_free(&bad);
    refuses(prog, ARGS("--load", dir, "--heads", "4", "--dump", never), "does not broadcast",
            "a (2, T, T) mask for 4 heads is refused, as mha refuses it");
    ok(empty_dir(never), "and nothing is written");
    snprintf(path, sizeof path, "%s/attention_mask.npy", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/o_proj.weight.npy", dir);
    Tensor wide = tensor_new2(12, 6);
    npy_save(path, &wide);
    tensor_free(&wide);
    refuses(prog, ARGS("--load", dir, "--heads", "4", "--dump", never), "o_proj.weight",
            "an o_proj.weight of the wrong shape is refused, naming it");
    ok(empty_dir(never), "and nothing is written");
}

/* The bench's figure table: the formula, at the sizes of the figure. */
static void test_memory_table(void) {
    int status = run("mha_bench", ARGS("--memory"));
    char line[128];
    snprintf(line, sizeof line, "\n32768 %.3f %.3f %.3f\n", rung_bytes(0, 1, 32768, 768, 12) / 1048576.0,
             rung_bytes(1, 1, 32768, 768, 12) / 1048576.0, rung_bytes(FASTEST, 1, 32768, 768, 12) / 1048576.0);
    ok(status == 0 && strstr(run_out, line), "mha_bench --memory prints rung_bytes for the figure (T = 32768:%s)", line + 6);
}

/* mha_bench --load DIR: the fastest rung alone on mha_fast's files, timed, and its output
 * (--out) the bits mha_fast --load writes, causal or not (one thread or two compute the
 * same bits). */
static void test_bench_load(const char *tmp) {
    char c[700], d[800], out[800];
    snprintf(c, sizeof c, "%s/bench-case", tmp);
    snprintf(out, sizeof out, "%s/bench-out.npy", tmp);
    run("mha_fast", ARGS("--batch", "2", "--seq", "70", "--dim", "96", "--heads", "4", "--seed", "6", "--quiet",
                         "--dump", c));
    snprintf(d, sizeof d, "%s/attention_mask.npy", c);
    remove(d);                                                  /* the case is X and the weights */
    for (int causal = 0; causal <= 1; causal++) {
        snprintf(d, sizeof d, "%s/bench-fast%d", tmp, causal);
        run("mha_fast", ARGS("--load", c, "--heads", "4", "--quiet", "--dump", d, causal ? "--causal" : NULL));
        int status = run("mha_bench", ARGS("--load", c, "--heads", "4", "--threads", "2", "--runs", "3", "--out", out,
                                           causal ? "--causal" : NULL));
        Tensor got = status == 0 ? load_written(tmp, "bench-out") : (Tensor){0}, want = load_written(d, "out");
        ok(status == 0 && strstr(run_out, "median") && got.data && want.data && got.size == want.size &&
           !memcmp(got.data, want.data, (size_t)got.size * sizeof *got.data),
           "mha_bench --load%s times the fastest rung on mha_fast's files, and --out writes mha_fast's out.npy, "
           "bit for bit", causal ? " --causal" : "");
        tensor_free(&got); tensor_free(&want);
        remove(out);
    }
}

/* mha_bench's refusals, each one line, before anything is timed or written; the case is
 * an X (1, 3, 8) alone, which is read before the heads are checked. */
static void test_bench_refusals(const char *tmp) {
    char c[700], out[800];
    snprintf(c, sizeof c, "%s/bench-x", tmp);
    snprintf(out, sizeof out, "%s/bench-refused.npy", tmp);
    mkdir(c, 0755);
    Tensor x = tensor_new3(1, 3, 8);
    save_npy(c, "X", &x);
    tensor_free(&x);
    const char *bench = program_path("mha_bench");
    refuses(bench, ARGS("--load", c), "--load needs --heads", "mha_bench --load without --heads is refused");
    refuses(bench, ARGS("--heads", "4"), "give --load DIR", "mha_bench --heads without --load is refused");
    refuses(bench, ARGS("--memory", "--load", c), "--memory times nothing", "mha_bench --memory --load is refused");
    refuses(bench, ARGS("--load", c, "--heads", "4", "--runs", "9x"), "not a whole number",
            "mha_bench --runs 9x is refused, not read as 9");
    refuses(bench, ARGS("--load", c, "--heads", "4", "--threads"), "needs a value",
            "mha_bench --threads with no value is refused");
    refuses(bench, ARGS("--load", c, "--heads", "3", "--out", out), "does not divide",
            "mha_bench --load with --heads that do not divide D is refused");
    refuses(bench, ARGS("--bogus"), "not a flag of mha_bench", "mha_bench --bogus is refused");
    refuses(bench, ARGS("--load", c, "--heads", "4", "--out", "/nonexistent-abh/out.npy"), "cannot write in",
            "mha_bench --out into a directory that does not exist is refused before anything is timed");
    ok(!file_exists(out), "and none of them wrote --out");
}

/* Tested through the programs here, called in tests/test_mha_fast_core.c. */
static void unused_here(void) {
    (void)fast_print; (void)fast_weights; (void)fast_threads_done; (void)visibility;
    (void)rung_fold; (void)fast_prepare; (void)fast_free_prepared;
}

/* PROGRAM --causal on its own case (no --load): every query t sees keys 0..t, the weights
 * above the diagonal are exactly 0, those on and below it are not, and every row sums to 1;
 * no random mask hides a row (which -1e20 would make uniform). */
static void test_causal_default(const char *program, const char *tmp) {
    char d[700];
    snprintf(d, sizeof d, "%s/%s-causal", tmp, program);
    int status = run(program, ARGS("--causal", "--seq", "4", "--batch", "1", "--dim", "16", "--heads", "4",
                                   "--quiet", "--dump", d));
    Tensor att = status == 0 ? load_npy(d, "attn") : (Tensor){0};
    long above = 0, hidden_below = 0, T = 4;
    double worst = 0;
    for (long r = 0; r < att.size / T; r++) {
        double sum = 0;
        for (long s = 0; s < T; s++) {
            float w = att.data[r * T + s];
            above += s > r % T && w != 0.0f;
            hidden_below += s <= r % T && w == 0.0f;
            sum += w;
        }
        worst = fmax(worst, fabs(sum - 1));
    }
    ok(status == 0 && att.size == 64 && above == 0 && hidden_below == 0 && worst < 1e-6,
       "%s --causal --seq 4 (no --load): exactly 0 above the diagonal, no key hidden below it, rows sum to 1",
       program);
    if (status) diag("%s", run_err);
    tensor_free(&att);
}

int main(void) {
    unused_here();
    char tmp[] = "/tmp/abh-mha-fast-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 2; }

    TEST_GROUP(test_program(tmp));
    TEST_GROUP(test_causal_default("mha_fast", tmp));
    TEST_GROUP(test_memory_table());
    TEST_GROUP(test_bench_load(tmp));
    TEST_GROUP(test_bench_refusals(tmp));

    remove_tree(tmp);
    done_testing();
    return exit_status();
}
