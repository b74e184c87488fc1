# draw_arrows.gp: chapter 13's pairs turning with the position. One row per pair i, one
# column per position t; in each cell the unit circle and the arrow (cos, sin) of the
# angle t * theta_i, read from a table of sinusoids (positions --dump's pe.npy).
#
#   gnuplot -e "data='pe.dat'; out='fig.svg'; heading='...'" tools/draw_arrows.gp
#
# data     one line per position t: pe[t, 2i] = sin, pe[t, 2i + 1] = cos for each pair i
#          (tools/npy2dat writes it from pe.npy)
# out      the SVG to write
# heading  the figure's title
# Fixed sizes and fonts, so the SVG is byte-identical from run to run.

stats data nooutput
T = STATS_records
stats data using 0 nooutput
D = STATS_columns
P = D / 2                  # pairs

left = 230                 # the pairs' names
cell = 80
head = 62                  # the heading and the positions' names
radius = 30
width = left + T * cell + 12
foot = 60                  # a line under the arrows (and room gnuplot keeps under a circle)
height = head + P * cell + foot
cx(t) = left + t * cell + cell / 2
cy(i) = head + i * cell + cell / 2

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

set label 1 heading at 12, 24 left font "Helvetica,15"
do for [t = 0:T - 1] {
    set label sprintf("t = %d", t) at cx(t), head - 8 center font "Helvetica,13"
}
o = 0
do for [i = 0:P - 1] {
    set label sprintf("pair %d: %g rad a position", i, 10000 ** (-2.0 * i / D)) at left - 12, cy(i) + 5 right font "Helvetica,13"
    do for [t = 0:T - 1] {
        o = o + 1
        set object o circle at cx(t), cy(i) size radius fillstyle empty border lc rgb "#bbbbbb" lw 1 behind
    }
}
set label "RoPE turns pair i of a query or key at position t by the angle of its arrow; the 2017 sinusoids are the arrows' coordinates" \
    at 12, height - 22 left font "Helvetica,13" textcolor rgb "#555555"
set style arrow 1 head filled size 7, 25 lw 2 lc rgb "#2166ac"
plot for [i = 0:P - 1] data using (cx($0)):(cy(i)):(radius * column(2 * i + 2)):(-radius * column(2 * i + 1)) \
         with vectors arrowstyle 1
