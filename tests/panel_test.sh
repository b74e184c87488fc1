#!/bin/sh
# panel_test.sh: the chapters' "Run it here" panels, used in a real browser (TAP;
# see tests/panel_test.mjs).
#
#   sh tests/panel_test.sh [SITE_DIR]      (default build/site, from the top of the tree)
#
# Skipped with one line naming what to install when chromium, node, the pinned
# playwright-core or the panels' WebAssembly (make html with wasi-libc) are missing.
cd "$(dirname "$0")/.." || exit 1
skip() { echo "1..0 # SKIP $*"; exit 0; }
command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1 || skip "no chromium: apt-get install chromium"
command -v node >/dev/null 2>&1 || skip "no node: apt-get install nodejs npm"
[ -d node_modules/playwright-core ] || skip "no playwright-core: npm ci (it installs package-lock.json's, and no browser)"
site=${1:-build/site}
[ -f "$site/run/panel.js" ] || skip "no $site/run/panel.js: make html, with clang, lld, wasi-libc and libclang-rt-14-dev-wasm32"
CHROMIUM=$(command -v "${CHROMIUM:-chromium}") exec node tests/panel_test.mjs "$site" "${ABH_BIN:-build/bin}"
