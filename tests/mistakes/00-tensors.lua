-- Mistakes in Exercise 0.7 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README). The chapter asks for the
-- softmax within a tolerance, not for its bits: a form that only rounds otherwise
-- (x_r[j] *= 1.0f / sum, a sum in double, another order) is correct.
local BODY = [[
    for (long r = 0; r < rows; r++) {                     // one row at a time
        float *x_r = x + r * n;                           // (n)
        float max = -INFINITY, sum = 0.0f;
        for (int j = 0; j < n; j++) if (x_r[j] > max) max = x_r[j];
        for (int j = 0; j < n; j++) { x_r[j] = expf(x_r[j] - max); sum += x_r[j]; }
        for (int j = 0; j < n; j++) x_r[j] /= sum;
    }]]
return {
  -- correct answers, written another way
  { exercise = "0.7", chapter = "chapters/00-tensors.md", correct = true,
    mistake = "correct: each weight multiplied by 1.0f / sum, not divided by sum",
    from = "for (int j = 0; j < n; j++) x_r[j] /= sum;",
    to = "float inv = 1.0f / sum;\n        for (int j = 0; j < n; j++) x_r[j] *= inv;" },
  { exercise = "0.7", chapter = "chapters/00-tensors.md", correct = true,
    mistake = "correct: the sum kept in double, the rows taken last to first, the maximum by fmaxf",
    from = BODY,
    to = [[
    for (long r = rows - 1; r >= 0; r--) {
        float *x_r = x + r * n, max = x_r[0];
        double sum = 0.0;
        for (int j = 1; j < n; j++) max = fmaxf(max, x_r[j]);
        for (int j = 0; j < n; j++) sum += x_r[j] = expf(x_r[j] - max);
        for (int j = 0; j < n; j++) x_r[j] = (float)(x_r[j] / sum);
    }]] },
  { exercise = "0.7", chapter = "chapters/00-tensors.md", correct = true,
    mistake = "correct: pointers walked along the tensor, the exponentials summed from the last key to the first",
    from = BODY,
    to = [[
    for (float *x_r = x, *end = x + rows * n; x_r < end; x_r += n) {
        float max = -INFINITY, sum = 0.0f;
        for (const float *p = x_r; p < x_r + n; p++) max = *p > max ? *p : max;
        for (int j = n - 1; j >= 0; j--) { x_r[j] = expf(x_r[j] - max); sum += x_r[j]; }
        for (float *p = x_r; p < x_r + n; p++) *p = *p / sum;
    }]] },
  -- mistakes
  -- Exercise 0.7: the three passes of softmax_lastdim (chapters/00-tensors.md)
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "no maximum: expf(x_j), the formula of Exercise 0.1",
    from = "x_r[j] = expf(x_r[j] - max);", to = "x_r[j] = expf(x_r[j]);" },
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "the maximum starts at 0 instead of -INFINITY",
    from = "float max = -INFINITY, sum = 0.0f;", to = "float max = 0.0f, sum = 0.0f;" },
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "one sum for all the rows, declared before the loop",
    from = [[
    for (long r = 0; r < rows; r++) {                     // one row at a time
        float *x_r = x + r * n;                           // (n)
        float max = -INFINITY, sum = 0.0f;]],
    to = [[
    float sum = 0.0f;
    for (long r = 0; r < rows; r++) {                     // one row at a time
        float *x_r = x + r * n;                           // (n)
        float max = -INFINITY;]] },
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "one maximum for all the rows, carried from row to row",
    from = [[
    for (long r = 0; r < rows; r++) {                     // one row at a time
        float *x_r = x + r * n;                           // (n)
        float max = -INFINITY, sum = 0.0f;]],
    to = [[
    float max = -INFINITY;
    for (long r = 0; r < rows; r++) {                     // one row at a time
        float *x_r = x + r * n;                           // (n)
        float sum = 0.0f;]] },
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "a special case for the -inf row: zeros instead of PyTorch's NaN",
    from = "for (int j = 0; j < n; j++) if (x_r[j] > max) max = x_r[j];",
    to = [[
for (int j = 0; j < n; j++) if (x_r[j] > max) max = x_r[j];
        if (max == -INFINITY) { for (int j = 0; j < n; j++) x_r[j] = 0.0f; continue; }]] },
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "a value from the wrong step: the exponentials summed but not stored, the scores divided",
    from = "for (int j = 0; j < n; j++) { x_r[j] = expf(x_r[j] - max); sum += x_r[j]; }",
    to = "for (int j = 0; j < n; j++) sum += expf(x_r[j] - max);" },
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "exp(x_j - m) as expf(x_j) / expf(m), equal on paper",
    from = "x_r[j] = expf(x_r[j] - max);", to = "x_r[j] = expf(x_r[j]) / expf(max);" },
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "an off-by-one: the last row left out (r < rows - 1)",
    from = "for (long r = 0; r < rows; r++) {", to = "for (long r = 0; r < rows - 1; r++) {" },
  { exercise = "0.7", chapter = "chapters/00-tensors.md",
    mistake = "an off-by-one: the maximum's loop starts at j = 1",
    from = "for (int j = 0; j < n; j++) if (x_r[j] > max) max = x_r[j];",
    to = "for (int j = 1; j < n; j++) if (x_r[j] > max) max = x_r[j];" },
}
