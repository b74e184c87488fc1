-- Mistakes in Exercise 7.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local C = "chapters/07-cross-attention.md"
local SCORES = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, S, hd, 1.0f / sqrtf((float)hd));"
local FILL = "masked_fill(&scores, mask, -1e20f);"
return {
  -- Exercise 7.6: the (T, S) scores of every head (pass 3) and the mask over the source (pass 4)
  -- correct answers, written another way
  { exercise = "7.6", chapter = C, correct = true,
    mistake = "correct: each score divided by sqrtf(hd), not multiplied by its reciprocal",
    from = SCORES,
    to = [[
for (long bh = 0; bh < (long)B * H; bh++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < S; s++) {
            const float *q_t = qh.data + (bh * T + t) * hd, *k_s = kh.data + (bh * S + s) * hd;
            float dot = 0.0f;
            for (int i = 0; i < hd; i++) dot += q_t[i] * k_s[i];
            att[(bh * T + t) * S + s] = dot / sqrtf((float)hd);
        }]] },
  { exercise = "7.6", chapter = C, correct = true,
    mistake = "correct: each dot product summed from its last term to its first",
    from = SCORES,
    to = [[
for (long bh = 0; bh < (long)B * H; bh++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < S; s++) {
            const float *q_t = qh.data + (bh * T + t) * hd, *k_s = kh.data + (bh * S + s) * hd;
            float dot = 0.0f;
            for (int i = hd - 1; i >= 0; i--) dot += q_t[i] * k_s[i];
            att[(bh * T + t) * S + s] = 1.0f / sqrtf((float)hd) * dot;
        }]] },
  { exercise = "7.6", chapter = C, correct = true,
    mistake = "correct: the queries scaled first; the mask by hand, its index lined up from the right",
    edits = {
      { from = SCORES, to = [[
for (long i = 0; i < qh.size; i++) qh.data[i] *= 1.0f / sqrtf((float)hd);   // q / sqrt(hd), then q . k
matmul_bt(att, qh.data, kh.data, (long)B * H, T, S, hd, 1.0f);]] },
      { from = [[
if (mask) {                                  // NULL: every key is visible
    Tensor scores = { .ndim = 4, .shape = { B, H, T, S }, .size = BHT * S, .data = att };  // a view
    masked_fill(&scores, mask, -1e20f);      // its last axis meets the keys
}]], to = [[
for (long i = 0; mask && i < BHT * S; i++) {        // score i, its mask element found from the right
    int sizes[4] = { B, H, T, S };
    long rest = i, j = 0, stride = 1;
    for (int d = 3, e = mask->ndim - 1; d >= 0 && e >= 0; d--, e--) {
        long at = rest % sizes[d];
        rest /= sizes[d];
        if (mask->shape[e] != 1) j += at * stride;
        stride *= mask->shape[e];
    }
    if (mask->data[j] == 0.0f) att[i] = -1e20f;
}]] } } },
  { exercise = "7.6", chapter = C,
    mistake = "T where S belongs: each head's scores as a (T, T) block, the habit of self-attention",
    from = SCORES,
    to = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, T, hd, 1.0f / sqrtf((float)hd));" },
  { exercise = "7.6", chapter = C, names = "lined up with the queries",
    mistake = "a padding mask lined up with the queries: (B, 1, S, 1) where (B, 1, 1, S) belongs",
    from = FILL,
    to = [[
Tensor rows = *mask;                                   // the source axis moved onto the queries
rows.shape[rows.ndim - 2] = mask->shape[mask->ndim - 1];
rows.shape[rows.ndim - 1] = mask->shape[mask->ndim - 2];
masked_fill(&scores, &rows, -1e20f);]] },
  { exercise = "7.6", chapter = C, names = "-inf",
    mistake = "-inf instead of the seed's -1e20",
    from = FILL,
    to = "masked_fill(&scores, mask, -INFINITY);" },
  { exercise = "7.6", chapter = C, names = "set to 0",
    mistake = "hidden scores set to 0 instead of -1e20",
    from = FILL,
    to = "masked_fill(&scores, mask, 0.0f);" },
  { exercise = "7.6", chapter = C, names = "never applied",
    mistake = "pass 4 left out: the mask never applied",
    from = [[
if (mask) {                                  // NULL: every key is visible
    Tensor scores = { .ndim = 4, .shape = { B, H, T, S }, .size = BHT * S, .data = att };  // a view
    masked_fill(&scores, mask, -1e20f);      // its last axis meets the keys
}]],
    to = "(void)mask;   // -Werror: mask unused" },
  { exercise = "7.6", chapter = C, names = "times too small",
    mistake = "the scale sqrt(D), the model's width, instead of sqrt(hd)",
    from = SCORES,
    to = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, S, hd, 1.0f / sqrtf((float)D));" },
  { exercise = "7.6", chapter = C,
    mistake = "a tensor from the wrong step: k, the keys before split_heads, where kh belongs",
    from = SCORES,
    to = "matmul_bt(att, qh.data, k.data, (long)B * H, T, S, hd, 1.0f / sqrtf((float)hd));" },
  { exercise = "7.6", chapter = C, names = "values were scored",
    mistake = "a tensor from the wrong step: the values scored where the keys belong",
    from = SCORES,
    to = "matmul_bt(att, qh.data, vh.data, (long)B * H, T, S, hd, 1.0f / sqrtf((float)hd));" },
}
