# Chapter 6: MultiQueryAttention and GroupedQueryAttention. Their programs, their
# figures. (What a test includes, make reads from the compiler.)
PROGRAMS += mqa gqa
# kv_cache: the chapter's table of KV-cache bytes per token, tested by test_mqa.c
EXTRA_PROGRAMS += kv_cache
FIGURES  += $(FIG)/mqa.svg $(FIG)/gqa.svg

# Both are cases set by hand on chapter 1's sentence, drawn 2 x 2 with its words.
$(FIG)/mqa.svg: $(BIN)/mqa
$(FIG)/mqa.svg: FIG_RUN = mqa --example shared-key
$(FIG)/mqa.svg: FIG_PICK = 0
$(FIG)/mqa.svg: FIG_HEADING = mqa --example shared-key: four query heads, one key holding places, k = (s, -s*s, 0, 0)
$(FIG)/mqa.svg: FIG_TITLES = head 0, kv 0: the token before|head 1, kv 0: this token|head 2, kv 0: the first token|head 3, kv 0: its own word, not in the key
$(FIG)/mqa.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

$(FIG)/gqa.svg: $(BIN)/gqa
$(FIG)/gqa.svg: FIG_RUN = gqa --example two-groups
$(FIG)/gqa.svg: FIG_PICK = 0
$(FIG)/gqa.svg: FIG_HEADING = gqa --example two-groups: kv head 0 holds places, kv head 1 holds words
$(FIG)/gqa.svg: FIG_TITLES = head 0, kv 0: the token before|head 1, kv 0: the first token|head 2, kv 1: its own word|head 3, kv 1: the nouns (cat, dog)
$(FIG)/gqa.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
