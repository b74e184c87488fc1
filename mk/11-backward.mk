# Chapter 11: the backward pass. Its program, its figure, and the double-precision
# copy of its backward steps (build/src/backward64.h) that tests/test_backward64.c includes.
PROGRAMS        += mha_backward
EXTRA_TESTS     += backward64
TANGLED_HEADERS += backward64.h
FIGURES         += $(FIG)/backward_heads.svg

# Each head's weights, and beside them its score gradient, scores.grad, with its sign,
# divided by the largest size among the four heads (heatmap.gp's signed scale, -1..1).
BACKWARD_FIG := $(OUT)/fig/backward_heads
$(FIG)/backward_heads.svg: $(BIN)/mha_backward $(BIN)/npy2dat tools/heatmap.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(BACKWARD_FIG) && mkdir -p $(BACKWARD_FIG)
	$(Q)$(BIN)/mha_backward --example four-heads --quiet --dump $(BACKWARD_FIG)
	$(Q)$(BIN)/npy2dat $(BACKWARD_FIG)/scores.grad.npy > $(BACKWARD_FIG)/ds.txt
	$(Q)most=$$(awk '{ for (i = 1; i <= NF; i++) if ($$i * $$i > m) m = $$i * $$i } END { print sqrt(m) }' \
	        $(BACKWARD_FIG)/ds.txt); \
	for h in 0 1 2 3; do \
	    [ $$h = 0 ] || printf '\n\n'; \
	    $(BIN)/npy2dat $(BACKWARD_FIG)/attn.npy 0 $$h; printf '\n\n'; \
	    $(BIN)/npy2dat $(BACKWARD_FIG)/scores.grad.npy 0 $$h | \
	        awk -v most=$$most '{ for (i = 1; i <= NF; i++) printf "%.6f%s", $$i / most + 0, i < NF ? " " : "\n" }'; \
	done > $(BACKWARD_FIG).dat
	$(Q)$(GNUPLOT) -e "data='$(BACKWARD_FIG).dat'; out='$@.tmp'; layout='4,2'; \
	    heading='mha_backward --example four-heads: each head, and where its gradient goes'; \
	    titles='head 0: the token before|head 0: its score gradient, scaled|head 1: the same, soft|head 1: its score gradient, scaled|head 2: its own word|head 2: its score gradient, scaled|head 3: all alike|head 3: its score gradient, scaled'; \
	    scales='weights|signed|weights|signed|weights|signed|weights|signed'; signed_title='gradient'; \
	    xwords='the|cat|saw|the|dog|saw|the|cat'" tools/heatmap.gp
	$(Q)mv $@.tmp $@

# "How fast": the fast forward plus backward pass (build/src/backward_fast.h, no main),
# timed against PyTorch by backward_bench (Appendix B; make bench) and checked against
# mha_backward's plain pass by tests/test_mha_backward_fast.c. Chapter 10's flags.
BENCHES         += backward_bench
EXTRA_TESTS     += mha_backward_fast
TANGLED_HEADERS += backward_fast.h
BACKWARD_FAST_FLAGS      := -O3 -ffp-contract=fast -fno-tree-loop-distribute-patterns -fopenmp
CFLAGS_backward_bench    := $(BACKWARD_FAST_FLAGS)
LDLIBS_backward_bench    := -fopenmp
CFLAGS_mha_backward_fast := $(BACKWARD_FAST_FLAGS)
LDLIBS_mha_backward_fast := -fopenmp

# The graph of the four-heads case forward and back: every tensor and its gradient with
# their shapes, read from the shapes of the files mha_backward dumps (npy_shape is in
# mk/09-kv-cache.mk).
FIGURES += $(FIG)/backward_graph.svg
$(FIG)/backward_graph.svg: FIG_RUN = mha_backward --example four-heads
$(FIG)/backward_graph.svg: $(BIN)/mha_backward tools/draw_backward.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/backward_graph && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/$(FIG_RUN) --quiet --dump $(OUT)/fig/backward_graph
	$(Q)x=$(call npy_shape,$(OUT)/fig/backward_graph/X.npy); att=$(call npy_shape,$(OUT)/fig/backward_graph/attn.npy); \
	kw=$(call npy_shape,$(OUT)/fig/backward_graph/k_proj.weight.npy); \
	$(GNUPLOT) -e "out='$@.tmp'; heading='$(FIG_RUN): every tensor and its gradient, with their shapes'; \
	    $$(echo $$x,$$att,$$kw | awk -F, '{ printf "B=%d; T=%d; D=%d; H=%d; G=%d", $$1, $$2, $$3, $$5, $$8 / ($$3 / $$5) }')" \
	    tools/draw_backward.gp
	$(Q)mv $@.tmp $@
