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
# mask     optional: which keys the run hid, in data's blocks, 1 = seen and
#          0 = hidden (npy2dat --mask or --causal writes it)
# scales   optional: each map's scale, separated by '|': "weights" (0..1, the
#          default) or "signed" (-1..1, zero white: a signed quantity the
#          caller has divided by its largest size)
# signed_title  optional: the signed scale's name above its colour bar
#
# Weights are on one 0..1 colour scale, signed maps on one -1..1 scale, each
# drawn once at the right. A hidden key is hatched: grey and unnumbered when its
# weight is exactly 0, its weight's colour and number when the softmax still gave
# it some (an additive mask's leak, a row whose every key is hidden), so that a
# hidden cell never looks like a small weight. A printed "0" is exactly 0; a NaN
# is a white cell marked NaN. The figure is at most 960 px wide on an opaque
# white background, so that it reads on a dark page too, and its cell labels are
# at least 9 px when it is shown 800 px wide. SVG output is byte-identical from
# run to run, so `make` can regenerate committed figures.

if (!exists("titles")) titles = ""
if (!exists("layout")) layout = ""
if (!exists("xwords")) xwords = ""
if (!exists("ywords")) ywords = ""
if (!exists("mask")) mask = ""
if (!exists("scales")) scales = ""
if (!exists("signed_title")) signed_title = "signed"
stats data nooutput
nmaps = STATS_blocks
# the first map's size, counted by hand: stats's STATS_size_y leaves out a last row of NaN
cols = 0
rows = 0
stats data index 0 matrix using (cols = ($1 >= cols ? int($1) + 1 : cols), rows = ($2 >= rows ? int($2) + 1 : rows), 0) nooutput
if (ywords eq "" && rows == cols) ywords = xwords

# pieces of a '|'-separated list
field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")
is_signed(m) = field(scales, m + 1) eq "signed"
last_weights = -1
last_signed = -1
do for [m = 0:nmaps - 1] {
    if (is_signed(m)) { last_signed = m } else { last_weights = m }
}

# Each map's hidden cells, as lists of positions y * cols + x (",i,j,"): those whose
# mask is 0, and those of them that still got a weight (neither 0 nor NaN). Read
# before any range is set, since stats obeys the ranges.
hidden_list = ","
leak_list = ","
at(x, y) = sprintf("%d,", int(y) * cols + int(x))
is_hidden(x, y) = strstrt(hidden_list, "," . at(x, y)) > 0
is_leak(x, y) = strstrt(leak_list, "," . at(x, y)) > 0
array hidden_lists[nmaps]
array leak_lists[nmaps]
array counts[3 * nmaps]         # map m's hidden cells, those holding 0, those with a weight
do for [m = 0:nmaps - 1] {
    hidden_list = ","
    leak_list = ","
    hidden = 0
    zeros = 0
    leaks = 0
    if (mask ne "") {
        stats mask index m matrix using ($3 == 0 ? (hidden_list = hidden_list . at($1, $2), hidden = hidden + 1, 0) : 0) nooutput
        stats data index m matrix using (!is_hidden($1, $2) ? 0 : $3 == 0 ? (zeros = zeros + 1, 0) : \
            $3 == $3 ? (leak_list = leak_list . at($1, $2), leaks = leaks + 1, 0) : 0) nooutput
    }
    hidden_lists[m + 1] = hidden_list
    leak_lists[m + 1] = leak_list
    counts[3 * m + 1] = hidden
    counts[3 * m + 2] = zeros
    counts[3 * m + 3] = leaks
}

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

# a viridis-like palette (gnuplot 5.4 has no built-in viridis) for weights, and a
# red-white-blue one for signed maps: white at 0, red up, blue down
weights_palette = "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725'); " \
                . "set cbrange [0:1]; set cbtics 0.25"
signed_palette = "set palette defined (-1 '#2166ac', -0.5 '#92c5de', 0 '#ffffff', 0.5 '#f4a582', 1 '#b2182b'); " \
               . "set cbrange [-1:1]; set cbtics 0.5"
hidden_grey = "#d4d4d4"
hatch_colour = "#7a7a7a"
leak_hatch_colour = "#ffffff"
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

# The colour bars share the column at the right: one bar the height of the maps,
# or, with both scales, weights above and the signed scale below, each titled.
maps_top = head + top
maps_bottom = head + grid_rows * panel_h - bottom
both_scales = (last_weights >= 0 && last_signed >= 0)
bar_gap = 48
bar_h = both_scales ? (maps_bottom - maps_top - bar_gap) / 2 : maps_bottom - maps_top
colour_bar(y_top) = sprintf("set colorbox user origin screen %.6f, screen %.6f size screen %.6f, screen %.6f", \
    sx(width - bar + 20), sy(y_top + bar_h), sx(16), real(bar_h) / height)
if (both_scales) {
    set label 1 "weight" at screen sx(width - bar + 8), screen sy(maps_top - 10) left font "Helvetica,12"
    set label 2 signed_title at screen sx(width - bar + 8), screen sy(maps_bottom - bar_h - 10) left font "Helvetica,12"
}

# The hidden cells' legend, under the colour bar: a hatched grey swatch and its words.
if (mask ne "") {
    set object 1 rectangle from screen sx(width - bar + 20), screen sy(maps_bottom + 18) \
        to screen sx(width - bar + 36), screen sy(maps_bottom + 34) fillstyle solid 1.0 noborder fc rgb hidden_grey
    set object 2 rectangle from screen sx(width - bar + 20), screen sy(maps_bottom + 18) \
        to screen sx(width - bar + 36), screen sy(maps_bottom + 34) fillstyle transparent pattern 4 noborder fc rgb hatch_colour
    set label 3 "hidden" at screen sx(width - bar + 42), screen sy(maps_bottom + 30) left font "Helvetica,11"
    set label 4 "by the mask" at screen sx(width - bar + 20), screen sy(maps_bottom + 50) left font "Helvetica,11"
}

# What a cell prints: nothing for a hidden exact 0, "0" for any other exact 0.
cell_text(x, y, v) = (v != v) ? "NaN" : (v == 0 ? (is_hidden(x, y) ? "" : "0") : sprintf("%.2f", v))
dark_cell(v) = (v == v) && (signed_map ? abs(v) >= 0.6 : v < 0.6)
# gnuplot's plot pieces, joined and run by eval below. A hidden cell that holds 0
# is grey; every hidden cell is hatched, in grey over grey and white (NaN), in white
# over a colour.
image_piece = "data index m matrix with image pixels title 'weights'"
grey_piece = ", '' index m matrix using (is_hidden($1, $2) && $3 == 0 ? $1 : NaN):2:(0.5):(0.5) " \
           . "with boxxyerror fillstyle solid 1.0 noborder fc rgb hidden_grey title 'hidden keys holding 0'"
hatch_piece = ", mask index m matrix using ($3 == 0 && !is_leak($1, $2) ? $1 : NaN):2:(0.5):(0.5) " \
            . "with boxxyerror fillstyle transparent pattern 4 noborder fc rgb hatch_colour title 'hidden keys'"
leak_piece = ", mask index m matrix using (is_leak($1, $2) ? $1 : NaN):2:(0.5):(0.5) " \
           . "with boxxyerror fillstyle transparent pattern 4 noborder fc rgb leak_hatch_colour title 'hidden keys given weight'"
label_pieces = ", data index m matrix using 1:2:(dark_cell($3) ? cell_text($1, $2, $3) : '') " \
             . "with labels font label_font textcolor rgb 'white' title 'values'" \
             . ", '' index m matrix using 1:2:(dark_cell($3) ? '' : cell_text($1, $2, $3)) " \
             . "with labels font label_font textcolor rgb 'black' title 'values'"

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
    signed_map = is_signed(m)
    eval signed_map ? signed_palette : weights_palette
    if (m == last_weights) {
        eval colour_bar(maps_top)
    } else {
        if (m == last_signed) { eval colour_bar(maps_bottom - bar_h) } else { unset colorbox }
    }
    hidden_list = hidden_lists[m + 1]
    leak_list = leak_lists[m + 1]
    eval "plot " . image_piece . (counts[3 * m + 2] > 0 ? grey_piece : "") \
        . (counts[3 * m + 1] > counts[3 * m + 3] ? hatch_piece : "") . (counts[3 * m + 3] > 0 ? leak_piece : "") \
        . (show_values ? label_pieces : "")
    if (m == 0) {
        unset object 1
        unset object 2
        unset label 1
        unset label 2
        unset label 3
        unset label 4
    }
}
unset multiplot
