/* fuzz_npy.c: the .npy reader of chapter 0 on arbitrary bytes.
 *
 * The input is written to a file and read with npy_load, once as a float file
 * and once as a mask. Properties:
 *   - npy_load either returns or dies with one line; it never crashes, reads
 *     out of bounds or leaks (ASan, UBSan, LeakSanitizer watch);
 *   - what it returns is a tensor of 0 to 4 dimensions, each at least 1,
 *     whose size is their product;
 *   - a float file the reader accepts survives a round trip: npy_save, then
 *     npy_load, gives the same shape and the same bits;
 *   - a float file is accepted only if the same bytes are accepted as a mask
 *     (a mask reads every dtype a float file does, and more). */
#include "tensor.h"
#include "fuzz.h"

#include <string.h>

/* Write data to path; abort if the file system refuses (not a finding). */
static void fuzz_write_file(const char *path, const uint8_t *data, size_t size) {
    FILE *f = __real_fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || __real_fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/* The shape and size invariants of a tensor npy_load returned. */
static void fuzz_check_tensor(const Tensor *t) {
    long size = 1;
    fuzz_check(t->ndim >= 0 && t->ndim <= MAX_DIMS, "0 to MAX_DIMS dimensions");
    for (int i = 0; i < t->ndim; i++) {
        fuzz_check(t->shape[i] >= 1, "every dimension at least 1");
        size *= t->shape[i];
    }
    fuzz_check(t->size == size, "size is the product of the shape");
    fuzz_check(t->data != NULL, "data allocated");
}

static void fuzz_remove_temp(void) {
    remove(fuzz_temp_path(0));
    remove(fuzz_temp_path(1));
}

/* npy_load(path, kind) into *t, through fuzz_try. */
typedef struct Load { const char *path; int kind; Tensor t; } Load;
static void fuzz_load(void *arg) {
    Load *l = arg;
    l->t = npy_load(l->path, l->kind);
}

/* npy_save(copy, t), then npy_load(copy) into *again, through fuzz_try. */
typedef struct RoundTrip { const char *copy; const Tensor *t; Tensor again; } RoundTrip;
static void fuzz_round_trip(void *arg) {
    RoundTrip *r = arg;
    npy_save(r->copy, r->t);
    r->again = npy_load(r->copy, NPY_FLOAT);
}

static int fuzz_npy(const uint8_t *data, size_t size) {
    static int started;
    if (!started) started = 1, atexit(fuzz_remove_temp);
    const char *path = fuzz_temp_path(0), *copy = fuzz_temp_path(1);
    fuzz_write_file(path, data, size);

    Load m = { path, NPY_MASK, { 0 } }, f = { path, NPY_FLOAT, { 0 } };
    RoundTrip r = { copy, &f.t, { 0 } };
    Tensor mask = { 0 }, t = { 0 }, again = { 0 };
    int mask_died = fuzz_try(fuzz_load, &m);
    mask = m.t;
    if (!mask_died) fuzz_check_tensor(&mask);
    int died = fuzz_try(fuzz_load, &f);
    t = f.t;
    if (!died) {
        fuzz_check(!mask_died, "a file read as floats is read as a mask too");
        fuzz_check_tensor(&t);
        fuzz_check(mask.ndim == t.ndim && !memcmp(mask.shape, t.shape, sizeof t.shape), "same shape either way");
        fuzz_check(!memcmp(mask.data, t.data, (size_t)t.size * sizeof(float)), "same floats either way");
        int again_died = fuzz_try(fuzz_round_trip, &r);
        again = r.again;
        fuzz_check(!again_died, "what npy_save writes, npy_load reads");
        fuzz_check(again.ndim == t.ndim && !memcmp(again.shape, t.shape, sizeof t.shape), "round trip keeps the shape");
        fuzz_check(!memcmp(again.data, t.data, (size_t)t.size * sizeof(float)), "round trip keeps every bit");
    }
    tensor_free(&mask);
    tensor_free(&t);
    tensor_free(&again);
    return 0;
}

#ifndef FUZZ_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_npy(data, size); }
#endif
