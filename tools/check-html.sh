#!/bin/sh
# check-html.sh BOOK.html CHAPTER.md ...
# Checks the one-page book that `make html` writes: every chapter's title is
# there, every in-page link has its target, no link points at a .md file,
# and every figure the chapters show is embedded. One line per problem.
html=$1; shift
fail=0
say() { echo "check-html: $*" >&2; fail=1; }
[ -s "$html" ] || { say "$html is missing or empty"; exit 1; }
for chapter in "$@"; do
  id=$(basename "$chapter" .md)
  case $chapter in solutions/*) id=solutions-$id ;; esac
  grep -q "<h1 id=\"$id\"" "$html" || say "chapter $chapter has no title #$id"
done
grep -o 'href="#[^"]*"' "$html" | sed 's/href="#//; s/"$//' | sort -u | while read -r target; do
  grep -q "id=\"$target\"" "$html" || { echo "check-html: link #$target has no target" >&2; echo x; }
done | grep -q x && fail=1
if grep -q 'href="[^"#]*\.md[#"]' "$html"; then say "links to .md files remain: $(grep -o 'href="[^"#]*\.md[^"]*"' "$html" | sort -u | head -3 | tr '\n' ' ')"; fi
images=$(cat "$@" | grep -c '!\[[^]]*\](\.\./figures/' || true)
embedded=$(grep -o '<img src="data:image/svg+xml' "$html" | wc -l)
[ "$images" -eq "$embedded" ] || say "$images figures in the chapters, $embedded embedded in $html"
[ $fail -eq 0 ] && echo "check-html: $html: $# chapters, $embedded figures, every link resolves"
exit $fail
