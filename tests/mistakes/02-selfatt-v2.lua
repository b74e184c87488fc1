-- Mistakes in Exercise 2.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local C = "chapters/02-selfatt-v2.md"
local SPLIT = [[
for (long r = 0; r < BT; r++) {
    const float *row = qkv.data + r * 3 * D;   // (3D): one position's q, k, v
    memcpy(q.data + r * D, row, D * sizeof(float));
    memcpy(k.data + r * D, row + D, D * sizeof(float));
    memcpy(v.data + r * D, row + 2 * D, D * sizeof(float));
}]]
return {
  -- Exercise 2.6: the split of the fused projection (chapters/02-selfatt-v2.md)
  -- correct answers, written another way
  { exercise = "2.6", chapter = C, correct = true,
    mistake = "correct: q, k and v projected again from X in double, not copied from qkv",
    from = [[
for (long r = 0; r < BT; r++) {
    const float *row = qkv.data + r * 3 * D;   // (3D): one position's q, k, v
    memcpy(q.data + r * D, row, D * sizeof(float));
    memcpy(k.data + r * D, row + D, D * sizeof(float));
    memcpy(v.data + r * D, row + 2 * D, D * sizeof(float));
}]],
    to = [[
for (long r = 0; r < BT; r++)
    for (int o = 0; o < 3 * D; o++) {          // output o of proj, for position r
        double acc = m->proj_b.data[o];
        for (int i = 0; i < D; i++) acc += (double)x[r * D + i] * m->proj_w.data[(long)o * D + i];
        float *part = o < D ? q.data : o < 2 * D ? k.data : v.data;
        part[r * D + o % D] = (float)acc;
    }]] },
  { exercise = "2.6", chapter = C, correct = true,
    mistake = "correct: one loop over the 3D columns of each row, each number sent to its third",
    from = SPLIT,
    to = [[
for (long r = 0; r < BT; r++)
    for (int c = 0; c < 3 * D; c++) {
        float *part = c < D ? q.data : c < 2 * D ? k.data : v.data;   // column c's tensor
        part[r * D + c % D] = qkv.data[r * 3 * D + c];
    }]] },
  { exercise = "2.6", chapter = C, correct = true,
    mistake = "correct: three loops, one per tensor, each walking qkv with a stride of 3D",
    from = SPLIT,
    to = [[
float *parts[3] = { q.data, k.data, v.data };
for (int p3 = 0; p3 < 3; p3++)                 // q, then k, then v
    for (long r = BT - 1; r >= 0; r--)
        for (int d = 0; d < D; d++) parts[p3][r * D + d] = qkv.data[r * 3 * D + (long)p3 * D + d];]] },
  -- mistakes
  { exercise = "2.6", chapter = "chapters/02-selfatt-v2.md",
    mistake = "rows D apart, as if qkv were (B, T, D)",
    from = "const float *row = qkv.data + r * 3 * D;", to = "const float *row = qkv.data + r * D;" },
  { exercise = "2.6", chapter = "chapters/02-selfatt-v2.md",
    mistake = "three blocks instead of three column ranges, as if qkv were (3, B, T, D)",
    from = [[
    const float *row = qkv.data + r * 3 * D;   // (3D): one position's q, k, v
    memcpy(q.data + r * D, row, D * sizeof(float));
    memcpy(k.data + r * D, row + D, D * sizeof(float));
    memcpy(v.data + r * D, row + 2 * D, D * sizeof(float));]],
    to = [[
    memcpy(q.data + r * D, qkv.data + r * D, D * sizeof(float));
    memcpy(k.data + r * D, qkv.data + (BT + r) * D, D * sizeof(float));
    memcpy(v.data + r * D, qkv.data + (2 * BT + r) * D, D * sizeof(float));]] },
  { exercise = "2.6", chapter = "chapters/02-selfatt-v2.md",
    mistake = "D bytes copied instead of D floats",
    from = [[
    memcpy(q.data + r * D, row, D * sizeof(float));
    memcpy(k.data + r * D, row + D, D * sizeof(float));
    memcpy(v.data + r * D, row + 2 * D, D * sizeof(float));]],
    to = [[
    memcpy(q.data + r * D, row, D);
    memcpy(k.data + r * D, row + D, D);
    memcpy(v.data + r * D, row + 2 * D, D);]] },
  { exercise = "2.6", chapter = "chapters/02-selfatt-v2.md", names = "keys and the values are swapped",
    mistake = "keys and values swapped: k from columns [2D, 3D), v from [D, 2D)",
    from = [[
    memcpy(k.data + r * D, row + D, D * sizeof(float));
    memcpy(v.data + r * D, row + 2 * D, D * sizeof(float));]],
    to = [[
    memcpy(k.data + r * D, row + 2 * D, D * sizeof(float));
    memcpy(v.data + r * D, row + D, D * sizeof(float));]] },
  { exercise = "2.6", chapter = "chapters/02-selfatt-v2.md", names = "against the queries",
    mistake = "the keys copied from the queries' columns",
    from = "memcpy(k.data + r * D, row + D, D * sizeof(float));",
    to = "memcpy(k.data + r * D, row, D * sizeof(float));" },
  { exercise = "2.6", chapter = "chapters/02-selfatt-v2.md", names = "where Q belongs",
    mistake = "a tensor from the wrong step: X, the input before pass 1, as the queries",
    from = "memcpy(q.data + r * D, row, D * sizeof(float));",
    to = "memcpy(q.data + r * D, x + r * D, D * sizeof(float));" },
  { exercise = "2.6", chapter = "chapters/02-selfatt-v2.md",
    mistake = "an off-by-one: the last position left out (r < BT - 1)",
    from = "for (long r = 0; r < BT; r++) {\n    const float *row",
    to = "for (long r = 0; r < BT - 1; r++) {\n    const float *row" },
}
