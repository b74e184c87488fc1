#!/bin/sh
# site_test.sh: the web book and the PDF, checked in a real browser (TAP; see
# tests/site_test.mjs).
#
#   sh tests/site_test.sh [SITE_DIR]      (default build/site, from the top of the tree)
#
# Skipped with one line naming what to install when chromium, node or the
# pinned playwright-core are missing: make test builds the site and the PDF,
# and runs npm ci, when chromium and node are here.
cd "$(dirname "$0")/.." || exit 1
skip() { echo "1..0 # SKIP $*"; exit 0; }
command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1 || skip "no chromium: apt-get install chromium"
command -v node >/dev/null 2>&1 || skip "no node: apt-get install nodejs npm"
command -v pdfinfo >/dev/null 2>&1 || skip "no pdfinfo: apt-get install poppler-utils"
[ -d node_modules/playwright-core ] || skip "no playwright-core: npm ci (it installs package-lock.json's, and no browser)"
site=${1:-build/site}
[ -f "$site/index.html" ] || skip "no $site: make html"
# site_test.mjs ends with its plan whatever the browser does; should node itself
# die before it (killed, out of memory), the awk below passes its lines on and
# adds one `not ok` and the plan, so that the TAP stream stays whole.
status=$(mktemp) || exit 1
trap 'rm -f "$status"' EXIT
{ CHROMIUM=$(command -v "${CHROMIUM:-chromium}") node tests/site_test.mjs "$site"; echo $? > "$status"; } |
  awk -v status="$status" '
    { print; fflush() }
    /^(not )?ok [0-9]+/ { n = $0; sub(/^(not )?ok /, "", n); sub(/[^0-9].*/, "", n); last = n + 0 }
    /^1\.\.[0-9]+/ { plan = 1 }
    END {
      getline code < status
      if (plan) exit code + 0
      printf "not ok %d - tests/site_test.mjs stopped before its plan (exit status %s)\n1..%d\n", last + 1, code == "" ? "unknown" : code, last + 1
      exit 1
    }'
