# Chapter 0: tensors. No program of its own (tensor.c is every program's); its
# figure draws where the floats of chapter 1's default X, (3, 2, 4), lie.
FIGURES  += $(FIG)/tensor_layout.svg

# What the drawings of chapters 0 to 4 (tools/draw_*.gp) read, in a recipe:
# $(call grid_dump,DIR,RUN,NAMES) runs build/bin/RUN --quiet --dump DIR, then
# writes DIR/NAME.dat, npy2dat's text of DIR/NAME.npy, for each of NAMES; and
# $(grid_dir) is the target's own directory for that, build/fig/NAME.
grid_dir = $(OUT)/fig/$(basename $(notdir $@))
grid_dump = rm -rf $(1) && mkdir -p $(dir $(1)) && $(BIN)/$(2) --quiet --dump $(1) && \
    for n in $(3); do $(BIN)/npy2dat $(1)/$$n.npy > $(1)/$$n.dat || exit 1; done
GRID_TOOLS := $(BIN)/npy2dat tools/draw_grid.gp | tools

# Only X's shape is drawn, never its numbers (tools/draw_layout.gp): each cell
# holds its element's offset, so the figure stays what it is whatever the seed draws.
$(FIG)/tensor_layout.svg: FIG_RUN = selfatt_v1 --batch 3 --seq 2 --dim 4
$(FIG)/tensor_layout.svg: $(BIN)/selfatt_v1 tools/draw_layout.gp $(GRID_TOOLS)
	$(call say,PLOT,$@)
	$(Q)$(call grid_dump,$(grid_dir),$(FIG_RUN),X)
	$(Q)$(GNUPLOT) -e "data='$(grid_dir)/X.dat'; out='$@.tmp'" tools/draw_layout.gp
	$(Q)mv $@.tmp $@
