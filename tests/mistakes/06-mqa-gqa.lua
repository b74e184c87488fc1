-- Mistakes in Exercise 6.7 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local C = "chapters/06-mqa-gqa.md"
return {
  -- Exercise 6.7: query heads stacked as rows on their shared key head (attend_grouped)
  -- correct answers, written another way
  { exercise = "6.7", chapter = C, correct = true,
    mistake = "correct: one product per query head, against key head h / (H/G), the values summed from the last key",
    edits = {
      { from = "matmul_bt(att, qh, kh, nkv, rows, T, hd, 1.0f / sqrtf((float)hd));", to = [[
for (int b = 0; b < B; b++)                          // query head h reads key head h / (H/G)
    for (int h = 0; h < H; h++)
        matmul_bt(att + ((long)b * H + h) * T * T, qh + ((long)b * H + h) * T * hd,
                  kh + ((long)b * G + h / (H / G)) * T * hd, 1, T, T, hd, 1.0f / sqrtf((float)hd));
(void)nkv; (void)rows;]] },
      { from = "matmul(mixed, att, vh, nkv, rows, hd, T);", to = [[
for (long g = 0; g < nkv; g++)                       // each (b, kv head) pair's R*T rows
    for (long r = 0; r < rows; r++)
        for (int i = 0; i < hd; i++) {
            float sum = 0.0f;
            for (int s = T - 1; s >= 0; s--) sum += att[(g * rows + r) * T + s] * vh[(g * T + s) * hd + i];
            mixed[(g * rows + r) * hd + i] = sum;
        }]] } } },
  { exercise = "6.7", chapter = C, correct = true,
    mistake = "correct: each dot product summed in double, then rounded to float",
    from = "matmul_bt(att, qh, kh, nkv, rows, T, hd, 1.0f / sqrtf((float)hd));",
    to = [[
for (long g = 0; g < nkv; g++)                       // matmul_bt's loops, with a double sum
    for (int r = 0; r < rows; r++)
        for (int s = 0; s < T; s++) {
            double dot = 0.0;
            for (int i = 0; i < hd; i++) dot += (double)qh[(g * rows + r) * hd + i] * kh[(g * T + s) * hd + i];
            att[(g * rows + r) * T + s] = 1.0f / sqrtf((float)hd) * (float)dot;
        }]] },
  { exercise = "6.7", chapter = C, correct = true,
    mistake = "correct: each score divided by sqrtf(hd), not multiplied by its reciprocal",
    from = "matmul_bt(att, qh, kh, nkv, rows, T, hd, 1.0f / sqrtf((float)hd));",
    to = [[
for (long g = 0; g < nkv; g++)                       // the same loops as matmul_bt, but a division
    for (int r = 0; r < rows; r++)
        for (int s = 0; s < T; s++) {
            float dot = 0.0f;
            for (int i = 0; i < hd; i++) dot += qh[(g * rows + r) * hd + i] * kh[(g * T + s) * hd + i];
            att[(g * rows + r) * T + s] = dot / sqrtf((float)hd);
        }]] },
  { exercise = "6.7", chapter = C,
    mistake = "chapter 5's call: a batch of B*H products of T rows, as if every query head had its own key head",
    from = "long nkv = (long)B * G;                  // (b, kv head) pairs\n    long rows = (long)(H / G) * T;",
    to = "long nkv = (long)B * H;  (void)G;   // -Werror: G unused\n    long rows = T;" },
  { exercise = "6.7", chapter = C, names = "never written",
    mistake = "the rows of one query head per group: rows = T",
    from = "long rows = (long)(H / G) * T;",
    to = "long rows = T;" },
  { exercise = "6.7", chapter = C,
    mistake = "an off-by-one: the last (b, g) product left out",
    from = "long nkv = (long)B * G;",
    to = "long nkv = (long)B * G - 1;" },
  { exercise = "6.7", chapter = C, names = "h % G",
    mistake = "query head h scored against key head h % G, repeat's pairing (Exercise 6.3)",
    from = "matmul_bt(att, qh, kh, nkv, rows, T, hd, 1.0f / sqrtf((float)hd));",
    to = [[
for (int b = 0; b < B; b++)                          // query head h reads key head h % G
    for (int h = 0; h < H; h++)
        matmul_bt(att + ((long)b * H + h) * T * T, qh + ((long)b * H + h) * T * hd,
                  kh + ((long)b * G + h % G) * T * hd, 1, T, T, hd, 1.0f / sqrtf((float)hd));]] },
  { exercise = "6.7", chapter = C, names = "times too small",
    mistake = "the scale sqrt(D) = sqrt(H*hd), the model's width, instead of sqrt(hd)",
    from = "matmul_bt(att, qh, kh, nkv, rows, T, hd, 1.0f / sqrtf((float)hd));",
    to = "matmul_bt(att, qh, kh, nkv, rows, T, hd, 1.0f / sqrtf((float)(H * hd)));" },
  { exercise = "6.7", chapter = C, names = "values were scored",
    mistake = "a tensor from the wrong step: the values scored in pass 3 where the keys belong",
    from = "matmul_bt(att, qh, kh, nkv, rows, T, hd, 1.0f / sqrtf((float)hd));",
    to = "(void)kh;   // -Werror: kh unused\nmatmul_bt(att, qh, vh, nkv, rows, T, hd, 1.0f / sqrtf((float)hd));" },
  { exercise = "6.7", chapter = C, names = "average the keys",
    mistake = "a tensor from the wrong step: the keys mixed in pass 6 where the values belong",
    from = "matmul(mixed, att, vh, nkv, rows, hd, T);",
    to = "(void)vh;   // -Werror: vh unused\nmatmul(mixed, att, kh, nkv, rows, hd, T);" },
}
