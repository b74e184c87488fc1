-- Mistakes in Exercise 8.6 that its own tests must catch (see tests/mistakes/README).
local C = "chapters/08-variants.md"
local SCORES = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, T, hd, 1.0f);  // pass 3"
local ADD = "att[r * T + s] += -10000.0f;"
return {
  -- Exercise 8.6: seed 003's unscaled scores, additive causal mask and softmax (mhsa_relu)
  { exercise = "8.6", chapter = C,
    mistake = "adding the scale 1/sqrt(hd), the habit of every other program",
    from = SCORES,
    to = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, T, hd, 1.0f / sqrtf((float)hd));" },
  { exercise = "8.6", chapter = C,
    mistake = "filling instead of adding: -inf written over a hidden score",
    from = ADD, to = "att[r * T + s] = -INFINITY;" },
  { exercise = "8.6", chapter = C,
    mistake = "filling instead of adding: -1e20 written over a hidden score",
    from = ADD, to = "att[r * T + s] = -1e20f;" },
  { exercise = "8.6", chapter = C,
    mistake = "filling instead of adding: -10000 written over a hidden score",
    from = ADD, to = "att[r * T + s] = -10000.0f;" },
  { exercise = "8.6", chapter = C,
    mistake = "the wrong triangle: the keys before the query hidden, tril(diagonal=-1) for triu(diagonal=1)",
    from = "for (int s = (int)(r % T) + 1; s < T; s++)",
    to = "for (int s = 0; s < (int)(r % T); s++)" },
  { exercise = "8.6", chapter = C,
    mistake = "an off-by-one: the query's own key hidden too (triu with diagonal=0)",
    from = "for (int s = (int)(r % T) + 1; s < T; s++)",
    to = "for (int s = (int)(r % T); s < T; s++)" },
  { exercise = "8.6", chapter = C,
    mistake = "the query of row r read as r / T, the (b, h) block, instead of r % T",
    from = "for (int s = (int)(r % T) + 1; s < T; s++)",
    to = "for (int s = (int)(r / T % T) + 1; s < T; s++)" },
  { exercise = "8.6", chapter = C,
    mistake = "a tensor from the wrong step: the queries scored against themselves, qh where kh belongs",
    from = SCORES,
    to = "matmul_bt(att, qh.data, qh.data, (long)B * H, T, T, hd, 1.0f);  // pass 3" },
  { exercise = "8.6", chapter = C,
    mistake = "a tensor from the wrong step: the mask added to the weights after the softmax, not to the scores",
    from = [[
if (causal)                                               // pass 4
    for (long r = 0; r < (long)B * H * T; r++)            // row r is query t = r % T
        for (int s = (int)(r % T) + 1; s < T; s++) att[r * T + s] += -10000.0f;
softmax_lastdim(att, (long)B * H * T, T);                 // pass 5]],
    to = [[
softmax_lastdim(att, (long)B * H * T, T);                 // pass 5, too early
if (causal)                                               // pass 4
    for (long r = 0; r < (long)B * H * T; r++)            // row r is query t = r % T
        for (int s = (int)(r % T) + 1; s < T; s++) att[r * T + s] += -10000.0f;]] },
}
