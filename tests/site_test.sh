#!/bin/sh
# site_test.sh: the web book and the PDF, checked in a real browser (TAP; see
# tests/site_test.mjs). Skipped with one line naming what to install when
# chromium, node or the pinned playwright-core are missing: make test builds
# the site and the PDF, and runs npm ci, when chromium and node are here.
cd "$(dirname "$0")/.." || exit 1
skip() { echo "1..0 # SKIP $*"; exit 0; }
command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1 || skip "no chromium: apt-get install chromium"
command -v node >/dev/null 2>&1 || skip "no node: apt-get install nodejs npm"
command -v pdfinfo >/dev/null 2>&1 || skip "no pdfinfo: apt-get install poppler-utils"
[ -d node_modules/playwright-core ] || skip "no playwright-core: npm ci (it installs package-lock.json's, and no browser)"
[ -f build/site/index.html ] || skip "no build/site: make html"
CHROMIUM=$(command -v "${CHROMIUM:-chromium}") exec node tests/site_test.mjs build/site
