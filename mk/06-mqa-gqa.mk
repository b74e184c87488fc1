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

# Query heads sharing key/value heads, drawn at the sizes of the three modules
# set by hand on chapter 1's sentence: H, T and hd from each run's attn.npy and
# its key projection's weight, (G * hd, D).
FIGURES  += $(FIG)/kv_heads.svg
KV_FIG := $(OUT)/fig/kv_heads
$(FIG)/kv_heads.svg: $(BIN)/mha $(BIN)/gqa $(BIN)/mqa $(BIN)/npy2dat tools/draw_groups.gp tools/draw_heads_grid.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(KV_FIG) && mkdir -p $(KV_FIG)
	$(Q)$(BIN)/mha --example four-heads --quiet --dump $(KV_FIG)/mha
	$(Q)$(BIN)/gqa --example two-groups --quiet --dump $(KV_FIG)/gqa
	$(Q)$(BIN)/mqa --example shared-key --quiet --dump $(KV_FIG)/mqa
	$(Q)for run in mha gqa mqa; do $(BIN)/npy2dat $(KV_FIG)/$$run/attn.npy 0 > $(KV_FIG)/$$run.dat || exit 1; done
	$(Q)$(BIN)/npy2dat $(KV_FIG)/mha/k_proj.weight.npy > $(KV_FIG)/mha_k.dat
	$(Q)$(BIN)/npy2dat $(KV_FIG)/gqa/k_proj.weight.npy > $(KV_FIG)/gqa_k.dat
	$(Q)$(BIN)/npy2dat $(KV_FIG)/mqa/W_K.weight.npy > $(KV_FIG)/mqa_k.dat
	$(Q)$(GNUPLOT) -e "data='$(KV_FIG)/mha.dat|$(KV_FIG)/gqa.dat|$(KV_FIG)/mqa.dat'; \
	    kdata='$(KV_FIG)/mha_k.dat|$(KV_FIG)/gqa_k.dat|$(KV_FIG)/mqa_k.dat'; out='$@.tmp'; \
	    heading='Four query heads on four, two and one key/value heads'; \
	    titles='mha --example four-heads|gqa --example two-groups|mqa --example shared-key'" tools/draw_groups.gp
	$(Q)mv $@.tmp $@
