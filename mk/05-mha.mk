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

# split_heads drawn cell by cell on --example four-heads: q's (T, D) cells with
# their addresses, and the H blocks of (T, hd) they are copied into. The sizes
# are the run's own: T and D from X.npy, H from the maps of attn.npy.
FIGURES  += $(FIG)/mha_split_heads.svg
SPLIT_FIG := $(OUT)/fig/mha_split_heads
$(FIG)/mha_split_heads.svg: $(BIN)/mha $(BIN)/npy2dat tools/draw_heads.gp tools/draw_heads_grid.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(SPLIT_FIG) && mkdir -p $(SPLIT_FIG)
	$(Q)$(BIN)/mha --example four-heads --quiet --dump $(SPLIT_FIG)/run
	$(Q)$(BIN)/npy2dat $(SPLIT_FIG)/run/X.npy > $(SPLIT_FIG)/x.dat
	$(Q)$(BIN)/npy2dat $(SPLIT_FIG)/run/attn.npy 0 > $(SPLIT_FIG)/attn.dat
	$(Q)$(GNUPLOT) -e "xdata='$(SPLIT_FIG)/x.dat'; data='$(SPLIT_FIG)/attn.dat'; out='$@.tmp'; \
	    heading='mha --example four-heads: split_heads copies the queries into one block per head'; \
	    words='the|cat|saw|the|dog|saw|the|cat'" tools/draw_heads.gp
	$(Q)mv $@.tmp $@
