# induction_training.gp: chapter 12's training figure, two panels stacked over the
# same steps: the held-out loss above; the accuracy and the two heads' scores below.
#
#   gnuplot -e "data='history.dat'; out='fig.svg'; heading='...'; drop0=250; drop1=400" \
#           tools/induction_training.gp
#
# data     two blocks (tools/npy2dat of history.npy), separated by two blank lines:
#          the two-layer model's rows, then the one-layer model's; each row is step,
#          training loss, held-out loss, accuracy, previous-token score, induction score
# out      the SVG to write
# heading  the figure's title
# drop0, drop1   the steps between which the heads form, shaded in both panels
#          (drop1 <= drop0: no shading)
# Fixed size and fonts, so the SVG is byte-identical from run to run.

set terminal svg size 820, 680 font "Helvetica,13" noenhanced background rgb "white"
set output out
set multiplot title heading font "Helvetica,15"

red = "#b2182b"
blue = "#2166ac"
green = "#1b7837"
black = "#222222"
set grid lc rgb "#dddddd"
set tics nomirror out
set xrange [0:2000]
set xtics 250
set key box opaque font "Helvetica,11" samplen 3
set lmargin at screen 0.11
set rmargin at screen 0.96
if (drop1 > drop0) {
    set object 1 rectangle from first drop0, graph 0 to first drop1, graph 1 back \
        fillcolor rgb "#fde0c0" fillstyle solid 1.0 noborder
}

# above: the loss, and the uniform guess's ln 32 it starts at
set tmargin at screen 0.9
set bmargin at screen 0.57
set format x ""
set ylabel "held-out loss"
set yrange [0:3.8]
set ytics 0.5
set key at graph 0.98, graph 0.72 right top
if (drop1 > drop0) {
    set label 1 sprintf("the heads form,\nsteps %d to %d", drop0, drop1) at first drop1 + 30, graph 0.55 left
}
plot log(32) with lines dt 3 lw 1.5 lc rgb "#888888" title "ln 32: a uniform guess", \
     data index 1 using 1:3 with lines dt 2 lw 2 lc rgb black title "one layer", \
     data index 0 using 1:3 with linespoints lw 2 pt 7 ps 0.5 lc rgb black title "two layers"
unset label 1

# below: what the model gets right, and what its heads do
set tmargin at screen 0.52
set bmargin at screen 0.12
set format x "%g"
set xlabel "training step"
set ylabel "held-out score, 0 to 1"
set yrange [0:1.02]
set ytics 0.25
set key at graph 0.98, graph 0.42 right top
plot data index 0 using 1:4 with linespoints lw 2 pt 7 ps 0.5 lc rgb black title "accuracy, two layers", \
     data index 1 using 1:4 with lines dt 2 lw 2 lc rgb black title "accuracy, one layer", \
     data index 0 using 1:5 with linespoints lw 2 pt 5 ps 0.5 lc rgb blue title "previous-token score, layer 0's best head", \
     data index 0 using 1:6 with linespoints lw 2 pt 9 ps 0.6 lc rgb red title "induction score, layer 1's best head"
unset multiplot
