# draw_groups.gp: query heads sharing key/value heads. One panel per module: its
# H query heads, each a (T, hd) block of cells, in a row; under them its G key
# heads and G value heads, each under the R = H / G query heads that read it, a
# line from every query head to its key head; one colour per group. The last
# row of every key and value block, darker, is what one token adds to the KV
# cache: 2 x G x hd numbers a layer.
#
#   gnuplot -e "data='a.dat|b.dat'; kdata='ka.dat|kb.dat'; out='fig.svg'; heading='...'" \
#       tools/draw_groups.gp
#
# data     per panel, separated by '|': the attention weights, one gnuplot matrix
#          block per query head (tools/npy2dat attn.npy 0): H blocks of T rows
# kdata    per panel: the key projection's weight, (G * hd, D), as npy2dat
#          prints it: its rows are G * hd, its columns D, and hd = D / H
# out      the SVG to write
# heading  the figure's title
# titles   optional: one title per panel, separated by '|'
#
# The canvas counts pixels, y downwards; the SVG is at most 960 px wide on an
# opaque white background, its text at least 12 px, byte-identical run to run.

if (!exists("titles")) titles = ""
field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")
count(s) = strstrt(s, "|") ? 1 + count(s[strstrt(s, "|") + 1:]) : 1

# the sizes of every panel, from its files
P = count(data)
array H[P]
array G[P]
array T[P]
array hd[P]
do for [p = 1:P] {
    stats field(data, p) nooutput
    H[p] = STATS_blocks
    stats field(data, p) index 0 matrix nooutput
    T[p] = STATS_size_y
    stats field(kdata, p) matrix nooutput
    hd[p] = STATS_size_x / H[p]
    G[p] = STATS_size_y / hd[p]
}

# pixels: cells of `cell` px (10, or fewer if the widest row of query heads
# would not fit in 960 px); query heads `gap` apart; a panel as wide as that row,
# and `pad` between panels
gap = 16
pad = 40
left = 120
cells = 0
do for [p = 1:P] { if (H[p] * hd[p] > cells) { cells = H[p] * hd[p]; gaps = H[p] - 1 } }
fit = int(((960 - left - 20 - (P - 1) * pad) / P - gaps * gap) / cells)
cell = (fit > 10) ? 10 : fit
head = 44
titles_h = 52
maxrow = 0
do for [p = 1:P] { w = H[p] * hd[p] * cell + (H[p] - 1) * gap; if (w > maxrow) { maxrow = w } }
panel = (maxrow > 190) ? maxrow : 190
maxT = 0
do for [p = 1:P] { if (T[p] > maxT) { maxT = T[p] } }
q_y = head + titles_h + 22
k_y = q_y + maxT * cell + 64
v_y = k_y + maxT * cell + 30
width = left + P * panel + (P - 1) * pad + 20
height = v_y + maxT * cell + 56

set terminal svg size width, height font "Helvetica,13" noenhanced background rgb "white"
set output out
set lmargin at screen 0
set rmargin at screen 1
set tmargin at screen 1
set bmargin at screen 0
set xrange [0:width]
set yrange [height:0]
unset border
unset tics
unset key

# one colour per group; dark for the cached row of the last token
middle = "#9fc5e8 #f9cb9c #b6d7a8 #d5a6bd #ffe599 #a2c4c9 #ea9999 #b4a7d6"
dark = "#3d85c6 #e69138 #6aa84f #a64d79 #bf9000 #45818e #cc0000 #674ea7"
grid_font = "Helvetica,12"
grid_text(r, c) = ""

set label 1 heading at width / 2.0, 24 center font "Helvetica,15"
set label "query heads" at left - 12, q_y + maxT * cell / 2.0 - 9 right
set label sprintf("(T, hd) = (%d, %d)", T[1], hd[1]) at left - 12, q_y + maxT * cell / 2.0 + 9 right font "Helvetica,12"
set label "key heads" at left - 12, k_y + maxT * cell / 2.0 right
set label "value heads" at left - 12, v_y + maxT * cell / 2.0 right
do for [p = 1:P] {
    x0 = left + (p - 1) * (panel + pad)
    R = H[p] / G[p]
    rowq = H[p] * hd[p] * cell + (H[p] - 1) * gap
    qx(h) = x0 + (panel - rowq) / 2.0 + h * (hd[p] * cell + gap)
    kx(g) = (qx(g * R) + qx((g + 1) * R - 1)) / 2.0      # under the middle of its group
    set label field(titles, p) at x0 + panel / 2.0, head + 14 center
    set label sprintf("H = %d, G = %d, R = H / G = %d", H[p], G[p], R) \
        at x0 + panel / 2.0, head + 34 center font "Helvetica,12"
    do for [h = 0:H[p] - 1] {
        group = int(h / R)
        set label sprintf("%d", h) at qx(h) + hd[p] * cell / 2.0, q_y - 9 center font "Helvetica,12"
        grid_fill(r, c) = word(middle, group % 8 + 1)
        call "tools/draw_heads_grid.gp" (qx(h)) (q_y) (T[p]) (hd[p]) (cell)
        set arrow from qx(h) + hd[p] * cell / 2.0, q_y + T[p] * cell + 3 \
            to kx(group) + hd[p] * cell / 2.0, k_y - 22 nohead lw 1.5 lc rgb word(dark, group % 8 + 1)
    }
    do for [g = 0:G[p] - 1] {
        group = g
        set label sprintf("%d", g) at kx(g) + hd[p] * cell / 2.0, k_y - 9 center font "Helvetica,12"
        grid_fill(r, c) = word(r == T[p] - 1 ? dark : middle, group % 8 + 1)
        call "tools/draw_heads_grid.gp" (kx(g)) (k_y) (T[p]) (hd[p]) (cell)
        call "tools/draw_heads_grid.gp" (kx(g)) (v_y) (T[p]) (hd[p]) (cell)
    }
    set label sprintf("one token caches 2 x %d x %d = %d", G[p], hd[p], 2 * G[p] * hd[p]) \
        at x0 + panel / 2.0, v_y + T[p] * cell + 20 center font "Helvetica,12"
    set label "numbers a layer (the dark rows)" at x0 + panel / 2.0, v_y + T[p] * cell + 38 center font "Helvetica,12"
}
plot NaN notitle
