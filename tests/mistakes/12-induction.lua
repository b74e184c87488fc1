-- Mistakes in Exercise 12.4 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README). The chapter asks for
-- torch.optim.Adam's step within a tolerance, not for its bits: a form that only rounds
-- otherwise (the corrections in float, m / c1 before the division) is correct.
local CH = "chapters/12-induction.md"
local BODY = [[
    double c1 = 1.0 - pow(o->beta1, o->t), c2 = 1.0 - pow(o->beta2, o->t);
    float step = (float)(o->lr / c1), root_c2 = (float)sqrt(c2);
    for (long i = 0; i < n; i++) {                 // each weight on its own
        m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * g[i];
        v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];
        w[i] -= step * m[i] / (sqrtf(v[i]) / root_c2 + o->eps);
    }]]
return {
  -- correct answers, written another way
  { exercise = "12.4", chapter = CH, correct = true,
    mistake = "correct: PyTorch's m_hat = m / c1 and v_hat = v / c2, the corrections in float",
    from = BODY,
    to = [[
    float c1 = 1.0f - powf(o->beta1, (float)o->t), c2 = 1.0f - powf(o->beta2, (float)o->t);
    for (long i = 0; i < n; i++) {
        m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * g[i];
        v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];
        float m_hat = m[i] / c1, v_hat = v[i] / c2;
        w[i] -= o->lr * m_hat / (sqrtf(v_hat) + o->eps);
    }]] },
  { exercise = "12.4", chapter = CH, correct = true,
    mistake = "correct: each weight's step in double, rounded once to float",
    from = BODY,
    to = [[
    double c1 = 1.0 - pow(o->beta1, o->t), c2 = 1.0 - pow(o->beta2, o->t);
    for (long i = 0; i < n; i++) {
        double md = o->beta1 * (double)m[i] + (1.0 - o->beta1) * g[i];
        double vd = o->beta2 * (double)v[i] + (1.0 - o->beta2) * (double)g[i] * g[i];
        m[i] = (float)md, v[i] = (float)vd;
        w[i] = (float)(w[i] - o->lr / c1 * md / (sqrt(vd) / sqrt(c2) + o->eps));
    }]] },
  { exercise = "12.4", chapter = CH, correct = true,
    mistake = "correct: m as torch's lerp, m += (1 - beta1) (g - m), and the step divided last",
    from = BODY,
    to = [[
    double c1 = 1.0 - pow(o->beta1, o->t), c2 = 1.0 - pow(o->beta2, o->t);
    float step = (float)(o->lr / c1), root_c2 = (float)sqrt(c2);
    for (long i = 0; i < n; i++) {
        m[i] += (1.0f - o->beta1) * (g[i] - m[i]);
        v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];
        float denom = sqrtf(v[i]) / root_c2 + o->eps;
        w[i] -= step * (m[i] / denom);
    }]] },
  -- mistakes
  -- Exercise 12.4: the body of adam_update (chapters/12-induction.md)
  { exercise = "12.4", chapter = CH, names = "no bias correction",
    mistake = "no bias correction: w -= lr * m / (sqrt(v) + eps), the first steps a tenth of lr",
    from = "float step = (float)(o->lr / c1), root_c2 = (float)sqrt(c2);",
    to = "float step = o->lr, root_c2 = 1.0f;\n    (void)c1, (void)c2;" },
  { exercise = "12.4", chapter = CH, names = "v is not",
    mistake = "m corrected but not v: the first steps sqrt(1 / (1 - beta2)), about 32 times too long",
    from = "root_c2 = (float)sqrt(c2);",
    to = "root_c2 = 1.0f;\n    (void)c2;" },
  { exercise = "12.4", chapter = CH, names = "inside the square root",
    mistake = "eps inside the square root: sqrt(v_hat + eps)",
    from = "w[i] -= step * m[i] / (sqrtf(v[i]) / root_c2 + o->eps);",
    to = "w[i] -= step * m[i] / sqrtf(v[i] / (root_c2 * root_c2) + o->eps);" },
  { exercise = "12.4", chapter = CH, names = "swapped",
    mistake = "beta1 and beta2 swapped in the running averages",
    from = "m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * g[i];\n" ..
           "        v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];",
    to = "m[i] = o->beta2 * m[i] + (1.0f - o->beta2) * g[i];\n" ..
         "        v[i] = o->beta1 * v[i] + (1.0f - o->beta1) * g[i] * g[i];" },
  { exercise = "12.4", chapter = CH, names = "not its square",
    mistake = "v averages the gradient, not its square",
    from = "v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];",
    to = "v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i];" },
  { exercise = "12.4", chapter = CH, names = "without its square root",
    mistake = "v's bias correction applied without its square root: sqrt(v) / c2",
    from = "root_c2 = (float)sqrt(c2);",
    to = "root_c2 = (float)c2;" },
  { exercise = "12.4", chapter = CH,
    mistake = "the step count off by one: beta^(t - 1), so the first step divides by 1 - 1 = 0",
    from = "double c1 = 1.0 - pow(o->beta1, o->t), c2 = 1.0 - pow(o->beta2, o->t);",
    to = "double c1 = 1.0 - pow(o->beta1, o->t - 1), c2 = 1.0 - pow(o->beta2, o->t - 1);" },
  { exercise = "12.4", chapter = CH, names = "t + 1",
    mistake = "the step count off by one the other way: beta^(t + 1), as if counted from 0",
    from = "double c1 = 1.0 - pow(o->beta1, o->t), c2 = 1.0 - pow(o->beta2, o->t);",
    to = "double c1 = 1.0 - pow(o->beta1, o->t + 1), c2 = 1.0 - pow(o->beta2, o->t + 1);" },
  { exercise = "12.4", chapter = CH, names = "after w",
    mistake = "m updated after w: each step uses the mean of the steps before it, the first none",
    from = "m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * g[i];\n" ..
           "        v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];\n" ..
           "        w[i] -= step * m[i] / (sqrtf(v[i]) / root_c2 + o->eps);",
    to = "v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];\n" ..
         "        w[i] -= step * m[i] / (sqrtf(v[i]) / root_c2 + o->eps);\n" ..
         "        m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * g[i];" },
  { exercise = "12.4", chapter = CH, names = "last weight",
    mistake = "the last weight of each tensor left out of the loop",
    from = "for (long i = 0; i < n; i++)",
    to = "for (long i = 0; i < n - 1; i++)" },
}
