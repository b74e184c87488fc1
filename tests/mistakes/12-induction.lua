-- Mistakes in Exercise 12.4 that its own tests must catch (see tests/mistakes/README).
-- The chapter asks for torch.optim.Adam's step within a tolerance, not for its bits, so
-- a form that only rounds otherwise (the corrections in float, m / c1 before the
-- division) is no mistake here.
local CH = "chapters/12-induction.md"
return {
  -- Exercise 12.4: the body of adam_update (chapters/12-induction.md)
  { exercise = "12.4", chapter = CH,
    mistake = "no bias correction: w -= lr * m / (sqrt(v) + eps), the first steps a tenth of lr",
    from = "float step = (float)(o->lr / c1), root_c2 = (float)sqrt(c2);",
    to = "float step = o->lr, root_c2 = 1.0f;\n    (void)c1, (void)c2;" },
  { exercise = "12.4", chapter = CH,
    mistake = "m corrected but not v: the first steps sqrt(1 / (1 - beta2)), about 32 times too long",
    from = "root_c2 = (float)sqrt(c2);",
    to = "root_c2 = 1.0f;\n    (void)c2;" },
  { exercise = "12.4", chapter = CH,
    mistake = "eps inside the square root: sqrt(v_hat + eps)",
    from = "w[i] -= step * m[i] / (sqrtf(v[i]) / root_c2 + o->eps);",
    to = "w[i] -= step * m[i] / sqrtf(v[i] / (root_c2 * root_c2) + o->eps);" },
  { exercise = "12.4", chapter = CH,
    mistake = "beta1 and beta2 swapped in the running averages",
    from = "m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * g[i];\n" ..
           "        v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];",
    to = "m[i] = o->beta2 * m[i] + (1.0f - o->beta2) * g[i];\n" ..
         "        v[i] = o->beta1 * v[i] + (1.0f - o->beta1) * g[i] * g[i];" },
  { exercise = "12.4", chapter = CH,
    mistake = "v averages the gradient, not its square",
    from = "v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];",
    to = "v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i];" },
  { exercise = "12.4", chapter = CH,
    mistake = "v's bias correction applied without its square root: sqrt(v) / c2",
    from = "root_c2 = (float)sqrt(c2);",
    to = "root_c2 = (float)c2;" },
  { exercise = "12.4", chapter = CH,
    mistake = "the step count off by one: beta^(t - 1), so the first step divides by 1 - 1 = 0",
    from = "double c1 = 1.0 - pow(o->beta1, o->t), c2 = 1.0 - pow(o->beta2, o->t);",
    to = "double c1 = 1.0 - pow(o->beta1, o->t - 1), c2 = 1.0 - pow(o->beta2, o->t - 1);" },
  { exercise = "12.4", chapter = CH,
    mistake = "the step count off by one the other way: beta^(t + 1), as if counted from 0",
    from = "double c1 = 1.0 - pow(o->beta1, o->t), c2 = 1.0 - pow(o->beta2, o->t);",
    to = "double c1 = 1.0 - pow(o->beta1, o->t + 1), c2 = 1.0 - pow(o->beta2, o->t + 1);" },
  { exercise = "12.4", chapter = CH,
    mistake = "m updated after w: each step uses the mean of the steps before it, the first none",
    from = "m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * g[i];\n" ..
           "        v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];\n" ..
           "        w[i] -= step * m[i] / (sqrtf(v[i]) / root_c2 + o->eps);",
    to = "v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * g[i] * g[i];\n" ..
         "        w[i] -= step * m[i] / (sqrtf(v[i]) / root_c2 + o->eps);\n" ..
         "        m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * g[i];" },
  { exercise = "12.4", chapter = CH,
    mistake = "the last weight of each tensor left out of the loop",
    from = "for (long i = 0; i < n; i++)",
    to = "for (long i = 0; i < n - 1; i++)" },
}
