--[[ autograder.lua: Gradescope's autograder for chapters of "Attention by Hand".

Usage
-----
    lua5.4 tools/autograder.lua --chapters "N ..." [--hidden-visibility V] [--no-check] [-o ZIP]

Run from the top of the book: `make autograder CHAPTERS="7"` does. Writes
ZIP (build/autograder-7.zip; chapters "1 3" give autograder-1-3.zip), the
file Gradescope's "Configure Autograder" page takes, holding at its top:

    setup.sh         run once when Gradescope builds its image (Ubuntu, as
                     root): apt-get installs what the book needs
    run_autograder   run for each submission: make grade-submission of
                     /autograder/submission, FORMAT=gradescope, in the book
                     below, into /autograder/results/results.json
    book/            the book itself: chapters, solutions, the hidden tests

run_autograder grades from a fresh handout made from book/: only the code
between the exercise markers comes from the submission (tools/submission.lua).
It always leaves a results.json: when the grade itself could not be made, one
with score 0 that says so. AUTOGRADER=DIR in its environment stands for
/autograder, so that it can be tried anywhere.

Its files are kept beside it, in ZIP less .zip plus .stage. Then, unless
--no-check, the zip is tried as Gradescope would use it, in
build/autograder/check: unpacked into source/, given the book's own chapters
as the submission (its results.json must parse, its scores add up, and every
test pass), then the handout untouched. It prints the points that the book's
answers score, which the assignment on Gradescope should be worth.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")
local json = dofile(HERE .. "/json.lua")
local q = U.q
U.name = "autograder"

local USAGE = 'usage: lua5.4 tools/autograder.lua --chapters "N ..." [--hidden-visibility V] [--no-check] [-o ZIP]\n'
local MARKER = ".abh-handout"
local CHECK = "build/autograder/check"

local function absolute(path)
  return path:sub(1, 1) == "/" and path or U.must("pwd"):gsub("\n$", "") .. "/" .. path
end

local function say(what, text) io.stdout:write(("  %-7s %s\n"):format(what, text)) io.stdout:flush() end

local SETUP = [[
#!/usr/bin/env bash
# setup.sh: Gradescope runs this once, as root, when it builds the autograder's
# image (Ubuntu): it installs what "Attention by Hand" needs to build and grade.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends gcc libc6-dev make lua5.4 gnuplot-nox perl diffutils findutils
]]

local RUN = [[
#!/bin/sh
# run_autograder: Gradescope runs this for each submission. It grades
# /autograder/submission as a handout of chapter(s) %s of "Attention by Hand":
# make grade-submission takes only the code between the exercise markers into a
# fresh handout made from the book in source/book, grades it there with the
# hidden tests, and writes Gradescope's results.json (FORMAT=gradescope).
# AUTOGRADER=DIR stands for /autograder (to try it elsewhere).
AUTOGRADER=$(cd "${AUTOGRADER:-/autograder}" && pwd) || exit 1
results=$AUTOGRADER/results
mkdir -p "$results"
cd "$AUTOGRADER/source/book" || exit 1
make --no-print-directory grade-submission SUBMISSION="$AUTOGRADER/submission" CHAPTERS=%s \
    FORMAT=gradescope HIDDEN_VISIBILITY=%s > "$results/results.json.tmp"
status=$?
if [ -s "$results/results.json.tmp" ]; then
  mv "$results/results.json.tmp" "$results/results.json"
else
  # no grade was written (the submission could not be read, or the book failed):
  # a results.json still, score 0, that says so
  rm -f "$results/results.json.tmp"
  printf '{"score": 0, "output": "%%s", "tests": []}\n' \
    "The autograder could not grade this submission (make grade-submission exited with status $status): the autograder output says why." \
    > "$results/results.json"
fi
exit 0
]]

-- The book's files (relative paths): git's list when the book is a clone
-- (tracked, and new files not ignored), else every file outside build/ and
-- .git/; never a handout kept inside the book, nor a nested repository.
local function book_files()
  local out, status = U.sh("git ls-files --cached --others --exclude-standard 2>/dev/null")
  if status ~= 0 or out == "" then
    out = U.must("find . -path ./build -prune -o -path ./.git -prune -o -path ./node_modules -prune -o -type f -print"
      .. " | sed 's|^\\./||' | LC_ALL=C sort")
  end
  local all, handouts = {}, {}
  for path in out:gmatch("[^\n]+") do
    all[#all + 1] = path
    local dir = path:match("^(.*/)" .. MARKER:gsub("%p", "%%%0") .. "$")
    if dir then handouts[#handouts + 1] = dir end
  end
  local files = {}
  for _, path in ipairs(all) do
    local skip = path:sub(-1) == "/" or path == MARKER or not U.read(path)
    for _, dir in ipairs(handouts) do skip = skip or path:sub(1, #dir) == dir end
    if not skip then files[#files + 1] = path end
  end
  return files
end

-- The chapter numbers in `words`, each a chapter with exercises.
local function chapter_numbers(words)
  local numbers = {}
  for word in words:gmatch("%S+") do
    if not word:match("^%d+$") then U.die("%s is not a chapter number (CHAPTERS=\"7\")", word) end
    local n = tonumber(word)
    local file = U.sh(("ls chapters/%02d-*.md 2>/dev/null"):format(n)):match("[^\n]+")
    if not file then U.die("there is no chapter %d (no chapters/%02d-*.md)", n, n) end
    if not U.must_read(file):find("// BEGIN SOLUTION Exercise", 1, true) then
      U.die("chapter %d has no exercise to grade (no solution region in %s)", n, file)
    end
    numbers[#numbers + 1] = tostring(n)
  end
  if #numbers == 0 then U.die("name the chapters to grade: make autograder CHAPTERS=\"7\"") end
  return numbers
end

-- Write the zip `zip` for the chapters `numbers`.
local function write_zip(zip, numbers, visibility)
  local stage = zip:gsub("%.zip$", "") .. ".stage"     -- the zip's files, as they are zipped
  U.must(("rm -rf -- %s && mkdir -p -- %s/book"):format(q(stage), q(stage)), "making " .. stage)
  local files = book_files()
  U.write(stage .. "/files", table.concat(files, "\n") .. "\n")
  U.must(("tar -cf - -T %s | tar -xf - -C %s/book"):format(q(stage .. "/files"), q(stage)), "copying the book")
  os.remove(stage .. "/files")
  U.write(stage .. "/setup.sh", SETUP)
  U.write(stage .. "/run_autograder", RUN:format(table.concat(numbers, " "), q(table.concat(numbers, " ")), q(visibility)))
  U.must(("chmod +x %s/setup.sh %s/run_autograder"):format(q(stage), q(stage)))
  U.must(("rm -f -- %s && cd %s && zip -q -r -X %s setup.sh run_autograder book"):format(q(zip), q(stage),
    q(absolute(zip))), "zip")
  say("ZIP", ("%s: setup.sh, run_autograder and the book (%d files), for chapter%s %s")
    :format(zip, #files, #numbers > 1 and "s" or "", table.concat(numbers, " ")))
end

-- Run the zip's run_autograder on `submission` (a directory) in a clean
-- /autograder of its own (`dir`); its results.json, decoded, or die.
local function try(zip, dir, submission)
  dir = absolute(dir)
  U.must(("rm -rf -- %s && mkdir -p -- %s/source && cd %s/source && unzip -q %s"):format(q(dir), q(dir), q(dir),
    q(absolute(zip))), "unzip")
  U.must(("cp -R %s %s/submission"):format(q(submission), q(dir)), "copying the submission")
  local status, _, err = U.run(("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL AUTOGRADER=%s sh %s/source/run_autograder"):format(
    q(dir), q(dir)))
  local text = U.read(dir .. "/results/results.json")
  local results, why = json.decode(text or "")
  if status ~= 0 or not results then
    io.stderr:write(err)
    U.die("run_autograder in %s gave no results.json that parses (%s)", dir, why or "exit status " .. status)
  end
  return results, err
end

-- The points of a results.json: its score, and the tests' scores and maxima added.
local function points(results)
  local score, max, hidden, failed = 0, 0, 0, {}
  for i = 1, results.tests.n do
    local t = results.tests[i]
    score, max = score + t.score, max + t.max_score
    if t.name:find("(hidden test ", 1, true) then hidden = hidden + t.max_score end
    if t.score < t.max_score then failed[#failed + 1] = t.name end
  end
  return score, max, hidden, failed
end

local function main(argv)
  local chapters, visibility, check, zip = nil, "hidden", true, nil
  local i = 1
  while i <= #argv do
    if argv[i] == "--chapters" then chapters, i = argv[i + 1] or "", i + 1
    elseif argv[i] == "--hidden-visibility" then visibility, i = argv[i + 1], i + 1
    elseif argv[i] == "--no-check" then check = false
    elseif argv[i] == "-o" then zip, i = argv[i + 1], i + 1
    elseif argv[i] == "-h" or argv[i] == "--help" then io.stdout:write(USAGE) return
    else io.stderr:write(USAGE) os.exit(2) end
    i = i + 1
  end
  local numbers = chapter_numbers(chapters or "")
  zip = zip or ("build/autograder-%s.zip"):format(table.concat(numbers, "-"))
  write_zip(zip, numbers, visibility)
  if not check then return end

  -- The book's answers: its own chapters, handed in alone.
  local answers = CHECK .. "/answers"
  U.must(("rm -rf -- %s && mkdir -p -- %s/chapters"):format(q(answers), q(answers)))
  for _, n in ipairs(numbers) do U.must(("cp chapters/%02d-*.md %s/chapters/"):format(tonumber(n), q(answers))) end
  say("CHECK", "run_autograder on the book's own answers (chapters " .. table.concat(numbers, " ") .. "), in " .. CHECK .. "/book")
  local results = try(zip, CHECK .. "/book", answers)
  local score, max, hidden, failed = points(results)
  if score ~= results.score or #failed > 0 or max == 0 then
    U.die("the book's answers scored %s of %d through the zip (tests add up to %d): %s", tostring(results.score), max, score,
      failed[1] or "no test ran")
  end
  say("POINTS", ("the book's answers score %d/%d (%d public tests, %d hidden): give the assignment %d points on Gradescope")
    :format(score, max, max - hidden, hidden, max))

  -- The handout as it is handed out: its stubs' score.
  local handout = CHECK .. "/handout"
  U.must(("rm -rf -- %s"):format(q(handout)))
  U.must(("%s tools/handout.lua -o %s %s"):format(q(arg[-1] or "lua5.4"), q(handout), table.concat(numbers, " ")), "making a handout")
  results = try(zip, CHECK .. "/stubs", handout)
  score = points(results)
  say("POINTS", ("the handout untouched scores %d/%d (tests of the chapters' code that need no exercise)"):format(score, max))
end

main(arg)
