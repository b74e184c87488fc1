/* run.h: run a chapter's program as a reader would, for the tests.
 *
 *   program_path(name)             $ABH_BIN/NAME, or build/bin/NAME
 *   run_program(path, args, out, nout, err, nerr)
 *                                  run it with args (NULL-terminated), capture
 *                                  stdout and stderr; returns its exit status,
 *                                  or 128 + the signal that killed it;
 *                                  $ABH_WRAP, if set, is a command put before
 *                                  the program, split at spaces (make
 *                                  test-valgrind sets it to valgrind and its
 *                                  options); a run stopped by a stub is
 *                                  noted (tap.h, tap_note_stub)
 *   ARGS("--dim", "4")             a NULL-terminated argument list
 *   refuses(path, args, part, fmt, ...)
 *                                  one TAP test: the program exits 1..127
 *                                  (not 3, a stub's status) with
 *                                  nothing on stdout and exactly one line on
 *                                  stderr, containing part
 *   same_file(p1, p2), file_exists(path), remove_tree(dir)
 *   same_results(d1, d2)           DIR1 and DIR2 hold the same out.npy and the same
 *                                  attn.npy, byte for byte (a diag names a file that
 *                                  differs)
 *   run(name, args)                run $ABH_BIN/NAME; what it printed is left in
 *                                  run_out and run_err
 *   load_npy(dir, name), save_npy(dir, name, t), copy_npy(from_dir, from, to_dir, to)
 *                                  DIR/NAME.npy by name (any dtype interface.md
 *                                  reads, as float), e.g. to rename a dump's files
 *                                  for another program's --load
 *   load_written(dir, name)        DIR/NAME.npy, or an empty Tensor if no run wrote it
 *   same_shape(t, ndim, shape)     t was written, at exactly that shape
 *   wrote_shapes(dir, files, n)    DIR holds each Written file at its shape (a diag names
 *                                  the others)
 *   same_npy(d1, d2, name)         DIR1/NAME.npy and DIR2/NAME.npy, byte for byte
 *   same_word_share(x, att, T, &on, &spread)
 *                                  a map over chapter 1's sentence: the least share of
 *                                  a row on the keys of its own word, and their spread
 *   STUDENT(call)                  a call into a chapter's code that a student
 *                                  writes (a forward pass): if it reaches a
 *                                  stub, the stub is noted (tap.h) and the test
 *                                  goes on after the call, in a backup forked
 *                                  before it, instead of the process stopping,
 *                                  so that every later test still runs under
 *                                  its own name (and fails, if it is that
 *                                  exercise's)
 *
 * Include after tap.h. Header-only, every function static. */
#ifndef RUN_H
#define RUN_H

#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tensor.h"

#define RUN_FN static __attribute__((unused))

/* A program's arguments: ARGS("--dim", "4") is a NULL-terminated list. */
#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_ARGS ((const char *const[]){ NULL })

/* $ABH_BIN/NAME (make exports ABH_BIN: build/bin, or build/debug/bin). */
RUN_FN const char *program_path(const char *name) {
    static char path[1024];
    const char *bin = getenv("ABH_BIN");
    snprintf(path, sizeof path, "%s/%s", bin && *bin ? bin : "build/bin", name);
    return path;
}

RUN_FN int run_program(const char *path, const char *const *args, char *out, size_t nout, char *err, size_t nerr) {
    int po[2], pe[2];
    if (pipe(po) || pipe(pe)) { perror("pipe"); exit(2); }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid == 0) {
        dup2(po[1], 1); dup2(pe[1], 2);
        close(po[0]); close(pe[0]); close(po[1]); close(pe[1]);
        const char *argv[96];
        int n = 0;
        char wrap[2048];
        const char *w = getenv("ABH_WRAP");
        snprintf(wrap, sizeof wrap, "%s", w ? w : "");
        for (char *word = strtok(wrap, " "); word && n < 32; word = strtok(NULL, " ")) argv[n++] = word;
        argv[n++] = path;
        for (int i = 0; args[i] && n < 95; i++) argv[n++] = args[i];
        argv[n] = NULL;
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(po[1]); close(pe[1]);
    static TapChild c;                          /* tap.h's capture, 16 KiB */
    tap_drain(po[0], pe[0], &c);                /* reads both pipes to the end */
    close(po[0]); close(pe[0]);
    snprintf(out, nout, "%s", c.out);
    snprintf(err, nerr, "%s", c.err);
    int status;
    waitpid(pid, &status, 0);
    status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    tap_note_stub(c.err, status);               /* a stub stopped it: tap.h skips what depends on it */
    return status;
}

static int run_count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* One test: `path args` is refused with one clear line containing `part`. */
#define refuses(path, args, part, ...) run_refuses((path), (args), (part), __FILE__, __LINE__, __VA_ARGS__)
RUN_FN TAP_PRINTF(6, 7) int run_refuses(const char *path, const char *const *args, const char *part,
                                        const char *file, int line, const char *fmt, ...) {
    char out[8192], err[8192], name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    int status = run_program(path, args, out, sizeof out, err, sizeof err);
    int good = status > 0 && status < 128 && status != 3 && out[0] == 0 && run_count_lines(err) == 1 && strstr(err, part);
    tap_ok(good, file, line, "%s", name);
    if (!good && !tap_stub[0])                  /* after a stub, the test was skipped or failed by it */
        diag("exit %d; stdout '%s'; stderr '%s'; wanted one line containing '%s'", status, out, err, part);
    return good;
}

RUN_FN int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* 1 when both files can be read and hold the same bytes. */
RUN_FN int same_file(const char *p1, const char *p2) {
    FILE *f1 = fopen(p1, "rb"), *f2 = fopen(p2, "rb");
    int same = f1 && f2;
    while (same) {
        int c1 = fgetc(f1), c2 = fgetc(f2);
        if (c1 != c2) same = 0;
        if (c1 == EOF || c2 == EOF) break;
    }
    if (f1) fclose(f1);
    if (f2) fclose(f2);
    return same;
}

/* out.npy and attn.npy of two dumps hold the same bytes. */
RUN_FN int same_results(const char *d1, const char *d2) {
    char p1[1100], p2[1100];
    int same = 1;
    for (int f = 0; f < 2; f++) {
        snprintf(p1, sizeof p1, "%s/%s.npy", d1, f ? "attn" : "out");
        snprintf(p2, sizeof p2, "%s/%s.npy", d2, f ? "attn" : "out");
        if (!same_file(p1, p2)) { same = 0; diag("%s and %s differ", p1, p2); }
    }
    return same;
}

/* rm -rf DIR, for a test's own temporary directory. */
RUN_FN void remove_tree(const char *dir) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
}

/* STUDENT(call): before call, the process forks a backup of itself, which
 * waits on a pipe. If call returns, the backup is killed and the test goes on.
 * If call reaches a stub, the stub (through not_implemented_hook) tells the
 * backup so and waits for it: the stub is noted (tap.h: the tests of its
 * exercise fail, others are skipped) and the backup goes on after call, whose
 * outputs were never written, so every later test still runs under its own
 * name; the process that met the stub then ends as the backup ended. A fork,
 * not setjmp: nothing of the test's own state is left undefined; and since the
 * backup is killed when call returns, processes chain only where stubs are. */
static int run_student_fd = -1;       /* while a STUDENT call runs: the pipe to the backup */
static pid_t run_student_backup;

static __attribute__((unused)) void run_stub_caught(const char *file, int line, const char *exercise) {
    static int caught;                /* threads (OpenMP) may meet the stub at once: one speaks */
    char note[64];
    if (run_student_fd < 0) return;   /* not inside STUDENT: the process stops as before */
    if (__atomic_exchange_n(&caught, 1, __ATOMIC_SEQ_CST))
        for (;;) pause();             /* the first thread ends the process */
    int n = snprintf(note, sizeof note, "S%s", exercise);
    if (strcmp(tap_stub, exercise) != 0) diag("%s:%d: not implemented yet: %s", file, line, exercise);
    fflush(stdout);
    fflush(stderr);
    if (write(run_student_fd, note, (size_t)n) != n) _exit(2);
    close(run_student_fd);
    int status;
    while (waitpid(run_student_backup, &status, 0) < 0 && errno == EINTR) {}
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* 1 in the process that makes the call; 0 in the backup, if the call met a stub. */
RUN_FN int run_student_begin(void) {
    int fds[2];
    /* A process may end with _exit while the test's pointers live in registers
     * only; spilled to this frame, valgrind's leak check sees them. */
    __builtin_unwind_init();
    not_implemented_hook = run_stub_caught;
    fflush(stdout);
    fflush(stderr);
    if (pipe(fds) != 0) { perror("pipe"); exit(2); }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid > 0) {
        close(fds[0]);
        run_student_fd = fds[1];
        run_student_backup = pid;
        return 1;
    }
    close(fds[1]);                    /* the backup: wait for a stub's note, or for the end */
    char note[64] = "";
    size_t used = 0;
    for (ssize_t r; used < sizeof note - 1 && ((r = read(fds[0], note + used, sizeof note - 1 - used)) != 0);)
        if (r > 0) used += (size_t)r;
        else if (errno != EINTR) break;
    note[used] = '\0';
    close(fds[0]);
    if (note[0] != 'S') _exit(0);     /* the call's process died without a stub: it was a crash */
    char text[96];
    snprintf(text, sizeof text, "not implemented yet: %s", note + 1);
    tap_note_stub(text, 3);
    tap_stub_hollow = 1;
    return 0;
}

/* The call returned: the backup is not needed. */
RUN_FN void run_student_end(void) {
    int status;
    kill(run_student_backup, SIGKILL);
    while (waitpid(run_student_backup, &status, 0) < 0 && errno == EINTR) {}
    close(run_student_fd);
    run_student_fd = -1;
}

#define STUDENT(...) \
    do { if (run_student_begin()) { __VA_ARGS__; run_student_end(); } } while (0)

/* What the last run() printed. */
static __attribute__((unused)) char run_out[16384], run_err[16384];

/* Run one of the book's programs by name. */
RUN_FN int run(const char *name, const char *const *args) {
    return run_program(program_path(name), args, run_out, sizeof run_out, run_err, sizeof run_err);
}

/* DIR/NAME.npy, read as float whatever its dtype (masks included). */
RUN_FN Tensor load_npy(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    return npy_load(path, NPY_MASK);
}

RUN_FN void save_npy(const char *dir, const char *name, const Tensor *t) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    npy_save(path, t);
}

/* DIR/NAME.npy, or an empty Tensor (data NULL) if the run that was to write it
 * stopped first (at a stub, in a handout): the test reading it then fails, or
 * is skipped, under its own name, instead of this process dying here. */
RUN_FN Tensor load_written(const char *dir, const char *name) {
    char path[4096];
    Tensor t = {0};
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    npy_try_load(path, NPY_MASK, &t);
    return t;
}

/* t was read (load_written found it) and has exactly the shape (ndim, shape). */
RUN_FN int same_shape(const Tensor *t, int ndim, const int *shape) {
    if (!t->data || t->ndim != ndim) return 0;
    for (int d = 0; d < ndim; d++) if (t->shape[d] != shape[d]) return 0;
    return 1;
}

/* A file a run should write, DIR/NAME.npy, and its shape. */
typedef struct Written { const char *name; int ndim, shape[4]; } Written;

/* DIR holds each of files[0 .. n) at its shape; a diag names each file missing or of
 * another shape, unless a stub stopped the run (then nothing can be said of its files). */
RUN_FN int wrote_shapes(const char *dir, const Written *files, int n) {
    int all = 1;
    for (int i = 0; i < n; i++) {
        Tensor t = load_written(dir, files[i].name);
        if (!same_shape(&t, files[i].ndim, files[i].shape)) {
            char s[64];
            shape_str(s, sizeof s, t.ndim, t.shape);
            if (tap_stub[0]) {}
            else if (t.data) diag("%s.npy has shape %s", files[i].name, s);
            else diag("%s.npy was not written", files[i].name);
            all = 0;
        }
        tensor_free(&t);
    }
    return all;
}

/* DIR1/NAME.npy and DIR2/NAME.npy hold the same bytes (a diag names one that does not). */
RUN_FN int same_npy(const char *d1, const char *d2, const char *name) {
    char p1[1200], p2[1200];
    snprintf(p1, sizeof p1, "%s/%s.npy", d1, name);
    snprintf(p2, sizeof p2, "%s/%s.npy", d2, name);
    if (same_file(p1, p2)) return 1;
    if (!tap_stub[0]) diag("%s and %s differ", p1, p2);
    return 0;
}

/* For a map att (T, T) over a sentence x (T, 16) of chapter 1's: the least
 * weight any row puts on the keys holding its own word (*on), and the largest
 * difference between two of those keys in one row (*spread). */
RUN_FN void same_word_share(const Tensor *x, const float *att, int T, double *on, double *spread) {
    *on = T > 0, *spread = 0;
    for (int t = 0; t < T; t++) {
        double row = 0, first = -1;
        for (int s = 0; s < T; s++) {
            if (memcmp(&x->data[t * SENTENCE_DIM], &x->data[s * SENTENCE_DIM], WORDS * sizeof(float))) continue;
            row += att[t * T + s];
            if (first < 0) first = att[t * T + s];
            *spread = fmax(*spread, fabs(att[t * T + s] - first));
        }
        *on = fmin(*on, row);
    }
}

/* FROM_DIR/FROM.npy copied to TO_DIR/TO.npy (TO_DIR is created if missing). */
RUN_FN void copy_npy(const char *from_dir, const char *from, const char *to_dir, const char *to) {
    Tensor t = load_npy(from_dir, from);
    dump_tensor(to_dir, to, &t);
    tensor_free(&t);
}

#endif
