# draw_layout.gp: chapter 0's drawing of where a (B, T, D) tensor's elements lie.
#
#   gnuplot -e "data='x.dat'; out='fig.svg'" tools/draw_layout.gp
#
# data  the tensor as npy2dat prints it: B blocks of T rows of D numbers. Only
#       its shape is drawn, never its numbers: each cell holds its element's
#       offset in memory, (b * T + t) * D + d.
# out   the SVG to write
#
# Three pictures of the same floats: the B matrices of shape (T, D) side by side,
# the (B * T, D) matrix that a linear layer sees, and the one row of memory that
# holds them, each sequence in its own colour.

load 'tools/draw_grid.gp'
stats data nooutput
B = STATS_blocks
stats data index 0 matrix nooutput
D = STATS_size_x
T = STATS_size_y
offset(b, t, d) = (b * T + t) * D + d

cell = 40              # a cell of the (T, D) matrices and of the (B * T, D) one
mem = 35               # a cell of the row of memory
left = 56
gap = 44
tints = "#cfe2f3 #fce5cd #d9ead3 #ead1dc"   # sequence b's colour
tint(b) = word(tints, b % 4 + 1)

top = 96               # the matrices' first row
view_x = left + B * (D * cell + gap) + 40
width = view_x + D * cell + 70
mem_y = top + B * T * cell + 80
height = mem_y + mem + 70
width = (width < left + B * T * D * mem + 40) ? left + B * T * D * mem + 40 : width
@CANVAS

eval text(width / 2.0, 26, sprintf("X of shape (B, T, D) = (%d, %d, %d): element [b, t, d] is float (b * T + t) * D + d", \
    B, T, D), "center", 15)

# the B matrices of shape (T, D), side by side
grid_rows = T; grid_cols = D; grid_cell = cell; grid_y = top; cell_font = 13
cell_text(r, c) = sprintf("%d", offset(mb, r, c))
cell_fill(r, c) = tint(mb)
do for [mb = 0:B - 1] {
    grid_x = left + mb * (D * cell + gap)
    eval text(grid_x + D * cell / 2.0, top - 36, sprintf("X[%d]: (T, D) = (%d, %d)", mb, T, D), "center", 13)
    do for [c = 0:D - 1] { eval text(grid_x + (c + 0.5) * cell, top - 12, sprintf("d = %d", c), "center", 11) }
    do for [r = 0:T - 1] { eval text(grid_x - 6, top + (r + 0.5) * cell, sprintf("t = %d", r), "right", 11) }
    @GRID
}

# the same floats as one (B * T, D) matrix: row n = b * T + t
eval text(view_x + D * cell / 2.0, top - 36, sprintf("X.view(B * T, D): (%d, %d)", B * T, D), "center", 13)
eval arrow(view_x - 44, top + T * cell / 2.0, view_x - 6, top + T * cell / 2.0)
grid_rows = T; grid_x = view_x
do for [mb = 0:B - 1] {
    grid_y = top + mb * T * cell
    do for [r = 0:T - 1] { eval text(view_x + D * cell + 6, grid_y + (r + 0.5) * cell, \
        sprintf("n = %d", mb * T + r), "left", 11) }
    @GRID
}
eval text(left, top + T * cell + 34, sprintf("one step along d moves 1 float, along t D = %d floats, along b T * D = %d:", \
    D, T * D), "left", 13)
eval text(left, top + T * cell + 56, sprintf("the three pictures are the same %d floats: view copies nothing", B * T * D), "left", 13)

# the row of memory
eval text(left, mem_y - 52, sprintf("in memory: %d floats in a row, d fastest, then t, then b", B * T * D), "left", 13)
grid_rows = 1; grid_cols = D; grid_cell = mem; grid_y = mem_y; cell_font = 12
do for [mb = 0:B - 1] {
    do for [mt = 0:T - 1] {
        grid_x = left + offset(mb, mt, 0) * mem
        cell_text(r, c) = sprintf("%d", offset(mb, mt, c))
        @GRID
        eval text(grid_x + D * mem / 2.0, mem_y + mem + 16, sprintf("[%d, %d, :]", mb, mt), "center", 11)
    }
    eval over(left + offset(mb, 0, 0) * mem + 3, left + offset(mb + 1, 0, 0) * mem - 3, mem_y - 8, sprintf("X[%d]", mb))
}
plot NaN notitle
