# draw_masks.gp: chapters 3 and 4's drawing of masks lined up and broadcast to
# the scores, every element of them.
#
#   gnuplot -e "mask='m.dat'; pad='p.dat'; causal='c.dat'; out='fig.svg'; \
#               words='the|cat|...'; heading='...'" tools/draw_masks.gp
#
# mask     the mask the program applied, (B, T, S), as npy2dat prints its
#          attention_mask.npy: B blocks of T rows of S
# pad      a padding mask, as the program applied it alone: every row of block
#          b is pad[b], sequence b's row of 1 (a real word) and 0 (padding)
# causal   optional: the causal mask the program applied alone, (T, S)
# words    the sentence's words, separated by '|'
# heading  the figure's title
#
# pad[:, None, :], (B, 1, S), is drawn above the scores' B maps, one row over
# each, and the causal triangle, (T, S), at their left: each reaches the
# scores by broadcasting, the one down the T rows, the other across the B
# maps. In the maps, each element is what the program applied (1 seen, 0
# hidden), shaded by the mask that hides it.

load 'tools/draw_grid.gp'
if (!exists("causal")) causal = ""
stats mask nooutput
B = STATS_blocks
stats mask index 0 matrix nooutput
S = STATS_size_x
T = STATS_size_y
array M[B * T * S]; array P[B * T * S]; array C[T * S]
do for [b = 0:B - 1] {
    eval read_block(mask, "M", b, b * T * S, S)
    eval read_block(pad, "P", b, b * T * S, S)
}
if (causal ne "") { eval read_block(causal, "C", 0, 0, S) } else { do for [i = 1:T * S] { C[i] = 1 } }
m(b, t, s) = M[(b * T + t) * S + s + 1]
p(b, s) = P[b * T * S + s + 1]              # row 0 of block b: pad[b]
c(t, s) = C[t * S + s + 1]

pad_hidden = "#f9cb9c"
causal_hidden = "#cccccc"
both_hidden = "#d5a67e"
why(b, t, s) = (p(b, s) == 0) ? ((c(t, s) == 0) ? both_hidden : pad_hidden) : ((c(t, s) == 0) ? causal_hidden : blank)

cell = 28
left = 64
gap = 64
maps_x = (causal ne "") ? left + S * cell + 84 : left
map_x(b) = maps_x + b * (S * cell + gap)
y_pad = 104
y_maps = y_pad + cell + 64
y_table = y_maps + T * cell + 78
width = map_x(B - 1) + S * cell + 24
width = (width < 640) ? 640 : width
height = y_table + 3 * 24 + 40
@CANVAS

eval text(width / 2.0, 24, heading, "center", 15)
num(v) = sprintf("%d", int(v))

# pad[:, None, :]: one row above each map, then copied down its T rows
grid_rows = 1; grid_cols = S; grid_cell = cell; grid_y = y_pad; cell_font = 12
do for [mb = 0:B - 1] {
    grid_x = map_x(mb)
    cell_text(r, cc) = num(p(mb, cc))
    cell_fill(r, cc) = (p(mb, cc) == 0) ? pad_hidden : blank
    @GRID
    do for [cc = 0:S - 1] { eval text(grid_x + (cc + 0.5) * cell, y_pad - 10, field(words, cc + 1), "center", 11) }
    eval text(grid_x + S * cell / 2.0, y_pad - 36, sprintf("pad[%d, None, :]: (1, %d)", mb, S), "center", 13)
    eval arrow(grid_x + S * cell / 2.0, y_pad + cell + 4, grid_x + S * cell / 2.0, y_maps - 6)
    eval text(grid_x + S * cell / 2.0 - 8, y_pad + cell + 30, sprintf("one row for all %d queries", T), "right", 12)
}

# the causal triangle, (T, S), at the left of the maps
if (causal ne "") {
    grid_rows = T; grid_cols = S; grid_x = left; grid_y = y_maps
    cell_text(r, cc) = num(c(r, cc))
    cell_fill(r, cc) = (c(r, cc) == 0) ? causal_hidden : blank
    @GRID
    eval text(left + S * cell / 2.0, y_maps + T * cell + 20, sprintf("causal: (T, S) = (%d, %d)", T, S), "center", 13)
    eval arrow(left + S * cell + 8, y_maps + T * cell / 2.0, maps_x - 8, y_maps + T * cell / 2.0)
    eval text((left + S * cell + maps_x) / 2.0, y_maps + T * cell / 2.0 - 16, "AND", "center", 12)
}

# the mask the program applied, one (T, S) map per sequence
grid_rows = T; grid_cols = S; grid_y = y_maps
do for [mb = 0:B - 1] {
    grid_x = map_x(mb)
    cell_text(r, cc) = num(m(mb, r, cc))
    cell_fill(r, cc) = why(mb, r, cc)
    @GRID
    eval text(grid_x + S * cell / 2.0, y_maps + T * cell + 20, sprintf("attention_mask[%d]: (T, S) = (%d, %d)", mb, T, S), \
        "center", 13)
}
do for [r = 0:T - 1] { eval text(left - 6, y_maps + (r + 0.5) * cell, sprintf("%d %s", r, field(words, r + 1)), "right", 11) }

# the shapes, lined up at the right as broadcasting lines them up
col(k) = left + 150 + 34 * k                # k = 0, 1, 2: the first, second and last axis
shape_row(y, name, d0, d1, d2, note) = text(left, y, name, "left", 13) . "; " . \
    (d0 ne "" ? text(col(0), y, d0, "center", 13) . "; " : "") . \
    text(col(1), y, d1, "center", 13) . "; " . text(col(2), y, d2, "center", 13) . "; " . \
    text(col(2) + 30, y, note, "left", 13)
eval text(left, y_table - 28, "The shapes, lined up at the right as broadcasting lines them up:", "left", 13)
eval shape_row(y_table, "scores", num(B), num(T), num(S), "")
eval shape_row(y_table + 24, "pad[:, None, :]", num(B), "1", num(S), "fits: a 1 is copied, equal sizes meet")
if (causal ne "") {
    eval shape_row(y_table + 48, "causal", "", num(T), num(S), "fits: a missing axis counts as 1, the same triangle for each b")
} else {
    eval shape_row(y_table + 48, "pad", "", num(B), num(S), sprintf("refused: its B = %d meets the queries, T = %d", B, T))
}

# what the shades say
key_y = y_table + 3 * 24 + 8
keys = (causal ne "") ? 3 : 1
key_fill(k) = word(pad_hidden . " " . causal_hidden . " " . both_hidden, k)
key_text(k) = field("0: hidden by the padding|0: by the causal mask|0: by both", k)
do for [k = 1:keys] {
    eval box(left + (k - 1) * 210, key_y - 9, left + (k - 1) * 210 + 18, key_y + 9, key_fill(k))
    eval text(left + (k - 1) * 210 + 26, key_y, key_text(k), "left", 12)
}
plot NaN notitle
