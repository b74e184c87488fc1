# Chapter 13: positions. rope (chapter 6's gqa with rotary position embedding) and
# positions (the sinusoids, tested by test_rope.c); their figures.
PROGRAMS += rope
EXTRA_PROGRAMS += positions
FIGURES  += $(FIG)/rope_word_before.svg $(FIG)/rope_reversed.svg

# The word-before head, one turning pair, on chapter 1's sentence.
$(FIG)/rope_word_before.svg: $(BIN)/rope
$(FIG)/rope_word_before.svg: FIG_RUN = rope --example word-before
$(FIG)/rope_word_before.svg: FIG_PICK = 0 0
$(FIG)/rope_word_before.svg: FIG_HEADING = rope --example word-before: one pair, turning 30 degrees a position
$(FIG)/rope_word_before.svg: FIG_TITLES = scores 32 cos((s - t + 1) 30 degrees): the word before
$(FIG)/rope_word_before.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

# The sentence and its words reversed, a head of words and a head of positions.
$(FIG)/rope_reversed.svg: $(BIN)/rope
$(FIG)/rope_reversed.svg: FIG_RUN = rope --example reversed
$(FIG)/rope_reversed.svg: FIG_PICK =
$(FIG)/rope_reversed.svg: FIG_HEADING = rope --example reversed: the sentence, then its words in reverse order
$(FIG)/rope_reversed.svg: FIG_TITLES = the cat saw ...: head 0, nouns|the cat saw ...: head 1, word before|reversed: head 0, nouns|reversed: head 1, word before

# Arrows turning with the position: the pairs of positions's table, (cos, sin) each.
FIGURES += $(FIG)/rope_arrows.svg
$(FIG)/rope_arrows.svg: $(BIN)/positions $(BIN)/npy2dat tools/draw_arrows.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/rope_arrows && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/positions --seq 8 --dim 8 --quiet --dump $(OUT)/fig/rope_arrows
	$(Q)$(BIN)/npy2dat $(OUT)/fig/rope_arrows/pe.npy > $(OUT)/fig/rope_arrows.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/rope_arrows.dat'; out='$@.tmp'; \
	    heading='positions --seq 8 --dim 8: pair i of position t is the arrow (cos, sin) of t 10000^(-2i/8)'" \
	    tools/draw_arrows.gp
	$(Q)mv $@.tmp $@

# rope_induction: chapter 12's model and training with RoPE instead of pos_emb. -O3 as
# induction (the same float operations in the same order, so the same bits); its tests
# are not vectorized, as induction's are not (GCC 12's arm64 cross compiler).
PROGRAMS += rope_induction
TRAINERS += rope_induction
CFLAGS_rope_induction := -O3
$(OBJ)/tests/rope_induction.o: CFLAGS_rope_induction := -fno-tree-vectorize

# The RoPE model make trains (seed 1, as induction's two-layers), beside chapter 12's in
# $(MODELS): rope/ and rope.txt. As chapter 12's rule: copied from $(ABH_MODEL_CACHE)
# when the same program was trained there with the same flags, and in a handout whose
# stub stops the training, no model and a TODO line.
TRAIN_ROPE := --layers 2 --every 50
TEST_DATA += $(MODELS)/rope/history.npy
$(MODELS)/rope/history.npy: build/bin/rope_induction
	$(call say,TRAIN,$(MODELS)/rope (build/bin/rope_induction $(TRAIN_ROPE)))
	$(Q)mkdir -p $(MODELS) && rm -rf $(MODELS)/rope.tmp && status=0 && cache=; \
	if [ -n "$$ABH_MODEL_CACHE" ]; then \
	    cache=$$ABH_MODEL_CACHE/$$({ cat build/bin/rope_induction; echo "$(TRAIN_ROPE)"; } | sha256sum | cut -c1-32); fi; \
	if [ -n "$$cache" ] && [ -f "$$cache/model/history.npy" ]; then \
	    printf '  %-7s %s\n' '' "the same program's model, from $$cache"; \
	    cp -R "$$cache/model" $(MODELS)/rope.tmp && cp "$$cache/printout.txt" $(MODELS)/rope.txt.tmp && : > $(MODELS)/rope.err || exit 1; \
	else \
	    build/bin/rope_induction $(TRAIN_ROPE) --dump $(MODELS)/rope.tmp > $(MODELS)/rope.txt.tmp \
	        2> $(MODELS)/rope.err || status=$$?; \
	fi; \
	if [ $$status = 3 ] && [ -n "$(HANDOUT)" ]; then \
	    printf '  %-7s %s\n' TODO "rope_induction: $$(grep -o 'not implemented yet: .*' $(MODELS)/rope.err | tail -n 1)"; \
	    rm -rf $(MODELS)/rope.tmp $(MODELS)/rope.txt.tmp; exit 0; \
	elif [ $$status != 0 ]; then cat $(MODELS)/rope.err >&2; rm -rf $(MODELS)/rope.tmp; exit 1; fi; \
	if [ -n "$$cache" ] && [ ! -d "$$cache" ]; then \
	    mkdir -p "$$cache.$$$$" && cp -R $(MODELS)/rope.tmp "$$cache.$$$$/model" && cp $(MODELS)/rope.txt.tmp "$$cache.$$$$/printout.txt" && \
	    mv -T "$$cache.$$$$" "$$cache" 2>/dev/null; rm -rf "$$cache.$$$$"; fi; \
	rm -rf $(MODELS)/rope && mv $(MODELS)/rope.tmp $(MODELS)/rope && mv $(MODELS)/rope.txt.tmp $(MODELS)/rope.txt
$(OUT)/run/rope_induction.txt: $(MODELS)/rope/history.npy
	$(call say,RUN,rope_induction > $@ (the printout of the RoPE training))
	$(Q)mkdir -p $(@D) && if [ -f $(MODELS)/rope.txt ]; then cp $(MODELS)/rope.txt $@; fi
ifneq ($(MODE),release)
build/bin/rope_induction: $(SRC)/rope_induction.c $(SRC)/tensor.h $(SRC)/tensor.c
	$(Q)$(MAKE) --no-print-directory MODE=release build/bin/rope_induction
endif

# The seeds study (not part of make: eight trainings, about two minutes on one core):
# learned positions and RoPE from --seed 1 to 4, each trained as make trains seed 1, and
# a table: the drop (the first step, every 50, whose held-out loss is below 2.0), and at
# step 2000 the best previous-token score of layer 0, the best induction score of layer 1
# and the accuracy. Seed 1's runs are make's own models.
SEEDS := $(MODELS)/seeds
# make positions-seeds: train learned positions and RoPE from seeds 1 to 4, print the table.
positions-seeds: $(SEEDS)/table.txt
	$(Q)cat $<
$(SEEDS)/learned-1.txt: $(MODELS)/two-layers/history.npy
	$(Q)mkdir -p $(@D) && cp $(MODELS)/two-layers.txt $@
$(SEEDS)/rope-1.txt: $(MODELS)/rope/history.npy
	$(Q)mkdir -p $(@D) && cp $(MODELS)/rope.txt $@
$(SEEDS)/learned-%.txt: build/bin/induction
	$(call say,TRAIN,$(SEEDS)/learned-$* (build/bin/induction --layers 2 --every 50 --seed $*))
	$(Q)mkdir -p $(@D) && build/bin/induction --layers 2 --every 50 --seed $* > $@.tmp && mv $@.tmp $@
$(SEEDS)/rope-%.txt: build/bin/rope_induction
	$(call say,TRAIN,$(SEEDS)/rope-$* (build/bin/rope_induction --layers 2 --every 50 --seed $*))
	$(Q)mkdir -p $(@D) && build/bin/rope_induction --layers 2 --every 50 --seed $* > $@.tmp && mv $@.tmp $@
$(SEEDS)/table.txt: $(foreach p,learned rope,$(foreach s,1 2 3 4,$(SEEDS)/$(p)-$(s).txt))
	$(Q){ printf '%-9s %4s  %9s  %14s  %9s  %8s\n' positions seed drop previous-token induction accuracy; \
	for f in $^; do n=$$(basename $$f .txt); awk -v p=$${n%-*} -v s=$${n##*-} \
	    '$$1 == "step" && !d && $$7 < 2.0 { d = $$2 } $$1 == "step" { pt = $$11; ind = $$13; acc = $$9 } \
	     END { printf "%-9s %4s  %9s  %14s  %9s  %8s\n", p, s, d ? d : "none", pt, ind, acc }' $$f; done; } > $@
.PHONY: positions-seeds

# The two models' training, from make's two runs of seed 1: induction's two-layers and
# rope_induction's rope. Each model's drop, the first step whose held-out loss is below
# 2.0, is a dashed line.
FIGURES += $(FIG)/rope_training.svg
$(FIG)/rope_training.svg: FIG_RUN = rope_induction --layers 2 --every 50
$(FIG)/rope_training.svg: $(MODELS)/two-layers/history.npy $(MODELS)/rope/history.npy \
                          $(BIN)/npy2dat tools/rope_training.gp | tools
	$(call say,PLOT,$@)
	$(Q)mkdir -p $(OUT)/fig
	$(Q){ $(BIN)/npy2dat $(MODELS)/two-layers/history.npy; printf '\n\n'; \
	      $(BIN)/npy2dat $(MODELS)/rope/history.npy; } > $(OUT)/fig/rope_training.dat
	$(Q)drops=$$(awk '/^$$/ { b += !blank; blank = 1; next } { blank = 0 } !d[b] && $$3 < 2.0 { d[b] = $$1 } \
	        END { printf "drop0=%d; drop1=%d", d[0], d[1] }' $(OUT)/fig/rope_training.dat); \
	$(GNUPLOT) -e "data='$(OUT)/fig/rope_training.dat'; out='$@.tmp'; $$drops; \
	    heading='induction and rope_induction --layers 2 --every 50: 128 held-out sequences, every 50 steps'" \
	    tools/rope_training.gp
	$(Q)mv $@.tmp $@

# Every head of the RoPE model on held-out sequence 0, drawn and titled as chapter 12's
# maps are (tools/induction_maps.gp).
FIGURES += $(FIG)/rope_induction_heads.svg
$(FIG)/rope_induction_heads.svg: FIG_RUN = rope_induction --layers 2 --every 50
$(FIG)/rope_induction_heads.svg: $(MODELS)/rope/history.npy $(BIN)/npy2dat tools/induction_maps.gp | tools
	$(call say,PLOT,$@)
	$(Q)mkdir -p $(OUT)/fig
	$(Q)$(BIN)/npy2dat $(MODELS)/rope/attn.npy > $(OUT)/fig/rope_induction_heads.dat
	$(Q)$(BIN)/npy2dat $(MODELS)/rope/example.npy > $(OUT)/fig/rope_induction_heads.example
	$(Q)tokens=$$(awk 'NR == 1 { for (i = 1; i < NF; i++) printf "%s%d", (i > 1 ? "|" : ""), $$i }' $(OUT)/fig/rope_induction_heads.example); \
	copy=$$(awk 'NR == 2 { for (i = 1; i <= NF; i++) { if ($$i == 1 && !s) s = i; if ($$i == 2 && !d) d = i; n += $$i == 1 } \
	        printf "src=%d; dst=%d; len=%d", s - 1, d - 1, n }' $(OUT)/fig/rope_induction_heads.example); \
	titles=$$(awk '$$1 == "layer" && $$3 == "head" { printf "%slayer %d, head %d: %s", (n++ ? "|" : ""), $$2, $$4, \
	            $$2 == 0 ? "previous-token " $$5 : "induction " $$6 }' $(MODELS)/rope.txt); \
	$(GNUPLOT) -e "data='$(OUT)/fig/rope_induction_heads.dat'; out='$@.tmp'; layout='2,2'; tokens='$$tokens'; $$copy; \
	    titles='$$titles'; heading='$(FIG_RUN): each head on the first held-out sequence'" tools/induction_maps.gp
	$(Q)mv $@.tmp $@

# The RoPE model's tests, a file of their own as chapter 12's trained models' are.
EXTRA_TESTS += rope_induction_models
CFLAGS_rope_induction_models := -fno-tree-vectorize
