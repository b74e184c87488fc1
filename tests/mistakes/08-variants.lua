-- Mistakes in Exercise 8.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local C = "chapters/08-variants.md"
local SCORES = "matmul_bt(att, qh.data, kh.data, (long)B * H, T, T, hd, 1.0f);  // pass 3"
local ADD = "att[r * T + s] += -10000.0f;"
return {
  -- Exercise 8.6: seed 003's unscaled scores, additive causal mask and softmax (mhsa_relu)
  -- correct answers, written another way
  { exercise = "8.6", chapter = C, correct = true,
    mistake = "correct: the scores as loops, each dot product from its last term to its first",
    from = SCORES,
    to = [[
for (long bh = 0; bh < (long)B * H; bh++)                // pass 3, by hand
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            float dot = 0.0f;
            for (int i = hd - 1; i >= 0; i--) dot += qh.data[(bh * T + t) * hd + i] * kh.data[(bh * T + s) * hd + i];
            att[(bh * T + t) * T + s] = dot;
        }]] },
  { exercise = "8.6", chapter = C, correct = true,
    mistake = "correct: the additive mask made as a (T, T) tensor of 0 and -10000 and added to every map",
    from = [[
if (causal)                                               // pass 4
    for (long r = 0; r < (long)B * H * T; r++)            // row r is query t = r % T
        for (int s = (int)(r % T) + 1; s < T; s++) att[r * T + s] += -10000.0f;]],
    to = [[
if (causal) {                                             // pass 4: scores + triu(ones(T, T), 1) * -10000
    Tensor add = tensor_new2(T, T);
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) add.data[t * T + s] = s > t ? -10000.0f : 0.0f;
    for (long map = 0; map < (long)B * H; map++)
        for (long i = 0; i < (long)T * T; i++) att[map * T * T + i] += add.data[i];
    tensor_free(&add);
}]] },
  { exercise = "8.6", chapter = C, correct = true,
    mistake = "correct: the softmax by hand, its sum in double, each weight the exponential times 1 / sum",
    from = "softmax_lastdim(att, (long)B * H * T, T);                 // pass 5",
    to = [[
for (long r = 0; r < (long)B * H * T; r++) {             // pass 5, by hand
    float *row = att + r * T, top = row[0];
    double sum = 0.0;
    for (int s = 1; s < T; s++) top = fmaxf(top, row[s]);
    for (int s = 0; s < T; s++) sum += row[s] = expf(row[s] - top);
    float inv = (float)(1.0 / sum);
    for (int s = 0; s < T; s++) row[s] *= inv;
}]] },
  { exercise = "8.6", chapter = C, names = "times too small",
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
  { exercise = "8.6", chapter = C, names = "wrong triangle",
    mistake = "the wrong triangle: the keys before the query hidden, tril(diagonal=-1) for triu(diagonal=1)",
    from = "for (int s = (int)(r % T) + 1; s < T; s++)",
    to = "for (int s = 0; s < (int)(r % T); s++)" },
  { exercise = "8.6", chapter = C, names = "own key too",
    mistake = "an off-by-one: the query's own key hidden too (triu with diagonal=0)",
    from = "for (int s = (int)(r % T) + 1; s < T; s++)",
    to = "for (int s = (int)(r % T); s < T; s++)" },
  { exercise = "8.6", chapter = C,
    mistake = "the query of row r read as r / T, the (b, h) block, instead of r % T",
    from = "for (int s = (int)(r % T) + 1; s < T; s++)",
    to = "for (int s = (int)(r / T % T) + 1; s < T; s++)" },
  { exercise = "8.6", chapter = C, names = "against the queries",
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
