-- Mistakes in Exercise 11.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README). The chapter asks for the
-- gradients within a tolerance, not for their bits: a form that only rounds otherwise
-- (the sum in another order, ds as scratch, the Jacobian applied on the fly) is correct.
local CH = "chapters/11-backward.md"
local BODY = [[
        real sum = 0;                                // the row's sum of dp * p
        for (int j = 0; j < n; j++) sum += dp[j] * p[j];
        for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);]]
return {
  -- correct answers, written another way (the three the issue names)
  { exercise = "11.6", chapter = CH, correct = true,
    mistake = "correct: the row's sum taken backwards, from its last entry to its first",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];",
    to = "for (int j = n - 1; j >= 0; j--) sum += dp[j] * p[j];" },
  { exercise = "11.6", chapter = CH, correct = true,
    mistake = "correct: ds used as scratch: ds = p * dp first, its row summed, then p * sum taken off",
    from = BODY,
    to = [[
        for (int j = 0; j < n; j++) ds[j] = p[j] * dp[j];
        real sum = 0;
        for (int j = 0; j < n; j++) sum += ds[j];
        for (int j = 0; j < n; j++) ds[j] -= p[j] * sum;]] },
  { exercise = "11.6", chapter = CH, correct = true,
    mistake = "correct: the Jacobian applied on the fly: ds_j = sum_i p_j (delta_ij - p_i) dp_i",
    from = BODY,
    to = [[
        for (int j = 0; j < n; j++) {
            real acc = 0;
            for (int i = 0; i < n; i++) acc += p[j] * ((i == j ? 1 : 0) - p[i]) * dp[i];
            ds[j] = acc;
        }]] },
  -- mistakes
  -- Exercise 11.6: the body of softmax_backward (chapters/11-backward.md)
  { exercise = "11.6", chapter = CH, names = "sum is missing",
    mistake = "no rowsum: ds = p * dp, as if each weight depended on its own score only",
    from = "for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) ds[j] = p[j] * dp[j];\n        (void)sum;" },
  { exercise = "11.6", chapter = CH, names = "diagonal",
    mistake = "the diagonal of the Jacobian only: ds = p (1 - p) dp",
    from = "for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) ds[j] = p[j] * (1 - p[j]) * dp[j];\n        (void)sum;" },
  { exercise = "11.6", chapter = CH, names = "of dp alone",
    mistake = "the rowsum of dp alone, without the weights: sum dp instead of sum dp * p",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];",
    to = "for (int j = 0; j < n; j++) sum += dp[j];" },
  { exercise = "11.6", chapter = CH, names = "weights alone",
    mistake = "the rowsum of the weights alone (always 1): ds = p * (dp - 1)",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];",
    to = "for (int j = 0; j < n; j++) sum += p[j];" },
  { exercise = "11.6", chapter = CH, names = "leading p_j",
    mistake = "the leading weight forgotten: ds = dp - rowsum",
    from = "for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) ds[j] = dp[j] - sum;" },
  { exercise = "11.6", chapter = CH, names = "sign is turned",
    mistake = "the sign turned: ds = p * (rowsum - dp)",
    from = "for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) ds[j] = p[j] * (sum - dp[j]);" },
  { exercise = "11.6", chapter = CH, names = "row to row",
    mistake = "one rowsum carried from row to row, never reset",
    from = "real sum = 0;                                // the row's sum of dp * p",
    to = "static real sum = 0;                         // the row's sum of dp * p" },
  { exercise = "11.6", chapter = CH, names = "last entry",
    mistake = "the sum over the wrong range: the row's last entry left out",
    from = "for (int j = 0; j < n; j++) sum +=",
    to = "for (int j = 0; j < n - 1; j++) sum +=" },
  { exercise = "11.6", chapter = CH, names = "sum so far",
    mistake = "one loop: each ds[j] taken with the sum so far, before the row's sum is complete",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];\n" ..
           "        for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) {\n" ..
         "            sum += dp[j] * p[j];\n" ..
         "            ds[j] = p[j] * (dp[j] - sum);\n" ..
         "        }" },
  { exercise = "11.6", chapter = CH, names = "float",
    mistake = "the sum kept in float where real belongs (other bits in double: only backward64 sees it)",
    from = "real sum = 0;",
    to = "float sum = 0;" },
  { exercise = "11.6", chapter = CH, names = "dp * dp",
    mistake = "a tensor from the wrong step: dp * dp summed, the weights' gradient where the weights belong",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];",
    to = "for (int j = 0; j < n; j++) sum += dp[j] * dp[j];" },
}
