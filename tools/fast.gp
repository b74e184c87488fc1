# fast.gp: chapter 10's memory figure, the bytes each rung holds as T grows.
#
#   gnuplot -e "data='fast_memory.dat'; out='fig.svg'" tools/fast.gp
#
# data  four columns per sequence length T (mha_bench --memory): T, then the MiB
#       that the naive rung, the loops rung and the flash+exp2 rung hold beside X,
#       the weights and the output, for B = 1, D = 768, H = 12, on one thread
# out   the SVG to write; fixed size and font, so the output is byte-identical
#       from run to run and `make` can regenerate the committed figure.
# Byte counts only: timings change from run to run and never go into a figure.

set terminal svg size 820, 500 font "Helvetica,13" noenhanced background rgb "white"
set output out
set title "Bytes held beside X, the weights and the output (B = 1, D = 768, H = 12)" font "Helvetica,14"
set logscale xy 2
set xrange [200:80000]
set yrange [1:8388608]
set xtics (256, 1024, 4096, 16384, 65536) nomirror out
# y ticks at even steps, a factor of 16 apart; the dashed line marks 1 GiB
set ytics ("1 MiB" 1, "16 MiB" 16, "256 MiB" 256, "4 GiB" 4096, "64 GiB" 65536, "1 TiB" 1048576) nomirror out
set xlabel "T (positions in the sequence)"
set ylabel "bytes held during one forward"
set grid lc rgb "#dddddd"
set key top left box opaque
plot data using 1:2 with linespoints lw 2 pt 7 lc rgb "#b2182b" title "naive (chapter 5): weights (B, H, T, T) twice", \
     data using 1:3 with linespoints lw 2 pt 9 lc rgb "#ef8a62" title "loops, blocked: the weights once", \
     data using 1:4 with linespoints lw 2 pt 5 lc rgb "#2166ac" title "flash: q, k, v and the mixed heads", \
     1024 with lines dt 2 lc rgb "#888888" title "1 GiB"
