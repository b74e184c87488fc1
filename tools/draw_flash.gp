# draw_flash.gp: chapter 10's flash rung under --causal, at its real sizes. Left, one
# head's (T, T) scores, queries down and keys across, cut into the blocks it works in:
# BR queries by BC keys, each tile scored, masked and summed in one pass of the online
# softmax; the tiles past a block's last query are never visited. Right, two tiles of one
# block magnified: the keys each query sees and the ones hidden, in strips of KR keys.
#
#   gnuplot -e "out='fig.svg'; heading='...'; T=1024; BR=48; BC=64; KR=8; hd=64; \
#               block=10" tools/draw_flash.gp
#
# out        the SVG to write
# heading    the figure's title
# T          positions in the sequence
# BR, BC, KR a block's queries and keys, a score tile's keys (the #defines of mha_fast.c)
# hd         numbers per head
# block      the block of queries to follow, 0 .. ceil(T / BR) - 1
# Fixed sizes and fonts, so the SVG is byte-identical from run to run.

blocks = (T + BR - 1) / BR
kblocks = (T + BC - 1) / BC
rows(i) = T - i * BR < BR ? T - i * BR : BR
end(i) = i * BR + rows(i)                     # flash_block's end: its last query + 1
visits(i) = (end(i) + BC - 1) / BC            # key blocks s0 < end
hides(i, j) = j * BC + BC - 1 > i * BR        # step 3 hides keys in tile (i, j)
visited = sum [i = 0:blocks - 1] visits(i)
scored = sum [i = 0:blocks - 1] visits(i) * BC * rows(i)

# pixels: the map, side S, at the left; the magnified tiles at the right
S = 440
mx = 58
my = 84
p = real(S) / T                               # pixels per position
X(s) = mx + s * p
Y(t) = my + t * p
zx = 590                                      # the magnified tiles: two of block `block`
zy = 110
z = 2.5                                       # pixels per key and per query
j1 = visits(block) - 2                        # its last two tiles
t0 = block * BR
s0 = j1 * BC
width = 960
height = my + S + 64

seen = "#92c5de"
part = "#4393c3"
follow = "#d6604d"
hidden = "#f0f0f0"
grey = "#666666"

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
set label sprintf("one head's scores, (%d, %d): never made", T, T) at X(0), my - 26 left font "Helvetica,13"
set label "keys" at X(T / 2), my - 8 center font "Helvetica,12" textcolor rgb grey
set label "queries" at mx - 24, Y(T / 2) center rotate by 90 font "Helvetica,12" textcolor rgb grey
set label "0" at X(0), my + S + 14 center font "Helvetica,11" textcolor rgb grey
set label sprintf("%d", T) at X(T), my + S + 14 center font "Helvetica,11" textcolor rgb grey

# the tiles: visited (every key seen, or some hidden by step 3), or never visited
o = 0
do for [i = 0:blocks - 1] {
    do for [j = 0:kblocks - 1] {
        o = o + 1
        fill = j >= visits(i) ? "#ffffff" : hides(i, j) ? part : seen
        set object o rectangle from X(j * BC), Y(i * BR) to X(j * BC + BC < T ? j * BC + BC : T), Y(i * BR + rows(i)) \
            fillcolor rgb fill fillstyle solid 1 border lc rgb "#ffffff" lw 0.6 behind
    }
}
o = o + 1
set object o rectangle from X(0), Y(0) to X(T), Y(T) fillstyle empty border lc rgb "#444444" lw 1
set arrow from X(0), Y(0) to X(T), Y(T) nohead lc rgb "#222222" lw 1 dt 2 front
# the block followed: its row of tiles, and what it carries along them
o = o + 1
set object o rectangle from X(0), Y(t0) to X(visits(block) * BC), Y(t0 + rows(block)) \
    fillstyle empty border lc rgb follow lw 2.5 front
set arrow from X(0) + 4, Y(t0 + rows(block) / 2) to X(visits(block) * BC) - 4, Y(t0 + rows(block) / 2) \
    head size 8, 25 filled lc rgb follow lw 1.5 front
set label sprintf("the block of queries %d to %d walks its row of tiles left to right, carrying each query's running max m,", \
    t0, t0 + rows(block) - 1) at X(0), my + S + 32 left font "Helvetica,12" textcolor rgb follow
set label sprintf("sum l and output o: %d x (%d + 2) numbers, where rung 3 holds %d x %d weights", rows(block), hd, rows(block), T) \
    at X(0), my + S + 49 left font "Helvetica,12" textcolor rgb follow
# lines from its last two tiles to their magnified copy
set arrow from X(s0 + 2 * BC), Y(t0) to zx, zy nohead lc rgb "#aaaaaa" lw 0.8 back
set arrow from X(s0 + 2 * BC), Y(t0 + rows(block)) to zx, zy + rows(block) * z nohead lc rgb "#aaaaaa" lw 0.8 back

# the last two tiles of that block, magnified: each query sees keys up to itself
set label sprintf("its last two tiles, queries %d to %d, keys %d to %d", t0, t0 + rows(block) - 1, s0, s0 + 2 * BC - 1) \
    at zx, zy - 34 left font "Helvetica,13"
do for [r = 0:rows(block) - 1] {
    t = t0 + r
    last = t < s0 + 2 * BC - 1 ? t : s0 + 2 * BC - 1     # the last key query t sees here
    o = o + 1
    set object o rectangle from zx, zy + r * z to zx + (last - s0 + 1) * z, zy + r * z + z \
        fillcolor rgb seen fillstyle solid 1 noborder behind
    if (last < s0 + 2 * BC - 1) {
        o = o + 1
        set object o rectangle from zx + (last - s0 + 1) * z, zy + r * z to zx + 2 * BC * z, zy + r * z + z \
            fillcolor rgb hidden fillstyle solid 1 noborder behind
    }
}
do for [c = 0:2 * BC / KR] {
    set arrow from zx + c * KR * z, zy to zx + c * KR * z, zy + rows(block) * z nohead \
        lc rgb (c % (BC / KR) == 0 ? "#222222" : "#ffffff") lw (c % (BC / KR) == 0 ? 1.5 : 0.5) front
}
o = o + 1
set object o rectangle from zx, zy to zx + 2 * BC * z, zy + rows(block) * z fillstyle empty border lc rgb follow lw 2 front
set label sprintf("%d", s0) at zx, zy - 10 center font "Helvetica,11" textcolor rgb grey
set label sprintf("%d", s0 + BC) at zx + BC * z, zy - 10 center font "Helvetica,11" textcolor rgb grey
set label sprintf("%d", t0) at zx - 6, zy + 4 right font "Helvetica,11" textcolor rgb grey
set label sprintf("%d", t0 + rows(block) - 1) at zx - 6, zy + rows(block) * z - 2 right font "Helvetica,11" textcolor rgb grey
ly = zy + rows(block) * z + 26
set label sprintf("a tile: %d x %d scores, %d KiB, in level-1 cache,", BR, BC, BR * BC * 4 / 1024) at zx, ly left font "Helvetica,12"
set label sprintf("scored in strips of %d keys (white lines);", KR) at zx, ly + 17 left font "Helvetica,12"
set label "pale: keys past the query, -1e20 after step 3" at zx, ly + 34 left font "Helvetica,12"

# the key, and what the walk costs
ky = ly + 78
o = o + 1
set object o rectangle from zx, ky - 6 to zx + 14, ky + 6 fillcolor rgb seen fillstyle solid 1 noborder
set label "a tile visited, every key seen" at zx + 22, ky + 4 left font "Helvetica,12"
o = o + 1
set object o rectangle from zx, ky + 14 to zx + 14, ky + 26 fillcolor rgb part fillstyle solid 1 noborder
set label "a tile visited, some keys hidden (on the diagonal)" at zx + 22, ky + 24 left font "Helvetica,12"
o = o + 1
set object o rectangle from zx, ky + 34 to zx + 14, ky + 46 fillcolor rgb "#ffffff" fillstyle solid 1 border lc rgb "#999999"
set label "a tile never visited: past the block's last query" at zx + 22, ky + 44 left font "Helvetica,12"
set label sprintf("%d of the %d tiles visited: %.0f%% of the scores computed,", visited, blocks * kblocks, 100.0 * scored / T / T) \
    at zx, ky + 76 left font "Helvetica,12"
set label sprintf("for the %.0f%% that causal attention keeps", 100.0 * T * (T + 1) / 2 / T / T) at zx, ky + 93 left font "Helvetica,12"

plot NaN
