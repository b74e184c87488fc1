# Chapter 5: MultiHeadAttention. Its programs, its figures, and what its test includes.
PROGRAMS += mha
FIGURES  += figures/mha_heads.svg

# One heatmap per head, in a grid of 2 rows of 4 (tools/heatmap.gp's layout).
# The case is mha's own, made from a seed; its random mask is taken out before
# it is loaded back, so that the maps show the heads and nothing else.
MHA_HEADS_CASE := $(OUT)/fig/mha_heads-case
$(MHA_HEADS_CASE)/X.npy: $(BIN)/mha
	$(call say,RUN,mha > $(MHA_HEADS_CASE))
	$(Q)rm -rf $(MHA_HEADS_CASE)
	$(Q)$(BIN)/mha --batch 1 --seq 6 --dim 64 --heads 8 --seed 11 --quiet --dump $(MHA_HEADS_CASE)
	$(Q)rm $(MHA_HEADS_CASE)/attention_mask.npy

figures/mha_heads.svg: $(MHA_HEADS_CASE)/X.npy $(BIN)/npy2dat tools/heatmap.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/mha_heads && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/mha --load $(MHA_HEADS_CASE) --heads 8 --quiet --dump $(OUT)/fig/mha_heads
	$(Q)$(BIN)/npy2dat $(OUT)/fig/mha_heads/attn.npy 0 > $(OUT)/fig/mha_heads.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/mha_heads.dat'; out='$@.tmp'; layout='2,4'; \
	    heading='mha: the 8 heads of one sequence (T = 6, D = 64, hd = 8), no mask'; \
	    titles='head 0|head 1|head 2|head 3|head 4|head 5|head 6|head 7'" tools/heatmap.gp
	$(Q)mv $@.tmp $@
