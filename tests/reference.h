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
 * Each has an _err twin (ref_linear_err, ref_scores_err, ref_softmax_err, ref_mix_err,
 * ref_output_err, ref_attention_err) that also carries, beside every double value, the
 * bound of a float32 pass's error in any order of its sums (derived below, "how far a
 * correct float32 answer may be"): what a test asks of a student's numbers, and twice it
 * (ref_twice) of two programs that must agree. Around them:
 *
 *   ref_check(c, extra, n, fmt, ...)    one test: a student's out and att within those bounds
 *   ref_explain(c, extra, n)            after a failure, what is wrong: the reference run with
 *                                       a mistake made on purpose (RefAttn.mistake, other
 *                                       weights, inputs or mask) that gives the student's
 *                                       numbers, else what the weights show on their own
 *   ref_dump_case(d, dir, ...), ref_dumps_agree(d, dir1, dir2, student, what)
 *                                       two programs' out.npy and attn.npy for one dumped case,
 *                                       within twice the bound, their bits in a note
 *   ref_adam_err(w, ew, m, em, v, ev, g, n, lr, b1, b2, eps, t)
 *                                       one step of torch.optim.Adam, and its float32 bound
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
 *   ref_heads(xh, x, B, n, heads, hd)   x (B, n, heads * hd) cut into heads, xh
 *                                       (B, heads, n, hd): a plain copy loop, not the
 *                                       chapters' split_heads
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
 * Include after tap.h and run.h (ref_dump_case needs run.h's load_written). Header-only:
 * every function is static and marked unused. */
#ifndef REFERENCE_H
#define REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensor.h"
#include "tap.h"

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
    unsigned mistake;    /* REF_M_... below: a mistake made on purpose; 0 for none */
    double keep;         /* training: 1 / (1 - p), for the bounds; 0 in eval mode */
    int blocks;          /* the bounds of an online softmax over this many blocks of keys (0, 1: none) */
    double exp_u;        /* the exponential's error, in units of u = 2^-24 (0: expf's, 2) */
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

/* The same with w and b in double. */

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

/* xh[b, h, t, i] = x[b, t, h * hd + i]: x.view(B, n, heads, hd).transpose(1, 2), as a
 * copy. The keys and queries the tests build for themselves, written apart from the
 * code under test; copying changes no bit. */
REF_FN void ref_heads(float *xh, const float *x, int B, int n, int heads, int hd) {
    for (int b = 0; b < B; b++)
        for (int h = 0; h < heads; h++)
            for (int t = 0; t < n; t++)
                for (int i = 0; i < hd; i++)
                    xh[(((long)b * heads + h) * n + t) * hd + i] = x[((long)b * n + t) * heads * hd + (long)h * hd + i];
}

/* ---- how far a correct float32 answer may be from the exact one ------------------ */

/* A float32 pass rounds at every step, and how much depends on the order its sums are
 * taken in, which the tests leave to the reader. What no order can exceed is a bound
 * (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 2.2 and 3.1): each
 * +, -, *, / and sqrtf rounds within a relative u = 2^-24, expf within one unit in the
 * last place (2u), and a sum of n products, added in any order, with or without fused
 * multiply-adds, lies within gamma(n) = n u / (1 - n u) times the sum of the products'
 * magnitudes. The functions below carry such a bound beside each double value, to first
 * order (the u^2 terms are below 1e-10 of it), an error in a step's input included:
 *
 *   a layer, n = in + 1 terms:  gamma(in + 1) sum|x w| + sum e_x |w|
 *   a score:                    (gamma(hd + 6) sum|q k| + sum (e_q |k| + |q| e_k)) / divisor,
 *                               the 6 for the scale, applied however: times 1/sqrtf(hd)
 *                               (3 roundings), over sqrtf(hd) (2), to q alone or to both
 *                               q and k first (6)
 *   a weight p_j of S keys:     p_j (r_j + sum_k p_k r_k + gamma(S + 5)) + FLT_MIN, where
 *                               r_j = e_s_j + u |s_j - max| is what its score and its shift
 *                               carry: the shift by the max cancels, what each score carries
 *                               does not; the 5 for expf (2), the division or the reciprocal
 *                               and product (2), and one spare for a sum of S terms, not S - 1;
 *                               FLT_MIN for a weight that underflows (an online softmax over
 *                               blocks of keys and another exponential: see ref_softmax_line)
 *   a weighted sum of S values: gamma(S) sum p |v| + sum (e_p |v| + p e_v)
 *
 * Two float32 passes of the same formula, each within its bound of the exact value, are
 * within twice the bound of each other: what a test asks of two programs that must
 * agree. REF_U and ref_gamma are exported for the tests' own steps. */
#define REF_U 0x1p-24
#define REF_TINY 0x1p-126     /* FLT_MIN: a weight that small may underflow to a subnormal, or to 0 */

REF_FN double ref_gamma(double n) { return n * REF_U / (1 - n * REF_U); }

/* ---- mistakes made on purpose --------------------------------------------------- */

/* RefAttn.mistake: the reference can make these mistakes, so that a failing test can
 * tell which one a wrong answer matches (ref_explain, below). */
enum {
    REF_M_TRANSPOSED = 1,        /* K @ Q^T: score (t, s) is key t against query s (S == T) */
    REF_M_HEAD_MOD = 2,          /* query head h reads key/value head h % G, not h / (H/G) */
    REF_M_NO_SPLIT = 4,          /* q, k and v read as (B, H, T, hd) from their (B, T, H*hd) rows */
    REF_M_NO_MERGE = 8,          /* the heads' (B, H, T, hd) written straight into (B, T, H*hd) */
    REF_M_OVER_QUERIES = 16,     /* softmax(dim=-2): each key's column, over the queries */
    REF_M_MASK_AFTER = 32,       /* the softmax over every key, then the hidden ones set to 0 */
    REF_M_FILL_ZERO = 64,        /* a hidden score set to 0, not -1e20 */
    REF_M_MASK_FLIPPED = 128,    /* the mask read the wrong way round: 1 hides, 0 shows */
    REF_M_CAUSAL_DIAGONAL = 256, /* --causal hides the query's own key too */
    REF_M_CAUSAL_BEFORE = 512,   /* --causal hides the keys before the query, not after */
};

/* Offset of head h's numbers of row `row` (of `rows` in a sequence) in a (B, rows,
 * heads*hd) tensor: in place, or, with REF_M_NO_SPLIT, as if its memory were
 * (B, heads, rows, hd). */
REF_FN long ref_at(const RefAttn *a, int b, int row, int rows, int h, int heads) {
    long width = (long)heads * a->hd;
    if (a->mistake & REF_M_NO_SPLIT) return (long)b * rows * width + ((long)h * rows + row) * a->hd;
    return ((long)b * rows + row) * width + (long)h * a->hd;
}

/* The key/value head query head h reads. */
REF_FN int ref_kv_head(const RefAttn *a, int h) {
    return a->mistake & REF_M_HEAD_MOD ? h % a->G : h / (a->H / a->G);
}

/* ---- the passes ----------------------------------------------------------------- */

/* y (N, out) = x (N, in) @ w.T + b, w (out, in): nn.Linear(in, out)(x). b NULL: no bias.
 * ey, if not NULL, gets the bound on a float32 y's error; ex (NULL: x exact) is x's. */
REF_FN void ref_linear_err(double *y, double *ey, const double *x, const double *ex, const float *w, const float *b,
                           long N, int in, int out) {
    for (long r = 0; r < N; r++)
        for (int o = 0; o < out; o++) {
            double sum = b ? b[o] : 0.0, mag = b ? fabs(b[o]) : 0.0, carried = 0;
            for (int i = 0; i < in; i++) {
                double wi = w[(long)o * in + i];
                sum += x[r * in + i] * wi, mag += fabs(x[r * in + i] * wi);
                if (ex) carried += ex[r * in + i] * fabs(wi);
            }
            y[r * out + o] = sum;
            if (ey) ey[r * out + o] = ref_gamma(in + 1) * mag + carried;
        }
}

REF_FN void ref_linear(double *y, const double *x, const float *w, const float *b, long N, int in, int out) {
    ref_linear_err(y, NULL, x, NULL, w, b, N, in, out);
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

/* scores (B, H, T, S) = q @ k.transpose(-2, -1) / divisor, head by head. q (B, T, H*hd),
 * k (B, S, G*hd): head h of a row is its numbers h*hd .. h*hd + hd - 1, read in place,
 * and query head h reads key head h / (H/G). es, if not NULL, gets each score's bound;
 * eq and ek (NULL: exact) are q's and k's. */
REF_FN void ref_scores_err(double *scores, double *es, const double *q, const double *eq, const double *k,
                           const double *ek, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    int swap = (a.mistake & REF_M_TRANSPOSED) && a.S == a.T;
    for (int b = 0; b < a.B; b++)
        for (int h = 0; h < a.H; h++)
            for (int t = 0; t < a.T; t++)
                for (int s = 0; s < a.S; s++) {
                    long qi = ref_at(&a, b, swap ? s : t, a.T, h, a.H), ki = ref_at(&a, b, swap ? t : s, a.S,
                                                                                   ref_kv_head(&a, h), a.G);
                    double dot = 0, mag = 0, carried = 0;
                    for (int i = 0; i < a.hd; i++) {
                        dot += q[qi + i] * k[ki + i], mag += fabs(q[qi + i] * k[ki + i]);
                        if (eq) carried += eq[qi + i] * fabs(k[ki + i]);
                        if (ek) carried += fabs(q[qi + i]) * ek[ki + i];
                    }
                    long at = (((long)b * a.H + h) * a.T + t) * a.S + s;
                    scores[at] = dot / a.divisor;
                    if (es) es[at] = (ref_gamma(a.hd + 6) * mag + carried) / a.divisor;
                }
}

REF_FN void ref_scores(double *scores, const double *q, const double *k, const RefAttn *attn) {
    ref_scores_err(scores, NULL, q, NULL, k, NULL, attn);
}

/* Is key s hidden from query t in row `row` of (B*H*T) rows, as a's mask and its
 * mistakes have it? */
REF_FN int ref_hidden(const RefAttn *a, long row, int s) {
    int t = (int)(row % a->T);
    int shown = !a->vis || a->vis[row * a->S + s] != 0;
    if (a->vis && (a->mistake & REF_M_MASK_FLIPPED)) shown = !shown;
    if (a->causal) {
        if (a->mistake & REF_M_CAUSAL_BEFORE) shown &= s >= t;
        else if (a->mistake & REF_M_CAUSAL_DIAGONAL) shown &= s < t;
        else shown &= s <= t;
    }
    return !shown;
}

/* One softmax over n numbers w[i * stride] (in place), hidden[i] saying which keys
 * are hidden, as a.hide and a.mistake say; e (stride too), if not NULL, gets each
 * weight's bound, es (the scores', NULL: exact) read from the same places. */
REF_FN void ref_softmax_line(double *w, double *e, const double *es, long stride, int n, const int *hidden,
                             const RefAttn *a) {
    double best = -INFINITY, total = 0, carried = 0;
    int any = 0, fill = a->hide != REF_ADD_10000 && !(a->mistake & (REF_M_FILL_ZERO | REF_M_MASK_AFTER));
    double *r = ref_new(n);                                   /* what each score carries, r_j */
    for (int j = 0; j < n; j++) {
        double *x = &w[j * stride];
        r[j] = es ? es[j * stride] : 0;
        if (hidden[j] && a->hide == REF_ADD_10000 && !(a->mistake & REF_M_MASK_AFTER))
            r[j] += REF_U * fabs(*x - 10000.0), *x -= 10000.0;        /* the addition rounds too */
        else if (hidden[j] && (a->mistake & REF_M_FILL_ZERO)) *x = 0, r[j] = 0;
        else if (hidden[j] && fill) continue;
        any = 1, best = fmax(best, *x);
    }
    for (int j = 0; j < n; j++) {
        double *x = &w[j * stride];
        if (!any) *x = a->hide == REF_FILL_INF ? NAN : 1.0, r[j] = 0;   /* no key visible */
        else if (hidden[j] && fill) *x = 0.0, r[j] = 0;                   /* exactly 0 */
        else r[j] += REF_U * fabs(*x - best), *x = exp(*x - best);
        total += *x;
    }
    for (int j = 0; j < n; j++) carried += w[j * stride] / total * r[j];
    /* the exponential's own error (expf: 2u), and an online softmax's rescales: each
     * block's alpha = e^(m_old - m_new) carries the exponential's error, the subtraction's
     * and the products by alpha, and the shifts add up to the row's range of scores */
    double expu = a->exp_u > 0 ? a->exp_u : 2, spread = 0, low = INFINITY;
    for (int j = 0; j < n && a->blocks > 1; j++)
        if (!(hidden[j] && fill) && any && w[j * stride] > 0) low = fmin(low, log(w[j * stride] / total));
    if (a->blocks > 1 && isfinite(low)) spread = REF_U * -low + a->blocks * (expu + 2) * REF_U;
    for (int j = 0; j < n; j++) {
        double *x = &w[j * stride];
        *x /= total;
        if (e) e[j * stride] = *x * (r[j] + carried + spread + ref_gamma(n + 3 + expu)) + REF_TINY;
    }
    if (a->mistake & REF_M_MASK_AFTER)                        /* weights hidden after the softmax */
        for (int j = 0; j < n; j++)
            if (hidden[j]) {
                w[j * stride] = 0;
                if (e) e[j * stride] = 0;
            }
    free(r);
}

/* In place, each row of att (B, H, T, S) from scores to weights: the hidden keys
 * taken out as a.hide says, then softmax(dim=-1) with the row's largest score
 * taken off first, so that no exp overflows. eatt, if not NULL, gets each weight's
 * bound, es being the scores' (NULL: exact). */
REF_FN void ref_softmax_err(double *att, double *eatt, const double *es, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    int over = a.mistake & REF_M_OVER_QUERIES, n = over ? a.T : a.S, *hidden = malloc(sizeof(int) * (size_t)n);
    if (!hidden) { perror("malloc"); exit(2); }
    if (over) {                                               /* each key's column of a (T, S) map */
        for (long map = 0; map < (long)a.B * a.H; map++)
            for (int s = 0; s < a.S; s++) {
                long at = map * a.T * a.S + s;
                for (int t = 0; t < a.T; t++) hidden[t] = ref_hidden(&a, map * a.T + t, s);
                ref_softmax_line(att + at, eatt ? eatt + at : NULL, es ? es + at : NULL, a.S, a.T, hidden, &a);
            }
    } else {
        for (long row = 0; row < (long)a.B * a.H * a.T; row++) {
            for (int s = 0; s < a.S; s++) hidden[s] = ref_hidden(&a, row, s);
            ref_softmax_line(att + row * a.S, eatt ? eatt + row * a.S : NULL, es ? es + row * a.S : NULL, 1, a.S,
                             hidden, &a);
        }
    }
    free(hidden);
}

REF_FN void ref_softmax(double *att, const RefAttn *attn) { ref_softmax_err(att, NULL, NULL, attn); }

/* mixed (B, T, H*hd) = att @ v, the heads merged: head h of row (b, t) is the sum
 * over the keys s of att[b, h, t, s] times value head h / (H/G) of row (b, s).
 * v (B, S, G*hd). emixed, if not NULL, gets the bounds, from eatt's and ev's (NULL:
 * exact). With a.keep = 1 / (1 - p) (training), att is taken as the weights before
 * dropout and the bound as that of whichever dropout drew, each weight kept and
 * scaled; mixed is then the eval-mode sum, and only the bound is meant. */
REF_FN void ref_mix_err(double *mixed, double *emixed, const double *att, const double *eatt, const double *v,
                        const double *ev, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    double keep = a.keep > 0 ? a.keep : 1, extra = a.keep > 0 ? 2 * REF_U : 0;
    for (int b = 0; b < a.B; b++)
        for (int h = 0; h < a.H; h++)
            for (int t = 0; t < a.T; t++) {
                const double *w = att + (((long)b * a.H + h) * a.T + t) * a.S;
                const double *ew = eatt ? eatt + (((long)b * a.H + h) * a.T + t) * a.S : NULL;
                long qw = (long)a.H * a.hd, to = a.mistake & REF_M_NO_MERGE
                                                     ? (long)b * a.T * qw + ((long)h * a.T + t) * a.hd
                                                     : ((long)b * a.T + t) * qw + (long)h * a.hd;
                for (int i = 0; i < a.hd; i++) {
                    double sum = 0, mag = 0, carried = 0;
                    for (int s = 0; s < a.S; s++) {
                        double vs = v[ref_at(&a, b, s, a.S, ref_kv_head(&a, h), a.G) + i];
                        sum += w[s] * vs, mag += fabs(w[s] * vs);
                        if (ew) carried += ew[s] * fabs(vs);
                        if (ev) carried += fabs(w[s]) * ev[ref_at(&a, b, s, a.S, ref_kv_head(&a, h), a.G) + i];
                    }
                    mixed[to + i] = sum;
                    if (emixed) emixed[to + i] = keep * ((ref_gamma(a.S) + extra) * mag + carried);
                }
            }
}

REF_FN void ref_mix(double *mixed, const double *att, const double *v, const RefAttn *attn) {
    ref_mix_err(mixed, NULL, att, NULL, v, NULL, attn);
}

/* out (B, T, D) = o_proj(att @ v_proj(xv)) for weights att (B, H, T, S) given: the
 * end of the pass, also in training mode, where att is the weights after dropout.
 * xv (B, S, D). eout, if not NULL, gets the bounds, from eatt's (NULL: exact). */
REF_FN void ref_output_err(double *out, double *eout, const double *att, const double *eatt, const RefWeights *w,
                           const float *xv, int D, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    long BT = (long)a.B * a.T, BS = (long)a.B * a.S;
    int qw = a.H * a.hd, kw = a.G * a.hd;
    double *xvd = ref_doubles(xv, BS * D), *v = ref_new(BS * kw), *mixed = ref_new(BT * qw);
    double *ev = eout ? ref_new(BS * kw) : NULL, *emixed = eout ? ref_new(BT * qw) : NULL;
    ref_linear_err(v, ev, xvd, NULL, w->v_w, w->v_b, BS, D, kw);
    ref_mix_err(mixed, emixed, att, eatt, v, ev, &a);
    if (w->o_w) ref_linear_err(out, eout, mixed, emixed, w->o_w, w->o_b, BT, qw, D);
    else {
        memcpy(out, mixed, sizeof *out * (size_t)(BT * qw));
        if (eout) memcpy(eout, emixed, sizeof *eout * (size_t)(BT * qw));
    }
    free(xvd); free(v); free(mixed); free(ev); free(emixed);
}

REF_FN void ref_output(double *out, const double *att, const RefWeights *w, const float *xv, int D,
                       const RefAttn *attn) {
    ref_output_err(out, NULL, att, NULL, w, xv, D, attn);
}

/* The forward pass of an attention module in eval mode, in double: queries from
 * xq (B, T, D), keys from xk and values from xv (B, S, D) (the same X for self-
 * attention): q = q_proj(xq), k = k_proj(xk), ref_scores, ref_softmax, then
 * ref_output. att (B, H, T, S) gets the weights, if not NULL; eout and eatt, if
 * not NULL, the bound of a float32 pass's error on each number of out and att. */
REF_FN void ref_attention_err(double *out, double *eout, double *att, double *eatt, const RefWeights *w,
                              const float *xq, const float *xk, const float *xv, int D, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    long BT = (long)a.B * a.T, BS = (long)a.B * a.S, n = BT * a.H * a.S;
    int qw = a.H * a.hd, kw = a.G * a.hd, bounds = eout || eatt;
    double *xqd = ref_doubles(xq, BT * D), *xkd = ref_doubles(xk, BS * D);
    double *q = ref_new(BT * qw), *k = ref_new(BS * kw), *weights = att ? att : ref_new(n);
    double *eq = bounds ? ref_new(BT * qw) : NULL, *ek = bounds ? ref_new(BS * kw) : NULL;
    double *es = bounds ? ref_new(n) : NULL, *ew = eatt ? eatt : bounds ? ref_new(n) : NULL;
    ref_linear_err(q, eq, xqd, NULL, w->q_w, w->q_b, BT, D, qw);
    ref_linear_err(k, ek, xkd, NULL, w->k_w, w->k_b, BS, D, kw);
    ref_scores_err(weights, es, q, eq, k, ek, &a);
    ref_softmax_err(weights, ew, es, &a);
    ref_output_err(out, eout, weights, ew, w, xv, D, &a);
    if (!att) free(weights);
    if (!eatt) free(ew);
    free(xqd); free(xkd); free(q); free(k); free(eq); free(ek); free(es);
}

REF_FN void ref_attention(double *out, double *att, const RefWeights *w, const float *xq, const float *xk,
                          const float *xv, int D, const RefAttn *attn) {
    ref_attention_err(out, NULL, att, NULL, w, xq, xk, xv, D, attn);
}

/* Each of n bounds doubled (e[i] * 2): two float32 passes of the same formula, each
 * within e of the exact value, are within 2e of each other. */
REF_FN double *ref_twice(double *e, long n) {
    for (long i = 0; i < n; i++) e[i] *= 2;
    return e;
}

/* ---- Adam, and how far a float32 step may be from it ------------------------------- */

/* One step of torch.optim.Adam (torch/optim/adam.py, _single_tensor_adam) in double, on n
 * weights at step t: m.lerp_(g, 1 - b1); v.mul_(b2).addcmul_(g, g, 1 - b2); c1 = 1 - b1^t,
 * c2 = 1 - b2^t; w.addcdiv_(m, v.sqrt() / sqrt(c2) + eps, value = -lr / c1). ew, em and ev
 * (NULL: not kept) carry the bound of a float32 step's error, in any correct form: m and v
 * as b m + (1 - b) g or as a lerp m + (1 - b)(g - m), whose old errors shrink by b1 and b2,
 * plus four roundings of the terms' magnitudes (five for g^2); the corrections c1 and c2
 * computed in float (a power within one unit in the last place and a subtraction: a
 * relative (2 b^t + 2) u / c) or in double; then the step's roundings (the divisions,
 * the square root, eps added, the products: eight in all) and w's own. */
REF_FN void ref_adam_err(double *w, double *ew, double *m, double *em, double *v, double *ev, const float *g, long n,
                         double lr, double b1, double b2, double eps, int t) {
    double u = REF_U, c1 = 1 - pow(b1, t), c2 = 1 - pow(b2, t);
    double corrections = u * (2 * pow(b1, t) + 2) / c1 + 0.5 * u * (2 * pow(b2, t) + 2) / c2;
    for (long i = 0; i < n; i++) {
        double gi = g[i], m1 = b1 * m[i] + (1 - b1) * gi, v1 = b2 * v[i] + (1 - b2) * gi * gi;
        double root = sqrt(v1) / sqrt(c2), d = root + eps, step = lr / c1 * m1 / d;
        if (ew) {
            double e_m = b1 * em[i] + ref_gamma(4) * (fabs(m[i]) + fabs(gi) + fabs(m1));
            double e_v = b2 * ev[i] + ref_gamma(5) * (v[i] + gi * gi + v1);
            double e_d = (v1 > 0 ? root / d * (0.5 * e_v / v1 + 3 * u) : 0) + u;      /* relative, the divisor's */
            double e_step = lr / c1 * (e_m + fabs(m1) * (e_d + corrections + ref_gamma(8))) / d;
            em[i] = e_m, ev[i] = e_v, ew[i] += e_step + u * fabs(w[i] - step);
        }
        m[i] = m1, v[i] = v1, w[i] -= step;
    }
}

/* ---- what a wrong answer most likely is ------------------------------------------ */

/* The case a test checks: the module's weights, inputs, width and attention, and
 * what the student's code gave, out (B, T, D) and att (B, H, T, S), either NULL when
 * the test has not got it. */
typedef struct RefCase {
    RefWeights w;
    const float *xq, *xk, *xv;
    int D;
    RefAttn a;
    const float *out, *att;
} RefCase;

/* A mistake as the reference makes it, and how to say it: c's module with other
 * weights, inputs or attention. */
typedef struct RefSuspect {
    char what[320];
    RefCase c;
} RefSuspect;

/* How far got (n floats, NULL: not known) is from want: the largest |got - want| over
 * twice want's bound (and 1e-6); at most 1 when they agree. NaN matches NaN. */
REF_FN double ref_distance(const float *got, const double *want, const double *bound, long n) {
    double worst = 0;
    for (long i = 0; got && i < n; i++) {
        if (isnan(got[i]) || isnan(want[i])) {
            if (isnan(got[i]) != isnan(want[i])) return INFINITY;
            continue;
        }
        worst = fmax(worst, fabs(got[i] - want[i]) / (2 * bound[i] + 1e-6));
    }
    return worst;
}

/* How far the student's results are from what suspect s computes (at most 1: they agree);
 * *att_too: its weights agree. */
REF_FN double ref_suspect_distance(const RefCase *student, const RefSuspect *s, int *att_too) {
    RefAttn a = ref_usual(&s->c.a);
    long no = (long)a.B * a.T * s->c.D, na = (long)a.B * a.H * a.T * a.S;
    double *out = ref_new(no), *eout = ref_new(no), *att = ref_new(na), *eatt = ref_new(na);
    ref_attention_err(out, eout, att, eatt, &s->c.w, s->c.xq, s->c.xk, s->c.xv, s->c.D, &a);
    double d_att = student->att ? ref_distance(student->att, att, eatt, na) : 0;
    double d_out = ref_distance(student->out, out, eout, no);
    *att_too = student->att && d_att <= 1;
    free(out); free(eout); free(att); free(eatt);
    return fmax(d_att, d_out);
}

REF_FN int ref_suspect_fits(const RefCase *student, const RefSuspect *s, int *att_too) {
    return ref_suspect_distance(student, s, att_too) <= 1;
}

/* The divisor d by name: "sqrt(hd) = 4" or "D = 16". */
REF_FN const char *ref_divisor_name(char *buf, size_t n, double d, int D, int hd) {
    if (d == 1) snprintf(buf, n, "1 (no scale)");
    else if (fabs(d - sqrt((double)hd)) < 1e-9 && hd != D) snprintf(buf, n, "sqrt(hd) = %.3g", d);
    else if (fabs(d - sqrt((double)D)) < 1e-9) snprintf(buf, n, "sqrt(D) = %.3g", d);
    else if (fabs(d - hd) < 1e-9 && hd != D) snprintf(buf, n, "hd = %.3g", d);
    else if (fabs(d - D) < 1e-9) snprintf(buf, n, "D = %.3g", d);
    else snprintf(buf, n, "%.4g", d);
    return buf;
}

/* The suspects every attention module can be checked against, in list (up to max);
 * *owned collects what they allocate. Returns how many. */
REF_FN int ref_usual_suspects(RefSuspect *list, int max, const RefCase *c, float **owned) {
    RefAttn a = ref_usual(&c->a);
    int n = 0, D = c->D, qw = a.H * a.hd, kw = a.G * a.hd;
    char right[64], other[64];
#define REF_SUSPECT(...) \
    for (RefSuspect *s = n < max ? &list[n++] : NULL; s; s = NULL) { s->c = *c, s->c.a = a; __VA_ARGS__; }
    /* the scale */
    double divisors[5] = { sqrt((double)D), (double)D, (double)a.hd, 1.0, sqrt((double)a.hd) };
    for (int i = 0; i < 5; i++) {
        double d = divisors[i];
        int seen = fabs(d - a.divisor) < 1e-9;
        for (int j = 0; j < i; j++) seen |= fabs(d - divisors[j]) < 1e-9;
        if (seen) continue;
        ref_divisor_name(right, sizeof right, a.divisor, D, a.hd), ref_divisor_name(other, sizeof other, d, D, a.hd);
        REF_SUSPECT(s->c.a.divisor = d;
                    snprintf(s->what, sizeof s->what, "the scores are %.3g times too %s: they were divided by %s, "
                             "not by %s", d > a.divisor ? d / a.divisor : a.divisor / d,
                             d > a.divisor ? "small" : "large", other, right))
    }
    /* the mask */
    if (a.vis || a.causal) {
        REF_SUSPECT(s->c.a.vis = NULL, s->c.a.causal = 0;
                    snprintf(s->what, sizeof s->what, "the mask was never applied: every hidden key kept its score "
                             "and got weight"))
        if (a.hide != REF_ADD_10000)
            REF_SUSPECT(s->c.a.mistake |= REF_M_FILL_ZERO;
                        snprintf(s->what, sizeof s->what, "the hidden scores were set to 0, not to -1e20: 0 is an "
                                 "ordinary score, and each hidden key kept a weight"))
        REF_SUSPECT(s->c.a.mistake |= REF_M_MASK_AFTER;
                    snprintf(s->what, sizeof s->what, "the mask was applied after the softmax: the hidden weights "
                             "were set to 0 but the visible ones were not renormalised, so a row sums to less than 1"))
        if (a.vis)
            REF_SUSPECT(s->c.a.mistake |= REF_M_MASK_FLIPPED;
                        snprintf(s->what, sizeof s->what, "the mask was read the wrong way round: the keys under a 1 "
                                 "were hidden and those under a 0 kept (masked_fill hides where mask == 0)"))
        if (a.hide == REF_FILL_1E20) {
            REF_SUSPECT(s->c.a.hide = REF_FILL_INF;
                        snprintf(s->what, sizeof s->what, "the hidden scores were set to -inf, not to -1e20: a query "
                                 "that sees no key gets NaN weights (0/0) instead of a uniform row"))
            REF_SUSPECT(s->c.a.hide = REF_ADD_10000;
                        snprintf(s->what, sizeof s->what, "-10000 was added to the hidden scores, not written over "
                                 "them as -1e20: a query that sees no key gets the softmax of its own scores, not a "
                                 "uniform row"))
        } else if (a.hide == REF_ADD_10000) {
            REF_SUSPECT(s->c.a.hide = REF_FILL_1E20;
                        snprintf(s->what, sizeof s->what, "the hidden scores were overwritten, not lowered by 10000: "
                                 "this module adds mask * -10000 to its scores"))
            REF_SUSPECT(s->c.a.hide = REF_FILL_INF;
                        snprintf(s->what, sizeof s->what, "the hidden scores were set to -inf, not lowered by 10000: "
                                 "this module adds mask * -10000 to its scores"))
        }
        if (a.causal) {
            REF_SUSPECT(s->c.a.mistake |= REF_M_CAUSAL_DIAGONAL;
                        snprintf(s->what, sizeof s->what, "the causal mask hides each query's own key too "
                                 "(triu(diagonal=0)): only the keys after the query are hidden"))
            REF_SUSPECT(s->c.a.mistake |= REF_M_CAUSAL_BEFORE;
                        snprintf(s->what, sizeof s->what, "the causal mask is the wrong triangle: it hides the keys "
                                 "before each query, where the keys after it belong"))
        }
    }
    /* the softmax's axis, and which tensor goes where */
    REF_SUSPECT(s->c.a.mistake |= REF_M_OVER_QUERIES;
                snprintf(s->what, sizeof s->what, "the softmax ran over the queries (dim=-2): each key's column sums "
                         "to 1, where each query's row should"))
    if (a.S == a.T)
        REF_SUSPECT(s->c.a.mistake |= REF_M_TRANSPOSED;
                    snprintf(s->what, sizeof s->what, "the scores are transposed: K Q^T, each key scored against the "
                             "queries, where Q K^T belongs"))
    if (a.S == a.T && a.G == a.H)
        REF_SUSPECT(s->c.w.k_w = c->w.q_w, s->c.w.k_b = c->w.q_b, s->c.xk = c->xq;
                    snprintf(s->what, sizeof s->what, "every query was scored against the queries: q where k belongs"))
    REF_SUSPECT(s->c.w.k_w = c->w.v_w, s->c.w.k_b = c->w.v_b, s->c.xk = c->xv;
                snprintf(s->what, sizeof s->what, "the values were scored where the keys belong: v where k belongs"))
    REF_SUSPECT(s->c.w.v_w = c->w.k_w, s->c.w.v_b = c->w.k_b, s->c.xv = c->xk;
                snprintf(s->what, sizeof s->what, "the weights average the keys: k where v belongs"))
    if (a.G > 1 && a.G < a.H)
        REF_SUSPECT(s->c.a.mistake |= REF_M_HEAD_MOD;
                    snprintf(s->what, sizeof s->what, "query head h read key/value head h %% G (repeat's pairing), "
                             "not h / (H/G) (repeat_interleave's)"))
    if (a.H > 1) {
        REF_SUSPECT(s->c.a.mistake |= REF_M_NO_SPLIT;
                    snprintf(s->what, sizeof s->what, "q, k and v were not split into heads: each head read (B, T, D) "
                             "memory as if it were (B, H, T, hd), a view without the transpose"))
        REF_SUSPECT(s->c.a.mistake |= REF_M_NO_MERGE;
                    snprintf(s->what, sizeof s->what, "the heads were not merged: att @ v, (B, H, T, hd), was written "
                             "straight into (B, T, D) memory, without the transpose back"))
    }
    if (c->w.o_w && qw == D) {
        REF_SUSPECT(s->c.w.o_w = NULL;
                    snprintf(s->what, sizeof s->what, "the output projection was left out: out is the weighted sum "
                             "of the values"))
        REF_SUSPECT(s->c.w.o_w = c->w.q_w, s->c.w.o_b = c->w.q_b;
                    snprintf(s->what, sizeof s->what, "the output projection used the query projection's weights"))
    }
    if (kw == D || qw == D) {                   /* X where a projection belongs: an identity layer */
        float *eye = calloc((size_t)D * D, sizeof *eye);
        if (!eye) { perror("calloc"); exit(2); }
        for (int i = 0; i < D; i++) eye[i * D + i] = 1.0f;
        owned[0] = eye;
        if (kw == D)
            REF_SUSPECT(s->c.w.v_w = eye, s->c.w.v_b = NULL;
                        snprintf(s->what, sizeof s->what, "X, the input, was used where V belongs: the values were "
                                 "never projected"))
        if (qw == D)
            REF_SUSPECT(s->c.w.q_w = eye, s->c.w.q_b = NULL;
                        snprintf(s->what, sizeof s->what, "X, the input, was used where Q belongs: the queries were "
                                 "never projected"))
    }
#undef REF_SUSPECT
    return n;
}

/* Row `row` of (B*H*T) rows by name: "query 3 of sequence 1" (", head 2" with heads). */
REF_FN const char *ref_row_name(char *buf, size_t n, long row, const RefAttn *a) {
    int t = (int)(row % a->T), h = (int)(row / a->T % a->H), b = (int)(row / a->T / a->H);
    if (a->H > 1) snprintf(buf, n, "query %d of sequence %d, head %d", t, b, h);
    else snprintf(buf, n, "query %d of sequence %d", t, b);
    return buf;
}

/* What the weights att (B, H, T, S) show wrong on their own, said with what_is_wrong(): NaN,
 * a hidden key with weight, a row that does not sum to 1. Returns 1 if it said one. */
REF_FN int ref_weights_facts(const float *att, const RefAttn *attn) {
    RefAttn a = ref_usual(attn);
    long rows = (long)a.B * a.H * a.T;
    char where[96];
#define REF_WHERE(row) ref_row_name(where, sizeof where, row, &a)
    for (long r = 0; r < rows; r++) {                          /* NaN */
        int nan = 0, seen = 0;
        for (int s = 0; s < a.S; s++) nan |= isnan(att[r * a.S + s]), seen |= !ref_hidden(&a, r, s);
        if (!nan) continue;
        if (!seen && a.hide == REF_FILL_1E20)
            what_is_wrong("%s sees no key, and its weights are NaN: -inf makes such a row 0/0, where -1e20 keeps it "
                  "uniform", REF_WHERE(r));
        else what_is_wrong("%s has NaN weights%s", REF_WHERE(r), seen ? ": a softmax of finite scores is never NaN" : "");
        return 1;
    }
    for (long r = 0; r < rows; r++)                            /* a fill after the softmax */
        for (int s = 0; s < a.S; s++)
            if (att[r * a.S + s] <= -1000.0f || isinf(att[r * a.S + s])) {
                what_is_wrong("key %d of %s holds %.3g after the softmax: the mask was applied after the softmax, "
                              "to the weights; it must hide (or lower) the scores before it", s, REF_WHERE(r),
                              att[r * a.S + s]);
                return 1;
            }
    for (long r = 0; r < rows; r++)                            /* a row the softmax never reached */
        for (int s = 0; s < a.S; s++)
            if (att[r * a.S + s] < 0) {
                what_is_wrong("the weights of %s include %.3g, a negative number: this row was never normalised by "
                              "the softmax (are all B*T rows of every head passed to it?)", REF_WHERE(r),
                              att[r * a.S + s]);
                return 1;
            }
    for (long r = 0; r < rows; r++) {                          /* hidden keys with weight */
        int seen = 0;
        for (int s = 0; s < a.S; s++) seen |= !ref_hidden(&a, r, s);
        for (int s = 0; seen && a.hide != REF_ADD_10000 && s < a.S; s++)
            if (ref_hidden(&a, r, s) && fabs(att[r * a.S + s]) > 1e-6) {
                what_is_wrong("key %d of %s is hidden but has weight %.2g: the mask did not reach its score before the "
                      "softmax", s, REF_WHERE(r), att[r * a.S + s]);
                return 1;
            }
    }
    long worst_row = -1;
    double worst = 0;
    for (long r = 0; r < rows; r++) {                          /* rows that do not sum to 1 */
        double sum = 0;
        for (int s = 0; s < a.S; s++) sum += att[r * a.S + s];
        if (fabs(sum - 1) > worst) worst = fabs(sum - 1), worst_row = r;
    }
    if (worst > 1e-4) {
        double sum = 0, col_worst = 0;
        for (int s = 0; s < a.S; s++) sum += att[worst_row * a.S + s];
        for (long map = 0; map < (long)a.B * a.H; map++)
            for (int s = 0; s < a.S; s++) {
                double col = 0;
                for (int t = 0; t < a.T; t++) col += att[(map * a.T + t) * a.S + s];
                col_worst = fmax(col_worst, fabs(col - 1));
            }
        if (col_worst <= 1e-4)
            what_is_wrong("the weights of %s sum to %.3g, and every key's column sums to 1: the softmax ran over the "
                  "queries (dim=-2), not over the keys", REF_WHERE(worst_row), sum);
        else what_is_wrong("the weights of %s sum to %.3g, not 1: a softmax over its keys makes every row sum to 1",
                   REF_WHERE(worst_row), sum);
        return 1;
    }
#undef REF_WHERE
    what_is_wrong("every row of weights sums to 1 and no hidden key has weight, yet the weights are not "
                  "softmax(q k^T / %s): the scores themselves are wrong (which rows of q meet which rows of k)",
                  a.divisor == 1 ? "1" : "sqrt(d)");
    return 1;
}

/* After a failed comparison: says with what_is_wrong() which mistake the student's results
 * (c->out, c->att) most likely come from: first one of `extra` (a test's own
 * suspects) or of the usual ones that computes them, then, failing that, what the
 * weights show on their own. Says nothing after a stub, or if the results are right.
 * Returns 1 if it named a cause. */
REF_FN int ref_explain(const RefCase *c, const RefSuspect *extra, int n_extra) {
    if (tap_stub[0] || (!c->out && !c->att)) return 0;
    RefSuspect *list = calloc(64 + (size_t)n_extra, sizeof *list);
    float *owned[1] = { NULL };
    if (!list) { perror("calloc"); exit(2); }
    for (int i = 0; i < n_extra; i++) list[i] = extra[i];
    int n = n_extra + ref_usual_suspects(list + n_extra, 64, c, owned), att_too = 0, said = 0;
    RefSuspect right = { .c = *c };
    if (ref_suspect_fits(c, &right, &att_too)) goto done;     /* nothing wrong here */
    int weights_right = att_too, best = -1;
    double closest = INFINITY;                       /* of the suspects that agree, the closest */
    for (int i = 0; i < n; i++) {
        double d = ref_suspect_distance(c, &list[i], &att_too);
        if (d <= 1 && d < closest) closest = d, best = i;
    }
    if (best >= 0) what_is_wrong("%s", list[best].what), said = 1;
    for (int i = 0; i < n && !said && c->att && !weights_right; i++)
        if (!ref_suspect_fits(c, &list[i], &att_too) && att_too)
            what_is_wrong("%s (and the output is wrong besides)", list[i].what), said = 1;
    if (!said && weights_right)
        what_is_wrong("the weights are right and the output is not: the mistake is after the softmax, in the weighted sum "
              "of the values, the merge of the heads or the output projection"), said = 1;
    if (!said && c->att) said = ref_weights_facts(c->att, &c->a);
done:
    free(list);
    free(owned[0]);
    return said;
}

/* One test, named by fmt: the student's results (c->out and c->att, either NULL) within
 * the bounds of one float32 pass of c's module; on failure, the worst number against its
 * bound and what is wrong (ref_explain, with `extra` suspects). Returns 1 if it passed. */
REF_FN TAP_PRINTF(4, 5) int ref_check(const RefCase *c, const RefSuspect *extra, int n_extra, const char *fmt, ...) {
    char name[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    RefAttn a = ref_usual(&c->a);
    long no = (long)a.B * a.T * c->D, na = (long)a.B * a.H * a.T * a.S, worst_at = -1;
    double *out = ref_new(no), *eout = ref_new(no), *att = ref_new(na), *eatt = ref_new(na), worst = 0;
    ref_attention_err(out, eout, att, eatt, &c->w, c->xq, c->xk, c->xv, c->D, &a);
    for (long i = 0; c->att && i < na; i++) {
        double off = isnan(c->att[i]) != isnan(att[i]) ? INFINITY : isnan(att[i]) ? 0 : fabs(c->att[i] - att[i]) / eatt[i];
        if (off > worst) worst = off, worst_at = i;
    }
    for (long i = 0; c->out && i < no; i++) {
        double off = isnan(c->out[i]) != isnan(out[i]) ? INFINITY : isnan(out[i]) ? 0 : fabs(c->out[i] - out[i]) / eout[i];
        if (off > worst) worst = off, worst_at = na + i;
    }
    int pass = ok(worst <= 1, "%s", name);
    if (!pass && !tap_stub[0]) {
        int in_att = worst_at < na;
        long i = in_att ? worst_at : worst_at - na;
        diag("  worst: %s %ld is %.9g, the reference %.9g, %.3g times its bound %.2g", in_att ? "weight" : "output", i,
             in_att ? c->att[i] : c->out[i], in_att ? att[i] : out[i], worst, in_att ? eatt[i] : eout[i]);
        ref_explain(c, extra, n_extra);
    }
    free(out); free(eout); free(att); free(eatt);
    return pass;
}

#ifdef RUN_H
/* ---- two programs' dumps of one case ------------------------------------------------- */

/* A dumped case for the reference: its inputs and layers as loaded from DIR, the
 * reference's out and att with their bounds (eout, eatt: one float32 pass), and the
 * RefCase that computes them. */
typedef struct RefDump {
    Tensor t[12];                 /* the inputs, the layers and the mask, as loaded */
    float *vis;                   /* the mask spelled out (B, H, T, S), or NULL */
    RefCase c;
    long nout, natt;
    double *out, *eout, *att, *eatt;
    double keep;                  /* 1 / (1 - p) in training, 0 in eval */
} RefDump;

/* Loads DIR's case: inputs xq, xk, xv (B, T, D), (B, S, D) (the same name for
 * self-attention), the layers named in layers[8] (q, k, v, o: weight, then bias; NULL
 * for one absent), "attention_mask" if DIR has it, with H query and G key/value heads,
 * --causal or not, and keep = 1 / (1 - p) in training (0 in eval). Computes the
 * reference and its bounds. Returns 1 if every file was there, of shapes that agree. */
REF_FN int ref_dump_case(RefDump *d, const char *dir, const char *xq, const char *xk, const char *xv,
                         const char *const layers[8], int H, int G, int causal, double keep) {
    memset(d, 0, sizeof *d);
    const char *names[3] = { xq, xk, xv };
    for (int i = 0; i < 3; i++) d->t[i] = load_written(dir, names[i]);
    for (int i = 0; i < 8; i++) if (layers[i]) d->t[3 + i] = load_written(dir, layers[i]);
    d->t[11] = load_written(dir, "attention_mask");
    for (int i = 0; i < 11; i++) if ((i < 3 || layers[i - 3]) && !d->t[i].data) return 0;
    if (d->t[0].ndim != 3 || d->t[1].ndim != 3 || d->t[3].ndim != 2) return 0;
    int B = d->t[0].shape[0], T = d->t[0].shape[1], D = d->t[0].shape[2], S = d->t[1].shape[1];
    int hd = d->t[3].shape[0] / H;
    if (H * hd != d->t[3].shape[0] || d->t[5].ndim != 2 || d->t[5].shape[0] != G * hd) return 0;
    const float *at[8];
    for (int i = 0; i < 8; i++) at[i] = layers[i] ? d->t[3 + i].data : NULL;
    d->c = (RefCase){ { at[0], at[1], at[2], at[3], at[4], at[5], at[6], at[7] }, d->t[0].data, d->t[1].data,
                      d->t[2].data, D, { .B = B, .T = T, .S = S, .H = H, .G = G, .hd = hd, .causal = causal }, NULL,
                      NULL };
    if (d->t[11].data) {          /* one head: the scores are (B, T, S), and a mask meets them from the right */
        d->vis = H == 1 && d->t[11].ndim <= 3 ? ref_visible(&d->t[11], 3, (int[]){ B, T, S })
                                              : ref_visible(&d->t[11], 4, (int[]){ B, H, T, S });
        d->c.a.vis = d->vis;
    }
    d->nout = (long)B * T * D, d->natt = (long)B * H * T * S;
    d->out = ref_new(d->nout), d->eout = ref_new(d->nout), d->att = ref_new(d->natt), d->eatt = ref_new(d->natt);
    RefAttn a = d->c.a;
    a.keep = d->keep = keep;
    ref_attention_err(d->out, d->eout, d->att, d->eatt, &d->c.w, d->c.xq, d->c.xk, d->c.xv, D, &a);
    return 1;
}

REF_FN void ref_dump_free(RefDump *d) {
    for (int i = 0; i < 12; i++) tensor_free(&d->t[i]);
    free(d->vis); free(d->out); free(d->eout); free(d->att); free(d->eatt);
}

/* DIR1's and DIR2's out.npy and attn.npy, two programs' answers to d's case, agree
 * within twice the bound of one float32 pass (attn.npy read as B*H*T*S numbers,
 * whatever its axes). Notes whether they are the same bits (`what` names the pair). If
 * they do not agree, says what is wrong with the answer in `student` (DIR1 or DIR2).
 * Returns 1 if they agree. */
REF_FN int ref_dumps_agree(RefDump *d, const char *dir1, const char *dir2, const char *student, const char *what) {
    Tensor o1 = load_written(dir1, "out"), o2 = load_written(dir2, "out");
    Tensor a1 = load_written(dir1, "attn"), a2 = load_written(dir2, "attn");
    int shaped = o1.size == d->nout && o2.size == d->nout && a1.size == d->natt && a2.size == d->natt, near = shaped;
    for (long i = 0; near && i < d->nout; i++) near = tap_close_enough(o1.data[i], o2.data[i], 2 * d->eout[i], 0);
    for (long i = 0; near && i < d->natt; i++) near = tap_close_enough(a1.data[i], a2.data[i], 2 * d->eatt[i], 0);
    if (shaped) {
        char line[600];
        snprintf(line, sizeof line, "%s: out.npy", what);
        same_bits_note(o1.data, o2.data, d->nout, "%s", line);
        snprintf(line, sizeof line, "%s: attn.npy", what);
        same_bits_note(a1.data, a2.data, d->natt, "%s", line);
    } else if (!tap_stub[0]) diag("%s: out.npy or attn.npy is missing or of another size", what);
    if (shaped && !near) {
        int first = !strcmp(student, dir1);
        RefCase c = d->c;
        c.out = d->keep > 0 ? NULL : first ? o1.data : o2.data;      /* in training, out is after dropout */
        c.att = first ? a1.data : a2.data;
        ref_explain(&c, NULL, 0);
    }
    tensor_free(&o1); tensor_free(&o2); tensor_free(&a1); tensor_free(&a2);
    return near;
}
#endif

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
