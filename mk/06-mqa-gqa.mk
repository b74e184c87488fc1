# Chapter 6: MultiQueryAttention and GroupedQueryAttention. Their programs, their
# figures, and what their tests include.
PROGRAMS += mqa gqa
# kv_cache: the chapter's table of KV-cache bytes per token, tested by test_mqa.c
EXTRA_PROGRAMS += kv_cache
FIGURES  += figures/mqa.svg figures/gqa.svg
$(TESTBIN)/mqa: $(SRC)/kv_cache.c

figures/mqa.svg: $(BIN)/mqa
figures/mqa.svg: FIG_RUN = mqa --batch 1 --seq 8 --dim 16 --heads 4 --causal --seed 3
figures/mqa.svg: FIG_PICK = 0
figures/mqa.svg: FIG_HEADING = MQA --causal: four query heads, one shared key/value head (T = 8, D = 16, hd = 4)
figures/mqa.svg: FIG_TITLES = head 0|head 1|head 2|head 3

figures/gqa.svg: $(BIN)/gqa
figures/gqa.svg: FIG_RUN = gqa --batch 1 --seq 8 --dim 16 --heads 4 --kv-heads 2 --causal --seed 3
figures/gqa.svg: FIG_PICK = 0
figures/gqa.svg: FIG_HEADING = GQA --causal: four query heads on two key/value heads (T = 8, D = 16, hd = 4)
figures/gqa.svg: FIG_TITLES = head 0 (kv head 0)|head 1 (kv head 0)|head 2 (kv head 1)|head 3 (kv head 1)
