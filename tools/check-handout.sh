#!/bin/sh
# check-handout.sh [CHAPTER ...]: check student handouts end to end, as a
# teacher would meet them. For each chapter that has exercises (or each one
# given), then for chapters 1 and 3 together, then for all of them at once:
#   1. make handout CHAPTERS=... into build/check-handout/NAME (which also
#      compiles the stubs with -Werror);
#   2. the handout is a git repository with one commit, and grep finds none
#      of the assigned solutions' lines (10 characters or more) in it;
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
# The checks run two at a time (as many as the machine has cores, at most 2;
# CHECK_HANDOUT_JOBS=N runs N): each one is this script again, in its own
# session (setsid, so that it can be stopped whole), writing its lines to
# build/check-handout/NAME.out and .err and its exit status to NAME.status.
# Each check's lines are printed in the order above once it is done. After a
# failure no other check starts; the first failure in that order is printed
# after the lines of the checks before it (checks after it still running are
# stopped), and the script exits 1. Two checks share nothing they write: each
# has its own handout, its own logs (HANDOUT_LOG too) and its handout's build/.
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
  $make --no-print-directory handout CHAPTERS="$*" HANDOUT_DIR="$dir" HANDOUT_KEEP_BUILD=1 HANDOUT_LOG="$dir.handout.log" >/dev/null ||
    fail "make handout CHAPTERS=\"$*\" failed"

  commits=$(git -C "$dir" rev-list --all | wc -l)
  [ "$commits" -eq 1 ] || fail "$dir: $commits commits in its history, not 1"
  solution_lines "$@" > "$dir.lines"
  [ -s "$dir.lines" ] || fail "no solution lines found for chapter(s) $*"
  # one grep for all the lines (-f: each line of the file is a fixed string)
  if found=$(grep -rnF --exclude-dir=.git -f "$dir.lines" "$dir" | head -n 1) && [ -n "$found" ]; then
    fail "a solution line is in the handout: $found"
  fi
  echo "          no solution line in the handout ($(wc -l < "$dir.lines") lines searched), one commit"

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

# One check alone, started by the loop below: _CHECK_HANDOUT_ONE=1 sh
# tools/check-handout.sh NAME CHAPTER... (unset at once, so that nothing the
# check runs sees it).
if [ "${_CHECK_HANDOUT_ONE:-}" = 1 ]; then
  unset _CHECK_HANDOUT_ONE
  paste_back=${_CHECK_HANDOUT_PASTE:-}; unset _CHECK_HANDOUT_PASTE
  echo $$ > "build/check-handout/$1.pid"
  check "$@"
  exit 0
fi

# Chapter numbers as given, without leading zeros ("09" is 9, not an octal number for printf);
# anything else is refused before a directory is made from it.
for n in "$@"; do
  case $n in ''|*[!0-9]*) fail "$n is not a chapter number (CHAPTERS=\"1 3\" checks chapters 1 and 3)" ;; esac
done
set -- $(for n in "$@"; do echo "$n" | sed 's/^0*\([0-9]\)/\1/'; done)
# How many checks run at once: CHECK_HANDOUT_JOBS, else the cores, at most 2.
if [ -n "${CHECK_HANDOUT_JOBS:-}" ]; then
  case $CHECK_HANDOUT_JOBS in *[!0-9]*|0*) fail "CHECK_HANDOUT_JOBS=$CHECK_HANDOUT_JOBS is not a number of checks to run at once (1, 2, ...)" ;; esac
  jobs=$CHECK_HANDOUT_JOBS
else
  jobs=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null) || jobs=1
  case $jobs in ''|*[!0-9]*|0) jobs=1 ;; esac
  [ "$jobs" -le 2 ] || jobs=2
fi
all=$(chapters_with_exercises | tr '\n' ' ')
[ -n "$all" ] || fail "no chapter has a solution region"
out=build/check-handout
rm -rf "$out" && mkdir -p "$out"
# The copies of the book share chapter 12's trained models, kept by the hash of the
# program and its flags (ABH_MODEL_CACHE, read by mk/12-induction.mk): most handouts
# build the book's own build/bin/induction, and would train it again, 20 s each time.
export ABH_MODEL_CACHE="$top/$out/models"

# The checks, in the order their lines are printed: check_K is "NAME CHAPTER...".
count=0 paste=
add() { count=$((count + 1)); eval "check_$count=\$*"; }
if [ $# -gt 0 ]; then
  for n in "$@"; do add "chapter-$n" "$n"; done
else
  for n in $all; do add "chapter-$n" "$n"; done
  add chapters-1-3 1 3            # the example in book.md and the issue that asked for handouts
  # shellcheck disable=SC2086
  add all $all
  paste=all
fi
# The order they start in: the handout of all chapters, the longest, first
# when there are more checks than run at once (it would otherwise run alone
# at the end); then the others in order.
if [ $# -eq 0 ] && [ "$count" -gt "$jobs" ]; then
  queue="$count $(seq 1 $((count - 1)) | tr '\n' ' ')"
else
  queue=$(seq 1 "$count" | tr '\n' ' ')
fi
setsid=$(command -v setsid 2>/dev/null) || setsid=

# status K: the exit status of check K, or nothing while it runs (or before it starts).
name_of() { eval "set -- \$check_$1"; echo "$1"; }
status() { cat "$out/$(name_of "$1").status" 2>/dev/null; }
# Start check K in the background, in its own session (stdin /dev/null).
start() {
  name=$(name_of "$1")
  ( eval "set -- \$check_$1"
    _CHECK_HANDOUT_ONE=1 _CHECK_HANDOUT_PASTE=$paste $setsid sh "$0" "$@" < /dev/null > "$out/$name.out" 2> "$out/$name.err"
    echo $? > "$out/$name.status.tmp" && mv "$out/$name.status.tmp" "$out/$name.status" ) &
  started="$started $1"
}
# Stop every check still running (its whole session), and wait for them.
stop() {
  for k in $started; do
    [ -n "$(status "$k")" ] && continue
    pid=$(cat "$out/$(name_of "$k").pid" 2>/dev/null) && [ -n "$pid" ] && kill -TERM -"$pid" 2>/dev/null
  done
  wait
}
# Print check K's lines; if it failed, stop the checks still running and exit 1.
show() {
  name=$(name_of "$1")
  cat "$out/$name.out"
  cat "$out/$name.err" >&2
  [ "$(status "$1")" = 0 ] || { stop; exit 1; }
}
trap 'trap - INT TERM HUP; stop; exit 130' INT TERM HUP

printf '  %-7s %s\n' CHECK "$count handouts, $jobs at a time (CHECK_HANDOUT_JOBS=N to change); each one's lines when it is done"
started='' next=1 failed=''
while [ "$next" -le "$count" ]; do
  # the next check to print is done: print it (and stop if it failed)
  if [ -n "$(status "$next")" ]; then
    show "$next"
    next=$((next + 1))
    continue
  fi
  running=0
  for k in $started; do
    s=$(status "$k")
    if [ -z "$s" ]; then running=$((running + 1)); elif [ "$s" != 0 ]; then failed=1; fi
  done
  if [ -n "$failed" ] && [ "$running" -eq 0 ]; then
    # a check failed and none runs: print those done, in order, up to the first failure
    while [ "$next" -le "$count" ]; do
      [ -n "$(status "$next")" ] && show "$next"
      next=$((next + 1))
    done
    exit 1      # not reached: a check that failed was shown
  fi
  if [ -z "$failed" ] && [ "$running" -lt "$jobs" ] && [ -n "$queue" ]; then
    # shellcheck disable=SC2086
    set -- $queue; start "$1"; shift; queue="$*"
    continue
  fi
  sleep 1
done
echo "check-handout: every handout checked"
