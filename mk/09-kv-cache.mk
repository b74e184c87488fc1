# Chapter 9: decoding one token at a time with a KV cache. Its programs, its
# figure and its benchmark. decode_costs's main, and decode_bench's outline,
# timing and main, are tangled from Appendix B (chapters/B-timing.md), beside
# mha_bench; the step and the counts they time and print are this chapter's.
PROGRAMS += decode
# decode_costs: the chapter's table of cache bytes and MACs per token (the figure's
# data), tested by test_decode.c
EXTRA_PROGRAMS += decode_costs
# decode_bench: the time per token as the cache grows (make bench; never a figure)
BENCHES += decode_bench
FIGURES  += $(FIG)/decode_costs.svg

# A line plot of decode_costs's two tables (its own output, exact counts): cache
# bytes, and MACs per token with and without the cache. No timing is ever drawn
# here; make bench prints decode_bench's times to build/bench.
$(FIG)/decode_costs.svg: $(BIN)/decode_costs tools/lines.gp | tools
	$(call say,PLOT,$@)
	$(Q)mkdir -p $(OUT)/fig
	$(Q)$(BIN)/decode_costs > $(OUT)/fig/decode_costs.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/decode_costs.dat'; out='$@.tmp'; group=3; \
	    heading='One attention layer decoding, D = 768, H = 12 heads of 64: per token, as the cache grows'; \
	    titles='bytes of K and V in the cache (float32)|MACs of one step (dashed: no cache, the whole prefix again)'; \
	    xlabel='S, tokens in the cache after the step'; ylabels='bytes|multiply-accumulates'" tools/lines.gp
	$(Q)mv $@.tmp $@

# The shape of a .npy file, read from its header, as "1,2,8,4" (also used by
# mk/11-backward.mk): a drawing of shapes takes them from the files the program wrote.
npy_shape = $$(head -c 256 $(1) | grep -ao "'shape': ([0-9, ]*)" | tr -cd '0-9,')

# The cache at four of decode's eight steps, on chapter 6's two-groups example (every
# number set by hand; gqa dumps it, decode loads it): the rows of K and V each step
# holds and appends, with their numbers, and each query head's weights over them.
FIGURES += $(FIG)/decode_cache.svg
DECODE_FIG := $(OUT)/fig/decode_cache
$(FIG)/decode_cache.svg: FIG_RUN = decode --load case --heads 4 --kv-heads 2
$(FIG)/decode_cache.svg: $(BIN)/decode $(BIN)/gqa $(BIN)/npy2dat tools/draw_cache.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(DECODE_FIG) && mkdir -p $(DECODE_FIG)
	$(Q)$(BIN)/gqa --example two-groups --causal --quiet --dump $(DECODE_FIG)/case
	$(Q)cd $(DECODE_FIG) && $(abspath $(BIN))/$(FIG_RUN) --quiet --dump run
	$(Q){ $(BIN)/npy2dat $(DECODE_FIG)/run/attn.npy 0 | \
	        awk '/^$$/ { if (t) { h++; t = 0 } next } { for (s = 1; s <= t + 1; s++) print t, h + 0, s - 1, $$s; t++ }'; \
	    for c in k v; do printf '\n\n'; $(BIN)/npy2dat $(DECODE_FIG)/run/$${c}_cache.npy 0 | \
	        awk '/^$$/ { if (s) { g++; s = 0 } next } { for (j = 1; j <= NF; j++) print g + 0, s, j - 1, $$j + 0; s++ }'; \
	    done; } > $(DECODE_FIG).dat
	$(Q)kv=$(call npy_shape,$(DECODE_FIG)/run/k_cache.npy); att=$(call npy_shape,$(DECODE_FIG)/run/attn.npy); \
	$(GNUPLOT) -e "data='$(DECODE_FIG).dat'; out='$@.tmp'; steps='1 2 3 7'; \
	    $$(echo $$att,$$kv | awk -F, '{ printf "H=%d; G=%d; T=%d; hd=%d", $$2, $$6, $$7, $$8 }'); \
	    words='the|cat|saw|the|dog|saw|the|cat'; \
	    heading='$(FIG_RUN) (case: gqa --example two-groups --causal): four of its eight steps'" \
	    tools/draw_cache.gp
	$(Q)mv $@.tmp $@
