# Chapter 5: MultiHeadAttention. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += mha
FIGURES  += $(FIG)/mha_heads.svg

# The four heads of --example four-heads, side by side (tools/heatmap.gp puts
# four maps of eight keys in two rows of two), one map per head.
$(FIG)/mha_heads.svg: $(BIN)/mha
$(FIG)/mha_heads.svg: FIG_RUN = mha --example four-heads
$(FIG)/mha_heads.svg: FIG_PICK = 0
$(FIG)/mha_heads.svg: FIG_HEADING = mha with weights set by hand: four heads (D = 16, H = 4, hd = 4), four jobs
$(FIG)/mha_heads.svg: FIG_TITLES = head 0: the word before|head 1: the same word|head 2: the first word|head 3: all words alike
$(FIG)/mha_heads.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
