-- Mistakes in Exercise 1.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local C = "chapters/01-selfatt-v1.md"
local SCORES = [[
float scale = 1.0f / sqrtf((float)D);
matmul_bt(att, q.data, k.data, B, T, T, D, scale);   // (B, T, D) @ (B, T, D)^T -> (B, T, T)]]
local SOFTMAX = "softmax_lastdim(att, BT, T);        // (B, T, T), each row now sums to 1"
local MIX = "matmul(out, att, v.data, B, T, D, T);   // (B, T, T) @ (B, T, D) -> (B, T, D)"
return {
  -- Exercise 1.6: passes 2 to 4 of SelfAttV1 (chapters/01-selfatt-v1.md)
  -- correct answers, written another way
  { exercise = "1.6", chapter = "chapters/01-selfatt-v1.md", correct = true,
    mistake = "correct: each score divided by sqrtf(D), not multiplied by its reciprocal",
    from = [[
float scale = 1.0f / sqrtf((float)D);
matmul_bt(att, q.data, k.data, B, T, T, D, scale);   // (B, T, D) @ (B, T, D)^T -> (B, T, T)]],
    to = [[
for (long bt = 0; bt < BT; bt++)                     // query t of sequence b
    for (int s = 0; s < T; s++) {                    // key s of the same sequence
        const float *q_bt = q.data + bt * D, *k_bs = k.data + (bt / T * T + s) * D;
        float dot = 0.0f;
        for (int i = 0; i < D; i++) dot += q_bt[i] * k_bs[i];
        att[bt * T + s] = dot / sqrtf((float)D);
    }]] },
  { exercise = "1.6", chapter = C, correct = true,
    mistake = "correct: the queries scaled first; the softmax and the weighted sum as loops, each sum taken backwards",
    edits = {
      { from = SCORES, to = [[
for (long i = 0; i < q.size; i++) q.data[i] *= 1.0f / sqrtf((float)D);   // q / sqrt(D), then q . k
matmul_bt(att, q.data, k.data, B, T, T, D, 1.0f);]] },
      { from = SOFTMAX, to = [[
for (long r = 0; r < BT; r++) {                      // each query's row
    float *row = att + r * T, top = row[0], sum = 0.0f;
    for (int s = 1; s < T; s++) top = fmaxf(top, row[s]);
    for (int s = T - 1; s >= 0; s--) sum += row[s] = expf(row[s] - top);
    for (int s = 0; s < T; s++) row[s] *= 1.0f / sum;
}]] },
      { from = MIX, to = [[
for (long bt = 0; bt < BT; bt++)                     // out[b, t, :], keys from last to first
    for (int d = 0; d < D; d++) {
        float sum = 0.0f;
        for (int s = T - 1; s >= 0; s--) sum += att[bt * T + s] * v.data[(bt / T * T + s) * D + d];
        out[bt * D + d] = sum;
    }]] } } },
  { exercise = "1.6", chapter = C, correct = true,
    mistake = "correct: the dot products and the weighted sums taken in double, rounded once to float",
    edits = {
      { from = SCORES, to = [[
for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            double dot = 0.0;
            for (int i = 0; i < D; i++)
                dot += (double)q.data[((long)b * T + t) * D + i] * k.data[((long)b * T + s) * D + i];
            att[((long)b * T + t) * T + s] = (float)(dot / sqrt((double)D));
        }]] },
      { from = MIX, to = [[
for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
        for (int d = 0; d < D; d++) {
            double sum = 0.0;
            for (int s = 0; s < T; s++)
                sum += (double)att[((long)b * T + t) * T + s] * v.data[((long)b * T + s) * D + d];
            out[((long)b * T + t) * D + d] = (float)sum;
        }]] } } },
  -- mistakes
  { exercise = "1.6", chapter = C, names = "times too small",
    mistake = "the scale D instead of sqrt(D)",
    from = "float scale = 1.0f / sqrtf((float)D);", to = "float scale = 1.0f / (float)D;" },
  { exercise = "1.6", chapter = C, names = "times too large",
    mistake = "no scale at all",
    from = "float scale = 1.0f / sqrtf((float)D);", to = "float scale = 1.0f;" },
  { exercise = "1.6", chapter = "chapters/01-selfatt-v1.md",
    mistake = "Q @ K without the transpose: matmul in place of matmul_bt",
    from = "matmul_bt(att, q.data, k.data, B, T, T, D, scale);",
    to = [[
matmul(att, q.data, k.data, B, T, T, D);
for (long i = 0; i < (long)B * T * T; i++) att[i] *= scale;]] },
  { exercise = "1.6", chapter = C, names = "transposed",
    mistake = "queries and keys swapped: K @ Q^T, the scores transposed",
    from = "matmul_bt(att, q.data, k.data, B, T, T, D, scale);",
    to = "matmul_bt(att, k.data, q.data, B, T, T, D, scale);" },
  { exercise = "1.6", chapter = C, names = "over the queries",
    mistake = "the softmax over the queries (dim=-2): each column sums to 1",
    from = "softmax_lastdim(att, BT, T);        // (B, T, T), each row now sums to 1",
    to = [[
for (int b = 0; b < B; b++)
    for (int s = 0; s < T; s++) {                    // column s of sequence b
        float *col = att + (long)b * T * T + s, max = -INFINITY, sum = 0.0f;
        for (int t = 0; t < T; t++) if (col[(long)t * T] > max) max = col[(long)t * T];
        for (int t = 0; t < T; t++) { col[(long)t * T] = expf(col[(long)t * T] - max); sum += col[(long)t * T]; }
        for (int t = 0; t < T; t++) col[(long)t * T] /= sum;
    }]] },
  { exercise = "1.6", chapter = C, names = "not 1",
    mistake = "one softmax over each sequence's T * T scores at once",
    from = "softmax_lastdim(att, BT, T);", to = "softmax_lastdim(att, B, T * T);" },
  { exercise = "1.6", chapter = C, names = "never normalised",
    mistake = "B rows where B * T belong: only the first B rows normalised",
    from = "softmax_lastdim(att, BT, T);", to = "softmax_lastdim(att, B, T);" },
  { exercise = "1.6", chapter = C, names = "where V belongs",
    mistake = "a tensor from the wrong step: X, the input before pass 1, where V belongs",
    from = "matmul(out, att, v.data, B, T, D, T);", to = "matmul(out, att, x, B, T, D, T);" },
}
