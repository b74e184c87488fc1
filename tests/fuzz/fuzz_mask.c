/* fuzz_mask.c: broadcastable and masked_fill of chapter 0 on random shapes
 * and values, against an index computed another way.
 *
 * The input bytes choose the scores' shape x (0 to 4 dimensions of 1 to 4),
 * the mask's shape m (0 to 4 dimensions, each 1, the size it meets in x, or
 * any size from 1 to 4), the mask's values (0, -0, 1, NaN, or a byte), the
 * scores and the fill value (any float bits: NaN and infinities included).
 * Properties:
 *   - broadcastable(m, x) is PyTorch's rule, written here from the left with
 *     an offset instead of from the right;
 *   - masked_fill dies (one line) exactly when the shapes do not broadcast;
 *   - otherwise each x element whose mask element, found by walking x's
 *     coordinates and dropping the axes the mask lacks or has at size 1, is
 *     == 0 becomes the fill value, bit for bit; every other keeps its bits. */
#include "tensor.h"
#include "fuzz.h"

#include <math.h>
#include <string.h>

/* The input as a stream of bytes; 0 once it runs out. */
typedef struct Bytes { const uint8_t *p; size_t left; } Bytes;

static uint8_t fuzz_byte(Bytes *b) {
    if (!b->left) return 0;
    b->left--;
    return *b->p++;
}

static float fuzz_float_bits(Bytes *b) {
    uint32_t u = 0;
    for (int i = 0; i < 4; i++) u = u << 8 | fuzz_byte(b);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* PyTorch's rule from the left: mask axis k meets x axis k + (xn - mn). */
static int fuzz_fits(const int *ms, int mn, const int *xs, int xn) {
    if (mn > xn) return 0;
    for (int k = 0; k < mn; k++)
        if (ms[k] != 1 && ms[k] != xs[k + xn - mn]) return 0;
    return 1;
}

/* The mask element over x's element at coordinates c (row-major in m). */
static long fuzz_mask_index(const int *ms, int mn, const int *c, int xn) {
    long j = 0;
    for (int k = 0; k < mn; k++) j = j * ms[k] + (ms[k] == 1 ? 0 : c[k + xn - mn]);
    return j;
}

/* masked_fill(x, mask, fill), through fuzz_try. */
typedef struct Fill { Tensor *x; const Tensor *mask; float fill; } Fill;
static void fuzz_fill(void *arg) {
    Fill *f = arg;
    masked_fill(f->x, f->mask, f->fill);
}

static int fuzz_mask(const uint8_t *data, size_t size) {
    Bytes b = { data, size };
    int xn = fuzz_byte(&b) % (MAX_DIMS + 1), mn = fuzz_byte(&b) % (MAX_DIMS + 1);
    int xs[MAX_DIMS], ms[MAX_DIMS];
    for (int i = 0; i < xn; i++) xs[i] = 1 + fuzz_byte(&b) % 4;
    for (int k = 0; k < mn; k++) {
        int how = fuzz_byte(&b), at = k + xn - mn;      /* the x axis it meets, if any */
        ms[k] = how % 3 == 0 ? 1 : how % 3 == 1 && at >= 0 ? xs[at] : 1 + how / 3 % 4;
    }
    Tensor x = tensor_new(xn, xs), mask = tensor_new(mn, ms);
    for (long j = 0; j < mask.size; j++) {
        uint8_t v = fuzz_byte(&b);
        mask.data[j] = v % 4 == 0 ? 0.0f : v % 4 == 1 ? -0.0f : v % 4 == 2 ? NAN : (float)(int8_t)v;
    }
    for (long i = 0; i < x.size; i++) x.data[i] = fuzz_float_bits(&b);
    float fill = fuzz_float_bits(&b);
    float *before = malloc((size_t)x.size * sizeof *before);
    memcpy(before, x.data, (size_t)x.size * sizeof *before);

    int fits = fuzz_fits(ms, mn, xs, xn);
    fuzz_check(broadcastable(ms, mn, xs, xn) == fits, "broadcastable is PyTorch's rule");
    int died = fuzz_try(fuzz_fill, &(Fill){ &x, &mask, fill });
    fuzz_check(died == !fits, "masked_fill dies exactly when the mask does not broadcast");
    if (!died) {
        int c[MAX_DIMS] = { 0 };                      /* x's coordinates, last fastest */
        for (long i = 0; i < x.size; i++) {
            float want = mask.data[fuzz_mask_index(ms, mn, c, xn)] == 0.0f ? fill : before[i];
            fuzz_check(!memcmp(&x.data[i], &want, sizeof want), "each element filled or kept, bit for bit");
            for (int d = xn - 1; d >= 0 && ++c[d] == xs[d]; d--) c[d] = 0;
        }
    }
    free(before);
    tensor_free(&x);
    tensor_free(&mask);
    return 0;
}

#ifndef FUZZ_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_mask(data, size); }
#endif
