# Chapter 4: SelfAttV4. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += selfatt_v4
FIGURES  += $(FIG)/selfatt_v4.svg

$(FIG)/selfatt_v4.svg: $(BIN)/selfatt_v4
$(FIG)/selfatt_v4.svg: FIG_RUN = selfatt_v4 --example padded --causal
$(FIG)/selfatt_v4.svg: FIG_PICK =
$(FIG)/selfatt_v4.svg: FIG_HEADING = SelfAttV4 --causal on the padded batch: a row stops at the diagonal or the last real key
$(FIG)/selfatt_v4.svg: FIG_TITLES = b = 0: causal only|b = 1: causal, and keys 5, 6, 7 are padding
$(FIG)/selfatt_v4.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

# Both masks of the padded batch under --causal (tools/draw_masks.gp): the mask
# the program applied, beside the ones it applies with padding alone and with
# --causal alone.
FIGURES  += $(FIG)/selfatt_v4_masks.svg
$(FIG)/selfatt_v4_masks.svg: FIG_RUN = selfatt_v4 --example padded --causal
$(FIG)/selfatt_v4_masks.svg: $(BIN)/selfatt_v4 tools/draw_masks.gp $(GRID_TOOLS)
	$(call say,PLOT,$@)
	$(Q)$(call grid_dump,$(grid_dir),$(FIG_RUN),attention_mask)
	$(Q)$(call grid_dump,$(grid_dir)-pad,selfatt_v4 --example padded,attention_mask)
	$(Q)$(call grid_dump,$(grid_dir)-causal,selfatt_v4 --example same-word --causal,attention_mask)
	$(Q)$(GNUPLOT) -e "mask='$(grid_dir)/attention_mask.dat'; pad='$(grid_dir)-pad/attention_mask.dat'; \
	    causal='$(grid_dir)-causal/attention_mask.dat'; out='$@.tmp'; words='the|cat|saw|the|dog|saw|the|cat'; \
	    heading='SelfAttV4 on the padded batch with --causal: the two masks, broadcast and ANDed'" tools/draw_masks.gp
	$(Q)mv $@.tmp $@
