# Chapter 1: SelfAttV1. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += selfatt_v1
FIGURES  += $(FIG)/selfatt_v1_random.svg $(FIG)/selfatt_v1.svg

$(FIG)/selfatt_v1_random.svg: $(BIN)/selfatt_v1
$(FIG)/selfatt_v1_random.svg: FIG_RUN = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3
$(FIG)/selfatt_v1_random.svg: FIG_PICK = 0
$(FIG)/selfatt_v1_random.svg: FIG_HEADING = SelfAttV1 with random weights: one sequence (T = 6, D = 8)
$(FIG)/selfatt_v1_random.svg: FIG_TITLES = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3

$(FIG)/selfatt_v1.svg: $(BIN)/selfatt_v1
$(FIG)/selfatt_v1.svg: FIG_RUN = selfatt_v1 --example same-word
$(FIG)/selfatt_v1.svg: FIG_PICK = 0
$(FIG)/selfatt_v1.svg: FIG_HEADING = SelfAttV1 with weights set by hand: each query looks for its own word
$(FIG)/selfatt_v1.svg: FIG_TITLES = selfatt_v1 --example same-word
$(FIG)/selfatt_v1.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

# The four lines of forward on the sentence, every number drawn: tools/draw_qkv.gp
# computes Q, K, V and the scores from the dumped X and weights, and draws the
# program's own attn.
FIGURES  += $(FIG)/selfatt_v1_qkv.svg
$(FIG)/selfatt_v1_qkv.svg: FIG_RUN = selfatt_v1 --example same-word
$(FIG)/selfatt_v1_qkv.svg: $(BIN)/selfatt_v1 tools/draw_qkv.gp $(GRID_TOOLS)
	$(call say,PLOT,$@)
	$(Q)$(call grid_dump,$(grid_dir),$(FIG_RUN),X attn query_proj.weight key_proj.weight value_proj.weight)
	$(Q)$(GNUPLOT) -e "d='$(grid_dir)/'; x=d.'X.dat'; attn=d.'attn.dat'; out='$@.tmp'; \
	    w=d.'query_proj.weight.dat|'.d.'key_proj.weight.dat|'.d.'value_proj.weight.dat'; \
	    words='the|cat|saw|the|dog|saw|the|cat'; \
	    heading='SelfAttV1 on the sentence, weights set by hand: X, its queries, keys and values, scores and weights'" \
	    tools/draw_qkv.gp
	$(Q)mv $@.tmp $@
