# draw_heads.gp: split_heads drawn cell by cell. At the top, q (B, T, D) of one
# sequence, each cell holding its address in memory and coloured by the head
# that owns its column; below, the same numbers after split_heads, (B, H, T, hd):
# one (T, hd) block per head, each cell holding the address of q it was copied
# from. merge_heads copies every cell back.
#
#   gnuplot -e "xdata='x.dat'; data='w.dat'; out='fig.svg'; heading='...'" tools/draw_heads.gp
#
# xdata    the input X of one sequence, (T, D): a gnuplot matrix block
#          (tools/npy2dat X.npy writes it); only its size is used
# data     the attention weights, one block per head (npy2dat attn.npy 0): their
#          number is H
# out      the SVG to write
# heading  the figure's title
# words    optional: the T positions' words, separated by '|'
# name     optional: the tensor's name (default "q")
#
# The canvas counts pixels, y downwards; the SVG is at most 960 px wide on an
# opaque white background, its text at least 12 px, byte-identical run to run.

if (!exists("words")) words = ""
if (!exists("name")) name = "q"
field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")

stats xdata matrix nooutput
D = STATS_size_x
T = STATS_size_y
stats data nooutput
H = STATS_blocks
hd = D / H

# pixels
# pixels: the blocks below are the widest row, D cells and H - 1 gaps of a cell
# and 4 px, within 960 px; a cell holds its number only when it is 26 px or more
left = 84
fit = int((960 - left - 24 - (H - 1) * 4) / (D + H - 1))
cell = (fit > 36) ? 36 : fit
gap = cell + 4
head = 44
title = 34
top_y = head + title + 24                       # q's first row
bottom_y = top_y + T * cell + 64 + title + 24   # the blocks' first row
width = left + D * cell + (H - 1) * gap + 24
height = bottom_y + T * cell + 20
block_x(h) = left + h * (hd * cell + gap)

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

# one light colour per head, cycling after eight
colours = "#cfe2f3 #fce5cd #d9ead3 #ead1dc #fff2cc #d0e0e3 #f4cccc #d9d2e9"
head_colour(h) = word(colours, h % 8 + 1)
grid_font = "Helvetica,12"
numbers = (cell >= 26)

set label 1 heading at width / 2.0, 24 center font "Helvetica,15"
set label sprintf("%s (B, T, D) = (1, %d, %d): row t is position t; a cell's number is its address in memory", \
    name, T, D) at left, head + title / 2.0 left
do for [h = 0:H - 1] {
    set label sprintf("head %d", h) at left + (h + 0.5) * hd * cell, top_y - 10 center font "Helvetica,12"
}
grid_fill(r, c) = head_colour(int(c / hd))
grid_text(r, c) = numbers ? sprintf("%d", r * D + c) : ""
call "tools/draw_heads_grid.gp" (left) (top_y) (T) (D) (cell)

set label sprintf("%sh = split_heads(%s), (B, H, T, hd) = (1, %d, %d, %d): a cell's number is the address of %s it is copied from", \
    name, name, H, T, hd, name) at left, bottom_y - 24 - title / 2.0 left
do for [h = 0:H - 1] {
    set label sprintf("head %d: %sh %d to %d", h, name, h * T * hd, (h + 1) * T * hd - 1) \
        at block_x(h) + hd * cell / 2.0, bottom_y - 10 center font "Helvetica,12"
    set arrow from left + (h + 0.5) * hd * cell, top_y + T * cell + 6 \
        to block_x(h) + hd * cell / 2.0, bottom_y - title - 28 lw 1.5 lc rgb "#555555"
    block = h
    grid_fill(r, c) = head_colour(block)
    grid_text(r, c) = numbers ? sprintf("%d", r * D + block * hd + c) : ""
    call "tools/draw_heads_grid.gp" (block_x(h)) (bottom_y) (T) (hd) (cell)
}
# the positions' words, at the left of both
do for [t = 0:T - 1] {
    set label sprintf("%d %s", t, field(words, t + 1)) at left - 8, top_y + (t + 0.5) * cell right
    set label sprintf("%d %s", t, field(words, t + 1)) at left - 8, bottom_y + (t + 0.5) * cell right
}
plot NaN notitle
