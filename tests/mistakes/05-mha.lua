-- Mistakes in Exercise 5.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local C = "chapters/05-mha.md"
local SPLIT = [[
split_heads(qh.data, q.data, B, T, H, hd);      // (B, T, D) -> (B, H, T, hd)
split_heads(kh.data, k.data, B, T, H, hd);      // the keys, the same way
split_heads(vh.data, v.data, B, T, H, hd);      // and the values]]
local SCORES = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, T, hd, 1.0f / sqrtf((float)hd));"
local MIX = [[
matmul(mixed_h.data, att_drop, vh.data, (long)B * H, T, hd, T);
merge_heads(mixed.data, mixed_h.data, B, T, H, hd);    // back to (B, T, D)]]
return {
  -- Exercise 5.6: split the heads, score them, merge them (chapters/05-mha.md)
  -- correct answers, written another way
  { exercise = "5.6", chapter = C, correct = true,
    mistake = "correct: each score divided by sqrtf(hd), not multiplied by its reciprocal",
    from = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, T, hd, 1.0f / sqrtf((float)hd));",
    to = [[
for (long bh = 0; bh < (long)B * H; bh++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            float dot = 0.0f;
            for (int i = 0; i < hd; i++) dot += qh.data[(bh * T + t) * hd + i] * kh.data[(bh * T + s) * hd + i];
            att[(bh * T + t) * T + s] = dot / sqrtf((float)hd);
        }]] },
  { exercise = "5.6", chapter = C, correct = true,
    mistake = "correct: the split as loops, the queries scaled by 1/sqrt(hd) as they are copied",
    edits = {
      { from = SPLIT, to = [[
for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < hd; i++) {
                long from = ((long)b * T + t) * D + (long)h * hd + i, to = (((long)b * H + h) * T + t) * hd + i;
                qh.data[to] = q.data[from] * (1.0f / sqrtf((float)hd));
                kh.data[to] = k.data[from];
                vh.data[to] = v.data[from];
            }]] },
      { from = SCORES, to = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, T, hd, 1.0f);   // q already scaled" } } },
  { exercise = "5.6", chapter = C, correct = true,
    mistake = "correct: the weighted sum and the merge in one loop, each sum from the last key to the first",
    from = MIX,
    to = [[
for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++)
            for (int i = 0; i < hd; i++) {
                const float *w = att_drop + (((long)b * H + h) * T + t) * T;    // row t of head h
                float sum = 0.0f;
                for (int s = T - 1; s >= 0; s--) sum += w[s] * vh.data[(((long)b * H + h) * T + s) * hd + i];
                mixed.data[((long)b * T + t) * D + (long)h * hd + i] = sum;    // merged as it is made
            }]] },
  -- mistakes
  { exercise = "5.6", chapter = C, names = "times too small",
    mistake = "the scale sqrt(D) instead of sqrt(hd) (Exercise 5.2's bug)",
    from = "1.0f / sqrtf((float)hd));", to = "1.0f / sqrtf((float)D));" },
  { exercise = "5.6", chapter = C, names = "not split into heads",
    mistake = "a view without the transpose: q copied, not split into heads",
    from = [[
split_heads(qh.data, q.data, B, T, H, hd);      // (B, T, D) -> (B, H, T, hd)
split_heads(kh.data, k.data, B, T, H, hd);      // the keys, the same way
split_heads(vh.data, v.data, B, T, H, hd);      // and the values]],
    to = [[
memcpy(qh.data, q.data, (size_t)q.size * sizeof(float));
memcpy(kh.data, k.data, (size_t)k.size * sizeof(float));
memcpy(vh.data, v.data, (size_t)v.size * sizeof(float));]] },
  { exercise = "5.6", chapter = C, names = "not merged",
    mistake = "forgetting the merge: att_drop @ vh written straight into mixed (Exercise 5.3's bug)",
    from = [[
matmul(mixed_h.data, att_drop, vh.data, (long)B * H, T, hd, T);
merge_heads(mixed.data, mixed_h.data, B, T, H, hd);    // back to (B, T, D)]],
    to = [[
matmul(mixed.data, att_drop, vh.data, (long)B * H, T, hd, T);]] },
  { exercise = "5.6", chapter = "chapters/05-mha.md",
    mistake = "a tensor from the wrong step: the weights before dropout, att, multiply V",
    from = "matmul(mixed_h.data, att_drop, vh.data, (long)B * H, T, hd, T);",
    to = "matmul(mixed_h.data, att, vh.data, (long)B * H, T, hd, T);" },
  { exercise = "5.6", chapter = C, names = "average the keys",
    mistake = "k where v belongs: vh split from the keys (a line copied and not changed)",
    from = "split_heads(vh.data, v.data, B, T, H, hd);      // and the values",
    to = "split_heads(vh.data, k.data, B, T, H, hd);" },
  { exercise = "5.6", chapter = C, names = "divided by hd",
    mistake = "the scale 1/hd instead of 1/sqrt(hd)",
    from = "1.0f / sqrtf((float)hd));", to = "1.0f / (float)hd);" },
}
