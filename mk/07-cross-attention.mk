# Chapter 7: CrossAttention. Its program, its figure, and what its test includes.
# test_cross_attention also runs chapter 5's build/bin/mha (Q = K = V = X), when it is there.
PROGRAMS += cross_attention
FIGURES  += figures/cross_attention.svg

figures/cross_attention.svg: $(BIN)/cross_attention
figures/cross_attention.svg: FIG_RUN = cross_attention --example align
figures/cross_attention.svg: FIG_PICK = 0
figures/cross_attention.svg: FIG_HEADING = CrossAttention by hand: the target “a dog saw the cat” reads the source “the cat saw a dog”
figures/cross_attention.svg: FIG_TITLES = head 0: find the same word|head 1: read backwards, key 4 - t
figures/cross_attention.svg: FIG_QWORDS = a|dog|saw|the|cat
figures/cross_attention.svg: FIG_WORDS = the|cat|saw|a|dog|pad
