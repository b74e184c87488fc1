-- Mistakes in Exercise 11.6 that its own tests must catch (see tests/mistakes/README).
-- The chapter asks for the gradients within a tolerance, not for their bits, so a form
-- that only rounds otherwise (p[j] * dp[j] - p[j] * sum, the sum in another order) is no
-- mistake here.
local CH = "chapters/11-backward.md"
return {
  -- Exercise 11.6: the body of softmax_backward (chapters/11-backward.md)
  { exercise = "11.6", chapter = CH,
    mistake = "no rowsum: ds = p * dp, as if each weight depended on its own score only",
    from = "for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) ds[j] = p[j] * dp[j];\n        (void)sum;" },
  { exercise = "11.6", chapter = CH,
    mistake = "the diagonal of the Jacobian only: ds = p (1 - p) dp",
    from = "for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) ds[j] = p[j] * (1 - p[j]) * dp[j];\n        (void)sum;" },
  { exercise = "11.6", chapter = CH,
    mistake = "the rowsum of dp alone, without the weights: sum dp instead of sum dp * p",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];",
    to = "for (int j = 0; j < n; j++) sum += dp[j];" },
  { exercise = "11.6", chapter = CH,
    mistake = "the rowsum of the weights alone (always 1): ds = p * (dp - 1)",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];",
    to = "for (int j = 0; j < n; j++) sum += p[j];" },
  { exercise = "11.6", chapter = CH,
    mistake = "the leading weight forgotten: ds = dp - rowsum",
    from = "for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) ds[j] = dp[j] - sum;" },
  { exercise = "11.6", chapter = CH,
    mistake = "the sign turned: ds = p * (rowsum - dp)",
    from = "for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) ds[j] = p[j] * (sum - dp[j]);" },
  { exercise = "11.6", chapter = CH,
    mistake = "one rowsum carried from row to row, never reset",
    from = "real sum = 0;                                // the row's sum of dp * p",
    to = "static real sum = 0;                         // the row's sum of dp * p" },
  { exercise = "11.6", chapter = CH,
    mistake = "the sum over the wrong range: the row's last entry left out",
    from = "for (int j = 0; j < n; j++) sum +=",
    to = "for (int j = 0; j < n - 1; j++) sum +=" },
  { exercise = "11.6", chapter = CH,
    mistake = "one loop: each ds[j] taken with the sum so far, before the row's sum is complete",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];\n" ..
           "        for (int j = 0; j < n; j++) ds[j] = p[j] * (dp[j] - sum);",
    to = "for (int j = 0; j < n; j++) {\n" ..
         "            sum += dp[j] * p[j];\n" ..
         "            ds[j] = p[j] * (dp[j] - sum);\n" ..
         "        }" },
  { exercise = "11.6", chapter = CH,
    mistake = "the sum kept in float where real belongs (other bits in double: only backward64 sees it)",
    from = "real sum = 0;",
    to = "float sum = 0;" },
  { exercise = "11.6", chapter = CH,
    mistake = "a tensor from the wrong step: dp * dp summed, the weights' gradient where the weights belong",
    from = "for (int j = 0; j < n; j++) sum += dp[j] * p[j];",
    to = "for (int j = 0; j < n; j++) sum += dp[j] * dp[j];" },
}
