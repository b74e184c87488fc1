# Chapter 3: SelfAttV3. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += selfatt_v3
# fill_values: a small program behind one figure, tested by test_selfatt_v3.c
EXTRA_PROGRAMS += fill_values
FIGURES  += $(FIG)/selfatt_v3.svg $(FIG)/selfatt_v3_causal.svg $(FIG)/fill_values.svg


$(FIG)/selfatt_v3.svg: $(BIN)/selfatt_v3
$(FIG)/selfatt_v3.svg: FIG_RUN = selfatt_v3 --example padded
$(FIG)/selfatt_v3.svg: FIG_PICK =
$(FIG)/selfatt_v3.svg: FIG_HEADING = SelfAttV3, the same-word head on a padded batch: hidden keys get 0, rows renormalise
$(FIG)/selfatt_v3.svg: FIG_TITLES = b = 0: eight real words|b = 1: keys 5, 6, 7 are padding
$(FIG)/selfatt_v3.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

$(FIG)/selfatt_v3_causal.svg: $(BIN)/selfatt_v3
$(FIG)/selfatt_v3_causal.svg: FIG_RUN = selfatt_v3 --example same-word --causal
$(FIG)/selfatt_v3_causal.svg: FIG_PICK = 0
$(FIG)/selfatt_v3_causal.svg: FIG_HEADING = SelfAttV3 --causal, the same-word head: each word finds only its earlier copies
$(FIG)/selfatt_v3_causal.svg: FIG_TITLES = selfatt_v3 --example same-word --causal
$(FIG)/selfatt_v3_causal.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

$(FIG)/fill_values.svg: $(BIN)/fill_values
$(FIG)/fill_values.svg: FIG_RUN = fill_values
$(FIG)/fill_values.svg: FIG_PICK =
$(FIG)/fill_values.svg: FIG_HEADING = One example, three ways to hide a score (blank cells are NaN)
$(FIG)/fill_values.svg: FIG_TITLES = masked_fill -1e20 (seed 004)|masked_fill -inf (seeds 000, 002)|add -10000 (seed 003)

# The padded batch's mask, each sequence's row broadcast down its map
# (tools/draw_masks.gp; the mask the program applied is its own padding row repeated).
FIGURES  += $(FIG)/selfatt_v3_pad.svg
$(FIG)/selfatt_v3_pad.svg: FIG_RUN = selfatt_v3 --example padded
$(FIG)/selfatt_v3_pad.svg: $(BIN)/selfatt_v3 tools/draw_masks.gp $(GRID_TOOLS)
	$(call say,PLOT,$@)
	$(Q)$(call grid_dump,$(grid_dir),$(FIG_RUN),attention_mask)
	$(Q)$(GNUPLOT) -e "mask='$(grid_dir)/attention_mask.dat'; pad=mask; out='$@.tmp'; \
	    words='the|cat|saw|the|dog|saw|the|cat'; \
	    heading='SelfAttV3 on the padded batch: pad[:, None, :] broadcast to the scores'" tools/draw_masks.gp
	$(Q)mv $@.tmp $@
