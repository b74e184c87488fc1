-- Mistakes in Exercise 4.6 that its own tests must catch (see tests/mistakes/README).
-- The exercise's region holds the whole forward pass, written with chapter 1's and
-- chapter 3's chunks; a mistake inside one of those passes is written out in place of
-- the chunk's name, the other passes kept by name.
local attend = "<<Attend with a mask and dropout>>"
local function passes(score, middle, mix)
  return (score or "<<Score every query against every key, scaled>>") .. "\n" ..
         (middle or "<<Hide the keys the mask hides>>\n<<Normalise each query's visible scores>>\n" ..
                    "<<Drop weights at random in training>>") .. "\n" ..
         (mix or "<<Mix the values with the weights that survived>>")
end
return {
  -- Exercise 4.6: SelfAttV4's forward pass (chapters/04-selfatt-v4.md)
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "a forgotten output projection: out is att_drop @ V",
    from = "<<Project the mixture back to D with output_proj>>",
    to = "memcpy(out, mixed.data, (size_t)mixed.size * sizeof(float));" },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "a tensor from the wrong step: att, the weights before dropout, multiplies V",
    from = attend,
    to = passes(nil, nil, "matmul(mixed.data, att, v.data, B, T, D, T);") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "scaling by D instead of sqrt(D)",
    from = attend,
    to = passes("matmul_bt(att, q.data, k.data, B, T, T, D, 1.0f / (float)D);") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "a forgotten free: mixed is never given back",
    from = "tensor_free(&q); tensor_free(&k); tensor_free(&v); tensor_free(&mixed);",
    to = "tensor_free(&q); tensor_free(&k); tensor_free(&v);" },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "each score divided by sqrt(D), not multiplied by its reciprocal (other bits)",
    from = attend,
    to = passes([[
for (long b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            float dot = 0.0f;
            for (int i = 0; i < D; i++) dot += q.data[(b * T + t) * D + i] * k.data[(b * T + s) * D + i];
            att[(b * T + t) * T + s] = dot / sqrtf((float)D);
        }]]) },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "q where k belongs: every query scored against the queries",
    from = attend,
    to = passes("matmul_bt(att, q.data, q.data, B, T, T, D, 1.0f / sqrtf((float)D));") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "k where v belongs: the weights average the keys",
    from = attend,
    to = passes(nil, nil, "matmul(mixed.data, att_drop, k.data, B, T, D, T);") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "masking after the softmax (the checklist's second item)",
    from = attend,
    to = passes(nil, "<<Normalise each query's visible scores>>\n<<Hide the keys the mask hides>>\n" ..
                     "<<Drop weights at random in training>>") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "the softmax over the queries, softmax(dim=-2) (the checklist's third item)",
    from = attend,
    to = passes(nil, [[
<<Hide the keys the mask hides>>
for (long b = 0; b < B; b++)
    for (int s = 0; s < T; s++) {
        float *col = att + b * T * T + s, top = -INFINITY, sum = 0.0f;     // column s, stride T
        for (int t = 0; t < T; t++) top = fmaxf(top, col[t * T]);
        for (int t = 0; t < T; t++) sum += col[t * T] = expf(col[t * T] - top);
        for (int t = 0; t < T; t++) col[t * T] /= sum;
    }
<<Drop weights at random in training>>]]) },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "dropout on the output instead of the weights (the checklist's fourth item)",
    from = attend .. "\n    <<Project the mixture back to D with output_proj>>",
    to = passes(nil, "<<Hide the keys the mask hides>>\n<<Normalise each query's visible scores>>\n" ..
                     "memcpy(att_drop, att, (size_t)(BT * T) * sizeof(float));") ..
         "\n<<Project the mixture back to D with output_proj>>\ndropout(out, BT * D, p, rng);" },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "dropout in place on att: the weights dumped and printed are the dropped ones",
    from = attend,
    to = passes(nil, [[
<<Hide the keys the mask hides>>
<<Normalise each query's visible scores>>
dropout(att, BT * T, p, rng);
memcpy(att_drop, att, (size_t)(BT * T) * sizeof(float));]]) },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "output_proj computed with query_proj's weights (a line copied and not changed)",
    from = "<<Project the mixture back to D with output_proj>>",
    to = "linear(out, mixed.data, m->query_w.data, m->query_b.data, BT, D, D);" },
}
