-- Mistakes in Exercise 13.6 that its own tests must catch, and correct answers written
-- another way that they must pass (see tests/mistakes/README).
local CH = "chapters/13-positions.md"
local LOOP = [[
for (int i = 0; i < half; i++) {
                int one = pairs == ROPE_HALVES ? i : 2 * i;
                int two = pairs == ROPE_HALVES ? i + half : 2 * i + 1;
                float x1 = row[one], x2 = row[two];
                row[one] = x1 * c[i] - x2 * s[i];
                row[two] = x2 * c[i] + x1 * s[i];
            }]]
return {
  -- Exercise 13.6: the turn of every pair of a row (chapters/13-positions.md)
  -- correct answers, written another way
  { exercise = "13.6", chapter = CH, correct = true,
    mistake = "correct: a loop for each convention, the choice made once per row",
    from = LOOP,
    to = [[
if (pairs == ROPE_HALVES)
                for (int i = 0; i < half; i++) {              // rotate_half's pairs
                    float x1 = row[i], x2 = row[i + half];
                    row[i] = x1 * c[i] - x2 * s[i];
                    row[i + half] = x2 * c[i] + x1 * s[i];
                }
            else
                for (int i = 0; i < half; i++) {              // Meta's neighbours
                    float x1 = row[2 * i], x2 = row[2 * i + 1];
                    row[2 * i] = x1 * c[i] - x2 * s[i];
                    row[2 * i + 1] = x2 * c[i] + x1 * s[i];
                }]] },
  { exercise = "13.6", chapter = CH, correct = true,
    mistake = "correct: each pair turned in double, rounded once to float",
    from = "float x1 = row[one], x2 = row[two];\n                row[one] = x1 * c[i] - x2 * s[i];\n                row[two] = x2 * c[i] + x1 * s[i];",
    to = [[
double x1 = row[one], x2 = row[two];
                row[one] = (float)(x1 * c[i] - x2 * s[i]);
                row[two] = (float)(x2 * c[i] + x1 * s[i]);]] },
  { exercise = "13.6", chapter = CH, correct = true,
    mistake = "correct: the pairs from the last to the first, each new number by fmaf (one rounding fewer)",
    from = LOOP,
    to = [[
for (int i = half - 1; i >= 0; i--) {
                int one = pairs == ROPE_HALVES ? i : 2 * i, two = pairs == ROPE_HALVES ? i + half : 2 * i + 1;
                float x1 = row[one], x2 = row[two];
                row[one] = fmaf(x1, c[i], -(x2 * s[i]));
                row[two] = fmaf(x2, c[i], x1 * s[i]);
            }]] },
  -- mistakes
  { exercise = "13.6", chapter = CH,
    mistake = "Meta's pairs always: (2i, 2i + 1) whatever pairs says",
    from = "int one = pairs == ROPE_HALVES ? i : 2 * i;\n                int two = pairs == ROPE_HALVES ? i + half : 2 * i + 1;",
    to = "int one = 2 * i, two = 2 * i + 1; (void)pairs;" },
  { exercise = "13.6", chapter = CH,
    mistake = "Hugging Face's halves always: (i, i + hd/2) whatever pairs says",
    from = "int one = pairs == ROPE_HALVES ? i : 2 * i;\n                int two = pairs == ROPE_HALVES ? i + half : 2 * i + 1;",
    to = "int one = i, two = i + half; (void)pairs;" },
  { exercise = "13.6", chapter = CH,
    mistake = "turned the other way: the sine's sign flipped, rotate_half's (x2, -x1)",
    from = "row[one] = x1 * c[i] - x2 * s[i];\n                row[two] = x2 * c[i] + x1 * s[i];",
    to = "row[one] = x1 * c[i] + x2 * s[i];\n                row[two] = x2 * c[i] - x1 * s[i];" },
  { exercise = "13.6", chapter = CH,
    mistake = "x1 overwritten before it is read: the second number made from the new first",
    from = "row[two] = x2 * c[i] + x1 * s[i];",
    to = "row[two] = x2 * c[i] + row[one] * s[i];" },
  { exercise = "13.6", chapter = CH,
    mistake = "the cosine and the sine swapped",
    from = "row[one] = x1 * c[i] - x2 * s[i];\n                row[two] = x2 * c[i] + x1 * s[i];",
    to = "row[one] = x1 * s[i] - x2 * c[i];\n                row[two] = x2 * s[i] + x1 * c[i];" },
  { exercise = "13.6", chapter = CH,
    mistake = "every pair at pair 0's frequency: c[0] and s[0] for all i",
    from = "row[one] = x1 * c[i] - x2 * s[i];\n                row[two] = x2 * c[i] + x1 * s[i];",
    to = "row[one] = x1 * c[0] - x2 * s[0];\n                row[two] = x2 * c[0] + x1 * s[0];" },
  { exercise = "13.6", chapter = CH,
    mistake = "half the pairs turned: the loop to half / 2, as if hd were the number of pairs",
    from = "for (int i = 0; i < half; i++) {",
    to = "for (int i = 0; i < half / 2; i++) {" },
}
