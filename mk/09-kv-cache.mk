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
