# lines.gp: line plots of a table's columns, one panel per block of the table,
# side by side.
#
#   gnuplot -e "data='t.dat'; out='fig.svg'; heading='...'" tools/lines.gp
#
# data      text: blocks separated by two blank lines. In each block, lines that
#           start with '#' are comments, the first other line names the columns
#           (one word each: the names become the key), and every later line is
#           x in column 1 and one y per further column
# out       the SVG to write
# heading   the figure's title
# titles    optional: one title per panel, separated by '|'
# xlabel    optional: the x axis's label, the same in every panel
# ylabels   optional: one y axis label per panel, separated by '|'
# group     optional: the y columns come in groups of this many series; each
#           group after the first is drawn dashed, in the first group's
#           colours (default: one group, every line solid)
# logscale  optional: "xy" (the default), "x", "y" or "" for none; a log axis
#           is labelled with SI prefixes (1k, 10M, ...)
# Fixed size and font, so the SVG is byte-identical from run to run and
# `make` can regenerate a committed figure.

if (!exists("titles")) titles = ""
if (!exists("xlabel")) xlabel = ""
if (!exists("ylabels")) ylabels = ""
if (!exists("group")) group = 0
if (!exists("logscale")) logscale = "xy"

# pieces of a '|'-separated list, as in heatmap.gp
field(s, n) = (n <= 1) ? (strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] : s) \
                       : (strstrt(s, "|") ? field(s[strstrt(s, "|") + 1:], n - 1) : "")

# column j's line: dashed from the second group on (dash type 2), solid before
dash(j, per) = (j - 2) / per + 1 > 1 ? 2 : 1

set datafile columnheaders
stats data nooutput
panels = STATS_blocks

set terminal svg size (520 * panels > 960 ? 960 : 520 * panels), 460 font "Helvetica,13" noenhanced background rgb "white"
set output out
set multiplot layout 1, panels title heading font "Helvetica,15"

colours = "#b2182b #2166ac #1b7837 #762a83 #e08214 #4d4d4d"
set grid lc rgb "#dddddd"
set key top left box opaque font "Helvetica,11" autotitle columnheader
set tics nomirror out
set xlabel xlabel
if (strstrt(logscale, "x")) { set logscale x 2; set format x "%.0f" } else { unset logscale x }
if (strstrt(logscale, "y")) { set logscale y 10; set format y "%.0s%c" } else { unset logscale y }

do for [p = 0:panels - 1] {
    stats data index p using 1 nooutput
    ncols = STATS_columns
    per = (group > 0) ? group : ncols - 1
    set title field(titles, p + 1)
    set ylabel field(ylabels, p + 1)
    plot for [j = 2:ncols] data index p using 1:j with linespoints lw 2 pt 7 ps 0.6 \
         dt dash(j, per) lc rgb word(colours, (j - 2) % per + 1)
}
unset multiplot
