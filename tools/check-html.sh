#!/bin/sh
# check-html.sh [--name NAME] BOOK.html FILE.md ...
# Checks the one-page book that `make html` writes: every chapter's and
# solution file's title is there, every in-page link has its target, no link
# points at a .md file, and every figure the Markdown shows is embedded. One
# line per problem, then one line saying what was checked. The FILE.md are
# the chapters (chapters/NN-name.md), the appendices (chapters/A-name.md, a
# capital letter) and the solution files (solutions/*.md), each counted as
# what it is. NAME is the page's name in the messages: make html
# checks build/book.html.tmp under the name build/book.html, which it becomes
# only when the check passes.
name=
if [ "${1-}" = --name ]; then name=$2; shift 2; fi
html=$1; shift
name=${name:-$html}
fail=0
say() { echo "check-html: $name: $*" >&2; fail=1; }
# "1 chapter", "2 chapters", "no solution files"; $3, if given, is the plural
count() { case $1 in 0) echo "no ${3:-$2s}" ;; 1) echo "1 $2" ;; *) echo "$1 ${3:-$2s}" ;; esac; }
[ -s "$html" ] || { say "missing or empty"; exit 1; }
chapters=0 appendices=0 solutions=0
for file in "$@"; do
  id=$(basename "$file" .md)
  case $file in
    solutions/*) id=solutions-$id; solutions=$((solutions + 1)) ;;
    chapters/[[:upper:]]-*) appendices=$((appendices + 1)) ;;
    *) chapters=$((chapters + 1)) ;;
  esac
  grep -q "<h1 id=\"$id\"" "$html" || say "$file has no title #$id"
done
grep -o 'href="#[^"]*"' "$html" | sed 's/href="#//; s/"$//' | sort -u | while read -r target; do
  grep -q "id=\"$target\"" "$html" || { echo "check-html: $name: link #$target has no target" >&2; echo x; }
done | grep -q x && fail=1
if grep -q 'href="[^"#]*\.md[#"]' "$html"; then say "links to .md files remain: $(grep -o 'href="[^"#]*\.md[^"]*"' "$html" | sort -u | head -3 | tr '\n' ' ')"; fi
images=$(cat "$@" | grep -c '!\[[^]]*\](\.\./figures/' || true)
embedded=$(grep -o '<img src="data:image/svg+xml' "$html" | wc -l)
[ "$images" -eq "$embedded" ] || say "$images figures in the Markdown, $embedded embedded"
# "11 chapters and 11 solution files", or with appendices "11 chapters, 1 appendix and 11 solution files"
books="$(count $chapters chapter)"
[ $appendices -eq 0 ] || books="$books, $(count $appendices appendix appendices)"
[ $fail -eq 0 ] && echo "check-html: $name: $books and $(count $solutions 'solution file'), $embedded figures, every link resolves"
exit $fail
