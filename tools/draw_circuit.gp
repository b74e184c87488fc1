# draw_circuit.gp: chapter 12's two-layer circuit on one held-out sequence. The tokens
# are a row at the bottom; a first-layer head's weights are lines up from each key to
# its query in the row above; a last-layer head's weights, for the guesses the loss
# counts, are lines from there to the top row, which shows the token at the key each of
# those queries weighs most: what the head copies, green where it is the next token.
#
#   gnuplot -e "data='circuit.dat'; out='fig.svg'; heading='...'; h0=0; h1=0; \
#               layer1=1; src=17; dst=23; len=5" tools/draw_circuit.gp
#
# data     five blocks, separated by two blank lines:
#          0  "t token role" for each position t (role 1 in the source, 2 in the copy)
#          1  the first layer's weights of 0.2 and more, "s t w token": key s, query t,
#             the weight, and the token at s, which the query takes in
#          2  the last layer's weights of 0.2 and more for the queries the loss counts,
#             "s t w"
#          3  the lines of block 1 into the keys of block 2, "s t w token"
#          4  "t copied ok next" for each counted query: the token at the key it weighs
#             most, whether that is token t + 1, and token t + 1
# out      the SVG to write
# heading  the figure's title
# h0, h1   the heads drawn: h0 of layer 0, h1 of layer `layer1`
# src, dst, len   the copy: tokens src .. src+len-1 are repeated at dst .. dst+len-1
# Fixed sizes and fonts, so the SVG is byte-identical from run to run.

stats data index 0 using 1 nooutput
T = STATS_records

left = 140                     # the rows' names
cell = (940 - left) / T        # a position
width = left + T * cell + 16
box = cell - 4
y2 = 112                       # the rows' centres: the last layer's, the first's, the tokens
y1 = 268
y0 = 348
height = y0 + 74
cx(t) = left + t * cell + cell / 2

source_colour = "#e66101"
copy_colour = "#5e3c99"
right = "#1b7837"
wrong = "#b2182b"
grey = "#666666"
colour(role) = role == 2 ? 0x5e3c99 : role == 1 ? 0xe66101 : 0x000000
# a line's colour with its weight as opacity (gnuplot's alpha byte counts transparency)
faded(rgb, w) = int((1 - (w > 1 ? 1 : w)) * 200) * 2**24 + rgb

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
set label sprintf("layer %d, head %d", layer1, h1) at 12, y2 - 6 left font "Helvetica,12"
set label "copies the token" at 12, y2 + 10 left font "Helvetica,12" textcolor rgb grey
set label "the next token" at 12, y2 - 28 left font "Helvetica,12" textcolor rgb grey
set label "layer 0, head " . h0 at 12, y1 - 6 left font "Helvetica,12"
set label "the token before" at 12, y1 + 10 left font "Helvetica,12" textcolor rgb grey
set label "tokens" at 12, y0 - 6 left font "Helvetica,12"
set label "position" at 12, y0 + 28 left font "Helvetica,12" textcolor rgb grey
set label sprintf("source, %d to %d", src, src + len - 1) at cx(src) - cell / 2, y0 + 50 left font "Helvetica,12" textcolor rgb source_colour
set label sprintf("copy, %d to %d", dst, dst + len - 1) at cx(dst) - cell / 2, y0 + 50 left font "Helvetica,12" textcolor rgb copy_colour
do for [t = 0:T - 1] {
    set object t + 1 rectangle center cx(t), y0 size box, 22 fillstyle empty border lc rgb "#999999"
    set object T + t + 1 rectangle center cx(t), y1 size box, 22 fillstyle empty border lc rgb "#cccccc"
    set object 2 * T + t + 1 rectangle center cx(t), y2 size box, 22 fillstyle empty border lc rgb "#cccccc"
}

# the lines run from the top of a key's box to the bottom of its query's box
plot data index 1 using (cx($1)):(y0 - 11):(cx($2) - cx($1)):(y1 + 11 - (y0 - 11)):(faded(0x444444, $3)) \
         with vectors nohead lw 1.5 lc rgb variable, \
     data index 3 using (cx($1)):(y0 - 11):(cx($2) - cx($1)):(y1 + 11 - (y0 - 11)):(faded(0xe66101, $3)) \
         with vectors nohead lw 3 lc rgb variable, \
     data index 2 using (cx($1)):(y1 - 11):(cx($2) - cx($1)):(y2 + 11 - (y1 - 11)):(faded(0x5e3c99, $3)) \
         with vectors nohead lw 3 lc rgb variable, \
     data index 0 using (cx($1)):(y0):(sprintf("%d", $2)):(colour($3)) with labels center font "Helvetica,12" textcolor rgb variable, \
     data index 0 using (cx($1)):(y0 + 24):(sprintf("%d", $1)) with labels center font "Helvetica,11" textcolor rgb grey, \
     data index 1 using (cx($2)):($3 >= 0.5 ? y1 : NaN):(sprintf("%d", $4)) with labels center font "Helvetica,12" textcolor rgb grey, \
     data index 3 using (cx($2)):($3 >= 0.5 ? y1 : NaN):(sprintf("%d", $4)) with labels center font "Helvetica,12" textcolor rgb source_colour, \
     data index 4 using (cx($1)):(y2):(sprintf("%d", $2)):($3 > 0 ? 0x1b7837 : 0xb2182b) with labels center font "Helvetica,12" textcolor rgb variable, \
     data index 4 using (cx($1)):(y2 - 28):(sprintf("%d", $4)) with labels center font "Helvetica,12" textcolor rgb grey
