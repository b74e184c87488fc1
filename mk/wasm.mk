# The programs compiled to WebAssembly for the web book's "Run it here" panels
# (make html, when the toolchain is here): each program of build/src becomes
# $(SITE)/wasm/NAME.wasm (wasm32-wasi, run in the page by tools/site/wasi.mjs) and
# $(SITE)/run/NAME.js, the same bytes in base64, which a panel loads with a
# <script> tag when it is opened (Chromium fetches no .wasm from file://).
# $(SITE)/run/panel.js is the panel: tools/site/wasi.mjs made a classic script
# (the function abhWasiLayer, whose source panel.js also hands to a worker),
# then tools/site/panel.js. make check-wasm holds every build to the native
# program (tests/wasm_test.mjs). Debian: clang, lld, wasi-libc, libclang-rt-14-dev-wasm32.
# Left out: the benchmarks (they time the native build, with threads), and
# decode_costs (chapter 9's table of costs counts in long, which is 32 bits in
# wasm32: its larger counts overflow). Chapter 10's mha_fast is built without
# OpenMP (tools/site/omp_serial.c): one thread.
WASM_CC      ?= clang-14
WASM_SYSROOT ?= /usr
# -Wno-unused-function: in a handout, a stub can leave a static inline helper of its
# exercise unused (mha_fast's flash_exp, Exercise 10.6), which clang reports and gcc does not.
WASM_CFLAGS  := --target=wasm32-wasi --sysroot=$(WASM_SYSROOT) -std=c11 -Wall -Wextra -Werror \
                -Wno-unused-function -D_POSIX_C_SOURCE=200809L -D_WASI_EMULATED_GETPID -O2 -msimd128 -s
WASM_LDLIBS  := -lm -lwasi-emulated-getpid
WASM_PROGRAMS := $(filter-out decode_costs,$(PROGRAMS) $(EXTRA_PROGRAMS))
# The toolchain is here when the compiler, the linker, WASI's libc and clang's
# runtime for wasm32 are (a check that costs no compile).
WASM_TOOLS = $(and $(shell command -v $(firstword $(WASM_CC)) 2>/dev/null),$(shell command -v wasm-ld 2>/dev/null),\
    $(wildcard $(WASM_SYSROOT)/lib/wasm32-wasi/libc.a),$(wildcard /usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a))
WASM_SITE := $(WASM_PROGRAMS:%=$(SITE)/run/%.js) $(SITE)/run/panel.js

.PHONY: wasm check-wasm bench-wasm
# make html: the panels' programs, or one line naming what to install.
wasm:
ifneq ($(WASM_TOOLS),)
wasm: $(WASM_SITE)
	@printf '  %-7s %s\n' WASM "$(words $(WASM_PROGRAMS)) programs in $(SITE)/wasm, for the pages' Run it here panels"
else
	@printf '  %-7s %s\n' WASM "skipped: the Run it here panels need clang, lld, wasi-libc and libclang-rt-14-dev-wasm32 (apt-get install)"
endif

$(SITE)/wasm/mha_fast.wasm: WASM_EXTRA := tools/site/omp_serial.c
$(SITE)/wasm/%.wasm: $(SRC)/%.c $(SRC)/tensor.c $(SRC)/tensor.h tools/site/omp_serial.c | build/.tangled
	$(call say,WASM,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WASM_CC) $(WASM_CFLAGS) -I$(SRC) $< $(SRC)/tensor.c $(WASM_EXTRA) $(WASM_LDLIBS) -o $@
# The bytes as a script: abhWasm("NAME", "base64"), read by panel.js.
$(SITE)/run/%.js: $(SITE)/wasm/%.wasm
	$(Q)mkdir -p $(@D)
	$(Q){ printf 'abhWasm("%s", "' $*; base64 -w0 $<; printf '");\n'; } > $@.tmp && mv $@.tmp $@
$(SITE)/run/panel.js: tools/site/wasi.mjs tools/site/panel.js
	$(Q)mkdir -p $(@D)
	$(Q){ echo '"use strict";'; echo 'function abhWasiLayer() {'; sed 's/^export //' tools/site/wasi.mjs; \
	      echo 'return run;'; echo '}'; echo 'globalThis.abhRun = abhWasiLayer();'; cat tools/site/panel.js; } > $@.tmp && mv $@.tmp $@

## Run every program's WebAssembly build (node) on the native tests' cases: the same printout, the same .npy bytes.
check-wasm: programs $(if $(WASM_TOOLS),$(WASM_PROGRAMS:%=$(SITE)/wasm/%.wasm))
	@sh tools/ensure-tools.sh node:nodejs
	$(if $(WASM_TOOLS),,@echo "make check-wasm: needs clang, lld, wasi-libc and libclang-rt-14-dev-wasm32 (apt-get install)" >&2; exit 1)
	+$(Q)node --no-warnings=ExperimentalWarning tests/wasm_test.mjs $(BIN) $(SITE)/wasm $(WASM_PROGRAMS)

## Time the pages' WebAssembly against the native programs on the same cases, in one run (build/bench/wasm.txt).
bench-wasm: programs $(if $(WASM_TOOLS),$(WASM_PROGRAMS:%=$(SITE)/wasm/%.wasm))
	@sh tools/ensure-tools.sh node:nodejs
	$(if $(WASM_TOOLS),,@echo "make bench-wasm: needs clang, lld, wasi-libc and libclang-rt-14-dev-wasm32 (apt-get install)" >&2; exit 1)
	$(Q)mkdir -p $(OUT)/bench
	@printf '  %-7s %s\n' BENCH "WebAssembly against native > $(OUT)/bench/wasm.txt"
	$(Q)node --no-warnings=ExperimentalWarning tools/site/bench_wasm.mjs $(BIN) $(SITE)/wasm > $(OUT)/bench/wasm.txt.tmp; \
	    status=$$?; cat $(OUT)/bench/wasm.txt.tmp; [ $$status = 0 ] && mv $(OUT)/bench/wasm.txt.tmp $(OUT)/bench/wasm.txt
