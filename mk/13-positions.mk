# Chapter 13: positions. rope (chapter 6's gqa with rotary position embedding) and
# positions (the sinusoids, tested by test_rope.c); their figures.
PROGRAMS += rope
EXTRA_PROGRAMS += positions
FIGURES  += $(FIG)/rope_word_before.svg $(FIG)/rope_reversed.svg

# The word-before head, one turning pair, on chapter 1's sentence.
$(FIG)/rope_word_before.svg: $(BIN)/rope
$(FIG)/rope_word_before.svg: FIG_RUN = rope --example word-before
$(FIG)/rope_word_before.svg: FIG_PICK = 0 0
$(FIG)/rope_word_before.svg: FIG_HEADING = rope --example word-before: one pair, turning 30 degrees a position
$(FIG)/rope_word_before.svg: FIG_TITLES = scores 32 cos((s - t + 1) 30 degrees): the word before
$(FIG)/rope_word_before.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

# The sentence and its words reversed, a head of words and a head of positions.
$(FIG)/rope_reversed.svg: $(BIN)/rope
$(FIG)/rope_reversed.svg: FIG_RUN = rope --example reversed
$(FIG)/rope_reversed.svg: FIG_PICK =
$(FIG)/rope_reversed.svg: FIG_HEADING = rope --example reversed: the sentence, then its words in reverse order
$(FIG)/rope_reversed.svg: FIG_TITLES = the cat saw ...: head 0, nouns|the cat saw ...: head 1, word before|reversed: head 0, nouns|reversed: head 1, word before

# Arrows turning with the position: the pairs of positions's table, (cos, sin) each.
FIGURES += $(FIG)/rope_arrows.svg
$(FIG)/rope_arrows.svg: $(BIN)/positions $(BIN)/npy2dat tools/draw_arrows.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/rope_arrows && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/positions --seq 8 --dim 8 --quiet --dump $(OUT)/fig/rope_arrows
	$(Q)$(BIN)/npy2dat $(OUT)/fig/rope_arrows/pe.npy > $(OUT)/fig/rope_arrows.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/rope_arrows.dat'; out='$@.tmp'; \
	    heading='positions --seq 8 --dim 8: pair i of position t is the arrow (cos, sin) of t 10000^(-2i/8)'" \
	    tools/draw_arrows.gp
	$(Q)mv $@.tmp $@

# rope_induction: chapter 12's model and training with RoPE instead of pos_emb. -O3 as
# induction (the same float operations in the same order, so the same bits); its tests
# are not vectorized, as induction's are not (GCC 12's arm64 cross compiler).
PROGRAMS += rope_induction
TRAINERS += rope_induction
CFLAGS_rope_induction := -O3
$(OBJ)/tests/rope_induction.o: CFLAGS_rope_induction := -fno-tree-vectorize
