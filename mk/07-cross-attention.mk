# Chapter 7: CrossAttention. Its program, its figure, and what its test includes.
# test_cross_attention also runs chapter 5's build/bin/mha (Q = K = V = X), when it is there.
PROGRAMS += cross_attention
FIGURES  += figures/cross_attention.svg

figures/cross_attention.svg: $(BIN)/cross_attention
figures/cross_attention.svg: FIG_RUN = cross_attention --batch 1 --seq 4 --kv-seq 7 --dim 16 --heads 4 --seed 7
figures/cross_attention.svg: FIG_PICK = 0
figures/cross_attention.svg: FIG_HEADING = CrossAttention: T = 4 queries over S = 7 keys, one map per head (key 6 is source padding)
figures/cross_attention.svg: FIG_TITLES = head 0|head 1|head 2|head 3
