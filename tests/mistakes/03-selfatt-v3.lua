-- Mistakes in Exercise 3.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README). The mask pass does no
-- arithmetic: it replaces scores, so the correct answers differ in how they find the
-- mask's element for each score.
local view = "Tensor scores = { .ndim = 3, .shape = { B, T, T }, .size = BT * T, .data = att };   // a view"
local fill = "masked_fill(&scores, mask, -1e20f);   // in place: writes into att"
return {
  -- correct answers, written another way
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md", correct = true,
    mistake = "correct: broadcasting by hand, the mask's sizes padded to three from the left, nested loops",
    from = view .. "\n    " .. fill,
    to = [[
int ms[3] = { 1, 1, 1 };                          // the mask's sizes, lined up from the right
for (int d = 0; d < mask->ndim; d++) ms[3 - mask->ndim + d] = mask->shape[d];
for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            long j = ((long)(ms[0] == 1 ? 0 : b) * ms[1] + (ms[1] == 1 ? 0 : t)) * ms[2] + (ms[2] == 1 ? 0 : s);
            if (mask->data[j] == 0.0f) att[((long)b * T + t) * T + s] = -1e20f;
        }]] },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md", correct = true,
    mistake = "correct: one flat loop, the mask's index built from strides, last axis first",
    from = view .. "\n    " .. fill,
    to = [[
for (long i = 0; i < BT * T; i++) {
    long rest = i, j = 0, stride = 1;
    int sizes[3] = { B, T, T };
    for (int d = 2, e = mask->ndim - 1; d >= 0 && e >= 0; d--, e--) {
        long at = rest % sizes[d];                 // i's coordinate on axis d
        rest /= sizes[d];
        if (mask->shape[e] != 1) j += at * stride;
        stride *= mask->shape[e];
    }
    if (mask->data[j] == 0.0f) att[i] = -1e20f;
}]] },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md", correct = true,
    mistake = "correct: the fill made on a copy of the scores, copied back",
    from = view .. "\n    " .. fill,
    to = [[
Tensor scores = tensor_new3(B, T, T);
memcpy(scores.data, att, (size_t)scores.size * sizeof(float));
masked_fill(&scores, mask, -1e20f);
memcpy(att, scores.data, (size_t)scores.size * sizeof(float));
tensor_free(&scores);]] },
  -- mistakes
  -- Exercise 3.6: hide the keys the mask hides (chapters/03-selfatt-v3.md, pass 4)
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md", names = "-inf",
    mistake = "-INFINITY instead of -1e20 (the MHA/MQA notebook's fill)",
    from = fill, to = "masked_fill(&scores, mask, -INFINITY);" },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md",
    mistake = "adding -10000 instead of replacing (the ReLU MHSA notebook's additive mask)",
    from = view .. "\n    " .. fill,
    to = [[
Tensor add = tensor_new3(B, T, T);                  // 0 where visible, -10000 where hidden
masked_fill(&add, mask, -10000.0f);
for (long i = 0; i < add.size; i++) att[i] += add.data[i];
tensor_free(&add);]] },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md", names = "set to 0",
    mistake = "filling with 0, the number that hides a weight, not a score",
    from = fill, to = "masked_fill(&scores, mask, 0.0f);" },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md",
    mistake = "no broadcasting: the mask read as if it were always (B, T, T)",
    from = view .. "\n    " .. fill,
    to = "for (long i = 0; i < BT * T; i++) if (mask->data[i] == 0.0f) att[i] = -1e20f;" },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md",
    mistake = "broadcasting by repeating the mask (element i % size), numpy.resize's rule, not PyTorch's",
    from = view .. "\n    " .. fill,
    to = "for (long i = 0; i < BT * T; i++) if (mask->data[i % mask->size] == 0.0f) att[i] = -1e20f;" },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md",
    mistake = "the mask's axes lined up from the left, not from the right",
    from = view .. "\n    " .. fill,
    to = [[
for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            int at[3] = { b, t, s };
            long j = 0;
            for (int d = 0; d < mask->ndim; d++) j = j * mask->shape[d] + (mask->shape[d] == 1 ? 0 : at[d]);
            if (mask->data[j] == 0.0f) att[((long)b * T + t) * T + s] = -1e20f;
        }]] },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md", names = "wrong way round",
    mistake = "the mask tested as mask == 1: the visible keys hidden, the hidden ones kept",
    from = fill,
    to = [[
Tensor flipped = tensor_new(mask->ndim, mask->shape);
for (long i = 0; i < flipped.size; i++) flipped.data[i] = mask->data[i] != 0.0f ? 0.0f : 1.0f;
masked_fill(&scores, &flipped, -1e20f);
tensor_free(&flipped);]] },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md",
    mistake = "a tensor from the wrong step: the fill written into att_drop, which pass 6 overwrites",
    from = view,
    to = "Tensor scores = { .ndim = 3, .shape = { B, T, T }, .size = BT * T, .data = att_drop };" },
  { exercise = "3.6", chapter = "chapters/03-selfatt-v3.md",
    mistake = "the fill written into a copy of the scores, never copied back",
    from = view .. "\n    " .. fill,
    to = [[
Tensor scores = tensor_new3(B, T, T);
memcpy(scores.data, att, (size_t)scores.size * sizeof(float));
masked_fill(&scores, mask, -1e20f);
tensor_free(&scores);]] },
}
