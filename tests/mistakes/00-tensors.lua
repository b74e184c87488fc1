-- Mistakes in Exercise 0.7 that its own tests must catch (see tests/mistakes/README).
-- The chapter asks for the softmax within a tolerance, not for its bits, so a form
-- that only rounds otherwise (x_r[j] *= 1.0f / sum, a sum in double) is no mistake here.
return {
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
