# Chapter 2: SelfAttV2. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += selfatt_v2
FIGURES  += $(FIG)/selfatt_v2.svg

$(FIG)/selfatt_v2.svg: $(BIN)/selfatt_v2
$(FIG)/selfatt_v2.svg: FIG_RUN = selfatt_v2 --example same-word
$(FIG)/selfatt_v2.svg: FIG_PICK = 0
$(FIG)/selfatt_v2.svg: FIG_HEADING = SelfAttV2, chapter 1 weights stacked in proj.weight: each query looks for its own word
$(FIG)/selfatt_v2.svg: FIG_TITLES = selfatt_v2 --example same-word
$(FIG)/selfatt_v2.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

# The fused projection on the sentence, cut into Q, K and V (tools/draw_qkv.gp
# with one (3D, D) weight computes proj(X) from the dumped X and proj.weight).
FIGURES  += $(FIG)/selfatt_v2_split.svg
$(FIG)/selfatt_v2_split.svg: FIG_RUN = selfatt_v2 --example same-word
$(FIG)/selfatt_v2_split.svg: $(BIN)/selfatt_v2 tools/draw_qkv.gp $(GRID_TOOLS)
	$(call say,PLOT,$@)
	$(Q)$(call grid_dump,$(grid_dir),$(FIG_RUN),X proj.weight)
	$(Q)$(GNUPLOT) -e "x='$(grid_dir)/X.dat'; w='$(grid_dir)/proj.weight.dat'; out='$@.tmp'; \
	    words='the|cat|saw|the|dog|saw|the|cat'; \
	    heading='SelfAttV2 on the sentence: one projection, proj(X), cut into Q, K and V'" tools/draw_qkv.gp
	$(Q)mv $@.tmp $@
