/* reference.h: the attention modules computed again for the tests, in double
 * precision, and the modules the tests draw.
 *
 * The reference is plain loops, one number at a time, that call nothing of the
 * book's (not tensor.c's linear, matmul, softmax_lastdim or masked_fill), so that
 * a mistake in a chapter cannot hide in it. Each step agrees with one line of
 * PyTorch (q, k, v and the output are (B, T, heads * hd), a head's numbers side by
 * side, read in place: nothing is split or merged):
 *
 *   ref_linear(y, x, w, b, N, in, out)  y = x @ w.T + b, nn.Linear(in, out); w and b
 *                                       float, as a module holds them (b NULL: no bias)
 *   ref_linear64(...)                   the same with w and b in double (central
 *                                       differences move weights by less than a float's step)
 *   ref_scores(scores, q, k, a)         scores = q @ k.transpose(-2, -1) / math.sqrt(hd),
 *                                       head by head, query head h on key head h / (H/G)
 *                                       (repeat_interleave); (B, H, T, S)
 *   ref_softmax(att, a)                 in place: the mask (masked_fill(mask == 0, -1e20),
 *                                       or float('-inf'), or + mask * -10000), then
 *                                       softmax(dim=-1), the row's largest score first taken off
 *   ref_mix(mixed, att, v, a)           (att @ v).transpose(1, 2).reshape(B, T, H * hd):
 *                                       the heads merged, no split or merge done
 *   ref_output(out, att, w, xv, D, a)   out = o_proj(att @ v_proj(xv)), for weights given
 *                                       (those after dropout, in training mode)
 *   ref_attention(out, att, w, xq, xk, xv, D, a)
 *                                       the whole forward pass in eval mode: q_proj and
 *                                       k_proj, ref_scores, ref_softmax, ref_output
 *
 * and what they read:
 *
 *   RefAttn a                           sizes, scale and mask: see below
 *   ref_new(n), ref_doubles(x, n)       n doubles, zero or x's floats (malloc'd)
 *   ref_expand(vis, mask, ndim, shape)  a mask of any shape that broadcasts to `shape`
 *                                       spelled out, 1 visible and 0 hidden; no strides
 *                                       taken from tensor.c
 *   ref_visible(mask, ndim, shape)      the same, malloc'd; NULL for no mask
 *   ref_pattern(i, salt)                a fixed 0/1 pattern that looks random, about two
 *                                       thirds 1: element i of a test's mask
 *
 * Drawing a module runs the program's own code, as its main does: the case under
 * test, not the reference. A test includes its program, then tap.h, run.h and
 * this, and defines the program's name in capitals first to get its pair:
 *
 *   MODULE_SELFATT_V1, MODULE_MQA, MODULE_GQA, MODULE_MHSA_RELU:
 *       make_module(m, x, a)            the module and X drawn from a->seed (a->batch,
 *                                       a->seq, a->dim ...) through the program's own
 *                                       list of tensors, as its main draws them
 *   MODULE_SELFATT_V2: make_v2_module(m, x, a), free_v2_module(m)
 *   MODULE_SELFATT_V3, MODULE_SELFATT_V4:
 *       make_module(m, x, mask, a)      and the notebook's padding mask (B, T, T)
 *   MODULE_MHA: make_module(m, x, mask, a)
 *                                       and mha's random (B, H, T, T) mask, drawn next
 *                                       (mask NULL: none drawn)
 *   MODULE_CROSS_ATTENTION: make_module(m, q, k, v, pad, a), free_module(m, q, k, v, pad)
 *                                       Q, K, V and the source padding mask (B, 1, 1, S),
 *                                       freed with the weights
 *   free_module(m)                      the module's weights, freed through the same list
 *                                       (X and the mask are the caller's to free)
 *
 * Header-only: every function is static and marked unused. */
#ifndef REFERENCE_H
#define REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensor.h"

/* Every function is static and marked unused. GCC also leaves its loops scalar: GCC 12's
 * arm64 compiler stops with an internal compiler error when it vectorizes these double
 * sums under chapter 10's -O3 -ffp-contract=fast (make check-cross), and a reference
 * needs no speed. */
#if defined(__GNUC__) && !defined(__clang__)
#define REF_FN static __attribute__((unused, optimize("no-tree-vectorize")))
#else
#define REF_FN static __attribute__((unused))
#endif

/* How a row of scores hides its keys (RefAttn.hide). */
enum {
    REF_FILL_1E20 = 0,   /* masked_fill(mask == 0, -1e20): a hidden key weighs exactly 0 and is
                          * left out of the row; a row with no key visible is uniform, 1/S */
    REF_FILL_INF,        /* masked_fill(mask == 0, float('-inf')): the same, but a row with no
                          * key visible is NaN */
    REF_ADD_10000,       /* scores + mask * -10000, mask 1 where hidden: a hidden key stays
                          * in the softmax, 10000 lower */
};

/* The attention of a module: sizes, scale and mask. Zero in S, G or divisor means
 * the usual: S = T, G = H, divisor = sqrt(hd). */
typedef struct RefAttn {
    int B, T, S;         /* sequences; queries and keys in each */
    int H, G, hd;        /* query heads, key/value heads (G divides H), numbers per head */
    double divisor;      /* the scores are divided by it: / math.sqrt(hd); 1 for none */
    const float *vis;    /* (B, H, T, S): 0 hides key s from query t; NULL: none hidden */
    int causal;          /* 1: key s after query t is hidden too (torch.tril) */
    int hide;            /* REF_FILL_1E20, REF_FILL_INF or REF_ADD_10000 */
} RefAttn;

/* The module's weights, as nn.Linear holds them: q_w (H*hd, D), k_w and v_w (G*hd, D),
 * o_w (D, H*hd), each bias one number per output. o_w NULL: no output projection (the
 * output is the merged heads); a bias NULL: bias=False. */
typedef struct RefWeights { const float *q_w, *q_b, *k_w, *k_b, *v_w, *v_b, *o_w, *o_b; } RefWeights;

/* a with its zeros read as the usual values. */
REF_FN RefAttn ref_usual(const RefAttn *a) {
    RefAttn u = *a;
    if (!u.S) u.S = u.T;
    if (!u.G) u.G = u.H;
    if (!u.divisor) u.divisor = sqrt((double)u.hd);
    return u;
}

/* n doubles, zero, in memory the caller frees. */
REF_FN double *ref_new(long n) {
    double *y = calloc((size_t)(n > 0 ? n : 1), sizeof *y);
    if (!y) { perror("calloc"); exit(2); }
    return y;
}

/* n floats as doubles, in memory the caller frees. */
REF_FN double *ref_doubles(const float *x, long n) {
    double *y = ref_new(n);
    for (long i = 0; i < n; i++) y[i] = x[i];
    return y;
}

/* y (N, out) = x (N, in) @ w.T + b, w (out, in): nn.Linear(in, out)(x). b NULL: no bias. */
REF_FN void ref_linear(double *y, const double *x, const float *w, const float *b, long N, int in, int out) {
    for (long r = 0; r < N; r++)
        for (int o = 0; o < out; o++) {
            double sum = b ? b[o] : 0.0;
            for (int i = 0; i < in; i++) sum += x[r * in + i] * (double)w[(long)o * in + i];
            y[r * out + o] = sum;
        }
}

/* The same with w and b in double. */
REF_FN void ref_linear64(double *y, const double *x, const double *w, const double *b, long N, int in, int out) {
    for (long r = 0; r < N; r++)
        for (int o = 0; o < out; o++) {
            double sum = b ? b[o] : 0.0;
            for (int i = 0; i < in; i++) sum += x[r * in + i] * w[(long)o * in + i];
            y[r * out + o] = sum;
        }
}

/* vis, of `shape` (ndim axes), from a mask of any shape that broadcasts to it, as
 * mask.expand(shape) reads it: the mask's axes lined up with shape's from the
 * right, an axis of size 1 read at 0. 1 where the mask is not 0; all 1 for no mask. */
REF_FN void ref_expand(float *vis, const Tensor *mask, int ndim, const int *shape) {
    long n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    for (long i = 0; i < n; i++) {
        long rest = i, j = 0, stride = 1;
        for (int d = ndim - 1, e = mask ? mask->ndim - 1 : -1; d >= 0; d--, e--) {
            long at = rest % shape[d];                    /* i's coordinate on axis d */
            rest /= shape[d];
            if (e < 0) continue;
            if (mask->shape[e] != 1) j += at * stride;
            stride *= mask->shape[e];
        }
        vis[i] = !mask || mask->data[j] != 0.0f;
    }
}

/* The same in memory the caller frees; NULL for no mask. */
REF_FN float *ref_visible(const Tensor *mask, int ndim, const int *shape) {
    if (!mask) return NULL;
    long n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    float *vis = malloc(sizeof *vis * (size_t)(n > 0 ? n : 1));
    if (!vis) { perror("malloc"); exit(2); }
    ref_expand(vis, mask, ndim, shape);
    return vis;
}

/* Element i of a fixed 0/1 pattern that looks random, about two thirds 1; salt
 * gives another pattern. */
REF_FN float ref_pattern(long i, unsigned salt) {
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15u + salt;
    z ^= z >> 29; z *= 0xBF58476D1CE4E5B9u; z ^= z >> 32;
    return (float)(z % 3 != 0);
}

/* scores (B, H, T, S) = q @ k.transpose(-2, -1) / divisor, head by head. q (B, T, H*hd),
 * k (B, S, G*hd): head h of a row is its numbers h*hd .. h*hd + hd - 1, read in place,
 * and query head h reads key head h / (H/G). */
REF_FN void ref_scores(double *scores, const double *q, const double *k, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    int qw = a.H * a.hd, kw = a.G * a.hd, R = a.H / a.G;
    for (int b = 0; b < a.B; b++)
        for (int h = 0; h < a.H; h++)
            for (int t = 0; t < a.T; t++)
                for (int s = 0; s < a.S; s++) {
                    const double *qt = q + ((long)b * a.T + t) * qw + h * a.hd;
                    const double *ks = k + ((long)b * a.S + s) * kw + h / R * a.hd;
                    double dot = 0;
                    for (int i = 0; i < a.hd; i++) dot += qt[i] * ks[i];
                    scores[(((long)b * a.H + h) * a.T + t) * a.S + s] = dot / a.divisor;
                }
}

/* In place, each row of att (B, H, T, S) from scores to weights: the hidden keys
 * taken out as a.hide says, then softmax(dim=-1) with the row's largest score
 * taken off first, so that no exp overflows. */
REF_FN void ref_softmax(double *att, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    for (long row = 0; row < (long)a.B * a.H * a.T; row++) {
        double *w = att + row * a.S, best = -INFINITY, total = 0;
        const float *seen = a.vis ? a.vis + row * a.S : NULL;
        int t = (int)(row % a.T), any = 0;
        for (int s = 0; s < a.S; s++) {
            int hidden = (seen && !seen[s]) || (a.causal && s > t);
            if (a.hide == REF_ADD_10000) w[s] += hidden ? -10000.0 : 0.0;
            else if (hidden) continue;
            any = 1, best = fmax(best, w[s]);
        }
        for (int s = 0; s < a.S; s++) {
            int hidden = a.hide != REF_ADD_10000 && ((seen && !seen[s]) || (a.causal && s > t));
            w[s] = !any ? (a.hide == REF_FILL_INF ? NAN : 1.0) : hidden ? 0.0 : exp(w[s] - best);
            total += w[s];
        }
        for (int s = 0; s < a.S; s++) w[s] /= total;
    }
}

/* mixed (B, T, H*hd) = att @ v, the heads merged: head h of row (b, t) is the sum
 * over the keys s of att[b, h, t, s] times value head h / (H/G) of row (b, s).
 * v (B, S, G*hd). */
REF_FN void ref_mix(double *mixed, const double *att, const double *v, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    int qw = a.H * a.hd, kw = a.G * a.hd, R = a.H / a.G;
    for (int b = 0; b < a.B; b++)
        for (int h = 0; h < a.H; h++)
            for (int t = 0; t < a.T; t++) {
                const double *w = att + (((long)b * a.H + h) * a.T + t) * a.S;
                for (int i = 0; i < a.hd; i++) {
                    double sum = 0;
                    for (int s = 0; s < a.S; s++) sum += w[s] * v[((long)b * a.S + s) * kw + h / R * a.hd + i];
                    mixed[((long)b * a.T + t) * qw + h * a.hd + i] = sum;
                }
            }
}

/* out (B, T, D) = o_proj(att @ v_proj(xv)) for weights att (B, H, T, S) given: the
 * end of the pass, also in training mode, where att is the weights after dropout.
 * xv (B, S, D). */
REF_FN void ref_output(double *out, const double *att, const RefWeights *w, const float *xv, int D,
                       const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    long BT = (long)a.B * a.T, BS = (long)a.B * a.S;
    int qw = a.H * a.hd, kw = a.G * a.hd;
    double *xvd = ref_doubles(xv, BS * D), *v = ref_new(BS * kw), *mixed = ref_new(BT * qw);
    ref_linear(v, xvd, w->v_w, w->v_b, BS, D, kw);
    ref_mix(mixed, att, v, &a);
    if (w->o_w) ref_linear(out, mixed, w->o_w, w->o_b, BT, qw, D);
    else memcpy(out, mixed, sizeof *out * (size_t)(BT * qw));
    free(xvd); free(v); free(mixed);
}

/* The forward pass of an attention module in eval mode, in double: queries from
 * xq (B, T, D), keys from xk and values from xv (B, S, D) (the same X for self-
 * attention): q = q_proj(xq), k = k_proj(xk), ref_scores, ref_softmax, then
 * ref_output. att (B, H, T, S) gets the weights, if not NULL. */
REF_FN void ref_attention(double *out, double *att, const RefWeights *w, const float *xq, const float *xk,
                          const float *xv, int D, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    long BT = (long)a.B * a.T, BS = (long)a.B * a.S;
    int qw = a.H * a.hd, kw = a.G * a.hd;
    double *xqd = ref_doubles(xq, BT * D), *xkd = ref_doubles(xk, BS * D);
    double *q = ref_new(BT * qw), *k = ref_new(BS * kw), *weights = att ? att : ref_new(BT * a.H * a.S);
    ref_linear(q, xqd, w->q_w, w->q_b, BT, D, qw);
    ref_linear(k, xkd, w->k_w, w->k_b, BS, D, kw);
    ref_scores(weights, q, k, &a);
    ref_softmax(weights, &a);
    ref_output(out, weights, w, xv, D, &a);
    if (!att) free(weights);
    free(xqd); free(xkd); free(q); free(k);
}

/* ---- drawing a module, as its program's main draws it ----------------------------- */

#ifdef MODULE_SELFATT_V1       /* selfatt_v1: the three layers and X */
REF_FN void make_module(SelfAttV1 *m, Tensor *x, const Args *a) {
    Tensors list = {0};
    Tensor att, out;
    selfatt_v1_tensors(&list, m, x, &att, &out);
    tensors_open(&list, (Args *)a);
    m->dim = a->dim;
    tensor_free(&att); tensor_free(&out);
}

REF_FN void free_module(SelfAttV1 *m) {
    Tensors list = {0};
    Tensor none = {0};
    selfatt_v1_tensors(&list, m, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}
#endif

#ifdef MODULE_SELFATT_V2       /* selfatt_v2: proj, output_proj and X */
REF_FN void make_v2_module(SelfAttV2 *m, Tensor *x, const Args *a) {
    Tensors list = {0};
    Tensor att, out;
    selfatt_v2_tensors(&list, m, x, &att, &out);
    tensors_open(&list, (Args *)a);
    m->dim = a->dim;
    tensor_free(&att); tensor_free(&out);
}

REF_FN void free_v2_module(SelfAttV2 *m) {
    Tensors list = {0};
    Tensor none = {0};
    selfatt_v2_tensors(&list, m, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}
#endif

#ifdef MODULE_SELFATT_V3       /* selfatt_v3: V2's layers, X and the padding mask */
REF_FN void make_module(SelfAttV3 *m, Tensor *x, Tensor *mask, const Args *a) {
    Tensors list = {0};
    Tensor att, out;
    selfatt_v3_tensors(&list, m, x, mask, &att, &out);
    tensors_open(&list, (Args *)a);
    *mask = mask_padding(a->batch, a->seq);
    m->dim = a->dim;
    tensor_free(&att); tensor_free(&out);
}

REF_FN void free_module(SelfAttV3 *m) {
    Tensors list = {0};
    Tensor none = {0};
    selfatt_v3_tensors(&list, m, &none, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}
#endif

#ifdef MODULE_SELFATT_V4       /* selfatt_v4: four layers, X and the padding mask */
REF_FN void make_module(SelfAttV4 *m, Tensor *x, Tensor *mask, const Args *a) {
    Tensors list = {0};
    Tensor att, out;
    selfatt_v4_tensors(&list, m, x, mask, &att, &out);
    tensors_open(&list, (Args *)a);
    *mask = mask_padding(a->batch, a->seq);
    m->dim = a->dim;
    tensor_free(&att); tensor_free(&out);
}

REF_FN void free_module(SelfAttV4 *m) {
    Tensors list = {0};
    Tensor none = {0};
    selfatt_v4_tensors(&list, m, &none, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}
#endif

#ifdef MODULE_MHA              /* mha: four layers, X and, if asked, the random mask */
REF_FN void make_module(MHA *m, Tensor *x, Tensor *mask, const Args *a) {
    Tensors list = {0};
    mha_tensors(&list, m, x, mask, NULL, NULL);
    tensors_open(&list, (Args *)a);
    if (mask) *mask = mha_mask_random(a->batch, a->heads, a->seq, a->seed);
    m->dim = a->dim, m->heads = a->heads;
}

REF_FN void free_module(MHA *m) {
    Tensors list = {0};
    Tensor none = {0};
    mha_tensors(&list, m, &none, NULL, NULL, NULL);
    tensors_close(&list, &(Args){0});
}
#endif

#ifdef MODULE_MQA              /* mqa: W_Q, W_K, W_V (one head each), W_O and x */
REF_FN void make_module(MQA *m, Tensor *x, const Args *a) {
    Tensors list = {0};
    Tensor mask, att, out;
    mqa_tensors(&list, m, x, &mask, &att, &out);
    tensors_open(&list, (Args *)a);
    m->dim = a->dim, m->heads = a->heads;
    tensor_free(&att); tensor_free(&out);
}

REF_FN void free_module(MQA *m) {
    Tensors list = {0};
    Tensor none = {0};
    mqa_tensors(&list, m, &none, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}
#endif

#ifdef MODULE_GQA              /* gqa (and decode, mha_backward): G key/value heads */
REF_FN void make_module(GQA *m, Tensor *x, const Args *a) {
    Tensors list = {0};
    Tensor mask, att, out;
    gqa_tensors(&list, m, x, &mask, &att, &out);
    tensors_open(&list, (Args *)a);
    m->dim = a->dim, m->heads = a->heads, m->kv_heads = a->kv_heads;
    tensor_free(&att); tensor_free(&out);
}

REF_FN void free_module(GQA *m) {
    Tensors list = {0};
    Tensor none = {0};
    gqa_tensors(&list, m, &none, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}
#endif

#ifdef MODULE_CROSS_ATTENTION  /* cross_attention: four layers, Q, K, V, source padding */
REF_FN void make_module(CrossAttention *m, Tensor *q, Tensor *k, Tensor *v, Tensor *pad, const Args *a) {
    Tensors list = {0};
    Tensor att, out;
    cross_attention_tensors(&list, m, q, k, v, pad, &att, &out);
    tensors_open(&list, (Args *)a);
    *pad = mask_source_padding(a->batch, a->kv_seq);
    m->dim = a->dim, m->heads = a->heads;
    tensor_free(&att); tensor_free(&out);
}

REF_FN void free_module(CrossAttention *m, Tensor *q, Tensor *k, Tensor *v, Tensor *pad) {
    Tensors list = {0};
    Tensor none = {0};
    cross_attention_tensors(&list, m, q, k, v, pad, &none, &none);
    tensors_close(&list, &(Args){0});
}
#endif

#ifdef MODULE_MHSA_RELU        /* mhsa_relu: four layers and X */
REF_FN void make_module(MhsaRelu *m, Tensor *x, const Args *a) {
    Tensors list = {0};
    Tensor att, out;
    mhsa_relu_tensors(&list, m, x, &att, &out);
    tensors_open(&list, (Args *)a);
    m->dim = a->dim, m->heads = a->heads;
    tensor_free(&att); tensor_free(&out);
}

REF_FN void free_module(MhsaRelu *m) {
    Tensors list = {0};
    Tensor none = {0};
    mhsa_relu_tensors(&list, m, &none, &none, &none);
    tensors_close(&list, &(Args){0});
}
#endif

#endif
