-- Mistakes in Exercise 4.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
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
  -- correct answers, written another way
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", correct = true,
    mistake = "correct: each score divided by sqrtf(D), not multiplied by its reciprocal",
    from = attend,
    to = passes([[
for (long b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            float dot = 0.0f;
            for (int i = 0; i < D; i++) dot += q.data[(b * T + t) * D + i] * k.data[(b * T + s) * D + i];
            att[(b * T + t) * T + s] = dot / sqrtf((float)D);
        }]]) },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", correct = true,
    mistake = "correct: the output projection as loops, each sum in double and the bias added last",
    from = "<<Project the mixture back to D with output_proj>>",
    to = [[
for (long r = 0; r < BT; r++)
    for (int o = 0; o < D; o++) {
        double sum = 0.0;
        for (int i = 0; i < D; i++) sum += (double)mixed.data[r * D + i] * m->out_w.data[(long)o * D + i];
        out[r * D + o] = (float)(sum + m->out_b.data[o]);
    }]] },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", correct = true,
    mistake = "correct: the projections and the weighted sum as loops, each sum from its last term to its first",
    edits = {
      { from = "<<Project the input into queries, keys and values>>", to = [[
const Tensor *w3[3] = { &m->query_w, &m->key_w, &m->value_w }, *b3[3] = { &m->query_b, &m->key_b, &m->value_b };
Tensor *to3[3] = { &q, &k, &v };
for (int p3 = 0; p3 < 3; p3++)
    for (long r = 0; r < BT; r++)
        for (int o = 0; o < D; o++) {
            float sum = 0.0f;
            for (int i = D - 1; i >= 0; i--) sum += x[r * D + i] * w3[p3]->data[(long)o * D + i];
            to3[p3]->data[r * D + o] = sum + b3[p3]->data[o];
        }]] },
      { from = "<<Attend with a mask and dropout>>", to = passes(nil, nil, [[
for (long bt = 0; bt < BT; bt++)
    for (int d = 0; d < D; d++) {
        float sum = 0.0f;
        for (int s = T - 1; s >= 0; s--) sum += att_drop[bt * T + s] * v.data[(bt / T * T + s) * D + d];
        mixed.data[bt * D + d] = sum;
    }]]) } } },
  -- mistakes
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", names = "output projection was left out",
    mistake = "a forgotten output projection: out is att_drop @ V",
    from = "<<Project the mixture back to D with output_proj>>",
    to = "memcpy(out, mixed.data, (size_t)mixed.size * sizeof(float));" },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "a tensor from the wrong step: att, the weights before dropout, multiplies V",
    from = attend,
    to = passes(nil, nil, "matmul(mixed.data, att, v.data, B, T, D, T);") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", names = "times too small",
    mistake = "scaling by D instead of sqrt(D)",
    from = attend,
    to = passes("matmul_bt(att, q.data, k.data, B, T, T, D, 1.0f / (float)D);") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md",
    mistake = "a forgotten free: mixed is never given back", names = "tensor_free",
    from = "tensor_free(&q); tensor_free(&k); tensor_free(&v); tensor_free(&mixed);",
    to = "tensor_free(&q); tensor_free(&k); tensor_free(&v);" },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", names = "against the queries",
    mistake = "q where k belongs: every query scored against the queries",
    from = attend,
    to = passes("matmul_bt(att, q.data, q.data, B, T, T, D, 1.0f / sqrtf((float)D));") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", names = "average the keys",
    mistake = "k where v belongs: the weights average the keys",
    from = attend,
    to = passes(nil, nil, "matmul(mixed.data, att_drop, k.data, B, T, D, T);") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", names = "after the softmax",
    mistake = "masking after the softmax (the checklist's second item)",
    from = attend,
    to = passes(nil, "<<Normalise each query's visible scores>>\n<<Hide the keys the mask hides>>\n" ..
                     "<<Drop weights at random in training>>") },
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", names = "over the queries",
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
  { exercise = "4.6", chapter = "chapters/04-selfatt-v4.md", names = "query projection's weights",
    mistake = "output_proj computed with query_proj's weights (a line copied and not changed)",
    from = "<<Project the mixture back to D with output_proj>>",
    to = "linear(out, mixed.data, m->query_w.data, m->query_b.data, BT, D, D);" },
}
