# Attention by Hand: `make` builds the book's programs and figures, `make test`
# runs the TAP suite. `make help` lists every target.

# ---- user settings --------------------------------------------------------
CC      ?= gcc
MODE    ?= release#   release, or debug (-g, AddressSanitizer, UBSan)
LUA     ?= lua5.4
GNUPLOT ?= gnuplot
PROVE   ?= prove
PANDOC  ?= pandoc
V       ?= 0#         V=1 shows the commands
# ---- end of user settings -------------------------------------------------

ifeq ($(origin CC),default)
  CC := gcc
endif

# The chapters, in book order, and the programs they build.
CHAPTERS := $(sort $(wildcard chapters/*.md))
PROGRAMS := selfatt_v1 selfatt_v2 selfatt_v3 selfatt_v4
# Small programs a chapter builds beside its own, for a figure (chapter 3's
# fill_values); the chapter's test file tests them.
EXTRA_PROGRAMS := fill_values
TESTS    := tensor $(PROGRAMS)
# Tests that are scripts: the tangler, the chapters' shell sessions, PyTorch.
SCRIPT_TESTS := tests/tangle_test.lua tests/transcripts_test.lua tests/pytorch_check.sh

ifeq ($(MODE),release)
  OUT := build
  MODE_CFLAGS := -O2
else ifeq ($(MODE),debug)
  OUT := build/debug
  MODE_CFLAGS := -g -O0 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
  $(error MODE must be release or debug, not '$(MODE)')
endif

CFLAGS  := -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L $(MODE_CFLAGS)
LDLIBS  := -lm
SRC     := build/src
OBJ     := $(OUT)/obj
BIN     := $(OUT)/bin
TESTBIN := $(OUT)/tests

TANGLED  := $(SRC)/tensor.h $(SRC)/tensor.c $(PROGRAMS:%=$(SRC)/%.c)
FIGURES  := $(PROGRAMS:%=figures/%.svg)
TANGLED  += $(EXTRA_PROGRAMS:%=$(SRC)/%.c)
FIGURES  += figures/selfatt_v3_causal.svg figures/fill_values.svg
Q        := $(if $(filter 1,$(V)),,@)
say       = @printf '  %-7s %s\n' '$(1)' '$(2)'

export ABH_BIN := $(BIN)
export ASAN_OPTIONS := detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1

.PHONY: all help programs run figures test html clean tools
.DELETE_ON_ERROR:

## Build everything: tangle the chapters, compile, run every program, draw every figure.
all: programs run figures

## List the targets.
help:
	@awk '/^## /{doc=substr($$0,4); next} /^[a-z]+:/{if(doc){split($$1,t,":"); printf "  make %-9s %s\n", t[1], doc}; doc=""}' Makefile
	@echo "  Settings: MODE=release|debug  CC=...  V=1 (show commands)"

## Tangle the chapters and compile every program into build/bin.
programs: $(PROGRAMS:%=$(BIN)/%) $(EXTRA_PROGRAMS:%=$(BIN)/%)

## Run every program on its chapter's example (output in build/run).
run: $(PROGRAMS:%=$(OUT)/run/%.txt)

## Redraw every figure in figures/ from the programs' own output.
figures: $(FIGURES)

## Run the TAP suite through prove (make test MODE=debug: under ASan and UBSan).
test: tools programs $(TESTS:%=$(TESTBIN)/%)
	$(call say,PROVE,$(TESTBIN) tests)
	$(Q)$(PROVE) --norc -e '' $(TESTS:%=$(TESTBIN)/%) $(SCRIPT_TESTS)

## Render the whole book as one page, build/book.html (needs pandoc).
html: build/book.html

## Remove build/ (figures/ is kept: it is committed).
clean:
	$(call say,RM,build)
	$(Q)rm -rf build

## Check that lua5.4, gnuplot and prove are here (installing them when root).
tools:
	@sh tools/ensure-tools.sh $(firstword $(CC)):gcc $(LUA):lua5.4 $(GNUPLOT):gnuplot-nox $(PROVE):perl

build/book.html: book.md $(CHAPTERS) $(FIGURES)
	@sh tools/ensure-tools.sh $(PANDOC):pandoc
	$(call say,PANDOC,$@)
	$(Q)$(PANDOC) -f commonmark_x -s --toc --mathml --highlight-style=tango --self-contained \
	    --resource-path=.:chapters --metadata pagetitle="Attention by Hand" book.md $(CHAPTERS) -o $@

# ---- tangling: one stamp for all chapters; the tangler rewrites only the
# files whose text changed, so make recompiles only what an edit touched.
build/.tangled: $(CHAPTERS) tangle/tangle.lua | tools
	$(call say,TANGLE,chapters/*.md)
	$(Q)$(LUA) tangle/tangle.lua -o build $(CHAPTERS)
	$(Q)touch $@

$(TANGLED): build/.tangled ;

# ---- compiling
$(OBJ)/tensor.o: $(SRC)/tensor.c $(SRC)/tensor.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(SRC) -c $< -o $@

$(BIN)/%: $(SRC)/%.c $(SRC)/tensor.h $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(SRC) $< $(OBJ)/tensor.o $(LDLIBS) -o $@

$(BIN)/npy2dat: tools/npy2dat.c $(SRC)/tensor.h $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(SRC) $< $(OBJ)/tensor.o $(LDLIBS) -o $@

# A test of a program includes the program's source (with TESTING defined).
$(TESTBIN)/%: tests/test_%.c tests/tap.h tests/run.h $(SRC)/tensor.h $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(SRC) -Itests $< $(OBJ)/tensor.o $(LDLIBS) -o $@
$(foreach p,$(PROGRAMS),$(eval $(TESTBIN)/$(p): $(SRC)/$(p).c))
# Tests that include more than their own chapter's program:
$(TESTBIN)/selfatt_v2: $(SRC)/selfatt_v1.c
$(TESTBIN)/selfatt_v3: $(SRC)/selfatt_v2.c $(SRC)/fill_values.c

# ---- running
$(OUT)/run/%.txt: $(BIN)/%
	$(call say,RUN,$* > $@)
	$(Q)mkdir -p $(@D)
	$(Q)$< > $@

# ---- figures: each one is drawn from its program's own --dump, so it cannot
# drift from the code. FIG_RUN is the program and its flags, FIG_PICK the
# leading indices of attn.npy to draw, FIG_HEADING and FIG_TITLES the words.
# NaN weights (chapter 3's -inf example) are drawn as blank cells; gnuplot's
# warning about them is expected and filtered out.
figures/%.svg: $(BIN)/npy2dat tools/heatmap.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/$* && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/$(FIG_RUN) --quiet --dump $(OUT)/fig/$*
	$(Q)$(BIN)/npy2dat $(OUT)/fig/$*/attn.npy $(FIG_PICK) > $(OUT)/fig/$*.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/$*.dat'; out='$@.tmp'; heading='$(FIG_HEADING)'; titles='$(FIG_TITLES)'" \
	    tools/heatmap.gp 2> $(OUT)/fig/$*.log; status=$$?; \
	    grep -v 'matrix contains missing or undefined values' $(OUT)/fig/$*.log >&2; exit $$status
	$(Q)mv $@.tmp $@

figures/selfatt_v1.svg: $(BIN)/selfatt_v1
figures/selfatt_v1.svg: FIG_RUN = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3
figures/selfatt_v1.svg: FIG_PICK = 0
figures/selfatt_v1.svg: FIG_HEADING = SelfAttV1 attention weights, one sequence (T = 6, D = 8)
figures/selfatt_v1.svg: FIG_TITLES = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3

figures/selfatt_v2.svg: $(BIN)/selfatt_v2
figures/selfatt_v2.svg: FIG_RUN = selfatt_v2 --batch 1 --seq 6 --dim 8 --seed 3
figures/selfatt_v2.svg: FIG_PICK = 0
figures/selfatt_v2.svg: FIG_HEADING = SelfAttV2 attention weights, one sequence (T = 6, D = 8)
figures/selfatt_v2.svg: FIG_TITLES = selfatt_v2 --batch 1 --seq 6 --dim 8 --seed 3

figures/selfatt_v3.svg: $(BIN)/selfatt_v3
figures/selfatt_v3.svg: FIG_RUN = selfatt_v3
figures/selfatt_v3.svg: FIG_PICK =
figures/selfatt_v3.svg: FIG_HEADING = SelfAttV3 on the padded batch of the notebook: B = 3, T = 4, D = 2
figures/selfatt_v3.svg: FIG_TITLES = b = 0 (length 3)|b = 1 (length 2)|b = 2 (length 1)

figures/selfatt_v3_causal.svg: $(BIN)/selfatt_v3
figures/selfatt_v3_causal.svg: FIG_RUN = selfatt_v3 --batch 1 --seq 6 --dim 8 --seed 3 --causal
figures/selfatt_v3_causal.svg: FIG_PICK = 0
figures/selfatt_v3_causal.svg: FIG_HEADING = SelfAttV3 --causal: query t sees keys 0..t, and key 5 is padding
figures/selfatt_v3_causal.svg: FIG_TITLES = selfatt_v3 --batch 1 --seq 6 --dim 8 --seed 3 --causal

figures/fill_values.svg: $(BIN)/fill_values
figures/fill_values.svg: FIG_RUN = fill_values
figures/fill_values.svg: FIG_PICK =
figures/fill_values.svg: FIG_HEADING = One example, three ways to hide a score (blank cells are NaN)
figures/fill_values.svg: FIG_TITLES = masked_fill -1e20 (seed 004)|masked_fill -inf (seeds 000, 002)|add -10000 (seed 003)

figures/selfatt_v4.svg: $(BIN)/selfatt_v4
figures/selfatt_v4.svg: FIG_RUN = selfatt_v4 --batch 2 --seq 5 --dim 8 --seed 5 --causal
figures/selfatt_v4.svg: FIG_PICK =
figures/selfatt_v4.svg: FIG_HEADING = SelfAttV4 --causal on a padded batch: B = 2, T = 5, D = 8
figures/selfatt_v4.svg: FIG_TITLES = b = 0 (length 4)|b = 1 (length 3)
