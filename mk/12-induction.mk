# Chapter 12: an attention-only transformer trained in C, and its induction heads.
# induction is compiled with -O3 (the same float operations in the same order as -O2,
# so the same bits: no -ffast-math, and -std=c11 contracts no a*b+c into an fma).
PROGRAMS += induction
CFLAGS_induction := -O3

# The trained models live in build/induction/ whatever MODE is, trained by the release
# build: `make test MODE=debug` reads them rather than train for minutes under ASan.
# Each run's printout is NAME.txt beside NAME/; make's run of induction is two-layers'.
# In a handout whose exercises stop the training at a stub, no model is written, and
# the tests that read one fail under that exercise's name.
MODELS := build/induction
export ABH_MODELS := $(MODELS)
TRAIN_two-layers := --layers 2
TRAIN_one-layer  := --layers 1
TEST_DATA += $(MODELS)/two-layers/history.npy $(MODELS)/one-layer/history.npy
$(MODELS)/%/history.npy: build/bin/induction
	$(call say,TRAIN,$(MODELS)/$* (build/bin/induction $(TRAIN_$*) --every 50))
	$(Q)mkdir -p $(MODELS) && rm -rf $(MODELS)/$*.tmp && status=0; \
	build/bin/induction $(TRAIN_$*) --every 50 --dump $(MODELS)/$*.tmp > $(MODELS)/$*.txt.tmp \
	    2> $(MODELS)/$*.err || status=$$?; \
	if [ $$status = 3 ] && [ -n "$(HANDOUT)" ]; then \
	    printf '  %-7s %s\n' TODO "induction: $$(grep -o 'not implemented yet: .*' $(MODELS)/$*.err | tail -n 1)"; \
	    rm -rf $(MODELS)/$*.tmp $(MODELS)/$*.txt.tmp; exit 0; \
	elif [ $$status != 0 ]; then cat $(MODELS)/$*.err >&2; rm -rf $(MODELS)/$*.tmp; exit 1; fi; \
	rm -rf $(MODELS)/$* && mv $(MODELS)/$*.tmp $(MODELS)/$* && mv $(MODELS)/$*.txt.tmp $(MODELS)/$*.txt
$(OUT)/run/induction.txt: $(MODELS)/two-layers/history.npy
	$(call say,RUN,induction > $@ (the printout of the two-layer training))
	$(Q)mkdir -p $(@D) && if [ -f $(MODELS)/two-layers.txt ]; then cp $(MODELS)/two-layers.txt $@; fi
ifneq ($(MODE),release)
build/bin/induction: $(SRC)/induction.c $(SRC)/tensor.h $(SRC)/tensor.c
	$(Q)$(MAKE) --no-print-directory MODE=release build/bin/induction
endif
