# draw_backward.gp: chapter 11's graph of grouped-query attention, forward and back.
# Every tensor of the forward pass is a box with its shape, and under it, in red, its
# gradient, which has the same shape; black arrows are the passes forward (down), red
# ones the same passes back (up). Shaded: what the backward pass reads again.
#
#   gnuplot -e "out='fig.svg'; heading='...'; B=1; T=8; D=16; H=4; G=4" tools/draw_backward.gp
#
# out            the SVG to write
# heading        the figure's title
# B, T, D, H, G  the case's sizes (from the shapes of its X.npy, attn.npy and
#                k_proj.weight.npy); hd = D / H, and k and v are G * hd wide
# Fixed sizes and fonts, so the SVG is byte-identical from run to run.

hd = D / H
shape3(a, b, c) = sprintf("(%d, %d, %d)", a, b, c)
shape4(a, b, c, d) = sprintf("(%d, %d, %d, %d)", a, b, c, d)

# the boxes: name, shape, centre (x, y), width, whether the backward pass reads it again
array name[12]
array shape[12]
array cx[12]
array cy[12]
array bw[12]
array kept[12]
row(r) = 84 + r * 84           # the centre of row r
lane(l) = 140 + l * 290        # the q, k and v lanes
n = 0
box(s, sh, x, y, w, k) = (n = n + 1, name[n] = s, shape[n] = sh, cx[n] = x, cy[n] = y, bw[n] = w, kept[n] = k, n)
X      = box("X", shape3(B, T, D), lane(1), row(0), 2 * 290 + 170, 1)
q      = box("q", shape3(B, T, D), lane(0), row(1), 170, 0)
k      = box("k", shape3(B, T, G * hd), lane(1), row(1), 170, 0)
v      = box("v", shape3(B, T, G * hd), lane(2), row(1), 170, 0)
qh     = box("qh", shape4(B, H, T, hd), lane(0), row(2), 170, 1)
kh     = box("kh", shape4(B, G, T, hd), lane(1), row(2), 170, 1)
vh     = box("vh", shape4(B, G, T, hd), lane(2), row(2), 170, 1)
scores = box("scores", shape4(B, H, T, T), (lane(0) + lane(1)) / 2 + 40, row(3), 190, 0)
att    = box("att", shape4(B, H, T, T), (lane(0) + lane(1)) / 2 + 40, row(4), 190, 1)
mixed  = box("mixed", shape4(B, H, T, hd), lane(2), row(5), 190, 0)
merged = box("merged", shape3(B, T, D), lane(2), row(6), 190, 1)
y      = box("out", shape3(B, T, D), lane(2), row(7), 190, 0)

# the arrows, each from one box to another
array ef[16]
array et[16]
a = 0
arrow(f, t) = (a = a + 1, ef[a] = f, et[a] = t, a)
e = arrow(X, q) + arrow(X, k) + arrow(X, v)
e = arrow(q, qh) + arrow(k, kh) + arrow(v, vh)
e = arrow(qh, scores) + arrow(kh, scores) + arrow(scores, att)
e = arrow(att, mixed) + arrow(vh, mixed) + arrow(mixed, merged) + arrow(merged, y)

width = 940
height = row(7) + 100
box_h = 44
ink = "#000000"
back = "#c51b1b"
note = "#444444"
shade = "#fff2b3"

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

set label heading at 12, 26 left font "Helvetica,15"
do for [i = 1:n] {
    set object i rectangle center cx[i], cy[i] size bw[i], box_h \
        fillcolor rgb (kept[i] ? shade : "#ffffff") fillstyle solid 1 border lc rgb "#555555" lw 1
    set label name[i] . " " . shape[i] at cx[i], cy[i] - 8 center font "Helvetica,12" textcolor rgb ink front
    set label "d" . name[i] . " " . shape[i] at cx[i], cy[i] + 11 center font "Helvetica,12" textcolor rgb back front
}

# an arrow leaves the middle of its box's bottom edge (X: straight above its target) and
# enters the middle of the top edge of the next; its gradient's arrow runs back up 5 px
# to its right
x0(e) = et[e] <= v ? cx[et[e]] : cx[ef[e]]
y0(e) = cy[ef[e]] + box_h / 2
x1(e) = cx[et[e]]
y1(e) = cy[et[e]] - box_h / 2
len(e) = sqrt((x1(e) - x0(e))**2 + (y1(e) - y0(e))**2)
nx(e) = -(y1(e) - y0(e)) / len(e)
ny(e) = (x1(e) - x0(e)) / len(e)
do for [e = 1:a] {
    set arrow from x0(e) + 5 * nx(e), y0(e) + 5 * ny(e) to x1(e) + 5 * nx(e), y1(e) + 5 * ny(e) \
        head size 7, 25 filled lc rgb ink lw 1.2 front
    set arrow from x1(e) - 5 * nx(e), y1(e) - 5 * ny(e) to x0(e) - 5 * nx(e), y0(e) - 5 * ny(e) \
        head size 7, 25 filled lc rgb back lw 1.2 front
}

# each pass, beside its arrows: forward in grey, what its backward step does in red
gap(r) = (row(r) + row(r + 1)) / 2
pass(x, r, fwd, bwd) = sprintf("set label \"%s\" at %g, %g left font \"Helvetica,12\" textcolor rgb note; set label \"%s\" at %g, %g left font \"Helvetica,12\" textcolor rgb back", \
    fwd, x, gap(r) - 5, bwd, x, gap(r) + 11)
eval pass(lane(0) + 14, 0, sprintf("1  q_proj: W (%d, %d), b (%d)", D, D, D), sprintf("dW (%d, %d), db (%d)", D, D, D))
eval pass(lane(1) + 14, 0, sprintf("1  k_proj: W (%d, %d), b (%d)", G * hd, D, G * hd), sprintf("dW (%d, %d), db (%d)", G * hd, D, G * hd))
eval pass(lane(2) + 14, 0, sprintf("1  v_proj: W (%d, %d), b (%d)", G * hd, D, G * hd), sprintf("dW (%d, %d), db (%d)", G * hd, D, G * hd))
eval pass(lane(2) + 14, 1, "2  split_heads", "back: merge_heads")
# pass 3's, left of the scores, in three lines
x3 = cx[scores] - bw[scores] / 2 - 12
set label "3  qh @ kh^T / sqrt(hd)" at x3, row(3) - 16 right font "Helvetica,12" textcolor rgb note
set label "dqh = dscores @ kh / sqrt(hd)" at x3, row(3) + 1 right font "Helvetica,12" textcolor rgb back
set label "dkh = dscores^T @ qh / sqrt(hd)" at x3, row(3) + 17 right font "Helvetica,12" textcolor rgb back
eval pass(cx[att] + 14, 3, "4  mask, 5  softmax", "dscores = att * (datt - rowsum(datt * att)), 0 where hidden")
eval pass(cx[att] - 40, 4.5, "6  att @ vh", "datt = dmixed @ vh^T, dvh = att^T @ dmixed")
eval pass(cx[merged] + 14, 5, "7  merge_heads", "back: split_heads")
eval pass(cx[y] + 14, 6, sprintf("8  o_proj: W (%d, %d), b (%d)", D, D, D), sprintf("dW (%d, %d), db (%d)", D, D, D))
set label "where the three paths meet: their gradients add" at cx[X] + bw[X] / 2 - 8, row(0) + 11 right font "Helvetica,12" textcolor rgb back front
set label sprintf("the loss L = (out * dout).sum(), so dout (%d, %d, %d) is given", B, T, D) at cx[y], row(7) + 40 center font "Helvetica,12" textcolor rgb back
set object n + 1 rectangle from 12, height - 22 to 28, height - 8 fillcolor rgb shade fillstyle solid 1 border lc rgb "#555555"
set label "kept by the forward pass, read again by the backward pass" at 36, height - 14 left font "Helvetica,12"
set label "black: passes 1 to 8 forward; red: 8 to 1 back" at width - 12, height - 14 right font "Helvetica,12"

plot NaN
