/* fuzz.h: what the fuzzing harnesses share.
 *
 * The tensor helper stops on bad input with die(), which prints one line and
 * calls exit(1). A fuzzer runs millions of inputs in one process, so the
 * harnesses link with -Wl,--wrap=exit,--wrap=fopen: while a harness is inside
 * fuzz_try, exit() jumps back to it instead of ending the process, and the
 * FILE that npy_load had open when it died is remembered so that it can be
 * closed. Outside fuzz_try, exit() is the real one. The chapter's code is
 * unchanged: this is done at link time only.
 *
 *   fuzz_try(fn, arg)  call fn(arg); 1 if it called exit() (died), 0 if not
 *   fuzz_temp_path()   a private file name for this process, for npy_load
 *   fuzz_check(cond, what)  abort() with a message if cond is false: a finding
 *
 * Each harness defines fuzz_NAME(data, size) and, unless FUZZ_NO_ENTRY is
 * defined, LLVMFuzzerTestOneInput calling it. tests/test_fuzz.c defines
 * FUZZ_NO_ENTRY and replays the seed corpus and every regression input. */
#ifndef FUZZ_H
#define FUZZ_H

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static jmp_buf fuzz_jump;
static volatile int fuzz_armed;
static FILE *volatile fuzz_open_file;

_Noreturn void __real_exit(int status);
FILE *__real_fopen(const char *path, const char *mode);
int __real_fclose(FILE *f);

_Noreturn void __wrap_exit(int status) {
    if (fuzz_armed) {
        fuzz_armed = 0;
        longjmp(fuzz_jump, 1);
    }
    __real_exit(status);
}

FILE *__wrap_fopen(const char *path, const char *mode) {
    FILE *f = __real_fopen(path, mode);
    if (fuzz_armed) fuzz_open_file = f;
    return f;
}

int __wrap_fclose(FILE *f) {
    if (f == fuzz_open_file) fuzz_open_file = NULL;
    return __real_fclose(f);
}

static __attribute__((unused)) void fuzz_close_left_open(void) {
    if (fuzz_open_file) __real_fclose(fuzz_open_file);
    fuzz_open_file = NULL;
}

/* Call fn(arg); return 1 if it called exit() (died), 0 if it returned. A FILE
 * left open by the death is closed. (setjmp sits alone in this function, so
 * no variable of the caller can be clobbered by the longjmp.) */
static __attribute__((unused)) int fuzz_try(void (*fn)(void *), void *arg) {
    if (setjmp(fuzz_jump)) {
        fuzz_close_left_open();
        return 1;
    }
    fuzz_armed = 1;
    fn(arg);
    fuzz_armed = 0;
    return 0;
}

/* A failed property: say which, and abort so that the fuzzer keeps the input. */
#define fuzz_check(cond, what)                                                                 \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz: %s:%d: property failed: %s\n", __FILE__, __LINE__, what);   \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* A file name of this process's own, under $TMPDIR (or /tmp); n says which. */
static __attribute__((unused)) const char *fuzz_temp_path(int n) {
    static char paths[2][512];
    if (!paths[n][0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(paths[n], sizeof paths[n], "%s/abh-fuzz-%ld-%d.npy", dir && *dir ? dir : "/tmp", (long)getpid(), n);
    }
    return paths[n];
}

#endif
