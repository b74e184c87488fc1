# heatmap.gp: draw attention weights as heatmaps, queries down, keys across.
#
#   gnuplot -e "data='w.dat'; out='fig.svg'; heading='...'" tools/heatmap.gp
#
# data     gnuplot matrix text: one block per map, blocks separated by two blank
#          lines (tools/npy2dat writes it from a program's --dump)
# out      the SVG to write
# heading  the figure's title
# titles   optional: one title per map, separated by '|' (e.g. "b = 0|b = 1")
# layout   optional: "ROWS,COLS" to lay the maps out in a grid; by default at
#          most 4 maps a row, fewer when that leaves the cells too small to
#          print their values in
# xwords   optional: the keys' words, separated by '|' ("the|cat|saw"): each
#          key is labelled with its word and its position
# ywords   optional: the queries' words, likewise (default: xwords when the
#          maps are square)
#
# Every map is on the same 0..1 colour scale, drawn once at the right. The
# figure is at most 960 px wide on an opaque white background, so that it reads
# on a dark page too, and its cell labels are at least 9 px when it is shown
# 800 px wide. SVG output is byte-identical from run to run, so `make` can
# regenerate committed figures.

if (!exists("titles")) titles = ""
if (!exists("layout")) layout = ""
if (!exists("xwords")) xwords = ""
if (!exists("ywords")) ywords = ""
stats data nooutput
nmaps = STATS_blocks
stats data index 0 matrix nooutput
cols = STATS_size_x
rows = STATS_size_y
if (ywords eq "" && rows == cols) ywords = xwords

# pieces of a '|'-separated list
field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")

# Pixels around each map: room for tick labels, axis labels and a title; the
# colour bar's column at the right; the heading's row at the top.
max_width = 960
left = (ywords eq "") ? 62 : 88
bottom = (xwords eq "") ? 66 : 88
top = 40
gap = 24
bar = 96
head = 44
fit(g) = int((max_width - bar - g * (left + gap)) / (g * cols))
cell_for(g) = (fit(g) > 56) ? 56 : fit(g)

# the grid: layout's "ROWS,COLS", or the widest row of at most 4 maps whose
# cells still hold a printed value (34 px), else 4 a row without values
if (layout ne "") {
    grid_cols = int(real(layout[strstrt(layout, ",") + 1:]))
} else {
    grid_cols = (nmaps < 4) ? nmaps : 4
    while (grid_cols > 1 && cell_for(grid_cols) < 34) { grid_cols = grid_cols - 1 }
    if (cell_for(grid_cols) < 34) { grid_cols = (nmaps < 4) ? nmaps : 4 }
}
grid_rows = (layout ne "") ? int(real(layout[1:strstrt(layout, ",") - 1])) : int((nmaps + grid_cols - 1) / grid_cols)
cell = cell_for(grid_cols)
panel_w = left + cols * cell + gap
panel_h = top + rows * cell + bottom
width = grid_cols * panel_w + bar
height = head + grid_rows * panel_h
show_values = (cell >= 34)
label_font = (cell >= 48) ? "Helvetica,13" : "Helvetica,11"

set terminal svg size width, height font "Helvetica,13" noenhanced background rgb "white"
set output out

# a viridis-like palette (gnuplot 5.4 has no built-in viridis)
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
set cbrange [0:1]
set cbtics 0.25
set xrange [-0.5:cols - 0.5]
set yrange [rows - 0.5:-0.5]    # query 0 at the top
set xtics 1 out nomirror
set ytics 1 out nomirror
if (xwords ne "") {
    set xtics () ; do for [i = 1:cols] { set xtics add (sprintf("%s\n%d", field(xwords, i), i - 1) i - 1) }
}
if (ywords ne "") {
    set ytics () ; do for [i = 1:rows] { set ytics add (sprintf("%d %s", i - 1, field(ywords, i)) i - 1) }
}
set xlabel "key position" offset 0, (xwords eq "" ? 0 : -0.8)
set ylabel "query position"
set tics scale 0.5
unset key

# screen coordinates of a pixel box
sx(px) = real(px) / width
sy(py) = 1.0 - real(py) / height

set multiplot title heading font "Helvetica,15"
do for [m = 0:nmaps - 1] {
    r = int(m / grid_cols)
    c = m - r * grid_cols
    x0 = c * panel_w + left
    y0 = head + r * panel_h + top
    set lmargin at screen sx(x0)
    set rmargin at screen sx(x0 + cols * cell)
    set tmargin at screen sy(y0)
    set bmargin at screen sy(y0 + rows * cell)
    set title field(titles, m + 1) offset 0, -0.6
    if (m == nmaps - 1) {
        set colorbox user origin screen sx(width - bar + 20), screen sy(head + grid_rows * panel_h - bottom) \
            size screen sx(16), screen (real(grid_rows * panel_h - top - bottom) / height)
    } else {
        unset colorbox
    }
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
