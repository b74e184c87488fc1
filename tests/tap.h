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
 *   diag(fmt, ...), skip(n, fmt, ...), exit_status()
 *
 * A failure prints
 *   not ok 7 - softmax rows sum to 1
 *   #   Failed test 'softmax rows sum to 1'
 *   #   at tests/test_tensor.c line 120.
 * followed, for is_* and close_ok, by what was got and what was expected. */
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

/* "TAP version 13", once, before anything else. */
TAP_FN void tap_start(void) {
    if (!tap_started) printf("TAP version 13\n");
    tap_started = 1;
}

/* Each line of text on stderr, after "# " (stdout flushed first, to keep order). */
TAP_FN void tap_vdiag(const char *fmt, va_list ap) {
    char text[4096];
    tap_start();
    fflush(stdout);
    vsnprintf(text, sizeof text, fmt, ap);
    for (char *line = text, *end; line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        fprintf(stderr, "# %.*s\n", end ? (int)(end - line) : (int)strlen(line), line);
    }
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

/* Report one test. '#' in a name would start a TAP directive, so it is escaped. */
TAP_FN int tap_report(int pass, const char *file, int line, const char *fmt, va_list ap) {
    char name[1024];
    vsnprintf(name, sizeof name, fmt, ap);
    tap_start();
    printf("%sok %d - ", pass ? "" : "not ", ++tap_count);
    for (const char *c = name; *c; c++) {
        if (*c == '#') putchar('\\');
        putchar(*c == '\n' ? ' ' : *c);
    }
    putchar('\n');
    if (!pass) {
        tap_failed++;
        diag("  Failed test '%s'\n  at %s line %d.", name, file, line);
    }
    return pass;
}

TAP_FN TAP_PRINTF(4, 5) int tap_ok(int pass, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tap_report(pass, file, line, fmt, ap);
    va_end(ap);
    return pass;
}
#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

TAP_FN TAP_PRINTF(5, 6) int tap_is_int(long long got, long long want, const char *file, int line,
                                       const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report(got == want, file, line, fmt, ap);
    va_end(ap);
    if (!pass) diag("         got: %lld\n    expected: %lld", got, want);
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
    if (!pass) tap_show_strings(got, want);
    return pass;
}
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)

TAP_FN TAP_PRINTF(5, 6) int tap_like(const char *got, const char *part, const char *file, int line,
                                     const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_report(got && part && strstr(got, part), file, line, fmt, ap);
    va_end(ap);
    if (!pass) {
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
    for (int i = 0; i < n; i++) printf("ok %d # skip %s\n", ++tap_count, why);
}

/* ---- close_ok: numbers within a tolerance -------------------------------- */

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
        return 1;
    }
    diag("  ---\n  max_abs_error: %.6g\n  at_index: %ld\n  mismatches: %ld of %ld (atol %g, rtol %g)\n  first:",
         worst, worst_at, bad, n, atol, rtol);
    for (long k = 0; k < bad && k < 5; k++)
        diag("    - { index: %ld, got: %.9g, expected: %.9g }", first[k], tap_at(got, got_double, first[k]),
             tap_at(want, want_double, first[k]));
    diag("  ...");
    return 0;
}
#define TAP_IS_DOUBLE(p) _Generic((p), double *: 1, const double *: 1, float *: 0, const float *: 0)
#define close_ok(got, want, n, atol, rtol, ...)                                                   \
    tap_close((got), TAP_IS_DOUBLE(got), (want), TAP_IS_DOUBLE(want), (n), (atol), (rtol), __FILE__, \
              __LINE__, __VA_ARGS__)

/* ---- death tests: run a function in a child process ----------------------- */

typedef struct TapChild {
    int status;        /* exit status, or 128 + the signal that killed it */
    char out[8192];    /* what it printed on stdout (cut to fit) */
    char err[8192];    /* what it printed on stderr (cut to fit) */
} TapChild;

/* Read both pipes until both are closed, without letting either fill up. */
TAP_FN void tap_drain(int fd_out, int fd_err, TapChild *c) {
    struct pollfd fds[2] = { { fd_out, POLLIN, 0 }, { fd_err, POLLIN, 0 } };
    char *dst[2] = { c->out, c->err };
    size_t used[2] = { 0, 0 }, room = sizeof c->out - 1;
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
            size_t take = (size_t)r < room - used[k] ? (size_t)r : room - used[k];
            memcpy(dst[k] + used[k], buf, take);
            used[k] += take;
        }
    }
    c->out[used[0]] = c->err[used[1]] = '\0';
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
    int pass = c.status >= 1 && c.status <= 127 && c.out[0] == '\0' && tap_lines(c.err) == 1 &&
               strstr(c.err, part) != NULL;
    va_list ap;
    va_start(ap, fmt);
    tap_report(pass, file, line, fmt, ap);
    va_end(ap);
    if (!pass) {
        char err[4096];
        diag("  exit status %d%s, stdout '%s'\n  stderr (%d lines): '%s'\n  wanted one line containing '%s'", c.status,
             c.status > 128 ? " (killed by a signal)" : "", c.out, tap_lines(c.err), tap_indent(err, sizeof err, c.err, 21),
             part);
    }
    return pass;
}
#define dies_with(fn, arg, part, ...) tap_dies_with((fn), (arg), (part), __FILE__, __LINE__, __VA_ARGS__)

#endif
