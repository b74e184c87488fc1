-- Mistakes in Exercise 5.6 that its own tests must catch (see tests/mistakes/README).
return {
  -- Exercise 5.6: split the heads, score them, merge them (chapters/05-mha.md)
  { exercise = "5.6", chapter = "chapters/05-mha.md",
    mistake = "the scale sqrt(D) instead of sqrt(hd) (Exercise 5.2's bug)",
    from = "1.0f / sqrtf((float)hd));", to = "1.0f / sqrtf((float)D));" },
  { exercise = "5.6", chapter = "chapters/05-mha.md",
    mistake = "a view without the transpose: q copied, not split into heads",
    from = [[
split_heads(qh.data, q.data, B, T, H, hd);      // (B, T, D) -> (B, H, T, hd)
split_heads(kh.data, k.data, B, T, H, hd);      // the keys, the same way
split_heads(vh.data, v.data, B, T, H, hd);      // and the values]],
    to = [[
memcpy(qh.data, q.data, (size_t)q.size * sizeof(float));
memcpy(kh.data, k.data, (size_t)k.size * sizeof(float));
memcpy(vh.data, v.data, (size_t)v.size * sizeof(float));]] },
  { exercise = "5.6", chapter = "chapters/05-mha.md",
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
  { exercise = "5.6", chapter = "chapters/05-mha.md",
    mistake = "each score divided by sqrt(hd), not multiplied by its reciprocal (other bits)",
    from = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, T, hd, 1.0f / sqrtf((float)hd));",
    to = [[
for (long bh = 0; bh < (long)B * H; bh++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            float dot = 0.0f;
            for (int i = 0; i < hd; i++) dot += qh.data[(bh * T + t) * hd + i] * kh.data[(bh * T + s) * hd + i];
            att[(bh * T + t) * T + s] = dot / sqrtf((float)hd);
        }]] },
  { exercise = "5.6", chapter = "chapters/05-mha.md",
    mistake = "k where v belongs: vh split from the keys (a line copied and not changed)",
    from = "split_heads(vh.data, v.data, B, T, H, hd);      // and the values",
    to = "split_heads(vh.data, k.data, B, T, H, hd);" },
  { exercise = "5.6", chapter = "chapters/05-mha.md",
    mistake = "the scale 1/hd instead of 1/sqrt(hd)",
    from = "1.0f / sqrtf((float)hd));", to = "1.0f / (float)hd);" },
}
