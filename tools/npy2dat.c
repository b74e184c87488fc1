/* npy2dat: print attention weights from a program's --dump for gnuplot.
 *
 *   npy2dat [--mask MASK.npy] [--causal] attn.npy [FIXED_INDEX ...]
 *
 * attn.npy holds (B, T, S) or (B, H, T, S) weights. The fixed indices pick
 * the leading coordinates; every (T, S) map left over is printed as one
 * gnuplot matrix block (a row of S numbers per query), blocks separated by
 * two blank lines, so `index m` in tools/heatmap.gp selects map m.
 *   npy2dat attn.npy        every map: all b (and all h)
 *   npy2dat attn.npy 0      the maps of batch element 0
 *   npy2dat attn.npy 0 1    batch 0, head 1
 * A weight that is not exactly 0 never prints as 0: one below 0.5e-6 is
 * printed in exponent form, so the plot can tell an exact 0 from a tiny weight.
 *
 * With --mask or --causal it prints, instead of the weights, which of them
 * the run hid, in the same blocks: 1 where the query saw the key, 0 where it
 * was hidden. --mask MASK.npy is the mask the run dumped, broadcast to
 * attn.npy's shape by chapter 0's rule (masked_fill's); --causal hides every
 * key s > t; both together hide what either hides, as mask_final does.
 * Not part of the book: a build tool for the figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensor.h"

#define USAGE "npy2dat [--mask MASK.npy] [--causal] FILE.npy [FIXED_INDEX ...]"

// seen (the shape of w): 1 where the run let the query see the key, 0 where it hid it.
static Tensor seen_keys(const Tensor *w, const char *mask_path, int causal) {
    Tensor seen = tensor_new(w->ndim, w->shape);
    for (long i = 0; i < seen.size; i++) seen.data[i] = 1.0f;
    if (mask_path) {
        Tensor mask = npy_load(mask_path, NPY_FLOAT);
        masked_fill(&seen, &mask, 0.0f);                  // dies if it does not broadcast
        tensor_free(&mask);
    }
    int T = w->shape[w->ndim - 2], S = w->shape[w->ndim - 1];
    if (causal)
        for (long i = 0; i < seen.size; i++)
            if (i % S > i / S % T) seen.data[i] = 0.0f;   // key s after query t
    return seen;
}

// One number as the plot reads it: an exact 0 stays "0.000000", a tiny one does not.
static void print_value(float x, int last) {
    if (x != 0.0f && fabsf(x) < 0.5e-6f) printf("%.3e", (double)x);
    else printf("%.6f", (double)x);
    putchar(last ? '\n' : ' ');
}

int main(int argc, char **argv) {
    program_name = "npy2dat";
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: " USAGE "\nPrint the (T, S) maps of FILE.npy, (B, T, S) or (B, H, T, S) weights, as "
               "gnuplot matrix blocks;\nthe fixed indices pick the leading coordinates (npy2dat attn.npy 0 1: "
               "batch 0, head 1).\nWith --mask or --causal, print instead which keys the run hid, in the same "
               "blocks:\n1 seen, 0 hidden (MASK.npy broadcast to FILE's shape; --causal hides key s > query t).\n");
        return 0;
    }
    const char *mask_path = NULL;
    int causal = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--causal")) causal = 1;
        else if (!strcmp(argv[i], "--mask") && i + 1 < argc) mask_path = argv[++i];
        else die("%s: not a flag of npy2dat (usage: " USAGE ")", argv[i]);
    }
    if (i >= argc) die("usage: " USAGE " (see --help)");
    Tensor w = npy_load(argv[i], NPY_FLOAT);
    if (w.ndim < 2) die("%s: want at least 2 dimensions (T, S), got %d", argv[i], w.ndim);
    int nfixed = argc - i - 1;
    if (nfixed > w.ndim - 2) die("%s: %d fixed indices for a %d-d array", argv[i], nfixed, w.ndim);
    if (mask_path || causal) {                            // print the seen keys instead
        Tensor seen = seen_keys(&w, mask_path, causal);
        tensor_free(&w);
        w = seen;
    }
    long offset = 0, stride = w.size;
    for (int f = 0; f < nfixed; f++) {
        const char *arg = argv[i + 1 + f];
        char *end;
        long idx = strtol(arg, &end, 10);
        if (*end || idx < 0 || idx >= w.shape[f])
            die("index %s out of range for dimension %d of size %d", arg, f, w.shape[f]);
        stride /= w.shape[f];
        offset += idx * stride;
    }
    int T = w.shape[w.ndim - 2], S = w.shape[w.ndim - 1];
    long nmaps = stride / ((long)T * S);
    for (long m = 0; m < nmaps; m++) {
        if (m > 0) printf("\n\n");
        const float *map = w.data + offset + m * T * S;  // (T, S)
        for (int t = 0; t < T; t++)
            for (int s = 0; s < S; s++) print_value(map[t * S + s], s == S - 1);
    }
    tensor_free(&w);
    return 0;
}
