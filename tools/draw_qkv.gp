# draw_qkv.gp: chapters 1 and 2's drawing of a head's queries, keys and values,
# every number of them, on the examples' sentence.
#
#   gnuplot -e "x='X.dat'; w='Wq.dat|Wk.dat|Wv.dat'; attn='attn.dat'; out='fig.svg'; \
#               words='the|cat|...'; heading='...'" tools/draw_qkv.gp
#
# x        X of one sequence, (T, D), as npy2dat prints it
# w        the projection weights, as the program dumped them: three (D, D)
#          files, query_proj, key_proj and value_proj's (chapter 1), or one
#          (3D, D) file, proj.weight, whose rows are Wq, Wk and Wv (chapter 2)
# attn     optional: the weights the program computed, (T, T); with it the
#          drawing goes on to the scores and the weights (chapter 1)
# words    the sentence's words, separated by '|'
# heading  the figure's title
#
# Q, K and V are X @ W.T, computed here from the files; the examples' biases
# are 0 and are left out. With one (3D, D) file the drawing starts from
# proj(X), (T, 3D), and shows the three blocks torch.split cuts it into; with
# three it starts from X. Zeros are drawn as empty cells.

load 'tools/draw_grid.gp'
if (!exists("attn")) attn = ""
fused = (strstrt(w, "|") == 0)
stats x matrix nooutput
T = STATS_size_y
D = STATS_size_x
array X[T * D]
array W[3 * D * D]
array P[T * 3 * D]       # proj(X), (T, 3D): row t is Q[t], then K[t], then V[t]
eval read_block(x, "X", 0, 0, D)
if (fused) { eval read_block(w, "W", 0, 0, D) } else {
    do for [j = 1:3] { eval read_block(field(w, j), "W", 0, (j - 1) * D * D, D) }
}
do for [t = 0:T - 1] {
    do for [o = 0:3 * D - 1] {
        sum = 0.0
        do for [i = 0:D - 1] { sum = sum + X[t * D + i + 1] * W[o * D + i + 1] }
        P[t * 3 * D + o + 1] = sum
    }
}
qkv(t, j, d) = P[t * 3 * D + j * D + d + 1]     # j = 0, 1, 2: Q, K, V
if (attn ne "") {
    array S[T * T]; array A[T * T]
    eval read_block(attn, "A", 0, 0, T)
    do for [t = 0:T - 1] {
        do for [s = 0:T - 1] {
            sum = 0.0
            do for [d = 0:D - 1] { sum = sum + qkv(t, 0, d) * qkv(s, 1, d) }
            S[t * T + s + 1] = sum / sqrt(D)
        }
    }
}
num(v) = (v == 0) ? "" : (v == int(v)) ? sprintf("%d", int(v)) : sprintf("%.2f", v)
names = "Q|K|V"
tints = "#f4cccc #cfe2f3 #d9ead3"
proj_names = "query_proj|key_proj|value_proj"

cell = 16              # a cell of X, Q, K and V
big = 28               # a cell of the scores and the weights
left = 64              # room for the words
gap = 40
row_h = T * cell
width = left + 3 * D * cell + 2 * gap + 24
y_top = 118            # the first matrix's top
y_qkv = y_top + row_h + 90
y_att = y_qkv + row_h + 100
height = (attn ne "") ? y_att + T * big + 30 : y_qkv + row_h + 40
@CANVAS

eval text(width / 2.0, 24, heading, "center", 15)
qkv_x(j) = left + j * (D * cell + gap)

# the first row: X (chapter 1) or proj(X) (chapter 2), its words at the left
grid_rows = T; grid_cell = cell; grid_y = y_top; cell_font = 11
if (fused) {
    grid_x = left; grid_cols = 3 * D
    cell_text(r, c) = num(P[r * 3 * D + c + 1])
    cell_fill(r, c) = (P[r * 3 * D + c + 1] == 0) ? blank : word(tints, int(c / D) + 1)
    @GRID
    do for [j = 0:2] {
        eval over(left + j * D * cell + 2, left + (j + 1) * D * cell - 2, y_top - 8, \
            sprintf("%s: columns %d to %d", field(names, j + 1), j * D, (j + 1) * D - 1))
    }
    eval text(left, y_top - 44, sprintf("proj(X) = X @ proj.weight.T: (T, 3D) = (%d, %d), its Q rows 3D = %d floats apart", \
        T, 3 * D, 3 * D), "left", 13)
} else {
    grid_x = qkv_x(1); grid_cols = D
    cell_text(r, c) = num(X[r * D + c + 1])
    cell_fill(r, c) = (X[r * D + c + 1] == 0) ? blank : "#e3e3e3"
    @GRID
    eval over(grid_x + 2, grid_x + D / 2 * cell - 2, y_top - 8, "word part")
    eval over(grid_x + D / 2 * cell + 2, grid_x + D * cell - 2, y_top - 8, "position part")
    eval text(grid_x + D * cell / 2.0, y_top - 40, sprintf("X: (T, D) = (%d, %d)", T, D), "center", 13)
}
do for [r = 0:T - 1] { eval text(grid_x - 6, y_top + (r + 0.5) * cell, sprintf("%d %s", r, field(words, r + 1)), \
    "right", 11) }

# the second row: Q, K and V, each (T, D)
grid_y = y_qkv; grid_cols = D
do for [mj = 0:2] {
    grid_x = qkv_x(mj)
    cell_text(r, c) = num(qkv(r, mj, c))
    cell_fill(r, c) = (qkv(r, mj, c) == 0) ? blank : word(tints, mj + 1)
    @GRID
    if (fused) {
        eval arrow(left + (mj + 0.5) * D * cell, y_top + row_h + 6, grid_x + D * cell / 2.0, y_qkv - 30)
        eval text(grid_x + D * cell / 2.0, y_qkv - 12, sprintf("%s: (%d, %d), rows D = %d apart", field(names, mj + 1), \
            T, D, D), "center", 13)
    } else {
        eval arrow(qkv_x(1) + D * cell / 2.0, y_top + row_h + 6, grid_x + D * cell / 2.0, y_qkv - 30)
        eval text(grid_x + D * cell / 2.0, y_qkv - 12, sprintf("%s = %s(X): (%d, %d)", field(names, mj + 1), \
            field(proj_names, mj + 1), T, D), "center", 13)
    }
}
do for [r = 0:T - 1] { eval text(left - 6, y_qkv + (r + 0.5) * cell, sprintf("%d %s", r, field(words, r + 1)), \
    "right", 11) }
if (fused) {
    note_x = (qkv_x(0) + qkv_x(1) + D * cell) / 2.0
    eval text(note_x, y_top + row_h + 34, "torch.split(proj(X), D, dim=-1),", "center", 12)
    eval text(note_x, y_top + row_h + 52, "each third copied out (pass 2)", "center", 12)
}

# the third row (chapter 1): the scores Q @ K.T / sqrt(D), then their softmax
if (attn ne "") {
    grid_rows = T; grid_cols = T; grid_cell = big; grid_y = y_att
    grid_x = left
    cell_text(r, c) = num(S[r * T + c + 1])
    cell_fill(r, c) = (S[r * T + c + 1] == 0) ? blank : "#fce5cd"
    @GRID
    eval text(grid_x + T * big / 2.0, y_att - 44, sprintf("scores = Q @ K.T / sqrt(%d): (%d, %d)", D, T, T), "center", 13)
    do for [r = 0:T - 1] { eval text(left - 6, y_att + (r + 0.5) * big, sprintf("%d %s", r, field(words, r + 1)), \
        "right", 11) }
    do for [c = 0:T - 1] { eval text(left + (c + 0.5) * big, y_att - 8, field(words, c + 1), "center", 11) }
    grid_x = left + T * big + 110
    cell_text(r, c) = (A[r * T + c + 1] < 0.005) ? "" : sprintf("%.2f", A[r * T + c + 1])
    cell_fill(r, c) = (A[r * T + c + 1] < 0.005) ? blank : "#fff2cc"
    @GRID
    eval arrow(left + T * big + 14, y_att + T * big / 2.0, grid_x - 14, y_att + T * big / 2.0)
    eval text(left + T * big + 55, y_att + T * big / 2.0 - 16, "softmax", "center", 12)
    eval text(grid_x + T * big / 2.0, y_att - 44, sprintf("weights: (%d, %d), blank below 0.005", T, T), "center", 13)
    do for [c = 0:T - 1] { eval text(grid_x + (c + 0.5) * big, y_att - 8, field(words, c + 1), "center", 11) }
    note_x = grid_x + T * big + 24
    notes = sprintf("out = weights @ V, (%d, %d):|row t averages the rows of V,|weighted by row t of the|weights: row 0, a the, is near|a third of rows 0, 3 and 6", T, D)
    do for [i = 1:5] { eval text(note_x, y_att + 20 * i, field(notes, i), "left", 12) }
}
plot NaN notitle
