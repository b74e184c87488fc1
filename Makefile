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

# The chapters, in book order. Each chapter's programs and figures are
# declared in mk/NN-name.mk, included below.
CHAPTERS := $(sort $(wildcard chapters/*.md))
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

# PROGRAMS: one per chapter, each with tests/test_NAME.c. EXTRA_PROGRAMS: small
# programs a chapter builds beside its own (for a figure), tested by its test.
.DEFAULT_GOAL := all
PROGRAMS       :=
EXTRA_PROGRAMS :=
FIGURES        :=
include $(sort $(wildcard mk/*.mk))

TESTS    := tensor $(PROGRAMS)
TANGLED  := $(SRC)/tensor.h $(SRC)/tensor.c $(PROGRAMS:%=$(SRC)/%.c) $(EXTRA_PROGRAMS:%=$(SRC)/%.c)
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

build/book.html: book.md $(CHAPTERS) $(FIGURES) tools/book-links.lua tools/check-html.sh
	@sh tools/ensure-tools.sh $(PANDOC):pandoc
	$(call say,PANDOC,$@)
	$(Q)$(PANDOC) -f commonmark_x -t html5 -s --toc --mathml --highlight-style=tango --self-contained \
	    --resource-path=.:chapters --metadata pagetitle="Attention by Hand" \
	    --lua-filter tools/book-links.lua $(CHAPTERS:%=-M chapters=%) book.md $(CHAPTERS) -o $@.tmp
	$(Q)sh tools/check-html.sh $@.tmp $(CHAPTERS)
	$(Q)mv $@.tmp $@

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
