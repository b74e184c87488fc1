#!/bin/sh
# check-handout.sh [CHAPTER ...]: check student handouts end to end, as a
# teacher would meet them. For each chapter that has exercises (or each one
# given), then for chapters 1 and 3 together, then for all of them at once:
#   1. make handout CHAPTERS=... into build/check-handout/NAME (which also
#      compiles the stubs with -Werror);
#   2. the handout is a git repository with one commit, and grep finds none
#      of the assigned solutions' lines (10 characters or more) in it; nor
#      does tools/handout.lua --leaks find their tokens (comments, spacing
#      and variable names aside) in any file but the chapters before each
#      exercise's: each place is listed, FILE:LINE and the exercise, and the
#      check fails (ABH_LEAKS=report would only list them); the places
#      tools/handout.lua allows are listed as "allowed: reason" ($dir.leaks
#      keeps the list);
#   3. in the handout, make succeeds and ends with its summary, naming every
#      assigned exercise still to do; make grade fails with exactly the
#      assigned exercises' tests failing: every failed test is one of theirs,
#      and none of theirs passes (they may all be skipped when they need
#      another assigned exercise first: with chapter 0 assigned, every
#      program stops at its softmax); make grade FORMAT=tsv prints test
#      lines and nothing else; every test is named for what it checks (none
#      is "test k of n in ...", "ended early" or "the rest of ... needs");
#      make html renders the handout's book, links and figures checked (for
#      the handout of every chapter, when pandoc is here);
#   4. pasting the book's chapters back gives full marks: make grade passes,
#      and ends with the assigned chapters' own total (in a run of every
#      handout, once for one chapter's handout: pasted back, each is the book,
#      as the handout of all chapters is, which is graded).
# The make commands in a handout are given CHAPTERS= and
# FORMAT explicitly: make check-handout CHAPTERS="1 3" passes CHAPTERS down
# to every make it runs (in MAKEFLAGS and the environment), and make grade
# reads it.
# One line per step; the first problem stops the check with a non-zero exit.
# make check-handout runs the checks, one make target each (make -j, its output
# kept together per check), and stops starting checks after the first failure:
#   sh tools/check-handout.sh --one NAME CHAPTER...   one check, in build/check-handout/NAME
#   sh tools/check-handout.sh --chapters [CHAPTER...] the chapters with exercises (or those
#                                                     given, checked to be chapter numbers)
# Two checks share nothing they write: each has its own handout, its own logs
# (HANDOUT_LOG too) and its handout's build/.
# (lua5.4 -e CODE /dev/null ARGS: the empty script /dev/null lets CODE read ARGS.)
set -u
top=$(pwd)
make=${MAKE:-make}
fail() { echo "check-handout: $*" >&2; exit 1; }

# The chapters with solution regions, by number.
chapters_with_exercises() {
  for f in chapters/[0-9]*.md; do
    grep -q '^ *// BEGIN SOLUTION Exercise' "$f" && basename "$f" | sed 's/^0*\([0-9][0-9]*\)-.*/\1/'
  done
}

# The trimmed lines of the solution regions of chapter numbers "$@", one per
# line (only those of 10 characters or more that are not a chunk reference).
solution_lines() {
  lua5.4 -e '
    local T = dofile("tangle/tangle.lua")
    local wanted = {}
    for _, n in ipairs(arg) do wanted[tonumber(n)] = true end
    for path in io.popen("ls chapters/*.md"):lines() do
      local n = tonumber(path:match("chapters/(%d+)%-"))
      if n and wanted[n] then
        local text = io.open(path):read("a")
        for _, block in ipairs(assert(T.parse(path, text))) do
          for _, r in ipairs(block.regions) do
            for i = r.first + 1, r.last - 1 do
              local line = block.lines[i]:match("^%s*(.-)%s*$")
              if #line >= 10 and not line:match("^<<.+>>$") then print(line) end
            end
          end
        end
      end
    end' /dev/null "$@"
}

# The exercise numbers of chapter numbers "$@", space-separated.
exercises_of() {
  for n in "$@"; do
    grep -ho '^ *// BEGIN SOLUTION Exercise [0-9.]*' "$(ls chapters/$(printf '%02d' "$n")-*.md)" | sed 's/.*Exercise //'
  done | sort -u -t. -k1,1n -k2,2n | tr '\n' ' ' | sed 's/ $//'
}

check() {
  name=$1; shift
  dir=build/check-handout/$name
  assigned=$(exercises_of "$@")
  printf '  %-7s %s\n' CHECK "handout of chapter(s) $* (Exercises $assigned) in $dir"
  # HANDOUT_KEEP_BUILD: what the compile check built (stubs only) is not built again
  # HANDOUT_LOG: the compile check's log, one per check (two may run at once)
  # (its stderr, which lists the leaks the token check below lists again, is shown only if it fails)
  $make --no-print-directory handout CHAPTERS="$*" HANDOUT_DIR="$dir" HANDOUT_KEEP_BUILD=1 HANDOUT_LOG="$dir.handout.log" \
      >/dev/null 2>"$dir.handout.err" || { cat "$dir.handout.err" >&2; fail "make handout CHAPTERS=\"$*\" failed"; }

  commits=$(git -C "$dir" rev-list --all | wc -l)
  [ "$commits" -eq 1 ] || fail "$dir: $commits commits in its history, not 1"
  solution_lines "$@" > "$dir.lines"
  [ -s "$dir.lines" ] || fail "no solution lines found for chapter(s) $*"
  # one grep for all the lines (-f: each line of the file is a fixed string)
  if found=$(grep -rnF --exclude-dir=.git -f "$dir.lines" "$dir" | head -n 1) && [ -n "$found" ]; then
    fail "a solution line is in the handout: $found"
  fi
  echo "          no solution line in the handout ($(wc -l < "$dir.lines") lines searched), one commit"
  lua5.4 tools/handout.lua --leaks "$dir" > "$dir.leaks" 2>&1 || { cat "$dir.leaks" >&2; fail "$dir: a file holds the tokens of a solution it cuts (see $dir.leaks)"; }
  sed -e 's/^handout: [^:]*: /          /' -e t -e '/: allowed: /s/^/          /' -e t -e 's/^/          leak: /' "$dir.leaks"

  (cd "$dir" && $make --no-print-directory CHAPTERS= > ../"$name".make.log 2>&1) || fail "make in $dir failed: see $dir.make.log"
  todo=$(grep -c 'TODO' "$dir.make.log")
  [ "$todo" -gt 0 ] || fail "make in $dir named no program waiting for an exercise"
  for e in $assigned; do
    grep -q "^  TODO    Exercise $e: " "$dir.make.log" || fail "make in $dir did not end naming Exercise $e as still to do (see $dir.make.log)"
  done
  (cd "$dir" && $make --no-print-directory grade CHAPTERS= FORMAT=tsv > ../"$name".tsv 2>/dev/null) &&
    fail "make grade passed in $dir, with the exercises not done"
  if bad=$(grep -v -n -P '^(pass|fail|skip)\t[^\t]+\t[^\t]+\t[^\t]+$' "$dir.tsv" | head -n 1) && [ -n "$bad" ]; then
    fail "make grade FORMAT=tsv in $dir printed a line that is not a test's (result, file, exercise, description): $bad"
  fi
  lua5.4 -e '
    local assigned, seen_fail, seen, bad = {}, {}, {}, {}
    for e in arg[1]:gmatch("%S+") do assigned[e] = true end
    for line in io.lines(arg[2]) do
      local result, file, exercise, name = line:match("^(%a+)\t([^\t]*)\t([^\t]*)\t(.*)$")
      if result == "fail" and not assigned[exercise] then bad[#bad + 1] = "failed, not an assigned exercise: " .. file .. ": " .. name end
      if result == "pass" and assigned[exercise] then bad[#bad + 1] = "passed with its stub in place: " .. file .. ": " .. name end
      if result == "fail" then seen_fail[exercise] = (seen_fail[exercise] or 0) + 1 end
      if result ~= "pass" then seen[exercise] = true end
      if name:find(" test %d+ of %d+ in ") or name:find("ended early") or name:find("the rest of .* needs") then
        bad[#bad + 1] = "not named for what it checks: " .. file .. ": " .. name
      end
    end
    for e in pairs(assigned) do
      if not seen[e] then bad[#bad + 1] = "Exercise " .. e .. ": no test failed or was skipped" end
    end
    for _, b in ipairs(bad) do io.stderr:write("check-handout: ", b, "\n") end
    local n = 0
    for _, c in pairs(seen_fail) do n = n + c end
    if #bad == 0 then print(("          make grade: %d failed tests, all of Exercises %s; none of theirs passed"):format(n, arg[1])) end
    os.exit(#bad == 0 and 0 or 1)' /dev/null "$assigned" "$dir.tsv" || fail "$dir: the failing tests are not exactly the assigned exercises' (see $dir.tsv)"

  if [ "$name" = all ] && command -v pandoc >/dev/null 2>&1; then
    (cd "$dir" && $make --no-print-directory html > ../"$name".html.log 2>&1) || fail "make html failed in $dir: see $dir.html.log"
    echo "          make html: $(tail -n 1 "$dir.html.log")"
  fi

  # A handout of one chapter with it pasted back is the book again, the same as the handout
  # of all chapters with them all pasted back: in a run that checks that one
  # (paste_back=all), it is graded there, once.
  if [ "${paste_back:-}" = all ] && [ $# -eq 1 ]; then
    echo "          chapters pasted back: the book itself, graded once, in the handout of all chapters"
    return 0
  fi
  for n in "$@"; do cp chapters/"$(printf '%02d' "$n")"-*.md "$dir/chapters/"; done
  (cd "$dir" && $make --no-print-directory grade CHAPTERS= FORMAT=text > ../"$name".grade 2>&1) ||
    fail "with the book's chapters pasted back, make grade still fails in $dir: see $dir.grade"
  grep -q '^assigned' "$dir.grade" || fail "make grade in $dir gave no total of the assigned chapters (see $dir.grade)"
  echo "          chapters pasted back: $(grep '^total' "$dir.grade"); $(grep '^assigned' "$dir.grade")"
}

case ${1:-} in
--one)
  shift
  # PASTE_BACK=all: this check is one of a run of every handout (see check above)
  paste_back=${PASTE_BACK:-}
  check "$@"
  ;;
--chapters)
  shift
  # Chapter numbers as given, without leading zeros ("09" is 9, not an octal number);
  # anything else is refused before a directory is made from it.
  for n in "$@"; do
    case $n in ''|*[!0-9]*) fail "$n is not a chapter number (CHAPTERS=\"1 3\" checks chapters 1 and 3)" ;; esac
  done
  if [ $# -gt 0 ]; then
    for n in "$@"; do echo "$n" | sed 's/^0*\([0-9]\)/\1/'; done | tr '\n' ' '
  else
    all=$(chapters_with_exercises | tr '\n' ' ')
    [ -n "$all" ] || fail "no chapter has a solution region"
    echo "$all"
  fi
  ;;
*)
  fail "usage: sh tools/check-handout.sh --one NAME CHAPTER... | --chapters [CHAPTER...] (make check-handout runs it)" ;;
esac
