/* induction_cases.h: the cases chapter 12's tests build, as the program builds
 * them: a causal mask, a batch of sequences, a model drawn from a seed, the names
 * of its weights. Include after induction.c. */
#ifndef INDUCTION_CASES_H
#define INDUCTION_CASES_H

/* (T, T): ones where key s <= query t, as main makes it. */
static inline Tensor causal_mask(int T) {
    Tensor c = tensor_new2(T, T);
    for (int t = 0; t < T; t++)
        for (int s = 0; s <= t; s++) c.data[t * T + s] = 1.0f;
    return c;
}

static inline Batch batch_new(int B, int T) {
    Batch bt = { .B = B, .T = T, .tok = calloc((size_t)B * (T + 1), sizeof(int)),
                 .counted = calloc((size_t)B * T, sizeof(float)), .copy = calloc((size_t)B, sizeof(Copy)) };
    if (!bt.tok || !bt.counted || !bt.copy) { perror("calloc"); exit(2); }
    return bt;
}

static inline void batch_free(Batch *bt) {
    free(bt->tok); free(bt->counted); free(bt->copy);
}


/* A model drawn as the program draws one from --seed; q_proj's and k_proj's weights
 * times sharpen (maps further from uniform). */
static inline Model model_new(int T, int D, int H, int L, uint64_t seed, float sharpen) {
    Model m;
    Rng r;
    rng_seed(&r, seed);
    model_init(&m, T, D, H, L, &r);
    for (int l = 0; l < L; l++) {
        for (long i = 0; i < m.layer[l].q_w.size; i++) m.layer[l].q_w.data[i] *= sharpen;
        for (long i = 0; i < m.layer[l].k_w.size; i++) m.layer[l].k_w.data[i] *= sharpen;
    }
    return m;
}

/* The names of a model's weights, in model_params's order, for L layers. */
static inline int weight_names(int L, char name[MAX_PARAMS][40]) {
    Model m = { .layers = L };
    Tensor *p[MAX_PARAMS];
    return model_params(&m, p, name);
}

/* 1 if any of the n numbers is not 0: a pass stopped at a stub leaves its outputs zero. */
static inline int written(const float *a, long n) {
    for (long i = 0; a && i < n; i++) if (a[i] != 0.0f) return 1;
    return 0;
}

/* Where the trained models are: $ABH_MODELS/NAME, or build/induction/NAME (the model
 * tests of chapters 12 and 13). */
static inline const char *model_dir(char *dir, size_t n, const char *name) {
    const char *top = getenv("ABH_MODELS");
    snprintf(dir, n, "%s/%s", top && *top ? top : "build/induction", name);
    return dir;
}

#endif
