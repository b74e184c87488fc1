/* npy2dat: print attention weights from a program's --dump for gnuplot.
 *
 *   npy2dat attn.npy [FIXED_INDEX ...]
 *
 * attn.npy holds (B, T, S) or (B, H, T, S) weights. The fixed indices pick
 * the leading coordinates; every (T, S) map left over is printed as one
 * gnuplot matrix block (a row of S numbers per query), blocks separated by
 * two blank lines, so `index m` in tools/heatmap.gp selects map m.
 *   npy2dat attn.npy        every map: all b (and all h)
 *   npy2dat attn.npy 0      the maps of batch element 0
 *   npy2dat attn.npy 0 1    batch 0, head 1
 * Not part of the book: a build tool for the figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensor.h"

int main(int argc, char **argv) {
    program_name = "npy2dat";
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: npy2dat FILE.npy [FIXED_INDEX ...]\nPrint the (T, S) maps of FILE.npy, (B, T, S) or "
               "(B, H, T, S) weights, as gnuplot matrix blocks;\nthe fixed indices pick the leading "
               "coordinates (npy2dat attn.npy 0 1: batch 0, head 1).\n");
        return 0;
    }
    if (argc < 2) die("usage: npy2dat FILE.npy [FIXED_INDEX ...] (see --help)");
    if (argv[1][0] == '-') die("%s: npy2dat takes no flags but --help (usage: npy2dat FILE.npy [FIXED_INDEX ...])", argv[1]);
    Tensor w = npy_load(argv[1], NPY_FLOAT);
    if (w.ndim < 2) die("%s: want at least 2 dimensions (T, S), got %d", argv[1], w.ndim);
    int nfixed = argc - 2;
    if (nfixed > w.ndim - 2) die("%s: %d fixed indices for a %d-d array", argv[1], nfixed, w.ndim);
    long offset = 0, stride = w.size;
    for (int i = 0; i < nfixed; i++) {
        char *end;
        long idx = strtol(argv[2 + i], &end, 10);
        if (*end || idx < 0 || idx >= w.shape[i])
            die("index %s out of range for dimension %d of size %d", argv[2 + i], i, w.shape[i]);
        stride /= w.shape[i];
        offset += idx * stride;
    }
    int T = w.shape[w.ndim - 2], S = w.shape[w.ndim - 1];
    long nmaps = stride / ((long)T * S);
    for (long m = 0; m < nmaps; m++) {
        if (m > 0) printf("\n\n");
        const float *map = w.data + offset + m * T * S;  // (T, S)
        for (int t = 0; t < T; t++)
            for (int s = 0; s < S; s++)
                printf("%.6f%c", map[t * S + s], s == S - 1 ? '\n' : ' ');
    }
    tensor_free(&w);
    return 0;
}
