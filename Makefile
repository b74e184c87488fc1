# Attention by Hand: `make` builds the book's programs and figures, `make test`
# runs the TAP suite. `make help` lists every target.

# ---- user settings --------------------------------------------------------
CC      ?= gcc
MODE    ?= release#   release, or debug (-g, AddressSanitizer, UBSan)
LUA     ?= lua5.4
GNUPLOT ?= gnuplot
PROVE   ?= prove
PANDOC  ?= pandoc
VALGRIND ?= valgrind
FUZZ_CC ?= clang#     make fuzz: a clang with libFuzzer (Debian: clang, libclang-rt-14-dev)
FUZZ_SECONDS ?= 60#   make fuzz: how long each fuzzer runs
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)#  make test: how many test files run at once (default: the cores)
V       ?= 0#         V=1 shows the commands
CHAPTERS ?=#          make handout: the chapters whose exercises are cut out ("1 3"; empty: all);
#                     make grade: the chapters graded alone (empty: every chapter)
HANDOUT_DIR ?= build/handout#  make handout: where the student tree goes (new, empty, or a handout made before)
HANDOUT_KEEP_BUILD ?=#  make handout: 1 keeps the build/ of its compile check (stubs only)
EXERCISES ?=#        make check-mistakes: the exercises to check ("5.6 6.7"; empty: all)
FORMAT  ?= text#      make grade: text, json for an autograder, or tsv (one line per test)
TEACHER_TESTS ?= tests/teacher#  hidden tests (test_NAME.c) that make test and make grade add
# ---- end of user settings -------------------------------------------------

ifeq ($(origin CC),default)
  CC := gcc
endif

# The chapters, in book order: chapters/NN-name.md, then the appendices,
# chapters/A-name.md (a capital letter sorts after every digit). Each
# chapter's programs and figures are declared in mk/NN-name.mk, included
# below; an appendix has none, and no exercises (the tangler refuses them),
# but its chunks tangle into the chapters' files like any chapter's.
CHAPTER_FILES := $(sort $(wildcard chapters/*.md))
# The web book's pages and the paper book (see "The web book" below).
BOOK_FILES   := $(CHAPTER_FILES) $(sort $(wildcard solutions/*.md))
SITE         := build/site
SITE_SOURCES := book.md $(BOOK_FILES)
SITE_PAGES   := $(SITE)/index.html $(CHAPTER_FILES:chapters/%.md=$(SITE)/%.html) \
                $(patsubst solutions/%.md,$(SITE)/solutions-%.html,$(filter solutions/%,$(BOOK_FILES)))
SITE_FIGURES  = $(FIGURES:figures/%=$(SITE)/figures/%)
SITE_TOOLS   := tools/site/filter.lua tools/site/figures.lua tools/site/page.html tangle/tangle.lua
SITE_PANDOC   = $(PANDOC) -f commonmark_x -t html5 --template tools/site/page.html --toc --toc-depth=2 \
                --mathml --highlight-style=tango --lua-filter tools/site/filter.lua --lua-filter tools/site/figures.lua \
                $(SITE_SOURCES:%=-M pages=%)
CHROMIUM     ?= chromium
# With chromium and node here, make test checks the site and the PDF in a browser.
BROWSER       = $(if $(HANDOUT),,$(and $(shell command -v $(CHROMIUM)),$(shell command -v node)))
# node and npm: make test installs package-lock.json's packages (npm ci) for the browser test
# and for chapter 10's check against ONNX Runtime
NPM           = $(if $(HANDOUT),,$(and $(shell command -v node),$(shell command -v npm)))
# Tests that are scripts: the tangler, handouts, the chapters' shell sessions,
# every program's --help and flags, the grading and summary tools, PyTorch, ONNX Runtime.
SCRIPT_TESTS := tests/tangle_test.lua tests/handout_test.lua tests/tools_test.lua tests/transcripts_test.lua tests/figures_test.lua tests/cli_test.lua tests/pytorch_check.sh \
                tests/onnxruntime_check.sh

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
# EXTRA_TESTS: tests/test_NAME.c that test no program of their own (a chapter's code
# tangled into a header, say); TANGLED_HEADERS: such headers, build/src/NAME.
EXTRA_TESTS    :=
TANGLED_HEADERS :=
# BENCHES: programs that time the book's code (make bench), each printing its
# figures as ratios against a baseline run in the same process. A mk file may
# set CFLAGS_NAME and LDLIBS_NAME for one program (e.g. -O3 -march=native).
BENCHES        :=
# TRAINERS: programs that train a model (chapter 12), which tests/cli_test.lua runs briefly.
TRAINERS       :=
FIGURES        :=
# TEST_DATA: files a test reads that a program makes (chapter 12's trained models);
# make test, test-valgrind and grade make them first.
TEST_DATA      :=
include $(sort $(wildcard mk/*.mk))
# How the book reads (tools/stats.lua): a student's handout (mk/handout.mk sets
# HANDOUT) is not held to it, since its stubs change the counts.
SCRIPT_TESTS += $(if $(HANDOUT),,tests/reading_test.lua tests/site_test.sh)
export ABH_SCRIPT_TESTS = $(SCRIPT_TESTS)

# Tests of compiled code: tests/test_NAME.c -> $(TESTBIN)/NAME. tensor, stress
# and fuzz are not tied to one program; the others test one program each.
TESTS    := tensor stress fuzz tap $(PROGRAMS) $(EXTRA_TESTS)
# Hidden tests, kept out of a student handout: $(TEACHER_TESTS)/test_NAME.c
# includes NAME.c like tests/test_NAME.c does (or only tensor.h).
TEACHER_BINS := $(patsubst $(TEACHER_TESTS)/test_%.c,$(TESTBIN)/teacher/%,$(wildcard $(TEACHER_TESTS)/test_*.c))
TEST_BINS := $(TESTS:%=$(TESTBIN)/%) $(TEACHER_BINS)
TANGLED  := $(SRC)/tensor.h $(SRC)/tensor.c $(PROGRAMS:%=$(SRC)/%.c) $(EXTRA_PROGRAMS:%=$(SRC)/%.c) $(BENCHES:%=$(SRC)/%.c) \
            $(TANGLED_HEADERS:%=$(SRC)/%)
Q        := $(if $(filter 1,$(V)),,@)
say       = @printf '  %-7s %s\n' '$(1)' '$(2)'
comma    := ,#  a comma inside an argument of $(call ...)
# $(call quote,TEXT): TEXT as one word for the shell, in single quotes (for a
# path the user names, which may hold spaces).
quote     = '$(subst ','\'',$(1))'

# Any sanitizer report is fatal: the process aborts (exit status 134), in the
# test binaries, in the children they fork and in every program they run, so no
# test can mistake a report for the exit 1 of a clean refusal.
export ABH_BIN := $(BIN)
export ABH_BENCHES = $(BENCHES)
export ABH_TRAINERS = $(TRAINERS)
export ASAN_OPTIONS := detect_leaks=1:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1:abort_on_error=1

# make test-valgrind: every test binary, every child it forks and every program
# run by a test goes under valgrind. ABH_WRAP is the command the tests put
# before a program (tests/run.h, transcripts_test.lua, pytorch_check.py).
# Each process logs to its own file, which -q leaves empty unless valgrind
# found an error or a leak; any non-empty log fails the run.
VALGRIND_RUN = $(VALGRIND) -q --error-exitcode=1 --leak-check=full \
    --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
    --log-file=$(OUT)/valgrind/%p.log

# make fuzz: libFuzzer harnesses in tests/fuzz/ (see tests/fuzz/fuzz.h), seeded
# from tests/fuzz/corpus/NAME. The regressions are not seeds (the tangler's
# expansion bomb would eat the fuzzer's time); make test replays them.
FUZZERS     := npy mask tangle
FUZZ_CFLAGS := -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -g -O1 \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_WRAP   := -Wl,--wrap=exit,--wrap=fopen,--wrap=fclose
FUZZ_OPTIONS_npy    := -close_fd_mask=2 -max_len=4096 -dict=tests/fuzz/npy.dict
FUZZ_OPTIONS_mask   := -close_fd_mask=2 -max_len=512
FUZZ_OPTIONS_tangle := -max_len=4096 -timeout=10 -rss_limit_mb=2048 -dict=tests/fuzz/tangle.dict

.PHONY: all help programs run figures test test-valgrind fuzz html pdf clean tools handout grade check-handout \
        check-mistakes check-cross bench stats test-data
.DELETE_ON_ERROR:

## Build everything: tangle the chapters, compile, run every program, draw every figure.
# It ends with a few lines saying what was built and what to run next (in a
# handout: the exercises still to do); no other target prints them.
all: programs run $(if $(HANDOUT),,figures)
	@$(LUA) tools/summary.lua $(OUT) '$(PROGRAMS)' '$(PROGRAMS) $(EXTRA_PROGRAMS) $(BENCHES)' \
	    $(words $(FIGURES)) $(if $(HANDOUT),'$(ASSIGNED)')

## List the targets.
help:
	@awk '/^## /{doc=substr($$0,4); next} /^[a-z-]+:/{if(doc){split($$1,t,":"); printf "  make %-15s %s\n", t[1], doc}; doc=""}' Makefile
	@echo "  Settings: MODE=release|debug  CC=...  V=1 (show commands)  FUZZ_SECONDS=60"
	@echo "  Classes:  CHAPTERS=\"1 3\" (handout, grade)  HANDOUT_DIR=DIR (new, empty or a handout)  FORMAT=text|json|tsv (grade)"

## Tangle the chapters and compile every program into build/bin.
programs: $(PROGRAMS:%=$(BIN)/%) $(EXTRA_PROGRAMS:%=$(BIN)/%) $(BENCHES:%=$(BIN)/%)

## Run every program on its chapter's example (output in build/run).
run: $(PROGRAMS:%=$(OUT)/run/%.txt)

## Redraw every figure in figures/ from the programs' own output.
figures: $(FIGURES)

# The files the tests read that programs make (TEST_DATA: chapter 12's trained models);
# tools/check-mistakes.lua makes them in its copy of the book.
test-data: $(TEST_DATA)

## Run the TAP suite through prove (make test MODE=debug: under ASan and UBSan).
test: tools programs $(TEST_BINS) $(TEST_DATA) $(if $(NPM),node_modules/.package-lock.json) $(if $(BROWSER),html pdf)
	$(call say,PROVE,$(TESTBIN) tests)
	$(Q)$(PROVE) --norc -j$(TEST_JOBS) -e '' $(TEST_BINS) $(SCRIPT_TESTS)

## Run the TAP suite with every test and every program under valgrind (0 errors, 0 leaks).
test-valgrind: tools programs $(TEST_BINS) $(TEST_DATA)
	@if [ "$(MODE)" != release ]; then echo "make test-valgrind: use MODE=release (valgrind and ASan do not mix)" >&2; exit 1; fi
	@sh tools/ensure-tools.sh $(VALGRIND):valgrind
	$(call say,PROVE,$(TESTBIN) tests under valgrind)
	$(Q)rm -rf $(OUT)/valgrind && mkdir -p $(OUT)/valgrind
	$(Q)status=0; \
	ABH_WRAP='$(VALGRIND_RUN)' $(PROVE) --norc -j$(TEST_JOBS) -e '$(VALGRIND_RUN)' $(TEST_BINS) || status=1; \
	ABH_WRAP='$(VALGRIND_RUN)' $(PROVE) --norc -j$(TEST_JOBS) -e '' $(SCRIPT_TESTS) || status=1; \
	logs=$$(find $(OUT)/valgrind -name '*.log' -size +0 | sort); \
	for log in $$logs; do echo "== $$log"; cat "$$log"; done >&2; \
	echo "valgrind: $$(ls $(OUT)/valgrind | wc -l) processes checked, $$(echo $$logs | wc -w) with errors or leaks"; \
	[ -z "$$logs" ] && exit $$status || exit 1

## Fuzz the .npy reader, masks and the tangler, FUZZ_SECONDS each (needs clang, liblua5.4-dev).
fuzz: $(FUZZERS:%=build/fuzz/fuzz_%)
	$(Q)for f in $(FUZZERS); do \
	    printf '  %-7s %s\n' FUZZ "$$f for $(FUZZ_SECONDS) s (corpus build/fuzz/corpus/$$f)"; \
	    mkdir -p build/fuzz/corpus/$$f build/fuzz/findings/$$f && \
	    cp tests/fuzz/corpus/$$f/* build/fuzz/corpus/$$f/ && \
	    opts="$(FUZZ_OPTIONS_npy)"; [ $$f = mask ] && opts="$(FUZZ_OPTIONS_mask)"; [ $$f = tangle ] && opts="$(FUZZ_OPTIONS_tangle)"; \
	    build/fuzz/fuzz_$$f $$opts -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=build/fuzz/findings/$$f/ build/fuzz/corpus/$$f > build/fuzz/$$f.log 2>&1; status=$$?; \
	    grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|ERROR|SUMMARY' build/fuzz/$$f.log | sed 's/^/          /'; \
	    if [ $$status != 0 ]; then echo "fuzz_$$f found a bug: see build/fuzz/$$f.log and build/fuzz/findings/$$f/" >&2; \
	        tail -40 build/fuzz/$$f.log >&2; exit 1; fi; \
	done

## Grade: run the TAP suite, print passed/total per chapter and exercise (CHAPTERS="5": those alone; FORMAT=json|tsv).
# The build is quiet (its output is shown only when it fails), and so are the
# tests: their diagnostics go to $(GRADE_LOG), which the report names when a
# test failed. In a handout the assigned chapters' total is added.
GRADE_LOG := $(OUT)/grade/tests.log
grade: tools
	$(Q)mkdir -p $(OUT)/grade
	$(Q)$(MAKE) --no-print-directory programs $(TEST_BINS) $(TEST_DATA) > $(OUT)/grade/build.log 2>&1 || \
	    { cat $(OUT)/grade/build.log >&2; echo "make grade: the build failed, nothing graded (log: $(OUT)/grade/build.log)" >&2; exit 1; }
	$(Q)ABH_TEACHER_TESTS=$(call quote,$(TEACHER_TESTS)) $(LUA) tools/grade.lua --format $(call quote,$(FORMAT)) --log $(GRADE_LOG) \
	    $(if $(strip $(CHAPTERS)),--chapters $(call quote,$(strip $(CHAPTERS))),$(if $(HANDOUT),--assigned '$(ASSIGNED)')) \
	    $(TEST_BINS) $(SCRIPT_TESTS)

## Make a student handout in HANDOUT_DIR; CHAPTERS="1 3" cuts those chapters' exercises (default: all).
# HANDOUT_DIR must be new, empty, or a handout made before (.abh-handout at its
# top, which is kept out of the handout's git commit): tools/handout.lua
# refuses anything else before it deletes or writes a thing. The compile
# check's log goes to build/, never beside HANDOUT_DIR (make check-handout
# gives each handout it checks its own: HANDOUT_LOG=build/check-handout/NAME.handout.log).
HANDOUT_LOG := build/handout-check.log
handout: tools
	$(call say,HANDOUT,$(HANDOUT_DIR) from chapters $(or $(CHAPTERS),(all)))
	$(Q)$(LUA) tools/handout.lua -o $(call quote,$(HANDOUT_DIR)) $(CHAPTERS)
	$(call say,CHECK,the stubs compile with -Werror: make -C $(HANDOUT_DIR) programs)
	$(Q)mkdir -p build && $(MAKE) --no-print-directory -C $(call quote,$(HANDOUT_DIR)) MODE=release programs $(TESTS:%=$(TESTBIN)/%) \
	    > $(HANDOUT_LOG) 2>&1 || \
	    { cat $(HANDOUT_LOG) >&2; echo "make handout: the handout does not compile (log: $(HANDOUT_LOG))" >&2; exit 1; }
	$(Q)$(if $(HANDOUT_KEEP_BUILD),,rm -rf -- $(call quote,$(HANDOUT_DIR)/build))
	$(Q)if command -v git >/dev/null; then \
	    cd $(call quote,$(HANDOUT_DIR)) && git init -q && mkdir -p .git/info && echo .abh-handout >> .git/info/exclude && git add -A && \
	    git -c user.name="Attention by Hand" -c user.email=handout@attention-by-hand.invalid \
	        commit -q -m "Attention by Hand: student handout (Exercises $$(sed -n 's/^EXERCISES := //p' mk/handout.mk))" && \
	    printf '  %-7s %s\n' GIT $(call quote,$(HANDOUT_DIR))": a new repository, one commit, no history of the book"; fi

## Check handouts end to end (CHAPTERS="1 3": those; default each chapter alone, then all).
# Two checks at a time (the cores, at most 2; CHECK_HANDOUT_JOBS=N runs N).
check-handout: tools
	$(Q)sh tools/check-handout.sh $(CHAPTERS)

## Check that each exercise's own tests catch the mistakes in tests/mistakes/ (EXERCISES="5.6": those; V=1: which tests).
check-mistakes: tools
	$(Q)$(LUA) tools/check-mistakes.lua $(if $(filter 1,$(V)),-v) $(EXERCISES)

## Cross-compile every program and test for arm64 (-Werror), run the tests under qemu-user.
check-cross: tools
	$(Q)sh tools/check-cross.sh

## Run the benchmarks (timings, not tests): each prints a table, kept in build/bench/NAME.txt.
# Then mha_fast against ONNX Runtime (tools/onnxruntime.mjs), with node and npm.
bench: $(BENCHES:%=$(BIN)/%) $(if $(NPM),node_modules/.package-lock.json)
	$(Q)mkdir -p $(OUT)/bench
	$(Q)for b in $(BENCHES); do printf '  %-7s %s\n' BENCH "$$b > $(OUT)/bench/$$b.txt"; \
	    $(BIN)/$$b | tee $(OUT)/bench/$$b.txt || exit 1; done
	$(Q)if [ -z "$(NPM)" ]; then \
	    printf '  %-7s %s\n' SKIP "mha_fast against ONNX Runtime: it needs node and npm (apt-get install nodejs npm)"; \
	else printf '  %-7s %s\n' BENCH "mha_fast against ONNX Runtime > $(OUT)/bench/onnxruntime.txt"; \
	    { node tools/onnxruntime.mjs bench; echo $$? > $(OUT)/bench/onnxruntime.status; } | \
	        tee $(OUT)/bench/onnxruntime.txt.tmp; \
	    status=$$(cat $(OUT)/bench/onnxruntime.status); rm -f $(OUT)/bench/onnxruntime.status; \
	    [ "$$status" = 0 ] && mv $(OUT)/bench/onnxruntime.txt.tmp $(OUT)/bench/onnxruntime.txt; fi

## Measure how each chapter reads: words, blocks, blocks without prose around them, C lines by job (-v: where).
stats: tools
	$(Q)$(LUA) tools/stats.lua $(if $(filter 1,$(V)),-v) $(CHAPTER_FILES)

## Write the web book, one page per chapter, to build/site/ (needs pandoc; open build/site/index.html).
html: $(SITE_PAGES) $(SITE)/book.css $(SITE_FIGURES) tools/site/check.lua
	$(Q)$(LUA) tools/site/check.lua $(SITE) $(SITE_SOURCES) > $(SITE)/.check || { rm -f $(SITE)/.check; exit 1; }
	@printf '  %-7s %s\n' HTML "$(SITE)/index.html: $$(cat $(SITE)/.check)"

## Print the whole book to one PDF, build/book.pdf (needs pandoc and chromium).
pdf: build/book.pdf

## Remove build/ (figures/ is kept: it is committed).
clean:
	$(call say,RM,build)
	$(Q)rm -rf build

## Check that lua5.4, gnuplot and prove are here (installing them when root).
tools:
	@sh tools/ensure-tools.sh $(firstword $(CC)):gcc $(LUA):lua5.4 $(GNUPLOT):gnuplot-nox $(PROVE):perl

# The web book: one page per source, made by pandoc with the book's own template,
# stylesheet and filter (tools/site/), which reads every chapter's chunks through
# the tangler, so each page depends on all the sources. build/book.pdf is
# Chromium's print of the site's pages made one (build/print/book.html).
# (A handout shows the book's figures as they are: its programs may still stop at stubs.)

$(SITE)/index.html: book.md $(SITE_SOURCES) $(SITE_TOOLS)
	@sh tools/ensure-tools.sh $(PANDOC):pandoc
	$(Q)mkdir -p $(@D)
	$(Q)$(SITE_PANDOC) -M page=$< $< -o $@.tmp && mv $@.tmp $@
$(SITE)/%.html: chapters/%.md $(SITE_SOURCES) $(SITE_TOOLS)
	$(Q)mkdir -p $(@D)
	$(Q)$(SITE_PANDOC) -M page=$< $< -o $@.tmp && mv $@.tmp $@
$(SITE)/solutions-%.html: solutions/%.md $(SITE_SOURCES) $(SITE_TOOLS)
	$(Q)mkdir -p $(@D)
	$(Q)$(SITE_PANDOC) -M page=$< $< -o $@.tmp && mv $@.tmp $@
$(SITE)/book.css: tools/site/book.css
	$(Q)mkdir -p $(@D) && cp $< $@
$(SITE)/figures/%.svg: $(if $(HANDOUT),,figures/%.svg)
	$(Q)mkdir -p $(@D) && cp figures/$*.svg $@

# The browser test's driver (it downloads no browser) and ONNX Runtime's CPU library with
# an ONNX writer, pinned by package-lock.json (.npmrc: nothing from outside the registry).
node_modules/.package-lock.json: package.json package-lock.json .npmrc
	$(call say,NPM,ci: playwright-core$(comma) onnxruntime-node and onnx-proto from package-lock.json)
	$(Q)npm ci --no-audit --no-fund --loglevel=error

# The paper book: the site's pages as one page (tools/site/onepage.lua keeps every
# id apart and turns the links between pages into links within it), printed by
# Chromium with the stylesheet's print rules: each page of the site on a new sheet.
build/print/book.html: $(SITE_PAGES) $(SITE)/book.css $(SITE_FIGURES) tools/site/onepage.lua
	$(Q)mkdir -p $(@D) && cp $(SITE)/book.css $(@D)/ && rm -rf $(@D)/figures && cp -r $(SITE)/figures $(@D)/
	$(Q)$(LUA) tools/site/onepage.lua $(SITE) $(notdir $(SITE_PAGES)) > $@.tmp && mv $@.tmp $@
build/book.pdf: build/print/book.html
	@sh tools/ensure-tools.sh $(CHROMIUM):chromium pdfinfo:poppler-utils
	$(Q)$(CHROMIUM) --headless --no-sandbox --disable-gpu --no-pdf-header-footer --virtual-time-budget=20000 \
	    --print-to-pdf=$@.tmp file://$(abspath $<) 2> build/print/chromium.log && mv $@.tmp $@
	@printf '  %-7s %s\n' PDF "$@: $$(pdfinfo $@ | sed -n 's/^Pages: *//p') pages, the book on one page printed by Chromium"

# ---- tangling: one stamp for all chapters; the tangler rewrites only the
# files whose text changed, so make recompiles only what an edit touched.
build/.tangled: $(CHAPTER_FILES) tangle/tangle.lua | tools
	$(call say,TANGLE,chapters/*.md)
	$(Q)$(LUA) tangle/tangle.lua -o build $(CHAPTER_FILES)
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
	$(Q)$(CC) $(CFLAGS) $(CFLAGS_$*) -I$(SRC) $< $(OBJ)/tensor.o $(LDLIBS) $(LDLIBS_$*) -o $@

$(BIN)/npy2dat: tools/npy2dat.c $(SRC)/tensor.h $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(SRC) $< $(OBJ)/tensor.o $(LDLIBS) -o $@

# A test of a program includes the program's source (with TESTING defined).
$(TESTBIN)/%: tests/test_%.c tests/tap.h tests/run.h $(SRC)/tensor.h $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CFLAGS_$*) -I$(SRC) -Itests $< $(OBJ)/tensor.o $(LDLIBS) $(LDLIBS_$*) -o $@
$(foreach p,$(PROGRAMS),$(eval $(TESTBIN)/$(p): $(SRC)/$(p).c))

# A hidden test may include any program: it depends on every tangled file.
$(TESTBIN)/teacher/%: $(TEACHER_TESTS)/test_%.c tests/tap.h tests/run.h $(TANGLED) $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(SRC) -Itests $< $(OBJ)/tensor.o $(LDLIBS) -o $@

# The replay of the fuzzers' inputs links the harnesses with exit() wrapped.
$(TESTBIN)/fuzz: tests/test_fuzz.c tests/fuzz/fuzz.h tests/fuzz/fuzz_npy.c tests/fuzz/fuzz_mask.c tests/tap.h $(SRC)/tensor.h $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(SRC) -Itests -Itests/fuzz $< $(OBJ)/tensor.o $(LDLIBS) $(FUZZ_WRAP) -o $@

# ---- fuzzers (clang, libFuzzer): tensor.c is compiled into each
build/fuzz/fuzz_npy build/fuzz/fuzz_mask: build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(SRC)/tensor.c $(SRC)/tensor.h
	@sh tools/ensure-tools.sh $(FUZZ_CC):clang
	@ls "$$($(FUZZ_CC) --print-runtime-dir)"/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || \
	    { echo "make fuzz: $(FUZZ_CC) has no libFuzzer: apt-get install libclang-rt-14-dev" >&2; exit 1; }
	$(call say,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(SRC) -Itests/fuzz $< $(SRC)/tensor.c -lm $(FUZZ_WRAP) -o $@

build/fuzz/fuzz_tangle: tests/fuzz/fuzz_tangle.c
	@sh tools/ensure-tools.sh $(FUZZ_CC):clang
	@[ -f /usr/include/lua5.4/lua.h ] || { echo "make fuzz: the tangler's fuzzer needs Lua's headers: apt-get install liblua5.4-dev" >&2; exit 1; }
	$(call say,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -I/usr/include/lua5.4 $< -llua5.4 -lm -o $@

# ---- running
$(OUT)/run/%.txt: $(BIN)/%
	$(call say,RUN,$* > $@)
	$(Q)mkdir -p $(@D)
ifdef HANDOUT
	@# A handout's program may stop at a stub (exit status 3): say which
	@# exercise it waits for, write no output, and go on with the others.
	$(Q)status=0; $< > $@.tmp 2> $@.err || status=$$?; \
	if [ $$status = 3 ]; then printf '  %-7s %s\n' TODO "$*: $$(grep -o 'not implemented yet: .*' $@.err | tail -n 1)"; \
	elif [ $$status != 0 ]; then cat $@.err >&2; fi; \
	[ $$status = 0 ] && mv $@.tmp $@; rm -f $@.tmp $@.err; [ $$status = 0 ] || [ $$status = 3 ]
else
	$(Q)$< > $@
endif

# ---- figures: each one is drawn from its program's own --dump, so it cannot
# drift from the code. FIG_RUN is the program and its flags, FIG_PICK the
# leading indices of attn.npy to draw, FIG_HEADING and FIG_TITLES the words,
# FIG_WORDS the keys' words (and FIG_QWORDS the queries', when they differ) for
# a case whose input is a sentence.
# NaN weights (chapter 3's -inf example) are drawn as blank cells; gnuplot's
# warning about them is expected and filtered out.
figures/%.svg: $(BIN)/npy2dat tools/heatmap.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/$* && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/$(FIG_RUN) --quiet --dump $(OUT)/fig/$*
	$(Q)$(BIN)/npy2dat $(OUT)/fig/$*/attn.npy $(FIG_PICK) > $(OUT)/fig/$*.dat
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/$*.dat'; out='$@.tmp'; heading='$(FIG_HEADING)'; titles='$(FIG_TITLES)'; \
	    xwords='$(FIG_WORDS)'; ywords='$(FIG_QWORDS)'" \
	    tools/heatmap.gp 2> $(OUT)/fig/$*.log; status=$$?; \
	    grep -v 'matrix contains missing or undefined values' $(OUT)/fig/$*.log >&2; exit $$status
	$(Q)mv $@.tmp $@
