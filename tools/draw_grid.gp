# draw_grid.gp: what the drawings of chapters 0 to 4 share (tools/draw_layout.gp,
# draw_qkv.gp, draw_masks.gp): a white canvas measured in pixels, and tensors
# drawn as grids of cells, one cell per element, at their real sizes.
#
#   load 'tools/draw_grid.gp'; ...; width = 900; height = 400; out = 'fig.svg'; @CANVAS
#
# Coordinates are pixels, x to the right and y down from the top left corner.
# Each drawing command is a string, run with eval: eval text(x, y, "words",
# "center", 13), eval arrow(x0, y0, x1, y1), eval over(x0, x1, y, "words") for a
# bracket, eval box(x0, y0, x1, y1, colour) for a swatch.
# A grid: set grid_x, grid_y (its top left corner), grid_rows, grid_cols and
# grid_cell (px), define cell_fill(r, c) (a colour, blank for none) and
# cell_text(r, c) (a string, "" for none), then @GRID. A block of commands that
# holds @GRID may hold no apostrophe, even inside a string: it hides the macro.
# A matrix file (npy2dat's text) is read into an array with
# eval read_block(file, "A", block, n0, cols): A[n0 + r * cols + c + 1].
# The smallest text is 11 px, so that a figure at most 960 px wide still shows
# it at 9 px when drawn 800 px wide. Fixed fonts and sizes: the SVG is
# byte-identical from run to run.

# @CANVAS opens the SVG, width by height pixels, once they are known
CANVAS = "set terminal svg size width, height font 'Helvetica,13' noenhanced background rgb 'white'; " . \
    "set output out; set lmargin at screen 0; set rmargin at screen 1; set tmargin at screen 1; " . \
    "set bmargin at screen 0; set xrange [0:width]; set yrange [height:0]; unset border; unset tics; unset key"

ink = "#222222"        # text and arrows
edge = "#9a9a9a"       # the lines between cells
blank = "#ffffff"      # a cell left white, as the page

text(x, y, s, align, size) = sprintf("set label \"%s\" at %g,%g %s font 'Helvetica,%d' " . \
    "tc rgb '%s' front", s, x, y, align, size, ink)
line(x0, y0, x1, y1) = sprintf("set arrow from %g,%g to %g,%g nohead lc rgb '%s' lw 1 front", \
    x0, y0, x1, y1, ink)
arrow(x0, y0, x1, y1) = sprintf("set arrow from %g,%g to %g,%g head filled size 8,25 " . \
    "lc rgb '%s' lw 1.2 front", x0, y0, x1, y1, ink)
# a bracket over [x0, x1] at height y, its ticks pointing down, its words above
over(x0, x1, y, s) = line(x0, y + 5, x0, y) . "; " . line(x0, y, x1, y) . "; " . \
    line(x1, y, x1, y + 5) . "; " . text((x0 + x1) / 2.0, y - 8, s, "center", 12)
box(x0, y0, x1, y1, colour) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' " . \
    "fs solid 1.0 border lc rgb '%s' lw 1 front", x0, y0, x1, y1, colour, edge)
fill(x0, y0, x1, y1, colour) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' " . \
    "fs solid 1.0 noborder front", x0, y0, x1, y1, colour)
rule(x0, y0, x1, y1) = sprintf("set arrow from %g,%g to %g,%g nohead lc rgb '%s' lw 1 front", \
    x0, y0, x1, y1, edge)
read_block(file, A, b, n0, cols) = sprintf("stats '%s' index %d matrix using " . \
    "(%s[%d + int($2) * %d + int($1) + 1] = $3) nooutput", file, b, A, n0, cols)

# pieces of a '|'-separated list, as in heatmap.gp
field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")

# A grid: the cells that are not blank get their colour and every cell its text;
# then the lines between the cells, each drawn once.
cell_font = 12
GRID = "do for [gr = 0:grid_rows - 1] { do for [gc = 0:grid_cols - 1] { " . \
    "if (cell_fill(gr, gc) ne blank) { eval fill(grid_x + gc * grid_cell, grid_y + gr * grid_cell, " . \
    "grid_x + (gc + 1) * grid_cell, grid_y + (gr + 1) * grid_cell, cell_fill(gr, gc)) }; " . \
    "if (cell_text(gr, gc) ne '') { eval text(grid_x + (gc + 0.5) * grid_cell, " . \
    "grid_y + (gr + 0.5) * grid_cell, cell_text(gr, gc), 'center', cell_font) } } }; " . \
    "do for [gr = 0:grid_rows] { eval rule(grid_x, grid_y + gr * grid_cell, " . \
    "grid_x + grid_cols * grid_cell, grid_y + gr * grid_cell) }; " . \
    "do for [gc = 0:grid_cols] { eval rule(grid_x + gc * grid_cell, grid_y, " . \
    "grid_x + gc * grid_cell, grid_y + grid_rows * grid_cell) }"
