# Chapter 8: variants in the wild. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += mha_qkv mha_shared_heads mhsa_relu
# scale_study: a small program behind the sqrt(d) figure, tested by test_mhsa_relu.c
EXTRA_PROGRAMS += scale_study
FIGURES  += $(FIG)/mha_qkv.svg $(FIG)/mha_shared_heads.svg $(FIG)/mhsa_relu_causal.svg $(FIG)/scale_study.svg

$(FIG)/mha_qkv.svg: $(BIN)/mha_qkv
$(FIG)/mha_qkv.svg: FIG_RUN = mha_qkv --example find-words
$(FIG)/mha_qkv.svg: FIG_PICK = 0
$(FIG)/mha_qkv.svg: FIG_HEADING = mha_qkv: four query words against the sentence (T = 4, S = 8), two heads
$(FIG)/mha_qkv.svg: FIG_TITLES = head 0: its own word|head 1: the word saw
$(FIG)/mha_qkv.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
$(FIG)/mha_qkv.svg: FIG_QWORDS = the|dog|saw|a

$(FIG)/mha_shared_heads.svg: $(BIN)/mha_shared_heads
$(FIG)/mha_shared_heads.svg: FIG_RUN = mha_shared_heads --example slices
$(FIG)/mha_shared_heads.svg: FIG_PICK = 0
$(FIG)/mha_shared_heads.svg: FIG_HEADING = mha_shared_heads: one matrix, queries.weight = 24 I, for both heads
$(FIG)/mha_shared_heads.svg: FIG_TITLES = head 0 sees the word part|head 1 sees the position part
$(FIG)/mha_shared_heads.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

# The scale set by hand: the same masked head twice, wq as set and wq / 4, side by
# side; two runs' maps concatenated (npy2dat's blocks: two blank lines between).
# Its --example runs are masked=True, whose mask is built from T and dumped nowhere:
# npy2dat --causal draws it (key s > query t hidden).
RELU_FIG := $(OUT)/fig/mhsa_relu_causal
$(FIG)/mhsa_relu_causal.svg: $(BIN)/mhsa_relu $(BIN)/npy2dat tools/heatmap.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(RELU_FIG) && mkdir -p $(RELU_FIG)
	$(Q)$(BIN)/mhsa_relu --example recent-words --quiet --dump $(RELU_FIG)/raw
	$(Q)$(BIN)/mhsa_relu --example recent-words-scaled --quiet --dump $(RELU_FIG)/scaled
	$(Q){ $(BIN)/npy2dat $(RELU_FIG)/raw/attn.npy 0 0; printf '\n\n'; \
	      $(BIN)/npy2dat $(RELU_FIG)/scaled/attn.npy 0 0; } > $(RELU_FIG).dat
	$(Q){ $(BIN)/npy2dat --causal $(RELU_FIG)/raw/attn.npy 0 0; printf '\n\n'; \
	      $(BIN)/npy2dat --causal $(RELU_FIG)/scaled/attn.npy 0 0; } > $(RELU_FIG).mask
	$(Q)$(GNUPLOT) -e "data='$(RELU_FIG).dat'; mask='$(RELU_FIG).mask'; out='$@.tmp'; xwords='the|cat|saw|the|dog|saw|the|cat'; \
	    heading='mhsa_relu, masked: the query of t is 12 at t-1 and 6 at t-2'; \
	    titles='--example recent-words (no scale)|--example recent-words-scaled (wq / 4)'" tools/heatmap.gp
	$(Q)mv $@.tmp $@

# The sqrt(d) figure is a line plot, not a heatmap: its own rule and script.
$(FIG)/scale_study.svg: $(BIN)/scale_study $(BIN)/npy2dat tools/scale_study.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/scale_study && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/scale_study --quiet --dump $(OUT)/fig/scale_study
	$(Q)$(BIN)/npy2dat $(OUT)/fig/scale_study/scale.npy > $(OUT)/fig/scale_study.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/scale_study.dat'; out='$@.tmp'" tools/scale_study.gp
	$(Q)mv $@.tmp $@

# mha_qkv's queries against its keys as lines: chapter 7's draw_asks recipe.
FIGURES  += $(FIG)/mha_qkv_lines.svg
$(FIG)/mha_qkv_lines.svg: $(FIG)/%.svg: $(BIN)/mha_qkv $(BIN)/npy2dat tools/draw_asks.gp | tools
	$(draw_asks)
$(FIG)/mha_qkv_lines.svg: ASKS_RUN = mha_qkv --example find-words
$(FIG)/mha_qkv_lines.svg: ASKS_HEADING = mha_qkv --example find-words: four query words against the sentence
$(FIG)/mha_qkv_lines.svg: ASKS_TITLES = head 0: its own word|head 1: the word saw
$(FIG)/mha_qkv_lines.svg: ASKS_QWORDS = the|dog|saw|a
$(FIG)/mha_qkv_lines.svg: ASKS_KWORDS = the|cat|saw|the|dog|saw|the|cat
$(FIG)/mha_qkv_lines.svg: ASKS_QNAME = queries (Q)
$(FIG)/mha_qkv_lines.svg: ASKS_KNAME = keys (K = V)
