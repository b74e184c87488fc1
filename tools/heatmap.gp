# heatmap.gp: draw attention weights as heatmaps, queries down, keys across.
#
#   gnuplot -e "data='w.dat'; out='fig.svg'; heading='...'" tools/heatmap.gp
#
# data     gnuplot matrix text: one block per map, blocks separated by two blank
#          lines (tools/npy2dat writes it from a program's --dump)
# out      the SVG to write
# heading  the figure's title
# titles   optional: one title per map, separated by '|' (e.g. "b = 0|b = 1")
# layout   optional: "ROWS,COLS" to lay the maps out in a grid (e.g. "2,4" for
#          8 heads), filled row by row; by default, one row of all the maps
# Every map is on the same 0..1 colour scale, with its values printed in the
# cells when it is small enough to read them. SVG output is byte-identical
# from run to run, so `make` can regenerate committed figures.

if (!exists("titles")) titles = ""
if (!exists("layout")) layout = ""
stats data nooutput
nmaps = STATS_blocks
stats data index 0 matrix nooutput
cols = STATS_size_x
rows = STATS_size_y

# pieces of the '|'-separated title list
field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")

# the grid of maps: one row by default, or layout's "ROWS,COLS"
grid_rows = (layout eq "") ? 1 : int(real(layout[1:strstrt(layout, ",") - 1]))
grid_cols = (layout eq "") ? nmaps : int(real(layout[strstrt(layout, ",") + 1:]))

cell = (cols <= 8 && rows <= 8) ? 56 : (cols <= 16 ? 30 : 14)
panel_w = cols * cell + 140
panel_h = rows * cell + 110
width = (grid_cols * panel_w < 600) ? 600 : grid_cols * panel_w
set terminal svg size width, grid_rows * panel_h + 40 font "Helvetica,13" noenhanced
set output out

# a viridis-like palette (gnuplot 5.4 has no built-in viridis)
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
set cbrange [0:1]
set cbtics 0.25
set xrange [-0.5:cols - 0.5]
set yrange [rows - 0.5:-0.5]    # query 0 at the top
set size ratio -1
set xtics 1 out nomirror
set ytics 1 out nomirror
set mxtics 1
set xlabel "key position"
set ylabel "query position"
set tics scale 0.5
unset key

show_values = (cols <= 12 && rows <= 12)
label_font = (cell >= 50) ? "Helvetica,12" : "Helvetica,9"

set multiplot layout grid_rows, grid_cols title heading font "Helvetica,15"
do for [m = 0:nmaps - 1] {
    set title field(titles, m + 1)
    if (show_values) {
        plot data index m matrix with image pixels, \
             '' index m matrix using 1:2:($3 < 0.6 ? sprintf("%.2f", $3) : "") \
                 with labels font label_font textcolor rgb "white", \
             '' index m matrix using 1:2:($3 >= 0.6 ? sprintf("%.2f", $3) : "") \
                 with labels font label_font textcolor rgb "black"
    } else {
        plot data index m matrix with image pixels
    }
}
unset multiplot
