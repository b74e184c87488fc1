# induction_maps.gp: chapter 12's attention maps of a trained model on one held-out
# sequence of T = 32 tokens, queries down, keys across, each position labelled with its
# token and its position, and the copied stretch marked.
#
#   gnuplot -e "data='attn.dat'; out='fig.svg'; heading='...'; titles='a|b'; layout='2,2'; \
#               tokens='4|6|3|...'; src=17; dst=23; len=5" tools/induction_maps.gp
#
# data     gnuplot matrix text, one (T, T) block per map, blocks separated by two blank
#          lines (tools/npy2dat of the model's attn.npy)
# out      the SVG to write
# heading  the figure's title
# titles   one title per map, separated by '|'
# layout   "ROWS,COLS"
# tokens   the T tokens the model reads, separated by '|'
# src, dst, len   the copy: tokens src .. src+len-1 are repeated at dst .. dst+len-1
# mask     optional: which keys each query saw, in data's blocks, 1 = seen and 0 =
#          hidden (npy2dat --causal); hidden keys are grey and hatched, as in heatmap.gp
#
# Each axis lists every position's token (the source's in orange, the copy's in
# purple, both bold) with the position beside it in grey, and a box frames where an
# induction head reads: row t of the copy repeats source token src + (t - dst), and the
# key after it holds the token that comes next, so the box spans the copy's rows and
# the keys src + 1 .. src + len, an induction head's weights on its diagonal. A
# previous-token head's weights sit one below the main diagonal.
# With T = 32, two maps a row fill the 960 px width at about 12 px a cell, so the labels
# along x are turned upright. Every map is on the 0..1 colour scale of heatmap.gp.
# Fixed sizes and fonts, so the SVG is byte-identical from run to run.

if (!exists("mask")) mask = ""
stats data nooutput
nmaps = STATS_blocks
stats data index 0 matrix nooutput
T = STATS_size_x

# Each map's hidden cells, as a list of positions y * T + x (",i,j,"), read before any
# range is set (stats obeys the ranges).
hidden_list = ","
at(x, y) = sprintf("%d,", int(y) * T + int(x))
is_hidden(x, y) = strstrt(hidden_list, "," . at(x, y)) > 0
array hidden_lists[nmaps]
do for [m = 0:nmaps - 1] {
    hidden_list = ","
    if (mask ne "") {
        stats mask index m matrix using ($3 == 0 ? (hidden_list = hidden_list . at($1, $2), 0) : 0) nooutput
    }
    hidden_lists[m + 1] = hidden_list
}
# the induction head's key for row t of the copy: the one after the source token it repeats
reads(t) = src + (t - dst) + 1

field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")
grid_rows = int(real(layout[1:strstrt(layout, ",") - 1]))
grid_cols = int(real(layout[strstrt(layout, ",") + 1:]))

# pixels: each map has its title above, its position and token labels at the left and
# below; the colour bar takes the last column, the heading the first row
max_width = 960
left = 64
gap = 12
bar = 66
cell = real(max_width - bar - grid_cols * (left + gap)) / (grid_cols * T)
top = 34
bottom = 66
head = 58
panel_w = left + T * cell + gap
panel_h = top + T * cell + bottom
width = max_width
height = int(head + grid_rows * panel_h + 0.5)

source_colour = "#e66101"
copy_colour = "#5e3c99"
grey = "#666666"
box_colour = "#ff4d4d"
hidden_grey = "#d4d4d4"
hatch_colour = "#7a7a7a"
role(t) = (t >= dst && t < dst + len) ? 2 : (t >= src && t < src + len) ? 1 : 0
colour(t) = role(t) == 2 ? copy_colour : role(t) == 1 ? source_colour : "#000000"
# the source's and the copy's tokens in bold: gnuplot's enhanced text, the only way to it in SVG
tok_text(t) = role(t) ? "{/:Bold " . field(tokens, t + 1) . "}" : field(tokens, t + 1)

set terminal svg size width, height font "Helvetica,13" enhanced background rgb "white"
set output out
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
set cbrange [0:1]
set cbtics 0.25
set xrange [-0.5:T - 0.5]
set yrange [T - 0.5:-0.5]    # query 0 at the top
unset xtics
unset ytics
unset key
set border lw 1 lc rgb "#444444"

sx(px) = real(px) / width
sy(py) = 1.0 - real(py) / height

set title noenhanced
set multiplot title heading noenhanced font "Helvetica,15"
# the notes under the heading: what the colours and the box mark
set label 1 sprintf("{/:Bold source, positions %d to %d}", src, src + len - 1) at screen sx(width / 2 - 122), screen sy(head - 12) \
    right font "Helvetica,12" textcolor rgb source_colour
set label 2 sprintf("{/:Bold copy, positions %d to %d}", dst, dst + len - 1) at screen sx(width / 2 - 100), screen sy(head - 12) \
    left font "Helvetica,12" textcolor rgb copy_colour
set label 3 "box: the copy's rows, the keys after the source" at screen sx(width / 2 + 96), screen sy(head - 12) \
    left font "Helvetica,12" textcolor rgb box_colour
# the hidden keys' legend, under the colour bar: a hatched grey swatch and its word
maps_bottom = head + grid_rows * panel_h - bottom
if (mask ne "") {
    set object 2 rectangle from screen sx(width - bar + 6), screen sy(maps_bottom + 18) \
        to screen sx(width - bar + 20), screen sy(maps_bottom + 32) fillstyle solid 1.0 noborder fc rgb hidden_grey
    set object 3 rectangle from screen sx(width - bar + 6), screen sy(maps_bottom + 18) \
        to screen sx(width - bar + 20), screen sy(maps_bottom + 32) fillstyle transparent pattern 4 noborder fc rgb hatch_colour
    set label 4 "hidden" at screen sx(width - bar + 24), screen sy(maps_bottom + 29) left font "Helvetica,11"
}
do for [m = 0:nmaps - 1] {
    r = int(m / grid_cols)
    c = m - r * grid_cols
    x0 = c * panel_w + left
    y0 = head + r * panel_h + top
    set lmargin at screen sx(x0)
    set rmargin at screen sx(x0 + T * cell)
    set tmargin at screen sy(y0)
    set bmargin at screen sy(y0 + T * cell)
    set title field(titles, m + 1) offset 0, -0.5
    # labels 10 and up: this map's tokens and positions (the notes are 1 to 3)
    do for [t = 0:T - 1] {
        set label 10 + 4 * t tok_text(t) at screen sx(x0 - 5), screen sy(y0 + (t + 0.5) * cell) \
            right font "Helvetica,11" textcolor rgb colour(t) front
        set label 11 + 4 * t sprintf("%d", t) at screen sx(x0 - 27), screen sy(y0 + (t + 0.5) * cell) \
            right font "Helvetica,11" textcolor rgb grey front
        set label 12 + 4 * t tok_text(t) at screen sx(x0 + (t + 0.5) * cell), screen sy(y0 + T * cell + 5) \
            rotate by 90 right font "Helvetica,11" textcolor rgb colour(t) front
        set label 13 + 4 * t sprintf("%d", t) at screen sx(x0 + (t + 0.5) * cell), screen sy(y0 + T * cell + 26) \
            rotate by 90 right font "Helvetica,11" textcolor rgb grey front
    }
    set label 9 "keys: token, position" at screen sx(x0 + T * cell / 2), screen sy(y0 + T * cell + bottom - 14) \
        center font "Helvetica,12" front
    set label 8 "queries: position, token" at screen sx(x0 - left + 10), screen sy(y0 + T * cell / 2) \
        rotate by 90 center font "Helvetica,12" front
    # the copy's rows against the keys an induction head reads for them
    set object 1 rectangle from first reads(dst) - 0.5, first dst - 0.5 to first reads(dst + len - 1) + 0.5, first dst + len - 0.5 \
        front fillstyle empty border lc rgb box_colour lw 1.5
    if (m == nmaps - 1) {
        set colorbox user origin screen sx(width - bar + 10), screen sy(maps_bottom) \
            size screen sx(14), screen (real(grid_rows * panel_h - top - bottom) / height)
    } else {
        unset colorbox
    }
    hidden_list = hidden_lists[m + 1]
    if (hidden_list eq ",") {
        plot data index m matrix with image pixels
    } else {
        plot data index m matrix with image pixels, \
             '' index m matrix using (is_hidden($1, $2) && $3 == 0 ? $1 : NaN):2:(0.5):(0.5) \
                 with boxxyerror fillstyle solid 1.0 noborder fc rgb hidden_grey, \
             mask index m matrix using ($3 == 0 ? $1 : NaN):2:(0.5):(0.5) \
                 with boxxyerror fillstyle transparent pattern 4 noborder fc rgb hatch_colour
    }
    unset label 1
    unset label 2
    unset label 3
    unset label 4
    unset object 2
    unset object 3
}
unset multiplot
