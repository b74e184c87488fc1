# Chapter 7: CrossAttention. Its program, its figure. (What a test includes, make reads from the compiler.)
# test_cross_attention also runs chapter 5's build/bin/mha (Q = K = V = X), when it is there.
PROGRAMS += cross_attention
FIGURES  += $(FIG)/cross_attention.svg

$(FIG)/cross_attention.svg: $(BIN)/cross_attention
$(FIG)/cross_attention.svg: FIG_RUN = cross_attention --example align
$(FIG)/cross_attention.svg: FIG_PICK = 0
$(FIG)/cross_attention.svg: FIG_HEADING = CrossAttention by hand: the target “a dog saw the cat” reads the source “the cat saw a dog”
$(FIG)/cross_attention.svg: FIG_TITLES = head 0: find the same word|head 1: read backwards, key 4 - t
$(FIG)/cross_attention.svg: FIG_QWORDS = a|dog|saw|the|cat
$(FIG)/cross_attention.svg: FIG_WORDS = the|cat|saw|a|dog|pad
