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

# fill_values's dump holds only its weights, (3 policies, T, S); the keys it hides are
# its fill_mask, read from its source and repeated for each policy's map.
FILL_FIG := $(OUT)/fig/fill_values
$(FIG)/fill_values.svg: FIG_RUN = fill_values
$(FIG)/fill_values.svg: FIG_HEADING = One example, three ways to hide a score
$(FIG)/fill_values.svg: FIG_TITLES = hidden scores set to -1e20|hidden scores set to -inf|-10000 added to hidden scores
$(FIG)/fill_values.svg: $(BIN)/fill_values $(SRC)/fill_values.c $(BIN)/npy2dat tools/heatmap.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(FILL_FIG) && mkdir -p $(FILL_FIG)
	$(Q)$(BIN)/$(FIG_RUN) --quiet --dump $(FILL_FIG)
	$(Q)$(BIN)/npy2dat $(FILL_FIG)/attn.npy > $(FILL_FIG).dat
	$(Q)awk '/fill_mask\[FILL_T\]\[FILL_S\] = / { sub(/.*= *\{/, ""); n = split($$0, row, "}"); \
	        for (i = 1; i <= n; i++) { gsub(/[{,;]/, " ", row[i]); $$0 = row[i]; if (NF) { $$1 = $$1; print; r++ } } } \
	    END { if (!r) { print "$(SRC)/fill_values.c: no fill_mask[FILL_T][FILL_S] = { ... } to read" > "/dev/stderr"; exit 1 } }' \
	    $(SRC)/fill_values.c > $(FILL_FIG)/mask.txt
	$(Q)maps=$$(awk '/^$$/ { n++ } END { print n / 2 + 1 }' $(FILL_FIG).dat); \
	for m in $$(seq $$maps); do [ $$m = 1 ] || printf '\n\n'; cat $(FILL_FIG)/mask.txt; done > $(FILL_FIG).mask
	$(Q)$(GNUPLOT) -e "data='$(FILL_FIG).dat'; mask='$(FILL_FIG).mask'; out='$@.tmp'; \
	    heading='$(FIG_HEADING)'; titles='$(FIG_TITLES)'" \
	    tools/heatmap.gp 2> $(FILL_FIG).log; status=$$?; \
	    grep -v 'matrix contains missing or undefined values' $(FILL_FIG).log >&2; exit $$status
	$(Q)mv $@.tmp $@

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
