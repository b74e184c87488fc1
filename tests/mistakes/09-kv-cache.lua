-- Mistakes in Exercise 9.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local CH = "chapters/09-kv-cache.md"
return {
  -- Exercise 9.6: append to the cache, score against it, mix its values (chapters/09-kv-cache.md)
  -- correct answers, written another way
  { exercise = "9.6", chapter = CH, correct = true,
    mistake = "correct: each score divided by sqrtf(hd), not multiplied by its reciprocal",
    from = [[
for (int bg = 0; bg < B * G; bg++) {
    const float *keys = c->k.data + (long)bg * c->max_len * hd;   // k_cache[b, g]: (T_max, hd)
    matmul_bt(att_t + (long)bg * R * S, q.data + (long)bg * R * hd,
              keys, 1, R, S, hd, 1.0f / sqrtf((float)hd));
}]],
    to = [[
for (int bg = 0; bg < B * G; bg++)
    for (int r = 0; r < R; r++)
        for (int s = 0; s < S; s++) {
            float dot = 0.0f;
            for (int i = 0; i < hd; i++)
                dot += q.data[((long)bg * R + r) * hd + i] * c->k.data[((long)bg * c->max_len + s) * hd + i];
            att_t[((long)bg * R + r) * S + s] = dot / sqrtf((float)hd);
        }]] },
  { exercise = "9.6", chapter = CH, correct = true,
    mistake = "correct: the queries scaled first, then the dot products",
    from = "matmul_bt(att_t + (long)bg * R * S, q.data + (long)bg * R * hd,\n              keys, 1, R, S, hd, 1.0f / sqrtf((float)hd));",
    to = [[
if (bg == 0) for (long i = 0; i < q.size; i++) q.data[i] *= 1.0f / sqrtf((float)hd);
    matmul_bt(att_t + (long)bg * R * S, q.data + (long)bg * R * hd, keys, 1, R, S, hd, 1.0f);]] },
  { exercise = "9.6", chapter = CH, correct = true,
    mistake = "correct: the values added from the last cached token to the first",
    from = "matmul(mixed.data + (long)bg * R * hd, att_t + (long)bg * R * S, values, 1, R, hd, S);",
    to = [[
for (int r = 0; r < R; r++)
        for (int d = 0; d < hd; d++) {
            float sum = 0.0f;
            for (int s = S - 1; s >= 0; s--) sum += att_t[((long)bg * R + r) * S + s] * values[(long)s * hd + d];
            mixed.data[((long)bg * R + r) * hd + d] = sum;
        }]] },
  { exercise = "9.6", chapter = CH, correct = true,
    mistake = "correct: the append as a loop over every number, the count kept as len + 1",
    from = [[
for (int bg = 0; bg < B * G; bg++) {                      // (b, g) pairs, in the cache's order
    float *k_bgt = c->k.data + ((long)bg * c->max_len + t) * hd;   // k_cache[b, g, t, :]
    float *v_bgt = c->v.data + ((long)bg * c->max_len + t) * hd;
    memcpy(k_bgt, k.data + (long)bg * hd, (size_t)hd * sizeof(float));
    memcpy(v_bgt, v.data + (long)bg * hd, (size_t)hd * sizeof(float));
}
c->len = S;                                               // the cache now holds tokens 0 .. t]],
    to = [[
for (int b = 0; b < B; b++)
    for (int g = 0; g < G; g++)
        for (int i = 0; i < hd; i++) {
            long at = (((long)b * G + g) * c->max_len + t) * hd + i, from = ((long)b * G + g) * hd + i;
            c->k.data[at] = k.data[from];
            c->v.data[at] = v.data[from];
        }
c->len = c->len + 1;                                      // t tokens before, t + 1 now
(void)S;]] },
  { exercise = "9.6", chapter = CH, names = "cache says it holds",
    mistake = "the token not counted: the append without c->len = S",
    from = "c->len = S;                                               // the cache now holds tokens 0 .. t",
    to = "" },
  { exercise = "9.6", chapter = CH,
    mistake = "the position off by one: the count first, then the copy at c->len = t + 1",
    from = [[
for (int bg = 0; bg < B * G; bg++) {                      // (b, g) pairs, in the cache's order
    float *k_bgt = c->k.data + ((long)bg * c->max_len + t) * hd;   // k_cache[b, g, t, :]
    float *v_bgt = c->v.data + ((long)bg * c->max_len + t) * hd;
    memcpy(k_bgt, k.data + (long)bg * hd, (size_t)hd * sizeof(float));
    memcpy(v_bgt, v.data + (long)bg * hd, (size_t)hd * sizeof(float));
}
c->len = S;                                               // the cache now holds tokens 0 .. t]],
    to = [[
c->len = S;
for (int bg = 0; bg < B * G; bg++) {
    memcpy(c->k.data + ((long)bg * c->max_len + c->len) * hd, k.data + (long)bg * hd, (size_t)hd * sizeof(float));
    memcpy(c->v.data + ((long)bg * c->max_len + c->len) * hd, v.data + (long)bg * hd, (size_t)hd * sizeof(float));
}]] },
  { exercise = "9.6", chapter = CH,
    mistake = "the cache indexed by query head in pass 3: block b * H + h, as if G were H",
    from = [[
for (int bg = 0; bg < B * G; bg++) {
    const float *keys = c->k.data + (long)bg * c->max_len * hd;   // k_cache[b, g]: (T_max, hd)
    matmul_bt(att_t + (long)bg * R * S, q.data + (long)bg * R * hd,
              keys, 1, R, S, hd, 1.0f / sqrtf((float)hd));
}]],
    to = [[
for (int bh = 0; bh < B * H; bh++)
    matmul_bt(att_t + (long)bh * S, q.data + (long)bh * hd, c->k.data + (long)bh * c->max_len * hd, 1, 1, S, hd,
              1.0f / sqrtf((float)hd));]] },
  { exercise = "9.6", chapter = CH,
    mistake = "the cache indexed by query head in pass 5: values of block b * H + h",
    from = [[
for (int bg = 0; bg < B * G; bg++) {
    const float *values = c->v.data + (long)bg * c->max_len * hd; // v_cache[b, g]: (T_max, hd)
    matmul(mixed.data + (long)bg * R * hd, att_t + (long)bg * R * S, values, 1, R, hd, S);
}]],
    to = [[
for (int bh = 0; bh < B * H; bh++)
    matmul(mixed.data + (long)bh * hd, att_t + (long)bh * S, c->v.data + (long)bh * c->max_len * hd, 1, 1, hd, S);]] },
  { exercise = "9.6", chapter = CH,
    mistake = "a tensor from the wrong step: pass 1's new keys k scored, not the cache",
    from = "matmul_bt(att_t + (long)bg * R * S, q.data + (long)bg * R * hd,\n              keys, 1, R, S, hd, 1.0f / sqrtf((float)hd));",
    to = "matmul_bt(att_t + (long)bg * R * S, q.data + (long)bg * R * hd, k.data + (long)bg * hd, 1, R, S, hd, 1.0f / sqrtf((float)hd)); (void)keys;" },
  { exercise = "9.6", chapter = CH, names = "average the keys",
    mistake = "a tensor from the wrong step: the cached keys mixed in pass 5, not the values",
    from = "const float *values = c->v.data + (long)bg * c->max_len * hd;",
    to = "const float *values = c->k.data + (long)bg * c->max_len * hd;" },
  { exercise = "9.6", chapter = CH,
    mistake = "the cache before the append: the t keys held before this step scored, not S = t + 1",
    from = "keys, 1, R, S, hd, 1.0f / sqrtf((float)hd));",
    to = "keys, 1, R, S - 1, hd, 1.0f / sqrtf((float)hd));" },
  { exercise = "9.6", chapter = CH,
    mistake = "Exercise 9.3's bug in C: every row of the cache scored, T_max keys instead of S",
    from = "keys, 1, R, S, hd, 1.0f / sqrtf((float)hd));",
    to = "keys, 1, R, c->max_len, hd, 1.0f / sqrtf((float)hd));" },
  { exercise = "9.6", chapter = CH,
    mistake = "a transposed index: the append in k_proj's order, (T_max, B, G, hd), not (B, G, T_max, hd)",
    from = [[
    float *k_bgt = c->k.data + ((long)bg * c->max_len + t) * hd;   // k_cache[b, g, t, :]
    float *v_bgt = c->v.data + ((long)bg * c->max_len + t) * hd;]],
    to = [[
    float *k_bgt = c->k.data + ((long)t * B * G + bg) * hd;
    float *v_bgt = c->v.data + ((long)t * B * G + bg) * hd;]] },
  { exercise = "9.6", chapter = CH,
    mistake = "a group's query heads taken at row bg, not bg * R",
    from = "q.data + (long)bg * R * hd,\n              keys,",
    to = "q.data + (long)bg * hd,\n              keys," },
}
