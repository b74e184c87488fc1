# draw_asks.gp: one sequence asks another. Per head, the queries' words in a
# column at the left, the keys' words at the right, and a line from query t to
# key s as wide and as dark as the weight query t gives key s.
#
#   gnuplot -e "data='w.dat'; out='fig.svg'; heading='...'; qwords='a|dog'; kwords='the|cat'" \
#       tools/draw_asks.gp
#
# data     the weights, (T, S) per head: gnuplot matrix blocks separated by two
#          blank lines (tools/npy2dat attn.npy 0 writes them from a --dump)
# out      the SVG to write
# heading  the figure's title; a second line under it gives T, S and H, read
#          from data
# qwords   the T queries' words, separated by '|'
# kwords   the S keys' words, separated by '|'
# titles   optional: one title per head, separated by '|'
# qname    optional: what the queries are (default "queries"); kname likewise
# mask     optional: a (1, S) row of 0 and 1 (npy2dat of a (B, 1, 1, S) mask
#          and its batch element): keys where it is 0 are drawn grey, hidden
#
# Lines under 0.02 are left out. The canvas counts pixels, y downwards; the SVG
# is at most 960 px wide on an opaque white background, its text at least 12
# px, and byte-identical from run to run.

if (!exists("titles")) titles = ""
if (!exists("qname")) qname = "queries"
if (!exists("kname")) kname = "keys"
if (!exists("mask")) mask = ""
field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")

# the sizes, from the weights themselves: H blocks of T rows and S columns
stats data nooutput
H = STATS_blocks
stats data index 0 matrix nooutput
S = STATS_size_x
T = STATS_size_y
array W[H * T * S]
do for [h = 0:H - 1] {
    stats data index h matrix using (W[h * T * S + int($2) * S + int($1) + 1] = $3) nooutput
}
array hidden[S]
do for [s = 1:S] { hidden[s] = 0 }
if (mask ne "") { stats mask matrix using (hidden[int($1) + 1] = ($3 == 0)) nooutput }

# pixels: a panel per head, side by side; rows of words `row` apart
panel = (H * 400 > 960) ? int(960 / H) : 400
row = 30
head = 74
top = 56
rows = (T > S) ? T : S
legend = 56
width = H * panel
height = head + top + rows * row + legend
wordx = 120                       # the queries' words end here, the keys' start at panel - wordx
qy(t) = head + top + (rows - T) * row / 2.0 + (t + 0.5) * row
ky(s) = head + top + (rows - S) * row / 2.0 + (s + 0.5) * row

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

# a weight's line: darker and wider as the weight grows, from a light blue at 0
# to a dark one at 1
dark(w) = 0.35 + 0.65 * w
shade(w) = sprintf("#%02x%02x%02x", int(222 - 189 * dark(w)), int(235 - 133 * dark(w)), int(247 - 75 * dark(w)))

set label 1 heading at width / 2.0, 24 center font "Helvetica,15"
set label 2 sprintf("%s: T = %d positions; %s: S = %d positions; H = %d heads, one (T, S) map each", \
    qname, T, kname, S, H) at width / 2.0, 50 center font "Helvetica,13"
do for [h = 0:H - 1] {
    x0 = h * panel
    set label field(titles, h + 1) at x0 + panel / 2.0, head + 14 center font "Helvetica,13"
    set label qname at x0 + wordx, head + top - 14 right font "Helvetica,12" textcolor rgb "#555555"
    set label kname at x0 + panel - wordx, head + top - 14 left font "Helvetica,12" textcolor rgb "#555555"
    do for [t = 0:T - 1] {
        set label sprintf("%s %d", field(qwords, t + 1), t) at x0 + wordx - 6, qy(t) right
    }
    do for [s = 0:S - 1] {
        set label sprintf("%d %s%s", s, field(kwords, s + 1), hidden[s + 1] ? " (hidden)" : "") \
            at x0 + panel - wordx + 6, ky(s) left textcolor rgb (hidden[s + 1] ? "#999999" : "black")
    }
    # the light lines first, so that the heavy ones are drawn over them
    do for [pass = 0:1] {
        do for [t = 0:T - 1] {
            do for [s = 0:S - 1] {
                w = W[h * T * S + t * S + s + 1]
                if (w >= 0.02 && (w >= 0.5) == pass) {
                    set arrow from x0 + wordx, qy(t) to x0 + panel - wordx, ky(s) nohead \
                        lw 0.5 + 6 * w lc rgb shade(w) front
                }
            }
        }
    }
}

# the legend: what a weight of 1, 0.5 and 0.125 looks like
ly = height - legend / 2.0
set label "line width and shade: the weight (none under 0.02)" at 20, ly left font "Helvetica,12"
do for [i = 0:2] {
    w = (i == 0) ? 1.0 : (i == 1) ? 0.5 : 0.125
    lx = 360 + i * 110
    set arrow from lx, ly to lx + 50, ly nohead lw 0.5 + 6 * w lc rgb shade(w)
    set label sprintf("%g", w) at lx + 58, ly left font "Helvetica,12"
}
plot NaN notitle
