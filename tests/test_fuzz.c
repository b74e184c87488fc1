/* Replays the fuzzers' inputs: every file in tests/fuzz/corpus/{npy,mask} (the
 * seeds) and tests/fuzz/regressions/{npy,mask} (what fuzzing found), through
 * the same harness code the fuzzers run (tests/fuzz/fuzz_npy.c, fuzz_mask.c),
 * built with the book's compiler and flags, so that `make test` (and MODE=debug,
 * and valgrind) checks them without clang. Each input runs in a child process:
 * a property that fails aborts it, and the test says which file. The tangler's
 * inputs are replayed by tests/tangle_test.lua. Linked with
 * -Wl,--wrap=exit,--wrap=fopen,--wrap=fclose (see tests/fuzz/fuzz.h). */
#define FUZZ_NO_ENTRY
#include "fuzz_npy.c"
#include "fuzz_mask.c"
#include "tap.h"

#include <dirent.h>

typedef struct Input { int (*harness)(const uint8_t *, size_t); uint8_t *data; size_t size; } Input;

static void replay(void *arg) {
    const Input *in = arg;
    in->harness(in->data, in->size);
}

/* The content of path (free it), its length in *size; NULL if unreadable. */
static uint8_t *slurp(const char *path, size_t *size) {
    FILE *f = __real_fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *data = malloc(1 << 20);
    *size = fread(data, 1, 1 << 20, f);
    __real_fclose(f);
    return data;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One test per file in dir: the harness passes on it. Returns the count. */
static int replay_dir(const char *dir, int (*harness)(const uint8_t *, size_t)) {
    char *names[512];
    int n = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d)) && n < 512;)
        if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        Input in = { harness, NULL, 0 };
        in.data = slurp(path, &in.size);
        TapChild c = { .status = -1 };
        if (in.data) c = run_child(replay, &in);
        ok(c.status == 0, "%s: the harness's properties hold", path);
        if (c.status != 0) diag("exit status %d; stderr:\n%s", c.status, c.err);
        free(in.data);
        free(names[i]);
    }
    return n;
}

int main(void) {
    static const struct { const char *name; int (*harness)(const uint8_t *, size_t); } fuzzers[] = {
        { "npy", fuzz_npy }, { "mask", fuzz_mask },
    };
    for (int f = 0; f < 2; f++) {
        char dir[256];
        snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", fuzzers[f].name);
        ok(replay_dir(dir, fuzzers[f].harness) > 0, "%s has seed inputs", dir);
        snprintf(dir, sizeof dir, "tests/fuzz/regressions/%s", fuzzers[f].name);
        replay_dir(dir, fuzzers[f].harness);
    }
    done_testing();
    return exit_status();
}
