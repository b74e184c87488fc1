# rope_training.gp: chapter 13's training figure, chapter 12's model with learned positions
# and with RoPE, two panels stacked over the same steps: the held-out loss above; the
# accuracy and layer 0's previous-token score below.
#
#   gnuplot -e "data='history.dat'; out='fig.svg'; heading='...'; drop0=350; drop1=350" \
#           tools/rope_training.gp
#
# data     two blocks (tools/npy2dat of history.npy), separated by two blank lines: the
#          learned positions' rows, then RoPE's; each row is step, training loss,
#          held-out loss, accuracy, previous-token score, induction score
# out      the SVG to write
# heading  the figure's title
# drop0, drop1   the drop of each model: its first step whose held-out loss is below 2.0,
#          drawn as a vertical line of its colour (0: none)
# Fixed size and fonts, so the SVG is byte-identical from run to run.

set terminal svg size 820, 680 font "Helvetica,13" noenhanced background rgb "white"
set output out
set multiplot title heading font "Helvetica,15"

black = "#222222"
orange = "#d95f02"
set grid lc rgb "#dddddd"
set tics nomirror out
set xrange [0:2000]
set xtics 250
set key box opaque font "Helvetica,11" samplen 3
set lmargin at screen 0.11
set rmargin at screen 0.96
if (drop0 > 0) { set arrow 1 from first drop0, graph 0 to first drop0, graph 1 nohead dt 2 lw 1.5 lc rgb black back }
if (drop1 > 0) { set arrow 2 from first drop1, graph 0 to first drop1, graph 1 nohead dt 2 lw 1.5 lc rgb orange back }

# above: the loss, the threshold that marks the drop, and ln 32, a uniform guess
set tmargin at screen 0.9
set bmargin at screen 0.57
set format x ""
set ylabel "held-out loss"
set yrange [0:3.8]
set ytics 0.5
set key at graph 0.98, graph 0.72 right top
plot log(32) with lines dt 3 lw 1.5 lc rgb "#888888" title "ln 32: a uniform guess", \
     2.0 with lines dt 4 lw 1 lc rgb "#888888" title "2.0: the drop's threshold", \
     data index 0 using 1:3 with linespoints lw 2 pt 7 ps 0.5 lc rgb black title "learned pos_emb", \
     data index 1 using 1:3 with linespoints lw 2 pt 5 ps 0.5 lc rgb orange title "RoPE"

# below: what each model gets right, and its first layer's previous-token head
set tmargin at screen 0.52
set bmargin at screen 0.12
set format x "%g"
set xlabel "training step"
set ylabel "held-out score, 0 to 1"
set yrange [0:1.02]
set ytics 0.25
set key at graph 0.98, graph 0.45 right top
plot data index 0 using 1:4 with linespoints lw 2 pt 7 ps 0.5 lc rgb black title "accuracy, learned", \
     data index 1 using 1:4 with linespoints lw 2 pt 5 ps 0.5 lc rgb orange title "accuracy, RoPE", \
     data index 0 using 1:5 with lines dt 2 lw 2 lc rgb black title "previous-token score, learned", \
     data index 1 using 1:5 with lines dt 2 lw 2 lc rgb orange title "previous-token score, RoPE"
unset multiplot
