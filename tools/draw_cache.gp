# draw_cache.gp: chapter 9's KV cache at a few steps of decoding: for every key/value
# head g, the rows of k_cache[0, g] and v_cache[0, g] that the step holds (grey), the
# row it appends (orange) and the room not yet written (dashed), with the numbers in
# them; beside them, the weights that the step's R query heads of the group give the
# rows they read.
#
#   gnuplot -e "data='cache.dat'; out='fig.svg'; heading='...'; steps='1 2 3 7'; \
#               words='the|cat|...'; H=4; G=2; T=8; hd=4" tools/draw_cache.gp
#
# data     three blocks, separated by two blank lines: the weights, one line "t h s w"
#          per step t, query head h and cached key s <= t; then k_cache and v_cache of
#          sequence 0, one line "g s j x" per head g, position s and number j
# out      the SVG to write
# heading  the figure's title
# steps    the steps drawn, one panel each, separated by spaces
# words    the T tokens' words, separated by '|'
# H, G, T, hd   query heads, key/value heads, the cache's room T_max, numbers per head
# Fixed sizes and fonts, so the SVG is byte-identical from run to run.

field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")
R = H / G
panels = words(steps)
step(p) = int(word(steps, p + 1))

# pixels: a column of positions and words at the left, then one panel per step; in a
# panel, for each group, R columns of weights, then K's hd numbers, then V's
left = 60
wcol = 34          # a weight's column
kcol = 21          # one number of K (they run to -49)
vcol = 12          # one number of V
pad = 5
gap = 16           # between panels
row = 19
panel_w = R * wcol + pad + hd * kcol + pad + hd * vcol
width = left + panels * panel_w + (panels - 1) * gap + 12
head = 48          # the heading
ptitle = 40        # a panel's two title lines
ghead = 38         # a group's line and its columns' names
group_h = ghead + T * row + 10
legend = 34
height = head + ptitle + G * group_h + legend

px(p) = left + p * (panel_w + gap)                       # a panel's left edge
gy(g) = head + ptitle + g * group_h                      # a group's top
ry(g, s) = gy(g) + ghead + s * row                       # row s's top, in group g
wx(p, c) = px(p) + c * wcol                              # weight column c
kx(p, j) = px(p) + R * wcol + pad + j * kcol
vx(p, j) = kx(p, hd) + pad + j * vcol
# the panel showing step t, or -1
panel_of(t) = (sum [p = 0:panels - 1] (step(p) == t ? p + 1 : 0)) - 1

held = "#d9d9d9"
new = "#fdb863"
bar = "#92c5de"
grey = "#666666"
ink = 0x000000      # a number; faint: a zero, or a weight under 0.005
faint = 0x999999

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

set label 1 heading at 12, 26 left font "Helvetica,15"
o = 1
do for [p = 0:panels - 1] {
    t = step(p)
    set label sprintf("step %d: token %d, \"%s\"", t, t, field(words, t + 1)) at px(p), head + 14 left font "Helvetica,13"
    set label sprintf("cache (1, %d, %d, %d) after it", G, t + 1, hd) at px(p), head + 31 left font "Helvetica,12" textcolor rgb grey
    do for [g = 0:G - 1] {
        do for [c = 0:R - 1] {
            set label sprintf("h%d", g * R + c) at wx(p, c) + wcol / 2, gy(g) + ghead - 5 center font "Helvetica,12"
        }
        set label "K" at kx(p, 0) + hd * kcol / 2, gy(g) + ghead - 5 center font "Helvetica,12"
        set label "V" at vx(p, 0) + hd * vcol / 2, gy(g) + ghead - 5 center font "Helvetica,12"
        do for [s = 0:T - 1] {
            fill = s < t ? held : s == t ? new : "#ffffff"
            dash = s > t ? 2 : 1
            o = o + 1
            set object o rectangle from kx(p, 0), ry(g, s) to kx(p, hd), ry(g, s) + row \
                fillcolor rgb fill fillstyle solid 1 border lc rgb "#999999" lw 0.5 dt dash behind
            o = o + 1
            set object o rectangle from vx(p, 0), ry(g, s) to vx(p, hd), ry(g, s) + row \
                fillcolor rgb fill fillstyle solid 1 border lc rgb "#999999" lw 0.5 dt dash behind
            if (s <= t) {
                o = o + 1
                set object o rectangle from wx(p, 0), ry(g, s) to wx(p, R), ry(g, s) + row \
                    fillstyle empty border lc rgb "#bbbbbb" lw 0.5 behind
            }
        }
    }
}
# each group's line, and the positions and words of its rows
do for [g = 0:G - 1] {
    set label sprintf("key/value head %d, shared by query heads %d %s %d", g, g * R, R == 2 ? "and" : "to", g * R + R - 1) \
        at px(0), gy(g) + 12 left font "Helvetica,12" textcolor rgb grey
    do for [s = 0:T - 1] {
        set label sprintf("%d %s", s, field(words, s + 1)) at left - 10, ry(g, s) + row / 2 + 4 right font "Helvetica,12"
    }
}
lx = left
set label "held from earlier steps" at lx + 22, height - 14 left font "Helvetica,12"
set object o + 1 rectangle from lx, height - 22 to lx + 16, height - 10 fillcolor rgb held fillstyle solid 1 border lc rgb "#999999"
set label "appended by this step" at lx + 207, height - 14 left font "Helvetica,12"
set object o + 2 rectangle from lx + 185, height - 22 to lx + 201, height - 10 fillcolor rgb new fillstyle solid 1 border lc rgb "#999999"
set label "room not written yet, never read" at lx + 392, height - 14 left font "Helvetica,12"
set object o + 3 rectangle from lx + 370, height - 22 to lx + 386, height - 10 fillcolor rgb "#ffffff" fillstyle solid 1 border lc rgb "#999999" dt 2
set label "hN: query head N's weight" at lx + 652, height - 14 left font "Helvetica,12"
set object o + 4 rectangle from lx + 630, height - 22 to lx + 646, height - 10 fillcolor rgb bar fillstyle solid 1 noborder

# the numbers: the weights (a bar as long as the weight, and its value), then K and V
wp(t) = panel_of(t) >= 0 ? panel_of(t) : NaN
wleft(t, h) = wx(wp(t), int(h) % R) + 2
wtop(h, s) = ry(int(h) / R, s)
plot data index 0 using (wleft($1, $2)):(wtop($2, $3) + row / 2):(wleft($1, $2)):(wleft($1, $2) + $4 * (wcol - 4)):(wtop($2, $3) + 3):(wtop($2, $3) + row - 3) \
         with boxxyerror fillcolor rgb bar fillstyle solid 1 noborder, \
     data index 0 using (wx(wp($1), int($2) % R) + wcol / 2):(wtop($2, $3) + row / 2):(sprintf("%.2f", $4)):($4 < 0.005 ? faint : ink) \
         with labels center offset 0, -0.05 font "Helvetica,11" textcolor rgb variable, \
     for [p = 0:panels - 1] data index 1 using (kx(p, $3) + kcol / 2):($2 <= step(p) ? ry($1, $2) + row / 2 : NaN):(sprintf("%g", $4)):($4 == 0 ? faint : ink) \
         with labels center offset 0, -0.05 font "Helvetica,11" textcolor rgb variable, \
     for [p = 0:panels - 1] data index 2 using (vx(p, $3) + vcol / 2):($2 <= step(p) ? ry($1, $2) + row / 2 : NaN):(sprintf("%g", $4)):($4 == 0 ? faint : ink) \
         with labels center offset 0, -0.05 font "Helvetica,11" textcolor rgb variable
