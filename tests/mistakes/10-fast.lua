-- Mistakes in Exercise 10.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local CH = "chapters/10-fast.md"
local ALPHA = "for (int i = 0; i < BR; i++)             // the old sum, rescaled to the new max\n    alpha[i] = flash_exp(m[i] - mx[i], poly), sum[i] = l[i] * alpha[i], m[i] = mx[i];"
local BODY = [[
float mx[BR], sum[BR];                   // local: the compiler keeps them in registers
for (int i = 0; i < BR; i++) mx[i] = m[i];
for (int key = 0; key < BC; key++)
    for (int i = 0; i < BR; i++) mx[i] = st[key * BR + i] > mx[i] ? st[key * BR + i] : mx[i];
for (int i = 0; i < BR; i++)             // the old sum, rescaled to the new max
    alpha[i] = flash_exp(m[i] - mx[i], poly), sum[i] = l[i] * alpha[i], m[i] = mx[i];
for (int key = 0; key < BC; key++)
    for (int i = 0; i < BR; i++)         // plus this block's weights
        sum[i] += st[key * BR + i] = flash_exp(st[key * BR + i] - mx[i], poly);
for (int i = 0; i < BR; i++) l[i] = sum[i];]]
local WEIGH = [[
for (int key = 0; key < BC; key++)
    for (int i = 0; i < BR; i++)         // plus this block's weights
        sum[i] += st[key * BR + i] = flash_exp(st[key * BR + i] - mx[i], poly);]]
return {
  -- Exercise 10.6: the online softmax, step 4 of flash_block (chapters/10-fast.md)
  -- correct answers, written another way
  { exercise = "10.6", chapter = CH, correct = true,
    mistake = "correct: one query at a time, its maximum, rescale and sum in a loop of its own",
    from = BODY,
    to = [[
for (int i = 0; i < BR; i++) {           // query i of the block, on its own
    float top = m[i], total;
    for (int key = 0; key < BC; key++) top = st[key * BR + i] > top ? st[key * BR + i] : top;
    alpha[i] = flash_exp(m[i] - top, poly);
    total = l[i] * alpha[i];
    for (int key = 0; key < BC; key++) total += st[key * BR + i] = flash_exp(st[key * BR + i] - top, poly);
    m[i] = top, l[i] = total;
}]] },
  { exercise = "10.6", chapter = CH, correct = true,
    mistake = "correct: the block's weights summed on their own, then added to the rescaled old sum",
    from = ALPHA .. "\n" .. WEIGH .. "\nfor (int i = 0; i < BR; i++) l[i] = sum[i];",
    to = [[
for (int i = 0; i < BR; i++) alpha[i] = flash_exp(m[i] - mx[i], poly), sum[i] = 0.0f, m[i] = mx[i];
for (int key = 0; key < BC; key++)
    for (int i = 0; i < BR; i++) sum[i] += st[key * BR + i] = flash_exp(st[key * BR + i] - mx[i], poly);
for (int i = 0; i < BR; i++) l[i] = l[i] * alpha[i] + sum[i];     // the old sum rescaled, plus the block's]] },
  { exercise = "10.6", chapter = CH, correct = true,
    mistake = "correct: the maximum by fmaxf, the rescaled sum by fmaf, the block's weights summed from its last key",
    from = ALPHA .. "\n" .. WEIGH .. "\nfor (int i = 0; i < BR; i++) l[i] = sum[i];",
    to = [[
for (int i = 0; i < BR; i++) alpha[i] = flash_exp(m[i] - mx[i], poly), sum[i] = 0.0f, m[i] = mx[i];
for (int key = BC - 1; key >= 0; key--)
    for (int i = 0; i < BR; i++) sum[i] += st[key * BR + i] = flash_exp(st[key * BR + i] - mx[i], poly);
for (int i = 0; i < BR; i++) l[i] = fmaf(l[i], alpha[i], sum[i]);]] },
  { exercise = "10.6", chapter = CH,
    mistake = "l not rescaled: the old sum kept against the old maximum (Exercise 10.3's bug)",
    from = "sum[i] = l[i] * alpha[i]", to = "sum[i] = l[i]" },
  { exercise = "10.6", chapter = CH,
    mistake = "alpha upside down: exp(new max - old max)",
    from = "alpha[i] = flash_exp(m[i] - mx[i], poly)", to = "alpha[i] = flash_exp(mx[i] - m[i], poly)" },
  { exercise = "10.6", chapter = CH,
    mistake = "the maximum started from 0, not from the old one",
    from = "for (int i = 0; i < BR; i++) mx[i] = m[i];", to = "for (int i = 0; i < BR; i++) mx[i] = 0.0f;" },
  { exercise = "10.6", chapter = CH,
    mistake = "the maximum of the block alone, not of the old one and the block",
    from = "for (int i = 0; i < BR; i++) mx[i] = m[i];", to = "for (int i = 0; i < BR; i++) mx[i] = -INFINITY;" },
  { exercise = "10.6", chapter = CH,
    mistake = "a tensor from the wrong step: the weights taken against the running max before it is updated",
    from = ALPHA .. "\n" .. WEIGH,
    to = [[
for (int key = 0; key < BC; key++)
    for (int i = 0; i < BR; i++) st[key * BR + i] = flash_exp(st[key * BR + i] - m[i], poly);
]] .. ALPHA .. [[

for (int key = 0; key < BC; key++)
    for (int i = 0; i < BR; i++) sum[i] += st[key * BR + i];]] },
  { exercise = "10.6", chapter = CH,
    mistake = "a tensor from the wrong step: the old sum forgotten, l the block's sum alone",
    from = "sum[i] = l[i] * alpha[i]", to = "sum[i] = 0.0f" },
  { exercise = "10.6", chapter = CH,
    mistake = "the new maximum not kept: m[i] = mx[i] left out",
    from = "sum[i] = l[i] * alpha[i], m[i] = mx[i];", to = "sum[i] = l[i] * alpha[i];" },
  { exercise = "10.6", chapter = CH,
    mistake = "the new sum not kept: l[i] = sum[i] left out",
    from = "for (int i = 0; i < BR; i++) l[i] = sum[i];", to = "(void)sum;" },
  { exercise = "10.6", chapter = CH,
    mistake = "an off-by-one loop bound: the last key of each block left out of the maximum",
    from = [[
for (int key = 0; key < BC; key++)
    for (int i = 0; i < BR; i++) mx[i] = st[key * BR + i] > mx[i] ? st[key * BR + i] : mx[i];]],
    to = [[
for (int key = 0; key < BC - 1; key++)
    for (int i = 0; i < BR; i++) mx[i] = st[key * BR + i] > mx[i] ? st[key * BR + i] : mx[i];]] },
  { exercise = "10.6", chapter = CH,
    mistake = "a transposed index: st read queries down, keys across for the maximum",
    from = "mx[i] = st[key * BR + i] > mx[i] ? st[key * BR + i] : mx[i];",
    to = "mx[i] = st[i * BC + key] > mx[i] ? st[i * BC + key] : mx[i];" },
  { exercise = "10.6", chapter = CH,
    mistake = "the exponential in the wrong units: expf whatever poly says",
    from = WEIGH,
    to = [[
for (int key = 0; key < BC; key++)
    for (int i = 0; i < BR; i++) sum[i] += st[key * BR + i] = expf(st[key * BR + i] - mx[i]);]] },
}
