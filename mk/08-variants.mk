# Chapter 8: variants in the wild. Its programs, its figures, and what its tests include.
PROGRAMS += mha_qkv mha_shared_heads mhsa_relu
# scale_study: a small program behind the sqrt(d) figure, tested by test_mhsa_relu.c
EXTRA_PROGRAMS += scale_study
FIGURES  += figures/mha_qkv.svg figures/mhsa_relu_causal.svg figures/scale_study.svg
$(TESTBIN)/mhsa_relu: $(SRC)/scale_study.c

figures/mha_qkv.svg: $(BIN)/mha_qkv
figures/mha_qkv.svg: FIG_RUN = mha_qkv
figures/mha_qkv.svg: FIG_PICK = 0
figures/mha_qkv.svg: FIG_HEADING = mha_qkv: four queries against six keys (T = 4, S = 6, D = 8, H = 2)
figures/mha_qkv.svg: FIG_TITLES = head 0|head 1

figures/mhsa_relu_causal.svg: $(BIN)/mhsa_relu
figures/mhsa_relu_causal.svg: FIG_RUN = mhsa_relu --batch 1 --seq 6 --dim 64 --heads 2 --causal
figures/mhsa_relu_causal.svg: FIG_PICK = 0
figures/mhsa_relu_causal.svg: FIG_HEADING = mhsa_relu --causal, no scale: T = 6, D = 64, two heads of 32
figures/mhsa_relu_causal.svg: FIG_TITLES = head 0|head 1

# The sqrt(d) figure is a line plot, not a heatmap: its own rule and script.
figures/scale_study.svg: $(BIN)/scale_study $(BIN)/npy2dat tools/scale_study.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/scale_study && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/scale_study --quiet --dump $(OUT)/fig/scale_study
	$(Q)$(BIN)/npy2dat $(OUT)/fig/scale_study/scale.npy > $(OUT)/fig/scale_study.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/scale_study.dat'; out='$@.tmp'" tools/scale_study.gp
	$(Q)mv $@.tmp $@
