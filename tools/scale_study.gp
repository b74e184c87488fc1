# scale_study.gp: the sqrt(d) figure of chapter 8, two line plots side by side.
#
#   gnuplot -e "data='scale.dat'; out='fig.svg'" tools/scale_study.gp
#
# data  five columns per width d (tools/npy2dat of scale_study's scale.npy):
#       d, std(q.k), std(q.k / sqrt(d)), mean largest weight unscaled, scaled
# out   the SVG to write; fixed size and font, so the output is byte-identical
#       from run to run and `make` can regenerate the committed figure.

set terminal svg size 960, 420 font "Helvetica,13" noenhanced background rgb "white"
set output out
set multiplot layout 1, 2 title "Why divide by sqrt(d): q and k of d numbers, each of mean 0 and variance 1" font "Helvetica,15"

set logscale x 2
set xrange [3:1400]
set xtics (4, 16, 64, 256, 1024) nomirror out
set xlabel "d (numbers per query and key)"
set grid lc rgb "#dddddd"
set key top left box opaque

set title "spread of the scores: std of q . k"
set logscale y 2
set yrange [0.5:64]
set ytics (0.5, 1, 2, 4, 8, 16, 32, 64) nomirror out
set ylabel "standard deviation"
plot data using 1:2 with linespoints lw 2 pt 7 lc rgb "#b2182b" title "q . k", \
     data using 1:3 with linespoints lw 2 pt 5 lc rgb "#2166ac" title "q . k / sqrt(d)", \
     sqrt(x) with lines dt 2 lc rgb "#888888" title "sqrt(d)"

set title "how peaked the softmax is: T = 16 keys"
unset logscale y
set yrange [0:1.05]
set ytics 0.25 nomirror out
set key at graph 0.97, graph 0.52 right top
set ylabel "mean largest weight of a row"
plot data using 1:4 with linespoints lw 2 pt 7 lc rgb "#b2182b" title "softmax(q . k)", \
     data using 1:5 with linespoints lw 2 pt 5 lc rgb "#2166ac" title "softmax(q . k / sqrt(d))", \
     1.0 / 16 with lines dt 2 lc rgb "#888888" title "uniform, 1/16"
unset multiplot
