# draw_heads_grid.gp: one grid of square cells, for tools/draw_heads.gp and
# tools/draw_groups.gp (a tensor's rows and columns at their real sizes).
#
#   call "tools/draw_heads_grid.gp" X Y ROWS COLS CELL
#
# On a canvas whose axes count pixels, y downwards: ROWS x COLS cells of CELL px,
# the top left corner at (X, Y), cell (r, c) filled with grid_fill(r, c), a
# "#rrggbb" string, and holding grid_text(r, c) unless that is "". The caller
# defines both functions and grid_font.
grid_x = real(ARG1)
grid_y = real(ARG2)
grid_cell = real(ARG5)
do for [grid_r = 0:int(ARG3) - 1] {
    do for [grid_c = 0:int(ARG4) - 1] {
        set object rect from grid_x + grid_c * grid_cell, grid_y + grid_r * grid_cell \
            to grid_x + (grid_c + 1) * grid_cell, grid_y + (grid_r + 1) * grid_cell \
            fc rgb grid_fill(grid_r, grid_c) fs solid 1.0 border lc rgb "white" lw 1 back
        if (grid_text(grid_r, grid_c) ne "") {
            set label grid_text(grid_r, grid_c) at grid_x + (grid_c + 0.5) * grid_cell, \
                grid_y + (grid_r + 0.5) * grid_cell center font grid_font front
        }
    }
}
