# Chapter 7: CrossAttention. Its program, its figure. (What a test includes, make reads from the compiler.)
# test_cross_attention also runs chapter 5's build/bin/mha (Q = K = V = X), when it is there.
PROGRAMS += cross_attention
FIGURES  += $(FIG)/cross_attention.svg

$(FIG)/cross_attention.svg: $(BIN)/cross_attention
$(FIG)/cross_attention.svg: FIG_RUN = cross_attention --example align
$(FIG)/cross_attention.svg: FIG_PICK = 0
$(FIG)/cross_attention.svg: FIG_HEADING = CrossAttention by hand: the target “a dog saw the cat” reads the source “the cat saw a dog”
$(FIG)/cross_attention.svg: FIG_TITLES = head 0: find the same word|head 1: read backwards, key 4 - t
$(FIG)/cross_attention.svg: FIG_QWORDS = a|dog|saw|the|cat
$(FIG)/cross_attention.svg: FIG_WORDS = the|cat|saw|a|dog|pad

# One sequence asks another, drawn as lines from each query's word to the keys'
# words, as wide as the weights (tools/draw_asks.gp). A figure sets ASKS_RUN (the
# program and its flags), ASKS_HEADING, ASKS_TITLES, ASKS_QWORDS, ASKS_KWORDS,
# and ASKS_QNAME and ASKS_KNAME (what each side is); ASKS_MASK=1 reads the run's
# (B, 1, 1, S) mask to grey the hidden keys. Chapter 8 draws with it too.
define draw_asks
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/$* && mkdir -p $(OUT)/fig/$*
	$(Q)$(BIN)/$(ASKS_RUN) --quiet --dump $(OUT)/fig/$*/run
	$(Q)$(BIN)/npy2dat $(OUT)/fig/$*/run/attn.npy 0 > $(OUT)/fig/$*/attn.dat
	$(Q)$(if $(ASKS_MASK),$(BIN)/npy2dat $(OUT)/fig/$*/run/attention_mask.npy 0 0 > $(OUT)/fig/$*/mask.dat,:)
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/$*/attn.dat'; out='$@.tmp'; heading='$(ASKS_HEADING)'; \
	    titles='$(ASKS_TITLES)'; qwords='$(ASKS_QWORDS)'; kwords='$(ASKS_KWORDS)'; \
	    qname='$(ASKS_QNAME)'; kname='$(ASKS_KNAME)'$(if $(ASKS_MASK),; mask='$(OUT)/fig/$*/mask.dat')" tools/draw_asks.gp
	$(Q)mv $@.tmp $@
endef

FIGURES  += $(FIG)/cross_attention_lines.svg
$(FIG)/cross_attention_lines.svg: $(FIG)/%.svg: $(BIN)/cross_attention $(BIN)/npy2dat tools/draw_asks.gp | tools
	$(draw_asks)
$(FIG)/cross_attention_lines.svg: ASKS_RUN = cross_attention --example align
$(FIG)/cross_attention_lines.svg: ASKS_HEADING = cross_attention --example align: the target asks, the source answers
$(FIG)/cross_attention_lines.svg: ASKS_TITLES = head 0: find the same word|head 1: read backwards, key 4 - t
$(FIG)/cross_attention_lines.svg: ASKS_QWORDS = a|dog|saw|the|cat
$(FIG)/cross_attention_lines.svg: ASKS_KWORDS = the|cat|saw|a|dog|pad
$(FIG)/cross_attention_lines.svg: ASKS_QNAME = target (Q)
$(FIG)/cross_attention_lines.svg: ASKS_KNAME = source (K = V)
$(FIG)/cross_attention_lines.svg: ASKS_MASK = 1
