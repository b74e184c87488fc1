/* tap.h: a small TAP (Test Anything Protocol) producer for the book's tests.
 *
 * Header-only: every function is static, so each test file gets its own copy.
 * Output is TAP version 13 on stdout, which `prove` reads; failure details go
 * to stderr as "# " comments, which prove shows as they come.
 *
 *   plan(n) or done_testing()        the plan, before or after the tests
 *   ok(cond, fmt, ...)               one test; the name is a printf format
 *   is_int(got, want, fmt, ...)      integers, showing both on failure
 *   is_str(got, want, fmt, ...)      strings, equal
 *   like(got, part, fmt, ...)        strings, got contains part
 *   close_ok(got, want, n, atol, rtol, fmt, ...)
 *                                    n numbers (float or double arrays), each
 *                                    |got - want| <= atol + rtol * |want|,
 *                                    NaN equal to NaN, infinities equal to
 *                                    themselves, as numpy.testing.assert_allclose
 *   dies_with(fn, arg, part, fmt, ...)
 *                                    fn(arg) in a child process must exit with a
 *                                    status from 1 to 127 (no crash), print
 *                                    nothing on stdout and exactly one line on
 *                                    stderr, containing part
 *   run_child(fn, arg)               the child process itself: its exit status
 *                                    and what it printed, for other checks
 *   within_ok(got, want, bound, n, fmt, ...)
 *                                    n numbers, each |got - want| <= bound[i]
 *                                    (a double array: what a correct float32
 *                                    answer may be off by there, in any order
 *                                    of its sums; reference.h derives it),
 *                                    NaN equal to NaN
 *   tap_layout("b h t s", 4, shape)  the axes of the next close_ok or
 *                                    within_ok: a failure names each
 *                                    mismatch by them, (b 1, h 0, t 3, s 2),
 *                                    not only by its flat index
 *   note(fmt, ...)                   "# note: ..." on stdout: reported beside
 *                                    the grade, not a test (bit-exactness with
 *                                    an earlier program, for instance)
 *   same_bits_note(a, b, n, fmt, ...)
 *                                    a note saying whether n floats are the
 *                                    same bits, and if not how far apart
 *   what_is_wrong(fmt, ...)          "#   what is wrong: ..." among the
 *                                    diagnostics: a failure's likely cause,
 *                                    in the terms of the exercise
 *   diag(fmt, ...), skip(n, fmt, ...), exit_status()
 *
 * Exercises and stubs (see "Exercises, handouts and grading" in book.md):
 *   TEST_GROUP(call)                 call (e.g. test_program(tmp)) in a forked
 *                                    child; its tests count as this file's. If
 *                                    a stub (NOT_IMPLEMENTED, exit status 3)
 *                                    stops it, the rest of the group is one
 *                                    skipped test: it needs that exercise.
 *   EXERCISE("1.6", n, call)         the n tests of Exercise 1.6, in a child;
 *                                    their names start "Exercise 1.6: ". If
 *                                    the exercise's own stub stops them, the
 *                                    tests not run fail, so the count is
 *                                    always n; another exercise's stub skips
 *                                    them (do that one first).
 *   tap_note_stub(err, status)       a program run that printed `err` and
 *                                    exited with `status`: if a stub stopped
 *                                    it, the tests of the group that fail
 *                                    after it are skipped (or fail, if they
 *                                    belong to that exercise). run.h calls it
 *                                    for every run.
 *
 * A failure prints
 *   not ok 7 - softmax rows sum to 1
 *   #   Failed test 'softmax rows sum to 1'
 *   #   at tests/test_tensor.c line 120.
 * followed, for is_* and close_ok, by what was got and what was expected.
 * The "# " lines go to stderr, where prove shows them; with ABH_TAP_DIAG=stdout
 * (make check and make grade set it) they go to stdout, right after the line
 * of the test they explain, so that whoever reads the TAP gets them in order. */
#ifndef TAP_H
#define TAP_H

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every function is static and marked unused, so a test that does not call
 * one of them compiles without a warning. */
#define TAP_FN static __attribute__((unused))
#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))

static int tap_started, tap_count, tap_failed, tap_planned = -1;
static int tap_group_fd = -1;       /* in a group's child: where each result goes */
static char tap_exercise[32];       /* "Exercise 1.6" inside EXERCISE, else "" */
static char tap_stub[32];           /* the exercise whose stub stopped the last run, or "" */
static int tap_stub_hollow;         /* a stub cut a call short (run.h's STUDENT): what follows is hollow */

/* Count one test; in a group's child, tell the parent too ('p' or 'f'). The
 * test's line is flushed first, so that a crash does not lose it. */
TAP_FN void tap_counted(int failed) {
    fflush(stdout);
    tap_count++;
    tap_failed += failed;
    if (tap_group_fd >= 0 && write(tap_group_fd, failed ? "f" : "p", 1) != 1) _exit(2);
}

/* "TAP version 13", once, before anything else. */
TAP_FN void tap_start(void) {
    if (!tap_started) printf("TAP version 13\n");
    tap_started = 1;
}

/* Where diagnostics go: stderr, or stdout when ABH_TAP_DIAG is "stdout". */
TAP_FN FILE *tap_diag_stream(void) {
    const char *to = getenv("ABH_TAP_DIAG");
    return to && !strcmp(to, "stdout") ? stdout : stderr;
}

/* Each line of text after "# " (stdout flushed first, to keep order). */
TAP_FN void tap_vdiag(const char *fmt, va_list ap) {
    char text[4096];
    FILE *to = tap_diag_stream();
    tap_start();
    fflush(stdout);
    vsnprintf(text, sizeof text, fmt, ap);
    for (char *line = text, *end; line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        fprintf(to, "# %.*s\n", end ? (int)(end - line) : (int)strlen(line), line);
    }
    fflush(to);
}

TAP_FN TAP_PRINTF(1, 2) void diag(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tap_vdiag(fmt, ap);
    va_end(ap);
}

TAP_FN void plan(int n) {
    tap_start();
    tap_planned = n;
    printf("1..%d\n", n);
}

/* The plan at the end, when it was not given at the start. */
TAP_FN void done_testing(void) {
    tap_start();
    if (tap_planned < 0) {
        tap_planned = tap_count;
        printf("1..%d\n", tap_count);
    }
    fflush(stdout);
}

/* What main returns: 0 if every planned test ran and passed. */
TAP_FN int exit_status(void) {
    fflush(stdout);
    if (tap_planned >= 0 && tap_planned != tap_count) return 255;
    return tap_failed > 254 ? 254 : tap_failed;
}

/* Report one test. '#' in a name would start a TAP directive, so it is escaped.
 * Inside EXERCISE the name starts "Exercise N.M: ". A test that fails after a
 * stub stopped a run is skipped instead, unless the stub is its own exercise's:
 * it cannot pass before that exercise is done, and fails, saying so, even if
 * its check happened to hold (on what the stub left unwritten). Once a stub has
 * cut a call short (STUDENT), a later test is skipped even if it holds: two
 * results the stub left unwritten agree with each other, and prove nothing. */
TAP_FN int tap_report(int pass, const char *file, int line, const char *fmt, va_list ap) {
    char name[1024];
    const char *stub = tap_stub;
    int own = tap_exercise[0] && !strcmp(tap_exercise, stub);
    pass = pass && !own;
    int skipped = stub[0] && !own && (!pass || tap_stub_hollow);
    vsnprintf(name, sizeof name, fmt, ap);
    tap_start();
    printf("%sok %d - %s%s", pass || skipped ? "" : "not ", tap_count + 1, tap_exercise, tap_exercise[0] ? ": " : "");
    for (const char *c = name; *c; c++) {
        if (*c == '#') putchar('\\');
        putchar(*c == '\n' ? ' ' : *c);
    }
    if (skipped) printf(" # SKIP needs %s, not implemented yet", stub);
    putchar('\n');
    tap_counted(!pass && !skipped);
    if (!pass && !skipped) {
        diag("  Failed test '%s%s%s'\n  at %s line %d.", tap_exercise, tap_exercise[0] ? ": " : "", name, file, line);
        if (own) diag("  not implemented yet: %s (its stub is still in the chapter)", stub);
    }
    return pass || skipped;
}

/* 1 when a test's failure is its exercise's stub, not its check: then the
 * check's details (got, expected) say nothing, and are left out. */
TAP_FN int tap_failed_by_stub(void) {
    return tap_exercise[0] && !strcmp(tap_exercise, tap_stub);
}

TAP_FN TAP_PRINTF(4, 5) int tap_ok(int pass, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int reported = tap_report(pass, file, line, fmt, ap);
    va_end(ap);
    return pass && reported;
}
#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

TAP_FN TAP_PRINTF(5, 6) int tap_is_int(long long got, long long want, const char *file, int line,
                                       const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report(got == want, file, line, fmt, ap);
    va_end(ap);
    if (!pass && !tap_failed_by_stub()) diag("         got: %lld\n    expected: %lld", got, want);
    return pass;
}
#define is_int(got, want, ...) tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)

/* s into dst (n bytes) with pad spaces after every newline, so that the lines
 * of a multi-line string stay aligned under its first one. */
TAP_FN const char *tap_indent(char *dst, size_t n, const char *s, int pad) {
    size_t used = 0;
    if (!s) s = "(null)";
    for (; *s && used + (size_t)pad + 2 < n; s++) {
        dst[used++] = *s;
        for (int i = 0; *s == '\n' && i < pad; i++) dst[used++] = ' ';
    }
    dst[used] = '\0';
    return dst;
}

/* got and want as quoted text, each line of them on a "# " line. */
TAP_FN void tap_show_strings(const char *got, const char *want) {
    char a[4096], b[4096];
    diag("         got: '%s'", tap_indent(a, sizeof a, got, 15));
    diag("    expected: '%s'", tap_indent(b, sizeof b, want, 15));
}

TAP_FN TAP_PRINTF(5, 6) int tap_is_str(const char *got, const char *want, const char *file, int line,
                                       const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report(got && want ? !strcmp(got, want) : got == want, file, line, fmt, ap);
    va_end(ap);
    if (!pass && !tap_failed_by_stub()) tap_show_strings(got, want);
    return pass;
}
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)

TAP_FN TAP_PRINTF(5, 6) int tap_like(const char *got, const char *part, const char *file, int line,
                                     const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report(got && part && strstr(got, part), file, line, fmt, ap);
    va_end(ap);
    if (!pass && !tap_failed_by_stub()) {
        diag("                  '%s'", got ? got : "(null)");
        diag("    doesn't contain '%s'", part ? part : "(null)");
    }
    return pass;
}
#define like(got, part, ...) tap_like((got), (part), __FILE__, __LINE__, __VA_ARGS__)

TAP_FN TAP_PRINTF(2, 3) void skip(int n, const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tap_start();
    for (int i = 0; i < n; i++) {
        printf("ok %d # skip %s\n", tap_count + 1, why);
        tap_counted(0);
    }
}

/* ---- notes and causes: said beside the grade ------------------------------- */

/* A TAP comment on stdout, "# note: ...": what the tests report but do not score
 * (prove skips comments; whoever reads the TAP finds it beside the test before). */
TAP_FN TAP_PRINTF(1, 2) void note(const char *fmt, ...) {
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    tap_start();
    for (char *c = text; *c; c++) if (*c == '\n') *c = ' ';
    printf("# note: %s\n", text);
    fflush(stdout);
}

/* A note on whether a and b (n floats) are the same bits: an earlier program's
 * very arithmetic, which a correct answer in another order need not repeat. */
TAP_FN TAP_PRINTF(4, 5) void same_bits_note(const float *a, const float *b, long n, const char *fmt, ...) {
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    long differ = 0;
    double most = 0;
    for (long i = 0; a && b && i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a)) differ++, most = fmax(most, fabs((double)a[i] - b[i]));
    if (!a || !b) return;
    if (!differ) note("%s: the same bits (not scored)", what);
    else note("%s: not the same bits, %ld of %ld numbers differ, by at most %.3g (not scored: the tests ask for "
              "the tolerance)", what, differ, n, most);
}

/* "what is wrong: ..." among a failure's diagnostics: the cause a test could tell,
 * said in the exercise's terms. tools/check-mistakes.lua counts these lines. After a
 * stub has stopped a run nothing is said: what the stub left unwritten has no cause. */
TAP_FN TAP_PRINTF(1, 2) void what_is_wrong(const char *fmt, ...) {
    char text[2048];
    if (tap_stub[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    diag("  what is wrong: %s", text);
}

/* ---- close_ok: numbers within a tolerance -------------------------------- */

/* The axes of the next close_ok or within_ok ("b h t s" and their sizes), so that a
 * failure names a number by them; forgotten after that test. */
static char tap_axes[64];
static int tap_axes_n, tap_axes_shape[8];

TAP_FN void tap_layout(const char *names, int ndim, const int *shape) {
    snprintf(tap_axes, sizeof tap_axes, "%s", names);
    tap_axes_n = ndim < 8 ? ndim : 8;
    for (int d = 0; d < tap_axes_n; d++) tap_axes_shape[d] = shape[d];
}

/* Flat index i as "index 37 (b 1, t 2, s 3)" if a layout was given, else "index 37". */
TAP_FN const char *tap_where(char *buf, size_t n, long i) {
    int at[8], len = snprintf(buf, n, "index %ld", i);
    long rest = i;
    if (!tap_axes_n) return buf;
    for (int d = tap_axes_n - 1; d >= 0; d--) at[d] = (int)(rest % tap_axes_shape[d]), rest /= tap_axes_shape[d];
    const char *name = tap_axes;
    for (int d = 0; d < tap_axes_n && len < (int)n; d++) {
        int w = (int)strcspn(name, " ");
        len += snprintf(buf + len, n - (size_t)len, "%s%.*s %d", d ? ", " : " (", w, name, at[d]);
        name += w + (name[w] == ' ');
    }
    if (len < (int)n) snprintf(buf + len, n - (size_t)len, ")");
    return buf;
}

/* Element i of a float array (is_double 0) or a double array (1). */
TAP_FN double tap_at(const void *p, int is_double, long i) {
    return is_double ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* assert_allclose's rule for one pair: NaN matches NaN, an infinity matches
 * itself, finite numbers match within atol + rtol * |want|. */
TAP_FN int tap_close_enough(double got, double want, double atol, double rtol) {
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    if (isinf(got) || isinf(want)) return got == want;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

TAP_FN TAP_PRINTF(10, 11) int tap_close(const void *got, int got_double, const void *want, int want_double,
                                        long n, double atol, double rtol, const char *file, int line,
                                        const char *fmt, ...) {
    long bad = 0, first[5], worst_at = -1;
    double worst = 0;
    for (long i = 0; i < n; i++) {
        double g = tap_at(got, got_double, i), w = tap_at(want, want_double, i);
        int close = tap_close_enough(g, w, atol, rtol);
        double err = close && !isfinite(g) ? 0 : fabs(g - w);
        if (!close && bad < 5) first[bad] = i;
        bad += !close;
        if (worst_at < 0 || err > worst || isnan(err)) worst = err, worst_at = i;
    }
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report(bad == 0, file, line, fmt, ap);
    va_end(ap);
    if (pass) {
        printf("#   max abs error %.3g over %ld numbers\n", worst, n);
        return tap_axes_n = 0, 1;
    }
    if (tap_failed_by_stub()) return tap_axes_n = 0, 0;
    char where[160];
    diag("  ---\n  max_abs_error: %.6g\n  at: %s\n  mismatches: %ld of %ld (atol %g, rtol %g)\n  first:",
         worst, tap_where(where, sizeof where, worst_at), bad, n, atol, rtol);
    for (long k = 0; k < bad && k < 5; k++)
        diag("    - { at: %s, got: %.9g, expected: %.9g }", tap_where(where, sizeof where, first[k]),
             tap_at(got, got_double, first[k]), tap_at(want, want_double, first[k]));
    diag("  ...");
    tap_axes_n = 0;
    return 0;
}
#define TAP_IS_DOUBLE(p) _Generic((p), double *: 1, const double *: 1, float *: 0, const float *: 0)
#define close_ok(got, want, n, atol, rtol, ...)                                                   \
    tap_close((got), TAP_IS_DOUBLE(got), (want), TAP_IS_DOUBLE(want), (n), (atol), (rtol), __FILE__, \
              __LINE__, __VA_ARGS__)

/* ---- within_ok: numbers within a bound of their own ----------------------- */

/* Each of n numbers within bound[i] of want[i] (NaN matches NaN, an infinity itself).
 * On success, the worst error as a fraction of its bound; on failure, the worst and
 * the first mismatches, each with its bound. */
TAP_FN TAP_PRINTF(9, 10) int tap_within(const void *got, int got_double, const void *want, int want_double,
                                        const double *bound, long n, const char *file, int line, const char *fmt, ...) {
    long bad = 0, first[5], worst_at = 0;
    double worst = 0;                                          /* the largest |got - want| / bound */
    for (long i = 0; i < n; i++) {
        double g = tap_at(got, got_double, i), w = tap_at(want, want_double, i), b = bound[i];
        int close = tap_close_enough(g, w, b, 0);
        double ratio = !isfinite(g) || !isfinite(w) ? (close ? 0 : INFINITY) : fabs(g - w) / (b > 0 ? b : 1e-300);
        if (!close && bad < 5) first[bad] = i;
        bad += !close;
        if (ratio > worst || (i == 0 && ratio == 0)) worst = ratio, worst_at = i;
    }
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report(bad == 0, file, line, fmt, ap);
    va_end(ap);
    if (pass) {
        printf("#   worst error %.2g of its bound, over %ld numbers\n", worst, n);
        return tap_axes_n = 0, 1;
    }
    if (tap_failed_by_stub()) return tap_axes_n = 0, 0;
    char where[160];
    diag("  ---\n  mismatches: %ld of %ld, each beyond what any order of float32 sums can round to\n"
         "  worst: %.3g times its bound, at %s\n  first:", bad, n, worst, tap_where(where, sizeof where, worst_at));
    for (long k = 0; k < bad && k < 5; k++)
        diag("    - { at: %s, got: %.9g, expected: %.9g, bound: %.2g }", tap_where(where, sizeof where, first[k]),
             tap_at(got, got_double, first[k]), tap_at(want, want_double, first[k]), bound[first[k]]);
    diag("  ...");
    tap_axes_n = 0;
    return 0;
}
#define within_ok(got, want, bound, n, ...)                                                               \
    tap_within((got), TAP_IS_DOUBLE(got), (want), TAP_IS_DOUBLE(want), (bound), (n), __FILE__, __LINE__, \
               __VA_ARGS__)

/* ---- stubs: what a handout leaves where an exercise's code goes ------------ */

/* The exercise a stub names in `err` ("... not implemented yet: Exercise 1.6"),
 * copied into `dst` (n bytes) as "Exercise 1.6"; "" if there is none. The last
 * one counts: it is what stopped the process. */
TAP_FN const char *tap_stub_in(char *dst, size_t n, const char *err) {
    const char *mark = "not implemented yet: ", *found = NULL;
    for (const char *p = err; p && (p = strstr(p, mark)); p++) found = p + strlen(mark);
    dst[0] = '\0';
    if (found && !strncmp(found, "Exercise ", 9)) snprintf(dst, n, "Exercise %.*s", (int)strspn(found + 9, "0123456789."), found + 9);
    return dst;
}

/* A run (a program, or a child) exited with `status` after printing `err` on
 * stderr: if that was a stub (exit status 3), remember which exercise it was.
 * Every test of the group that fails after it is taken to depend on it (tests
 * in a group build on each other: a case not dumped is not there to load). */
TAP_FN void tap_note_stub(const char *err, int status) {
    char stub[32], note[40];
    if (status != 3 || !tap_stub_in(stub, sizeof stub, err)[0]) return;
    snprintf(tap_stub, sizeof tap_stub, "%s", stub);
    int n = snprintf(note, sizeof note, "S%s\n", stub);   /* a group's parent learns it too */
    if (tap_group_fd >= 0 && write(tap_group_fd, note, (size_t)n) != n) _exit(2);
}

/* ---- death tests: run a function in a child process ----------------------- */

typedef struct TapChild {
    int status;        /* exit status, or 128 + the signal that killed it */
    char out[8192];    /* what it printed on stdout (cut to fit) */
    char err[8192];    /* what it printed on stderr (cut to fit) */
} TapChild;

/* Read the pipes fd0 and fd1 until both are closed, without letting either fill
 * up: each piece read goes to take(k, bytes, n, ctx), k the pipe's index. */
TAP_FN void tap_read_both(int fd0, int fd1, void (*take)(int, const char *, size_t, void *), void *ctx) {
    struct pollfd fds[2] = { { fd0, POLLIN, 0 }, { fd1, POLLIN, 0 } };
    for (int open = 2; open > 0;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            perror("poll");
            exit(2);
        }
        for (int k = 0; k < 2; k++) {
            char buf[4096];
            if (fds[k].fd < 0 || !fds[k].revents) continue;
            ssize_t r = read(fds[k].fd, buf, sizeof buf);
            if (r <= 0) { close(fds[k].fd); fds[k].fd = -1; open--; continue; }
            take(k, buf, (size_t)r, ctx);
        }
    }
}

/* tap_drain's sink: stdout (k = 0) and stderr (k = 1) into the TapChild, cut to fit. */
typedef struct TapCapture { TapChild *c; size_t used[2]; } TapCapture;
TAP_FN void tap_capture(int k, const char *buf, size_t n, void *ctx) {
    TapCapture *cap = ctx;
    char *dst = k == 0 ? cap->c->out : cap->c->err;
    size_t room = sizeof cap->c->out - 1 - cap->used[k], take = n < room ? n : room;
    memcpy(dst + cap->used[k], buf, take);
    cap->used[k] += take;
}

/* Read a child's stdout and stderr pipes to the end, into c. */
TAP_FN void tap_drain(int fd_out, int fd_err, TapChild *c) {
    TapCapture cap = { c, { 0, 0 } };
    tap_read_both(fd_out, fd_err, tap_capture, &cap);
    c->out[cap.used[0]] = c->err[cap.used[1]] = '\0';
}

/* fn(arg) in a forked child with its stdout and stderr captured. If fn returns,
 * the child exits 0. A child still running after 60 s is killed by SIGALRM. */
TAP_FN TapChild run_child(void (*fn)(void *), void *arg) {
    static TapChild c;                                /* big: kept off the stack */
    int po[2], pe[2];
    memset(&c, 0, sizeof c);
    fflush(stdout);
    fflush(stderr);
    if (pipe(po) != 0 || pipe(pe) != 0) { perror("pipe"); exit(2); }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
        alarm(60);
        fn(arg);
        exit(0);
    }
    close(po[1]);
    close(pe[1]);
    tap_drain(po[0], pe[0], &c);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return c;
}

/* Lines in s: newline characters, plus one for an unterminated last line. */
TAP_FN int tap_lines(const char *s) {
    int n = 0;
    for (const char *c = s; *c; c++) n += *c == '\n';
    return n + (*s && s[strlen(s) - 1] != '\n');
}

TAP_FN TAP_PRINTF(6, 7) int tap_dies_with(void (*fn)(void *), void *arg, const char *part, const char *file,
                                          int line, const char *fmt, ...) {
    TapChild c = run_child(fn, arg);
    tap_note_stub(c.err, c.status);
    int pass = c.status >= 1 && c.status <= 127 && c.status != 3 && c.out[0] == '\0' && tap_lines(c.err) == 1 &&
               strstr(c.err, part) != NULL;
    va_list ap;
    va_start(ap, fmt);
    int reported = tap_report(pass, file, line, fmt, ap);
    va_end(ap);
    if (!pass && !tap_failed_by_stub()) {
        char err[4096];
        diag("  exit status %d%s, stdout '%s'\n  stderr (%d lines): '%s'\n  wanted one line containing '%s'", c.status,
             c.status > 128 ? " (killed by a signal)" : "", c.out, tap_lines(c.err), tap_indent(err, sizeof err, c.err, 21),
             part);
    }
    return pass && reported;
}
#define dies_with(fn, arg, part, ...) tap_dies_with((fn), (arg), (part), __FILE__, __LINE__, __VA_ARGS__)

/* ---- groups: tests in a child process, and exercises ---------------------- */

/* Append the r bytes at buf to tail (cap bytes, kept NUL-terminated), keeping
 * only the last cap - 1 bytes of everything appended. */
TAP_FN void tap_keep_tail(char *tail, size_t cap, size_t *used, const char *buf, size_t r) {
    if (r > cap - 1) buf += r - (cap - 1), r = cap - 1;
    if (*used + r > cap - 1) {
        size_t drop = *used + r - (cap - 1);
        memmove(tail, tail + drop, *used - drop);
        *used -= drop;
    }
    memcpy(tail + *used, buf, r);
    *used += r;
    tail[*used] = '\0';
}

/* What a group's parent reads from its child: results on pipe 0 ('p', 'f', or
 * "S" exercise "\n" when a run met a stub), stderr on pipe 1, relayed as it
 * comes and its end kept to find a stub's message. */
typedef struct TapGroupRead {
    int ran, failed, noting;
    size_t noted, used;
    char child_stub[32], tail[4096];
} TapGroupRead;

TAP_FN void tap_group_take(int k, const char *buf, size_t n, void *ctx) {
    TapGroupRead *g = ctx;
    if (k == 1) {
        if (fwrite(buf, 1, n, stderr) != n) exit(2);
        tap_keep_tail(g->tail, sizeof g->tail, &g->used, buf, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (g->noting) {
            if (buf[i] == '\n' || g->noted + 1 >= sizeof g->child_stub) g->noting = 0;
            else g->child_stub[g->noted++] = buf[i], g->child_stub[g->noted] = '\0';
        } else if (buf[i] == 'S') {
            g->noting = 1, g->noted = 0;
        } else {
            g->ran++, g->failed += buf[i] == 'f';
        }
    }
}

/* Begin a group: fork. The child returns 1 and runs the group's tests, which
 * write their TAP lines to stdout as usual and one byte each to a pipe. The
 * parent relays the child's stderr, counts the bytes, and when the child has
 * ended reports what it could not (see TEST_GROUP and EXERCISE); it returns 0.
 * `exercise` is "1.6" or NULL, `planned` the number of tests an exercise has. */
TAP_FN int tap_group_start(const char *what, const char *exercise, int planned, const char *file, int line) {
    int pr[2], pe[2];
    tap_start();
    fflush(stdout);
    fflush(stderr);
    if (pipe(pr) != 0 || pipe(pe) != 0) { perror("pipe"); exit(2); }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid == 0) {
        close(pr[0]); close(pe[0]);
        dup2(pe[1], 2); close(pe[1]);
        tap_group_fd = pr[1];
        if (exercise) snprintf(tap_exercise, sizeof tap_exercise, "Exercise %s", exercise);
        return 1;
    }
    close(pr[1]); close(pe[1]);
    TapGroupRead g = { .tail = "" };
    tap_read_both(pr[0], pe[0], tap_group_take, &g);
    int ran = g.ran, failed = g.failed;
    char *tail = g.tail, *child_stub = g.child_stub;
    fflush(stderr);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    tap_count += ran;
    tap_failed += failed;
    if (tap_group_fd >= 0) {                           /* a group in a group: pass the results on */
        for (int i = 0; i < ran; i++)
            if (write(tap_group_fd, i < failed ? "f" : "p", 1) != 1) _exit(2);
    }
    char stub[32], own[32] = "";
    tap_stub_in(stub, sizeof stub, status == 3 ? tail : "");   /* a stub stopped the child itself */
    if (!stub[0] && status != 0 && child_stub[0]) snprintf(stub, sizeof stub, "%s", child_stub);
    if (exercise) snprintf(own, sizeof own, "Exercise %s", exercise);
    if (stub[0] && !exercise) {
        skip(1, "the rest of %s needs %s, not implemented yet", what, stub);
    } else if (stub[0] && ran < planned) {
        for (int i = ran; i < planned; i++) {
            if (strcmp(stub, own) == 0) {           /* one diagnostic for them all */
                printf("not ok %d - %s: test %d of %d in %s\n", tap_count + 1, own, i + 1, planned, what);
                tap_counted(1);
                if (i == ran) diag("  not implemented yet: %s (its stub is still in the chapter, %s line %d)", own, file, line);
            } else {                                   /* named, so that it counts for the exercise */
                printf("ok %d - %s: test %d of %d in %s # SKIP needs %s, not implemented yet\n", tap_count + 1, own,
                       i + 1, planned, what, stub);
                tap_counted(0);
            }
        }
    } else if (status != 0 && exercise && ran < planned) {  /* a crash: the exercise's tests not run fail */
        for (int i = ran; i < planned; i++)
            tap_ok(0, file, line, "%s: test %d of %d in %s: the group ended early, exit status %d%s", own, i + 1, planned,
                   what, status, status > 128 ? " (killed by a signal)" : "");
    } else if (status != 0) {
        tap_ok(0, file, line, "%s ended early: exit status %d%s", what, status, status > 128 ? " (killed by a signal)" : "");
    } else if (exercise && ran != planned) {
        tap_ok(0, file, line, "%s: %s ran %d tests, not the %d it declares", own, what, ran, planned);
    }
    return 0;
}

/* The end of a group, in the child: flush what the tests printed and exit. */
TAP_FN void tap_group_end(void) {
    fflush(stdout);
    fflush(stderr);
    exit(0);
}

#define TEST_GROUP(...) \
    do { if (tap_group_start(#__VA_ARGS__, NULL, 0, __FILE__, __LINE__)) { __VA_ARGS__; tap_group_end(); } } while (0)
#define EXERCISE(exercise, n, ...) \
    do { if (tap_group_start(#__VA_ARGS__, (exercise), (n), __FILE__, __LINE__)) { __VA_ARGS__; tap_group_end(); } } while (0)

#endif
