# Chapter 10: fast attention on a CPU. Its program, its benchmark, its figure, and
# the flags they are built with. mha_fast's main closes chapter 10; its wiring and all
# of mha_bench are tangled from Appendix B (chapters/B-ladder.md, chapters/B-timing.md).
PROGRAMS += mha_fast
# mha_bench: every rung of the ladder timed against chapter 5's (make bench; never a figure)
BENCHES  += mha_bench
FIGURES  += $(FIG)/fast_memory.svg

# -O3 vectorises the loops; -ffp-contract=fast lets a * b + c become one fused
# multiply-add, which -std=c11 otherwise forbids; -fno-tree-loop-distribute-patterns
# keeps a register tile's copy-out a loop, not a memcpy that needs the tile on the
# stack; -fopenmp runs them on every core.
# Not -march=native: the hot loops are compiled for AVX-512 and for any x86-64
# (target_clones in the chapter), so that the programs also run where AVX-512 is
# missing, valgrind included (valgrind stops an AVX-512 instruction with SIGILL).
CFLAGS_mha_fast  := -O3 -ffp-contract=fast -fno-tree-loop-distribute-patterns -fopenmp
LDLIBS_mha_fast  := -fopenmp
CFLAGS_mha_bench := -O3 -ffp-contract=fast -fno-tree-loop-distribute-patterns -fopenmp
LDLIBS_mha_bench := -fopenmp
# The rungs called in the process (Exercise 10.6's tests, the hidden ones too) are
# compiled at -Og: they check what the C computes, and build in under a second, where
# -O3's eight copies of the flash block take seven. The programs are built at -O3; the
# test that runs them (tests/test_mha_fast.c) at -Og too.
EXTRA_TESTS += mha_fast_core
CFLAGS_mha_fast_core := -Og -fopenmp
LDLIBS_mha_fast_core := -fopenmp
$(OBJ)/tests/teacher/mha_fast.o: CFLAGS += -Og -fopenmp
$(OBJ)/tests/mha_fast.o: CFLAGS_mha_fast := -Og -fopenmp

# The memory figure: deterministic byte counts (mha_bench --memory prints them from
# the chapter's rung_bytes), never timings, which only make bench prints.
$(FIG)/fast_memory.svg: $(BIN)/mha_bench tools/fast.gp | tools
	$(call say,PLOT,$@)
	$(Q)mkdir -p $(OUT)/fig
	$(Q)$(BIN)/mha_bench --memory > $(OUT)/fig/fast_memory.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/fast_memory.dat'; out='$@.tmp'" tools/fast.gp
	$(Q)mv $@.tmp $@

# The flash rung's blocks in one head under --causal, at the chapter's T = 1024 and
# hd = 768 / 12: BR, BC and KR are read from the program's own #defines, and nothing is
# timed or run.
FIGURES += $(FIG)/flash_blocks.svg
$(FIG)/flash_blocks.svg: FIG_RUN = mha_fast --seq 1024 --dim 768 --heads 12 --causal
$(FIG)/flash_blocks.svg: $(SRC)/mha_fast.c tools/draw_flash.gp | tools
	$(call say,PLOT,$@)
	$(Q)$(GNUPLOT) -e "out='$@.tmp'; T=1024; hd=768 / 12; block=10; \
	    $$(awk '$$1 == "#define" && ($$2 == "BR" || $$2 == "BC" || $$2 == "KR") { printf "%s=%d; ", $$2, $$3 }' $(SRC)/mha_fast.c) \
	    heading='$(FIG_RUN): one head, as the flash rung cuts it'" tools/draw_flash.gp
	$(Q)mv $@.tmp $@
