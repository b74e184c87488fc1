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
JOBS    ?= $(shell nproc 2>/dev/null || echo 1)#  how many jobs make runs at once (default: the cores; make -j1 for one)
TEST_JOBS ?= $(JOBS)#  make test: how many test files run at once
V       ?= 0#         V=1 shows the commands
CHAPTERS ?=#          make handout: the chapters whose exercises are cut out ("1 3"; empty: all);
#                     make check, make grade: the chapters checked alone (empty: every chapter)
EX      ?=#           make check, make grade: the exercises checked alone ("5.6"; empty: all)
HANDOUT_DIR ?= handout#  make handout: where the student tree goes (new, empty, or a handout made before)
FORCE   ?=#           make handout: 1 replaces a handout even when it holds a student's work
HANDOUT_KEEP_BUILD ?=#  make handout: 1 keeps the build/ of its compile check (stubs only)
EXERCISES ?=#        make check-mistakes: the exercises to check ("5.6 6.7"; empty: all)
FORMAT  ?= text#      make grade: text, json for an autograder, tsv (one line per test), or gradescope (results.json)
RELATED ?= 1#         make grade CHAPTERS=...: 0 runs only the chapters' own tests, not those elsewhere that run their code
TEACHER_TESTS ?= tests/teacher#  hidden tests (test_NAME.c) that make test and make grade add
HIDDEN_VISIBILITY ?= hidden#  FORMAT=gradescope: when students see the hidden tests (hidden, after_due_date, after_published)
SUBMISSION ?=#        make grade-submission: a student's handout, a directory or a git URL
# ---- end of user settings -------------------------------------------------

ifeq ($(origin CC),default)
  CC := gcc
endif

# Every core, and each target's output kept together (a compile's errors are never
# interleaved with another's). A -j on the command line wins: make -j1 runs one job.
# A make that another make runs shares its parent's jobs instead.
ifeq ($(MAKELEVEL),0)
  MAKEFLAGS += -j$(JOBS) --output-sync=target
endif
# (A recipe line that starts with + is not held back: the long runs, prove, the fuzzers,
# the benchmarks and the checks, show their lines as they come.)

# The chapters, in book order: chapters/NN-name.md, then the appendices,
# chapters/A-name.md (a capital letter sorts after every digit). Each
# chapter's programs and figures are declared in mk/NN-name.mk, included
# below; an appendix has none, and no exercises (the tangler refuses them),
# but its chunks tangle into the chapters' files like any chapter's.
CHAPTER_FILES := $(sort $(wildcard chapters/*.md))
# The web book's pages and the paper book (see "The web book" below).
BOOK_FILES   := $(CHAPTER_FILES) $(sort $(wildcard solutions/*.md))
SITE         := build/site
SITE_SOURCES := book.md $(BOOK_FILES) teachers.md
SITE_PAGES   := $(SITE)/index.html $(CHAPTER_FILES:chapters/%.md=$(SITE)/%.html) \
                $(patsubst solutions/%.md,$(SITE)/solutions-%.html,$(filter solutions/%,$(BOOK_FILES))) \
                $(SITE)/teachers.html
SITE_FIGURES  = $(FIGURES:$(FIG)/%=$(SITE)/figures/%)
SITE_TOOLS   := tools/site/filter.lua tools/site/figures.lua tools/site/page.html tangle/tangle.lua \
                $(wildcard mk/*.mk)
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
# every program's --help and flags, the grading and summary tools, PyTorch
# (and, below, how the book reads and its grading for course platforms).
SCRIPT_TESTS := tests/tangle_test.lua tests/handout_test.lua tests/tools_test.lua tests/transcripts_test.lua \
                tests/figures_test.lua tests/cli_test.lua tests/pytorch_check.sh
# The checks of outside tools that take minutes (make test-external): the web book and
# the PDF in Chromium, and ONNX Runtime against chapter 10's mha_fast.
EXTERNAL_TESTS := tests/site_test.sh tests/panel_test.sh tests/onnxruntime_check.sh

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
# Each compile writes the headers and sources it read to $(OUT)/dep/*.d (gcc -MMD), which
# make reads back: what a program or a test includes is never listed by hand.
DEPFLAGS = -MMD -MP -MT $@ -MF $(OUT)/dep/$(subst /,-,$(patsubst $(OUT)/%,%,$@)).d
LDLIBS  := -lm
SRC     := build/src
OBJ     := $(OUT)/obj
BIN     := $(OUT)/bin
TESTBIN := $(OUT)/tests
# The figures as this build draws them; make figures copies them into figures/ (committed).
FIG     := $(OUT)/figures

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
FIGURES        :=
# TRAINERS: programs that train a model (chapter 12), which tests/cli_test.lua runs briefly.
TRAINERS       :=
# TEST_DATA: files a test reads that a program makes (chapter 12's trained models);
# make test, test-valgrind and grade make them first.
TEST_DATA      :=
include $(sort $(wildcard mk/*.mk))
# How the book reads (tools/stats.lua): a student's handout (mk/handout.mk sets
# HANDOUT) is not held to it, since its stubs change the counts.
SCRIPT_TESTS += $(if $(HANDOUT),,tests/reading_test.lua)
# Grading for course platforms (make autograder, grade-submission, FORMAT=gradescope)
# is tried on the book's own answers and hidden tests, which a handout has not.
SCRIPT_TESTS += $(if $(HANDOUT),,tests/platforms_test.lua)

# Tests of compiled code: tests/test_NAME.c -> $(TESTBIN)/NAME. tensor, stress
# and fuzz are not tied to one program; the others test one program each.
# (A handout of chapter 0 alone has no test_stress.c: it runs chapters 1 to 4's programs.)
TESTS    := $(foreach t,tensor stress fuzz tap,$(if $(wildcard tests/test_$(t).c),$(t))) $(PROGRAMS) $(EXTRA_TESTS)
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
# what each compile read (gcc -MMD): tools/grade.lua learns from it what a test includes
export ABH_DEP := $(OUT)/dep
# the benchmarks, trainers and script tests, for the tools that must know them
# (tests/cli_test.lua, tools/handout.lua)
export ABH_BENCHES = $(BENCHES)
export ABH_TRAINERS = $(TRAINERS)
export ABH_SCRIPT_TESTS = $(SCRIPT_TESTS) $(EXTERNAL_TESTS)
export ASAN_OPTIONS := detect_leaks=1:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1:abort_on_error=1

# make test-valgrind: every test binary, every child it forks and every program
# run by a test goes under valgrind. ABH_WRAP is the command the tests put
# before a program (tests/run.h, transcripts_test.lua, pytorch_check.py).
# Each process logs to its own file, which -q leaves empty unless valgrind
# found an error or a leak; any non-empty log fails the run. About 6,000
# processes run, most of them briefly, so valgrind's start counts: without the
# inlined functions' debug information it starts in 0.43 s instead of 0.52 (a
# report's stack then names the function a call was inlined into).
VALGRIND_RUN = $(VALGRIND) -q --error-exitcode=1 --leak-check=full --read-inline-info=no \
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

.PHONY: all help programs run figures draw test test-programs test-external test-valgrind fuzz html pdf clean tools handout grade check bench-check \
        grade-submission autograder \
        check-handout check-mistakes check-cross bench stats test-data FORCE
.DELETE_ON_ERROR:
# Objects and the like are kept once made (never removed as intermediate files).
.SECONDARY:

## Build everything: tangle the chapters, compile, run every program, draw every figure (into build/figures).
# It ends with a few lines saying what was built and what to run next (in a
# handout: the exercises still to do); no other target prints them. The figures
# are drawn into $(FIG) and compared with the committed ones in figures/, which
# only make figures changes: a wrong answer never rewrites a file git tracks.
all: programs run $(if $(HANDOUT),,draw)
	@$(LUA) tools/summary.lua $(OUT) '$(PROGRAMS)' '$(PROGRAMS) $(EXTRA_PROGRAMS) $(BENCHES)' \
	    $(words $(FIGURES)) $(if $(HANDOUT),'$(ASSIGNED)')

## List the targets.
help:
	@awk '/^## /{doc=substr($$0,4); next} /^[a-z-]+:/{if(doc){split($$1,t,":"); printf "  make %-17s %s\n", t[1], doc}; doc=""}' Makefile mk/wasm.mk
	@echo "  Settings: MODE=release|debug  CC=...  V=1 (show commands)  FUZZ_SECONDS=60"
	@echo "  Classes:  CHAPTERS=\"1 3\" (handout, grade)  HANDOUT_DIR=DIR (new, empty or a handout)  FORMAT=text|json|tsv|gradescope (grade)"
	@echo "            SUBMISSION=DIR|URL (grade-submission)  RELATED=0 (grade: the chapters' own tests alone)"

## Tangle the chapters and compile every program into build/bin.
PROGRAM_BINS = $(PROGRAMS:%=$(BIN)/%) $(EXTRA_PROGRAMS:%=$(BIN)/%) $(BENCHES:%=$(BIN)/%)
programs: $(PROGRAM_BINS)

## Run every program on its chapter's example (output in build/run).
run: $(PROGRAMS:%=$(OUT)/run/%.txt)

# Draw every figure into $(FIG), and say which differ from the committed ones.
draw: $(FIGURES)
	$(if $(FIGURES),@differ=; for f in $(FIGURES:$(FIG)/%=%); do cmp -s $(FIG)/$$f figures/$$f || differ="$$differ $$f"; done; \
	if [ -n "$$differ" ]; then printf '  %-7s %s\n' DIFFER "$(FIG) differs from figures/ in:$$differ (make figures copies them there)"; \
	else printf '  %-7s %s\n' SAME "the $(words $(FIGURES)) figures drawn in $(FIG) are those of figures/"; fi)

## Redraw every figure and copy those that changed into figures/ (the book's, committed).
figures: $(FIGURES)
	@for f in $(FIGURES:$(FIG)/%=%); do cmp -s $(FIG)/$$f figures/$$f || \
	    { cp $(FIG)/$$f figures/$$f && printf '  %-7s %s\n' CP "$(FIG)/$$f -> figures/$$f"; }; done

# The files the tests read that programs make (TEST_DATA: chapter 12's trained models);
# tools/check-mistakes.lua makes them in its copy of the book.
test-data: $(TEST_DATA)

# The compiled tests (not the hidden ones): make handout's compile check builds the handout's own.
test-programs: $(TESTS:%=$(TESTBIN)/%)

## Run the TAP suite through prove (make test MODE=debug: under ASan and UBSan).
test: tools programs $(TEST_BINS) $(TEST_DATA)
	$(call say,PROVE,$(words $(TEST_BINS) $(SCRIPT_TESTS)) test files in $(TESTBIN) and tests/)
	+$(Q)$(PROVE) --norc -j$(TEST_JOBS) -e '' $(TEST_BINS) $(SCRIPT_TESTS) || \
	    { echo "make test: prove lists failures by number; make check names each failed test, with what it got and expected" >&2; exit 1; }

## Check outside tools against the book: the web book and the PDF in Chromium, ONNX Runtime (minutes).
# Each is skipped with one line naming what to install when its tools are missing.
test-external: tools programs $(if $(NPM),node_modules/.package-lock.json) $(if $(BROWSER),html pdf)
	$(call say,PROVE,$(EXTERNAL_TESTS))
	+$(Q)$(PROVE) --norc -j$(TEST_JOBS) -e '' $(EXTERNAL_TESTS)

## Run the TAP suite with every test and every program under valgrind (0 errors, 0 leaks).
test-valgrind: tools programs $(TEST_BINS) $(TEST_DATA)
	@if [ "$(MODE)" != release ]; then echo "make test-valgrind: use MODE=release (valgrind and ASan do not mix)" >&2; exit 1; fi
	@sh tools/ensure-tools.sh $(firstword $(VALGRIND)):valgrind
	$(call say,PROVE,$(TESTBIN) tests under valgrind)
	$(Q)rm -rf $(OUT)/valgrind && mkdir -p $(OUT)/valgrind
	+$(Q)status=0; \
	ABH_WRAP='$(VALGRIND_RUN)' $(PROVE) --norc -j$(TEST_JOBS) -e '$(VALGRIND_RUN)' $(TEST_BINS) || status=1; \
	ABH_WRAP='$(VALGRIND_RUN)' $(PROVE) --norc -j$(TEST_JOBS) -e '' $(SCRIPT_TESTS) || status=1; \
	logs=$$(find $(OUT)/valgrind -name '*.log' -size +0 | sort); \
	for log in $$logs; do echo "== $$log"; cat "$$log"; done >&2; \
	echo "valgrind: $$(ls $(OUT)/valgrind | wc -l) processes checked, $$(echo $$logs | wc -w) with errors or leaks"; \
	[ -z "$$logs" ] && exit $$status || exit 1

## Fuzz the .npy reader, masks and the tangler, FUZZ_SECONDS each (needs clang, liblua5.4-dev).
fuzz: $(FUZZERS:%=build/fuzz/fuzz_%)
	+$(Q)for f in $(FUZZERS); do \
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

# make check and make grade share their steps: make tangles the chapters (quietly),
# tools/grade.lua picks the tests
# (EX: the files holding the exercise's tests; CHAPTERS: the chapter's tests and
# every test that runs its code; neither: all) and writes $(GRADE)/plan.mk, the
# runs make must do and what each needs; a second make builds exactly that (the
# tests, and the programs they run, never a stale one) and runs the tests, as many
# at once as there are cores; grade.lua reads their TAP from $(TAP) and reports.
# make check is quiet but for the verdict (the build's output is shown when it
# fails); make grade shows each test file as it ends, on stderr.
GRADE     := $(OUT)/grade
GRADE_LOG := $(GRADE)/tests.log
TAP       := $(OUT)/tap
# GRADE_NOTES: a file whose text the report adds (make grade-submission writes it).
GRADE_NOTES ?=
GRADE_ARGS = $(if $(strip $(EX)),--exercises $(call quote,$(strip $(EX)))) \
             $(if $(strip $(CHAPTERS)),--chapters $(call quote,$(strip $(CHAPTERS))),$(if $(HANDOUT),$(if $(strip $(EX)),,--assigned '$(ASSIGNED)'))) \
             $(if $(filter 0,$(RELATED)),--own) $(if $(GRADE_NOTES),--notes $(call quote,$(GRADE_NOTES))) \
             --hidden-visibility $(call quote,$(HIDDEN_VISIBILITY)) $(TEST_BINS) $(SCRIPT_TESTS)
GRADE_LUA  = ABH_TEACHER_TESTS=$(call quote,$(TEACHER_TESTS)) $(LUA) tools/grade.lua
# make grade FORMAT=json or gradescope: a build that failed still gets its report on
# stdout, score 0 and the compiler's message read from the log $(1).
grade_failed = $(if $(and $(filter grade,$@),$(filter json gradescope,$(FORMAT))),\
    $(GRADE_LUA) --format $(FORMAT) $(if $(GRADE_NOTES),--notes $(call quote,$(GRADE_NOTES))) --build-failed $(1);)
define grade_steps
	+$(Q)mkdir -p $(GRADE) && $(MAKE) --no-print-directory build/.tangled > $(GRADE)/tangle.log 2>&1 || \
	    { grep -v '^  TANGLE' $(GRADE)/tangle.log >&2; $(call grade_failed,$(GRADE)/tangle.log) exit 1; }
	$(Q)$(GRADE_LUA) --plan $(GRADE)/plan.mk --programs '$(PROGRAMS) $(EXTRA_PROGRAMS) $(BENCHES)' $(GRADE_ARGS)
	$(if $(TEST_DATA_STALE),$(Q)if grep -q TEST_DATA $(GRADE)/plan.mk && ( $(TEST_DATA_STALE) ); then \
	    printf '  %-7s %s\n' MAKE "$(TEST_DATA_SAY)" >&2; fi)
	+$(Q){ $(MAKE) --no-print-directory -f Makefile -f $(GRADE)/plan.mk grade-run $(if $(filter check,$@),GRADE_QUIET=1) 2>&1; \
	      echo $$? > $(GRADE)/build.status; } | tee $(GRADE)/build.log | \
	    { $(if $(filter grade,$@),grep --line-buffered '^  TEST ' >&2,cat > /dev/null); true; }; \
	[ "$$(cat $(GRADE)/build.status)" = 0 ] || \
	    { cat $(GRADE)/build.log >&2; echo "make $@: the build failed, nothing graded (log: $(GRADE)/build.log)" >&2; \
	      $(call grade_failed,$(GRADE)/build.log) exit 1; }
	$(Q)$(GRADE_LUA) --tap $(TAP) --log $(GRADE_LOG) --format $(if $(filter check,$@),check,$(call quote,$(FORMAT))) $(GRADE_ARGS)
endef

## Is my exercise right? EX=5.6 (or CHAPTERS=5): builds and runs only its tests; the verdict, and what failed.
check: tools
	$(grade_steps)

## Grade: passed/total per chapter and exercise (EX="5.6", CHAPTERS="5": those alone; FORMAT=json|tsv|gradescope).
# In a handout the assigned chapters' total is added. With EX its exit status is 0 only
# when the exercise's tests ran and passed (a GitHub Classroom step's points).
grade: tools
	$(grade_steps)

# Grading a student from the book needs its answers and hidden tests, which a handout has not.
not_in_handout = $(if $(HANDOUT),@echo "make $@: run it in the book: a student handout has no answers and no hidden tests" >&2; exit 1)

## Grade a student's handout (SUBMISSION=DIR or a git URL, CHAPTERS="7") from a fresh copy of the book.
# tools/submission.lua: only the code between the exercise markers is taken from it,
# into a handout made from the book in build/submission/book, graded there with the
# hidden tests; edits outside the markers are reported, not used. FORMAT as for grade;
# only the report goes to stdout.
grade-submission:
	$(not_in_handout)
	+$(Q)$(LUA) tools/submission.lua --format $(call quote,$(FORMAT)) --chapters $(call quote,$(CHAPTERS)) \
	    --hidden-visibility $(call quote,$(HIDDEN_VISIBILITY)) --teacher-tests $(call quote,$(TEACHER_TESTS)) \
	    -- $(call quote,$(SUBMISSION))

## Write Gradescope's autograder zip for CHAPTERS="7" (build/autograder-7.zip), and try it on the book's answers.
# tools/autograder.lua: setup.sh, run_autograder (make grade-submission of
# /autograder/submission, FORMAT=gradescope) and the book; the book's own answers
# graded through it give the points to set on Gradescope.
autograder: tools
	$(not_in_handout)
	@sh tools/ensure-tools.sh zip:zip unzip:unzip
	+$(Q)$(LUA) tools/autograder.lua --chapters $(call quote,$(CHAPTERS)) --hidden-visibility $(call quote,$(HIDDEN_VISIBILITY))

# A test's run, for make check and make grade: its TAP in $(TAP)/KEY.tap (with each
# failure's diagnostics after it: ABH_TAP_DIAG=stdout), its stderr in KEY.err and
# its exit status in KEY.status; KEY is NAME, teacher/NAME, or a script's path.
# A test that fails does not stop make: grade.lua reads what it did.
run_test = $(Q)mkdir -p $(@D) && status=0 && ABH_TAP_DIAG=stdout ./$< > $@.tmp 2> $(@:.tap=.err) || status=$$?; \
    echo $$status > $(@:.tap=.status) && mv $@.tmp $@ $(if $(GRADE_QUIET),,&& \
    printf '  %-7s %-38s %s\n' TEST '$<' "$$(grep -c '^ok' $@) passed, $$(grep -c '^not ok' $@) failed")
$(TAP)/tests/%.tap: tests/% FORCE
	$(run_test)
$(TAP)/%.tap: $(TESTBIN)/% FORCE
	$(run_test)
FORCE:

## Make a student handout in HANDOUT_DIR; CHAPTERS="1 3" cuts those chapters' exercises (default: all).
# HANDOUT_DIR must be new, empty, or a handout made before (.abh-handout at its
# top, which is kept out of the handout's git commit): tools/handout.lua
# refuses anything else before it deletes or writes a thing, and a handout
# that holds work (a file changed or added since it was made, a commit after
# its first) unless FORCE=1. The default, handout/ at the top of the book
# (ignored by git), is outside build/, which make clean deletes whole: a
# student working in the default handout loses nothing to make clean. The compile
# check's log goes to build/, never beside HANDOUT_DIR (make check-handout
# gives each handout it checks its own: HANDOUT_LOG=build/check-handout/NAME.handout.log).
HANDOUT_LOG := build/handout-check.log
handout: tools
	$(call say,HANDOUT,$(HANDOUT_DIR) from chapters $(or $(CHAPTERS),(all)))
	$(Q)$(LUA) tools/handout.lua $(if $(FORCE),--force) -o $(call quote,$(HANDOUT_DIR)) $(CHAPTERS)
	$(call say,CHECK,the stubs compile with -Werror: make -C $(HANDOUT_DIR) programs)
	$(Q)mkdir -p build && $(MAKE) --no-print-directory -C $(call quote,$(HANDOUT_DIR)) MODE=release programs test-programs \
	    > $(HANDOUT_LOG) 2>&1 || \
	    { cat $(HANDOUT_LOG) >&2; echo "make handout: the handout does not compile (log: $(HANDOUT_LOG))" >&2; exit 1; }
	$(Q)$(if $(HANDOUT_KEEP_BUILD),,rm -rf -- $(call quote,$(HANDOUT_DIR)/build))
	$(Q)if command -v git >/dev/null; then \
	    cd $(call quote,$(HANDOUT_DIR)) && git init -q && mkdir -p .git/info && echo .abh-handout >> .git/info/exclude && git add -A && \
	    git -c user.name="Attention by Hand" -c user.email=handout@attention-by-hand.invalid \
	        commit -q -m "Attention by Hand: student handout (Exercises $$(sed -n 's/^EXERCISES := //p' mk/handout.mk))" && \
	    printf '  %-7s %s\n' GIT $(call quote,$(HANDOUT_DIR))": a new repository, one commit, no history of the book"; fi

## Check handouts end to end (CHAPTERS="1 3": those; default each chapter alone, then all).
# One target per check (tools/check-handout.sh --one NAME CHAPTER...), as many at
# once as make runs jobs, each one's lines printed together when it is done; after
# a failure no other check starts. Every handout of all of them (all, chapter-N,
# chapters-1-3; the longest first) or one per chapter of CHAPTERS. The copies of
# the book share chapter 12's trained models, kept by the hash of the program and
# its flags (ABH_MODEL_CACHE, read by mk/12-induction.mk).
CHECKED_HANDOUTS := build/check-handout
HANDOUT_CHECKS = $(if $(strip $(CHAPTERS)),$(addprefix chapter-,$(CHECK_CHAPTERS)),\
                   all $(addprefix chapter-,$(CHECK_CHAPTERS)) chapters-1-3)
check-handout: tools
	$(Q)sh tools/check-handout.sh --chapters $(CHAPTERS) > /dev/null
	$(Q)rm -rf $(CHECKED_HANDOUTS) && mkdir -p $(CHECKED_HANDOUTS)
	+$(Q)$(MAKE) --no-print-directory check-handout-each \
	    CHECK_CHAPTERS="$$(sh tools/check-handout.sh --chapters $(CHAPTERS))"
	@echo "check-handout: every handout checked"
check-handout-each: $(HANDOUT_CHECKS:%=$(CHECKED_HANDOUTS)/%.done)
# (+: the makes a check runs share this make's jobs; so its lines are kept in NAME.out
# and printed together when it is done.)
$(CHECKED_HANDOUTS)/%.done:
	+$(Q)status=0; ABH_MODEL_CACHE=$(abspath $(CHECKED_HANDOUTS))/models PASTE_BACK=$(if $(strip $(CHAPTERS)),,all) \
	    sh tools/check-handout.sh --one $* \
	    $(if $(filter all,$*),$(CHECK_CHAPTERS),$(subst -, ,$(patsubst chapter-%,%,$(patsubst chapters-%,%,$*)))) \
	    > $(CHECKED_HANDOUTS)/$*.out 2>&1 || status=$$?; cat $(CHECKED_HANDOUTS)/$*.out; \
	[ $$status = 0 ] && touch $@

## Check that each exercise's own tests catch the mistakes in tests/mistakes/ and pass its correct answers (EXERCISES="5.6": those; V=1: which tests).
# tools/check-mistakes.lua: a few minutes on two cores (two copies of the book at once).
check-mistakes: tools
	+$(Q)$(LUA) tools/check-mistakes.lua $(if $(filter 1,$(V)),-v) $(EXERCISES)

## Cross-compile every program and test for arm64 (-Werror), run the tests under qemu-user.
check-cross: tools
	+$(Q)sh tools/check-cross.sh

## Time make check on every exercise (EXERCISES="5.6": those) and check its verdict is the full grade's.
# In a copy of the book: for each exercise, a one-line edit, a mistake, the fix and the
# undo, each timed and the mistake and the fix graded in full (tools/bench-check.lua).
bench-check: tools
	+$(Q)$(LUA) tools/bench-check.lua $(EXERCISES)

## Run the benchmarks (timings, not tests): each prints a table, kept in build/bench/NAME.txt.
# Then mha_fast against ONNX Runtime (tools/onnxruntime.mjs), with node and npm, and the
# pages' WebAssembly against the native programs (make bench-wasm, mk/wasm.mk).
bench: $(BENCHES:%=$(BIN)/%) $(if $(NPM),node_modules/.package-lock.json)
	$(Q)mkdir -p $(OUT)/bench
	+$(Q)for b in $(BENCHES); do printf '  %-7s %s\n' BENCH "$$b > $(OUT)/bench/$$b.txt"; \
	    $(BIN)/$$b | tee $(OUT)/bench/$$b.txt || exit 1; done
	$(Q)if [ -z "$(NPM)" ]; then \
	    printf '  %-7s %s\n' SKIP "mha_fast against ONNX Runtime: it needs node and npm (apt-get install nodejs npm)"; \
	else printf '  %-7s %s\n' BENCH "mha_fast against ONNX Runtime > $(OUT)/bench/onnxruntime.txt"; \
	    { node tools/onnxruntime.mjs bench; echo $$? > $(OUT)/bench/onnxruntime.status; } | \
	        tee $(OUT)/bench/onnxruntime.txt.tmp; \
	    status=$$(cat $(OUT)/bench/onnxruntime.status); rm -f $(OUT)/bench/onnxruntime.status; \
	    [ "$$status" = 0 ] && mv $(OUT)/bench/onnxruntime.txt.tmp $(OUT)/bench/onnxruntime.txt; fi
	+$(Q)$(MAKE) --no-print-directory bench-wasm

## Measure how each chapter reads: words, blocks, blocks without prose around them, C lines by job (-v: where).
stats: tools
	$(Q)$(LUA) tools/stats.lua $(if $(filter 1,$(V)),-v) $(CHAPTER_FILES)

## Write the web book, one page per chapter, to build/site/ (needs pandoc; its Run it here panels, clang and wasi-libc).
html: $(SITE_PAGES) $(SITE)/book.css $(SITE_FIGURES) tools/site/check.lua wasm
	$(Q)$(LUA) tools/site/check.lua $(SITE) $(SITE_SOURCES) > $(SITE)/.check || { rm -f $(SITE)/.check; exit 1; }
	@printf '  %-7s %s\n' HTML "$(SITE)/index.html: $$(cat $(SITE)/.check)"

## Print the whole book to one PDF, build/book.pdf (needs pandoc and chromium).
pdf: build/book.pdf

## Remove build/ (figures/ is kept: it is committed; so is a student handout, in handout/).
clean:
	$(call say,RM,build)
	$(Q)rm -rf build

## Check that lua5.4, gnuplot and prove are here (installing them when root).
tools:
	@sh tools/ensure-tools.sh $(firstword $(CC)):gcc $(firstword $(LUA)):lua5.4 $(firstword $(GNUPLOT)):gnuplot-nox \
	    $(firstword $(PROVE)):perl

# The web book: one page per source, made by pandoc with the book's own template,
# stylesheet and filter (tools/site/), which reads every chapter's chunks through
# the tangler, so each page depends on all the sources. build/book.pdf is
# Chromium's print of the site's pages made one (build/print/book.html).
# (A handout shows the book's figures as they are: its programs may still stop at stubs.)

$(SITE)/index.html: book.md $(SITE_SOURCES) $(SITE_TOOLS)
	@sh tools/ensure-tools.sh $(firstword $(PANDOC)):pandoc
	$(Q)mkdir -p $(@D)
	$(Q)$(SITE_PANDOC) -M page=$< $< -o $@.tmp && mv $@.tmp $@
$(SITE)/%.html: chapters/%.md $(SITE_SOURCES) $(SITE_TOOLS)
	$(Q)mkdir -p $(@D)
	$(Q)$(SITE_PANDOC) -M page=$< $< -o $@.tmp && mv $@.tmp $@
$(SITE)/solutions-%.html: solutions/%.md $(SITE_SOURCES) $(SITE_TOOLS)
	$(Q)mkdir -p $(@D)
	$(Q)$(SITE_PANDOC) -M page=$< $< -o $@.tmp && mv $@.tmp $@
$(SITE)/teachers.html: teachers.md $(SITE_SOURCES) $(SITE_TOOLS)
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
	@sh tools/ensure-tools.sh $(firstword $(CHROMIUM)):chromium pdfinfo:poppler-utils
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

# ---- compiling. What each file includes (headers, a program's source in its
# test, a chapter's tangled header) is read from $(OUT)/dep/*.d, which each
# compile writes (DEPFLAGS); build/.tangled comes first, so that on a clean build
# every tangled file is there before anything that includes it is compiled.
# Each program and test is compiled to an object, then linked with tensor.o: so a
# compiler cache (ccache, used when it is installed; CCACHE= turns it off) can
# reuse a compile that a copy of the book made before, as student handouts do.
CCACHE ?= $(shell command -v ccache 2>/dev/null)
COMPILE = $(CCACHE) $(CC) $(CFLAGS) $(DEPFLAGS) -I$(SRC)
$(OBJ)/tensor.o: $(SRC)/tensor.c | build/.tangled $(OUT)/dep
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(COMPILE) -c $< -o $@

$(OBJ)/bin/%.o: $(SRC)/%.c | build/.tangled $(OUT)/dep
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(COMPILE) $(CFLAGS_$*) -c $< -o $@
$(OBJ)/bin/npy2dat.o: tools/npy2dat.c | build/.tangled $(OUT)/dep
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(COMPILE) -c $< -o $@
$(BIN)/%: $(OBJ)/bin/%.o $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CFLAGS_$*) $^ $(LDLIBS) $(LDLIBS_$*) -o $@

# A test of a program includes the program's source (with TESTING defined); a
# hidden test may include any program.
$(OBJ)/tests/%.o: tests/test_%.c | build/.tangled $(OUT)/dep
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(COMPILE) $(CFLAGS_$*) -Itests -c $< -o $@
$(OBJ)/tests/teacher/%.o: $(TEACHER_TESTS)/test_%.c | build/.tangled $(OUT)/dep
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(COMPILE) -Itests -c $< -o $@
# The replay of the fuzzers' inputs links the harnesses with exit() wrapped.
$(OBJ)/tests/fuzz.o: tests/test_fuzz.c | build/.tangled $(OUT)/dep
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(COMPILE) -Itests -Itests/fuzz -c $< -o $@
$(TESTBIN)/%: $(OBJ)/tests/%.o $(OBJ)/tensor.o
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CFLAGS_$(notdir $*)) $^ $(LDLIBS) $(LDLIBS_$(notdir $*)) $(if $(filter fuzz,$*),$(FUZZ_WRAP)) -o $@

$(OUT)/dep:
	$(Q)mkdir -p $@
-include $(wildcard $(OUT)/dep/*.d)

# ---- fuzzers (clang, libFuzzer): tensor.c is compiled into each
build/fuzz/fuzz_npy build/fuzz/fuzz_mask: build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(SRC)/tensor.c $(SRC)/tensor.h
	@sh tools/ensure-tools.sh $(firstword $(FUZZ_CC)):clang
	@ls "$$($(FUZZ_CC) --print-runtime-dir)"/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || \
	    { echo "make fuzz: $(FUZZ_CC) has no libFuzzer: apt-get install libclang-rt-14-dev" >&2; exit 1; }
	$(call say,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(SRC) -Itests/fuzz $< $(SRC)/tensor.c -lm $(FUZZ_WRAP) -o $@

build/fuzz/fuzz_tangle: tests/fuzz/fuzz_tangle.c
	@sh tools/ensure-tools.sh $(firstword $(FUZZ_CC)):clang
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
# The keys the run hid are drawn hatched, read from the mask its dump holds
# (attention_mask.npy or mask.npy: the mask it used, --causal included); FIG_CAUSAL
# = --causal adds the causal mask of a program that dumps none.
# NaN weights (chapter 3's -inf example) have no colour; gnuplot's warning about
# them is expected and filtered out.
$(FIGURES): | $(FIG)
$(FIG):
	$(Q)mkdir -p $@
$(FIG)/%.svg: $(BIN)/npy2dat tools/heatmap.gp | tools
	$(call say,PLOT,$@)
	$(Q)rm -rf $(OUT)/fig/$* $(OUT)/fig/$*.mask && mkdir -p $(OUT)/fig
	$(Q)$(BIN)/$(FIG_RUN) --quiet --dump $(OUT)/fig/$*
	$(Q)$(BIN)/npy2dat $(OUT)/fig/$*/attn.npy $(FIG_PICK) > $(OUT)/fig/$*.dat
	$(Q)mask=; for f in attention_mask mask; do [ -f $(OUT)/fig/$*/$$f.npy ] && mask="--mask $(OUT)/fig/$*/$$f.npy"; done; \
	if [ -n "$$mask$(FIG_CAUSAL)" ]; then \
	    $(BIN)/npy2dat $$mask $(FIG_CAUSAL) $(OUT)/fig/$*/attn.npy $(FIG_PICK) > $(OUT)/fig/$*.mask || exit 1; fi
	$(Q)$(GNUPLOT) -e "data='$(OUT)/fig/$*.dat'; out='$@.tmp'; heading='$(FIG_HEADING)'; titles='$(FIG_TITLES)'; \
	    xwords='$(FIG_WORDS)'; ywords='$(FIG_QWORDS)'; mask='$$([ -f $(OUT)/fig/$*.mask ] && echo $(OUT)/fig/$*.mask)'" \
	    tools/heatmap.gp 2> $(OUT)/fig/$*.log; status=$$?; \
	    grep -v 'matrix contains missing or undefined values' $(OUT)/fig/$*.log >&2; exit $$status
	$(Q)mv $@.tmp $@
