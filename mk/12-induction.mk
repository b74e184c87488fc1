# Chapter 12: an attention-only transformer trained in C, and its induction heads.
# induction is compiled with -O3 (the same float operations in the same order as -O2,
# so the same bits: no -ffast-math, and -std=c11 contracts no a*b+c into an fma).
PROGRAMS += induction
TRAINERS += induction
CFLAGS_induction := -O3
# Its test is not vectorized: GCC 12's arm64 cross compiler stops with an internal
# compiler error in its vectorizer on tests/test_induction.c (at -O2 as at -O3), and a
# test needs no speed.
$(OBJ)/tests/induction.o: CFLAGS_induction := -fno-tree-vectorize
# Exercise 12.4's tests (Adam, a 12-step run) and the trained models' tests are files
# of their own, so that the exercise's verdict waits for no training and no gradient
# check.
EXTRA_TESTS += induction_train induction_models
CFLAGS_induction_train := -fno-tree-vectorize
CFLAGS_induction_models := -fno-tree-vectorize

# The trained models live in build/induction/ whatever MODE is, trained by the release
# build: `make test MODE=debug` reads them rather than train for minutes under ASan.
# Each run's printout is NAME.txt beside NAME/; make's run of induction is two-layers'.
# In a handout whose exercises stop the training at a stub, no model is written, and
# the tests that read one are skipped, naming that exercise.
MODELS := build/induction
export ABH_MODELS := $(MODELS)
TRAIN_two-layers := --layers 2
TRAIN_one-layer  := --layers 1
TEST_DATA += $(MODELS)/two-layers/history.npy $(MODELS)/one-layer/history.npy
# ABH_MODEL_CACHE=DIR (build/models unless set; make check-handout gives its many copies
# of the book one): a model is copied from DIR when a program with the same bytes was
# trained there with the same flags, since training gives the same bits every run; each
# model trained is kept in DIR/KEY/, KEY a hash of the program and its flags. So undoing
# an edit of the trainer does not train again.
export ABH_MODEL_CACHE ?= $(abspath build)/models
$(MODELS)/%/history.npy: build/bin/induction
	$(call say,TRAIN,$(MODELS)/$* (build/bin/induction $(TRAIN_$*) --every 50))
	$(Q)mkdir -p $(MODELS) && rm -rf $(MODELS)/$*.tmp && status=0 && cache=; \
	if [ -n "$$ABH_MODEL_CACHE" ]; then \
	    cache=$$ABH_MODEL_CACHE/$$({ cat build/bin/induction; echo "$(TRAIN_$*) --every 50"; } | sha256sum | cut -c1-32); fi; \
	if [ -n "$$cache" ] && [ -f "$$cache/model/history.npy" ]; then \
	    printf '  %-7s %s\n' '' "the same program's model, from $$cache"; \
	    cp -R "$$cache/model" $(MODELS)/$*.tmp && cp "$$cache/printout.txt" $(MODELS)/$*.txt.tmp && : > $(MODELS)/$*.err || exit 1; \
	else \
	    build/bin/induction $(TRAIN_$*) --every 50 --dump $(MODELS)/$*.tmp > $(MODELS)/$*.txt.tmp \
	        2> $(MODELS)/$*.err || status=$$?; \
	fi; \
	if [ $$status = 3 ] && [ -n "$(HANDOUT)" ]; then \
	    printf '  %-7s %s\n' TODO "induction: $$(grep -o 'not implemented yet: .*' $(MODELS)/$*.err | tail -n 1)"; \
	    rm -rf $(MODELS)/$*.tmp $(MODELS)/$*.txt.tmp; exit 0; \
	elif [ $$status != 0 ]; then cat $(MODELS)/$*.err >&2; rm -rf $(MODELS)/$*.tmp; exit 1; fi; \
	if [ -n "$$cache" ] && [ ! -d "$$cache" ]; then \
	    mkdir -p "$$cache.$$$$" && cp -R $(MODELS)/$*.tmp "$$cache.$$$$/model" && cp $(MODELS)/$*.txt.tmp "$$cache.$$$$/printout.txt" && \
	    mv -T "$$cache.$$$$" "$$cache" 2>/dev/null; rm -rf "$$cache.$$$$"; fi; \
	rm -rf $(MODELS)/$* && mv $(MODELS)/$*.tmp $(MODELS)/$* && mv $(MODELS)/$*.txt.tmp $(MODELS)/$*.txt
# Whether the models must be made again (missing, or older than the code that trains
# them): make check and make grade say so before their tests wait for it.
TEST_DATA_STALE = for m in $(TEST_DATA); do [ -f $$m ] || exit 0; \
    for f in $(SRC)/induction.c $(SRC)/tensor.c $(SRC)/tensor.h; do [ $$f -nt $$m ] && exit 0; done; done; exit 1
TEST_DATA_SAY = chapter 12's models, which the tests read (copied if this trainer made them before; training takes about 15 s)
$(OUT)/run/induction.txt: $(MODELS)/two-layers/history.npy
	$(call say,RUN,induction > $@ (the printout of the two-layer training))
	$(Q)mkdir -p $(@D) && if [ -f $(MODELS)/two-layers.txt ]; then cp $(MODELS)/two-layers.txt $@; fi
ifneq ($(MODE),release)
build/bin/induction: $(SRC)/induction.c $(SRC)/tensor.h $(SRC)/tensor.c
	$(Q)$(MAKE) --no-print-directory MODE=release build/bin/induction
endif

# The chapter's three figures, drawn from the two trained models in $(MODELS): how the
# two-layer model learned (its history.npy, with the one-layer model's dashed), and each
# model's heads on the first held-out sequence (attn.npy, with example.npy's tokens and
# copy). FIG_RUN is the run that made each figure's numbers, which the caption quotes
# (tests/transcripts_test.lua checks it); the recipes refuse a FIG_RUN that is no longer
# the training rule's command above.
FIGURES += $(FIG)/induction_training.svg $(FIG)/induction_heads.svg $(FIG)/induction_one_layer.svg
INDUCTION_FIG := $(OUT)/fig/induction
check_fig_run = [ "$(FIG_RUN)" = "induction $(TRAIN_$(1)) --every 50" ] || \
    { echo "$@: FIG_RUN is '$(FIG_RUN)', but $(MODELS)/$(1) is trained by 'induction $(TRAIN_$(1)) --every 50'" >&2; exit 1; }

# The held-out loss above; the accuracy and the best head's two scores below, over the
# steps. Shaded: the drop, from the last row where both scores are under 0.2 to the
# first where both are 0.6 or more.
$(FIG)/induction_training.svg: FIG_RUN = induction --layers 2 --every 50
$(FIG)/induction_training.svg: $(MODELS)/two-layers/history.npy $(MODELS)/one-layer/history.npy \
                                $(BIN)/npy2dat tools/induction_training.gp | tools
	$(call say,PLOT,$@)
	$(Q)$(call check_fig_run,two-layers)
	$(Q)mkdir -p $(OUT)/fig
	$(Q){ $(BIN)/npy2dat $(MODELS)/two-layers/history.npy; printf '\n\n'; \
	      $(BIN)/npy2dat $(MODELS)/one-layer/history.npy; } > $(INDUCTION_FIG)_training.dat
	$(Q)drop=$$(awk '/^$$/ { exit } !e && $$5 < 0.2 && $$6 < 0.2 { s = $$1 } !e && $$5 >= 0.6 && $$6 >= 0.6 { e = $$1 } \
	        END { printf "drop0=%d; drop1=%d", s, e }' $(INDUCTION_FIG)_training.dat); \
	$(GNUPLOT) -e "data='$(INDUCTION_FIG)_training.dat'; out='$@.tmp'; $$drop; \
	    heading='$(FIG_RUN): 128 held-out sequences, every 50 steps (dashed: --layers 1)'" \
	    tools/induction_training.gp
	$(Q)mv $@.tmp $@

# Every head's weights on held-out sequence 0, titled with its scores from the run's
# printout (the first layer's previous-token score, the last layer's induction score).
$(FIG)/induction_heads.svg: FIG_RUN = induction --layers 2 --every 50
$(FIG)/induction_heads.svg: INDUCTION_MODEL = two-layers
$(FIG)/induction_heads.svg: INDUCTION_LAYOUT = 2,2
$(FIG)/induction_heads.svg: $(MODELS)/two-layers/history.npy
$(FIG)/induction_one_layer.svg: FIG_RUN = induction --layers 1 --every 50
$(FIG)/induction_one_layer.svg: INDUCTION_MODEL = one-layer
$(FIG)/induction_one_layer.svg: INDUCTION_LAYOUT = 1,2
$(FIG)/induction_one_layer.svg: $(MODELS)/one-layer/history.npy
# The keys after each query are left unhatched: Chromium's PDF printer takes minutes over
# two thousand hatched cells (make pdf hung on these maps); they hold exactly 0.
$(FIG)/induction_heads.svg $(FIG)/induction_one_layer.svg: $(FIG)/%.svg: $(BIN)/npy2dat tools/induction_maps.gp | tools
	$(call say,PLOT,$@)
	$(Q)$(call check_fig_run,$(INDUCTION_MODEL))
	$(Q)mkdir -p $(OUT)/fig
	$(Q)$(BIN)/npy2dat $(MODELS)/$(INDUCTION_MODEL)/attn.npy > $(OUT)/fig/$*.dat
	$(Q)$(BIN)/npy2dat $(MODELS)/$(INDUCTION_MODEL)/example.npy > $(OUT)/fig/$*.example
	$(Q)tokens=$$(awk 'NR == 1 { for (i = 1; i < NF; i++) printf "%s%d", (i > 1 ? "|" : ""), $$i }' $(OUT)/fig/$*.example); \
	copy=$$(awk 'NR == 2 { for (i = 1; i <= NF; i++) { if ($$i == 1 && !s) s = i; if ($$i == 2 && !d) d = i; n += $$i == 1 } \
	        printf "src=%d; dst=%d; len=%d", s - 1, d - 1, n }' $(OUT)/fig/$*.example); \
	titles=$$(awk '$$1 == "layer" && $$3 == "head" { l[++n] = $$2; h[n] = $$4; p[n] = $$5; q[n] = $$6; if ($$2 + 1 > L) L = $$2 + 1 } \
	        END { for (i = 1; i <= n; i++) printf "%slayer %d, head %d: %s", (i > 1 ? "|" : ""), l[i], h[i], \
	            L == 1 ? "previous-token " p[i] ", induction " q[i] : l[i] == 0 ? "previous-token " p[i] : "induction " q[i] }' \
	        $(MODELS)/$(INDUCTION_MODEL).txt); \
	$(GNUPLOT) -e "data='$(OUT)/fig/$*.dat'; out='$@.tmp'; layout='$(INDUCTION_LAYOUT)'; tokens='$$tokens'; $$copy; \
	    titles='$$titles'; heading='$(FIG_RUN): each head on the first held-out sequence'" tools/induction_maps.gp
	$(Q)mv $@.tmp $@

# The circuit on the first held-out sequence: the first layer's head that looks most at
# the token before, and the last layer's head that looks most, over the copy, at the key
# after the earlier occurrence of its query's token (draw_circuit.gp says what each
# block of the data is). Reads: example.npy's two rows, then the two layers' maps.
define CIRCUIT_AWK
FILENAME == ex { for (i = 1; i <= NF; i++) if (FNR == 1) tok[i - 1] = $$i + 0; else role[i - 1] = $$i + 0; next }
/^$$/ { if (r) { m++; r = 0 } next }
{ for (s = 1; s <= NF; s++) w[m + 0, r + 0, s - 1] = $$s + 0; r++; if (r > T) T = r }
END {
    src = dst = -1
    for (t = 0; t < T; t++) { if (role[t] == 1 && src < 0) src = t; if (role[t] == 2 && dst < 0) dst = t; n += role[t] == 1 }
    H = (m + 1) / 2; bp = bq = -1
    for (h = 0; h < H; h++) {
        p = q = 0
        for (t = 1; t < T; t++) p += w[h, t, t - 1]
        for (t = dst; t < dst + n - 1; t++) q += w[H + h, t, t - dst + src + 1]
        if (p > bp) { bp = p; h0 = h }
        if (q > bq) { bq = q; h1 = h }
    }
    printf "h0=%d; h1=%d; src=%d; dst=%d; len=%d", h0, h1, src, dst, n > heads
    for (t = 0; t < T; t++) print t, tok[t], role[t]
    printf "\n\n"
    for (t = 0; t < T; t++) for (s = 0; s <= t; s++) if (w[h0, t, s] >= 0.2) print s, t, w[h0, t, s], tok[s]
    printf "\n\n"
    for (t = dst; t < dst + n - 1; t++) for (s = 0; s <= t; s++) if (w[H + h1, t, s] >= 0.2) { print s, t, w[H + h1, t, s]; key[s] = 1 }
    printf "\n\n"
    for (t = 0; t < T; t++) for (s = 0; s <= t; s++) if (key[t] && w[h0, t, s] >= 0.2) print s, t, w[h0, t, s], tok[s]
    printf "\n\n"
    for (t = dst; t < dst + n - 1; t++) {
        k = 0; for (s = 1; s <= t; s++) if (w[H + h1, t, s] > w[H + h1, t, k]) k = s
        print t, tok[k], tok[k] == tok[t + 1], tok[t + 1]
    }
}
endef
export CIRCUIT_AWK
FIGURES += $(FIG)/induction_circuit.svg
$(FIG)/induction_circuit.svg: FIG_RUN = induction --layers 2 --every 50
$(FIG)/induction_circuit.svg: $(MODELS)/two-layers/history.npy $(BIN)/npy2dat tools/draw_circuit.gp | tools
	$(call say,PLOT,$@)
	$(Q)$(call check_fig_run,two-layers)
	$(Q)mkdir -p $(OUT)/fig
	$(Q)$(BIN)/npy2dat $(MODELS)/two-layers/example.npy > $(INDUCTION_FIG)_circuit.example
	$(Q)last=$$(( $$(echo $(call npy_shape,$(MODELS)/two-layers/attn.npy) | cut -d, -f1) - 1 )); \
	{ $(BIN)/npy2dat $(MODELS)/two-layers/attn.npy 0; printf '\n\n'; $(BIN)/npy2dat $(MODELS)/two-layers/attn.npy $$last; } | \
	    awk -v ex=$(INDUCTION_FIG)_circuit.example -v heads=$(INDUCTION_FIG)_circuit.heads "$$CIRCUIT_AWK" \
	    $(INDUCTION_FIG)_circuit.example - > $(INDUCTION_FIG)_circuit.dat; \
	$(GNUPLOT) -e "data='$(INDUCTION_FIG)_circuit.dat'; out='$@.tmp'; layer1=$$last; $$(cat $(INDUCTION_FIG)_circuit.heads); \
	    heading='$(FIG_RUN): the circuit on the first held-out sequence'" tools/draw_circuit.gp
	$(Q)mv $@.tmp $@
