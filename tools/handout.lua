--[[ handout.lua: make a student handout of "Attention by Hand".

Usage
-----
    lua5.4 tools/handout.lua -o DIR [CHAPTER ...]

Run from the top of the book (`make handout CHAPTERS="1 3"` does). Writes a
self-contained copy of the book into DIR in which the exercises of the
chapters given by number are cut out: every solution region of those
chapters,

    // BEGIN SOLUTION Exercise 1.6 (att)
    ...the code...
    // END SOLUTION Exercise 1.6

keeps its two marker lines, which show the student where to write, and its
code becomes one stub line, which compiles and stops the program with
"not implemented yet: Exercise 1.6" when it is reached. The stub names the
exercise, then the names the BEGIN marker lists in brackets, if any:

    NOT_IMPLEMENTED("Exercise 1.6", att);     from // BEGIN SOLUTION Exercise 1.6 (att)
    NOT_IMPLEMENTED("Exercise 1.6");          from // BEGIN SOLUTION Exercise 1.6

Where it writes: DIR must not exist, or be an empty directory, or be a
handout made before, which is replaced whole. A handout is marked by the
file .abh-handout at its top (written first; make handout keeps it out of
the handout's git commit, so that a student's clone is never taken for
one). Anything else is refused in one line naming DIR, before anything is
deleted or written: a directory that holds something else, a file, a
symbolic link, the book's own directory or one that holds it.

Without chapter numbers, every chapter that has a solution region is
assigned. The other chapters stay complete.

What the handout leaves out: the worked solutions of the assigned chapters
(solutions/NN-name.md), the teachers' hidden tests (tests/teacher/), the
mistakes the exercises' tests must catch (tests/mistakes/, which quote the
solutions) and their check (tools/check-mistakes.lua), the book's CI and
its developer README (a README for students takes its place).
Links to what was left out become plain text. The handout says what is
assigned in mk/handout.mk, which the Makefile reads, and its README lists
the stubs and which other chapters' tests run each assigned exercise's code
(tools/deps.lua reads it from the code). It carries GitHub Classroom's
workflow, .github/workflows/classroom.yml: a step per exercise cut, `make
grade EX=N.M` (see platform_files below).

Before it writes anything it checks that no line of an assigned solution
(ten characters or more, spaces trimmed; a line that only names a chunk,
<<...>>, does not count) appears anywhere in the handout, so
that prose or another chapter cannot give the answer away; and it fails with
`path:line: message` on a region error (the tangler's own checks) or on an
assigned chapter without exercises to cut out.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local tangler = dofile(HERE .. "/../tangle/tangle.lua")
local deps = dofile(HERE .. "/deps.lua")
local U = dofile(HERE .. "/util.lua")     -- q, must_read, write, must (a command that must succeed), die
local q = U.q

local USAGE = "usage: lua5.4 tools/handout.lua -o DIR [CHAPTER ...]   (chapter numbers, e.g. 1 3)\n"
local MIN_LEAK = 10     -- solution lines shorter than this are too common to be evidence
local MARKER = ".abh-handout"   -- at a handout's top: make handout may replace this directory
local MARKER_TEXT = [[
This directory is a student handout of "Attention by Hand", written by
`make handout` (tools/handout.lua). `make handout HANDOUT_DIR=<this directory>`
replaces it whole, with anything you added to it. Delete this file and
make handout will refuse to touch the directory.
]]

-- The lines of `text` (without their newlines) and whether it ended in one.
local function lines_of(text)
  local lines = {}
  for line in (text .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("(.-)\n") do lines[#lines + 1] = line end
  return lines, text:sub(-1) == "\n"
end

------------------------------------------------------------------------------
-- Pass 1: what the book holds
------------------------------------------------------------------------------

-- The book's files, relative paths: git's list when the book is a clone,
-- else every file outside build/ and .git/.
local function book_files()
  local out, status = U.sh("git ls-files --cached --others --exclude-standard 2>/dev/null")
  if status ~= 0 or out == "" then
    out = U.must("find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\\./||' | sort")
  end
  -- A handout kept inside the book (anything under a directory holding
  -- MARKER) is not part of the book; nor is a nested repository, which git
  -- lists as "dir/".
  local all, handouts = {}, {}
  for path in out:gmatch("[^\n]+") do
    all[#all + 1] = path
    local dir = path:match("^(.*/)" .. MARKER:gsub("%p", "%%%0") .. "$")
    if dir or path == MARKER then handouts[#handouts + 1] = dir or "" end
  end
  local files = {}
  for _, path in ipairs(all) do
    local inside = path:sub(-1) == "/"
    for _, dir in ipairs(handouts) do
      if path:sub(1, #dir) == dir and dir ~= "" then inside = true end
    end
    if not inside then files[#files + 1] = path end
  end
  return files
end

-- What is at `outdir`: "none", "empty" (an empty directory), "handout" (a
-- directory holding MARKER), or a refusal, a message naming it. The book's
-- own directory, and any directory that holds it, is refused even when it
-- is a handout (make handout run in a handout with HANDOUT_DIR=.).
local function outdir_state(outdir)
  local d = q(outdir)
  local kind = U.must(("if [ -L %s ]; then echo link; elif [ -d %s ]; then echo dir; elif [ -e %s ]; then echo other; else echo none; fi")
    :format(d, d, d)):match("%a+")
  if kind == "none" then return "none" end
  if kind == "link" then return nil, ("%s is a symbolic link: nothing written (name the directory itself)"):format(outdir) end
  if kind == "other" then return nil, ("%s exists and is not a directory: nothing written"):format(outdir) end
  local out_real = U.must(("cd -- %s && pwd -P"):format(d)):gsub("\n$", "")
  local top_real = U.must("pwd -P"):gsub("\n$", "")
  if top_real == out_real or top_real:sub(1, #out_real + 1) == out_real .. "/" or out_real == "/" then
    return nil, ("%s holds the book the handout is made from: nothing written (name a new directory)"):format(outdir)
  end
  if U.must(("[ -f %s/%s ] && echo yes || true"):format(d, MARKER)):match("yes") then return "handout" end
  if U.must(("ls -A -- %s"):format(d)) == "" then return "empty" end
  return nil, ("%s is not empty and is not a handout made before (it has no %s): nothing deleted or written; name a new or empty directory")
    :format(outdir, MARKER)
end

-- The chapter number of a chapter file, "chapters/03-selfatt-v3.md" -> 3.
local function chapter_number(path)
  local n = path:match("^chapters/(%d+)%-[^/]*%.md$")
  return n and tonumber(n)
end

------------------------------------------------------------------------------
-- Pass 2: cut the solutions out of the assigned chapters
------------------------------------------------------------------------------

-- The text of chapter `path` with every solution region's code replaced by
-- its stub; the exercises cut (in order, without repeats), the solution
-- lines removed, each {text, exercise}, and the stubs written, each {path,
-- line (in the handout's chapter), exercise, stub, marker (the BEGIN line),
-- names (how many the marker lists)}.
local function cut(path, text)
  local blocks, err = tangler.parse(path, text)
  if not blocks then U.die("%s", err) end
  local lines, final_newline = lines_of(text)
  local replace, exercises, seen, removed, stubs, stub_at = {}, {}, {}, {}, {}, {}
  for _, block in ipairs(blocks) do
    for _, region in ipairs(block.regions) do
      local first = block.line + region.first - 1          -- the BEGIN line in the Markdown
      local last = block.line + region.last - 1            -- the END line
      local indent = lines[first]:match("^(%s*)")
      local args = {('"Exercise %s"'):format(region.exercise)}
      for _, name in ipairs(region.names) do args[#args + 1] = name end
      replace[first + 1] = ("%sNOT_IMPLEMENTED(%s);"):format(indent, table.concat(args, ", "))
      for i = first + 2, last - 1 do replace[i] = false end
      for i = first + 1, last - 1 do removed[#removed + 1] = {text = lines[i], exercise = region.exercise} end
      stub_at[first + 1] = {path = path, exercise = region.exercise, names = #region.names,
                            stub = replace[first + 1]:match("^%s*(.-)%s*$"),
                            marker = lines[first]:match("^%s*(.-)%s*$"),
                            ["end"] = lines[last]:match("^%s*(.-)%s*$")}
      if not seen[region.exercise] then
        seen[region.exercise] = true
        exercises[#exercises + 1] = region.exercise
      end
    end
  end
  local out = {}
  for i, line in ipairs(lines) do
    if replace[i] == nil then out[#out + 1] = line
    elseif replace[i] then
      out[#out + 1] = replace[i]
      if stub_at[i] then
        stub_at[i].line = #out
        stubs[#stubs + 1] = stub_at[i]
      end
    end
  end
  return table.concat(out, "\n") .. (final_newline and "\n" or ""), exercises, removed, stubs
end

------------------------------------------------------------------------------
-- Pass 3: links to what the handout leaves out
------------------------------------------------------------------------------

-- `text` (a Markdown file at `path`) with every link to a file in `gone`
-- replaced by its text alone, and, in an assigned chapter, the line that
-- points to its worked solutions replaced by one that says where they are.
local function unlink(path, text, gone, assigned)
  local dir = path:match("^(.*)/") or ""
  text = text:gsub("%[([^%]\n]*)%]%(([^%)%s#]+)(#?[^%)%s]*)%)", function(label, target)
    local resolved = target
    if dir ~= "" and not target:match("^/") then resolved = dir .. "/" .. target end
    repeat
      local before = resolved
      resolved = resolved:gsub("[^/]+/%.%./", "", 1)
    until resolved == before
    resolved = resolved:gsub("^%./", "")
    if gone[resolved] then return label end
  end)
  if assigned then
    text = text:gsub("\nWorked solutions:[^\n]*\n", "\nWorked solutions are not part of this handout: your teacher has them.\n")
  end
  return text
end

------------------------------------------------------------------------------
-- Pass 4: the files that only a handout has
------------------------------------------------------------------------------

local function makefile_part(chapters, exercises)
  return ([[
# This tree is a student handout of "Attention by Hand" (tools/handout.lua
# wrote this file). The chapters assigned and the exercises cut out of them:
HANDOUT   := 1
ASSIGNED  := %s
EXERCISES := %s
]]):format(table.concat(chapters, " "), table.concat(exercises, " "))
end

-- "a", "a and b", "a, b and c".
local function and_list(items)
  if #items <= 1 then return items[1] or "" end
  return table.concat(items, ", ", 1, #items - 1) .. " and " .. items[#items]
end

-- `text` broken into lines of at most 80 characters at spaces, every line
-- after the first starting with `indent`.
local function wrap(text, indent)
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and #line + 1 + #word > 80 then
      lines[#lines + 1] = line
      line = indent .. word
    else
      line = line == "" and word or line .. " " .. word
    end
  end
  lines[#lines + 1] = line
  return table.concat(lines, "\n")
end

-- A stub as the chapter shows it, between its markers, indented for Markdown.
local function stub_example(stub)
  return ("    %s\n    %s\n    %s\n"):format(stub.marker, stub.stub, stub["end"])
end

-- "chapter 6 (tests/test_gqa.c)", "chapter 8 (tests/a.c, tests/b.c)"; the
-- space in "chapter 6" is \1 until `wrap` has run, so it does not break there.
local function chapter_with_files(chapter, files)
  return ("chapter\1%s (%s)"):format(chapter, table.concat(files, ", "))
end

-- The README's section on what grades an assigned exercise moves: for each
-- exercise, the programs its code is part of and the other chapters whose
-- tests run it (`reach`, from deps.reach on the handout's own code).
local function reach_section(exercises, chapter_files, reach, numbers)
  local items = {}
  for _, exercise in ipairs(exercises) do
    local r = reach[exercise] or {chapters = {}, files = {}, programs = {}, book = false}
    local own = exercise:match("^(%d+)")
    local where = chapter_files[tonumber(own)] or ("chapter " .. own)
    local programs = {}
    for _, name in ipairs(r.programs) do programs[#programs + 1] = name == "tensor" and "the tensor helper (linked into every program and test)" or name end
    local others = {}
    for _, chapter in ipairs(r.chapters) do others[#others + 1] = chapter_with_files(chapter, r.files[chapter]) end
    local item = ("- Exercise %s (%s) is code of %s."):format(exercise, where, #programs > 0 and and_list(programs) or "no program")
    if #others > 0 then
      item = item .. (" Besides chapter %s's own tests, those of %s run it"):format(own, and_list(others))
      if r.book then item = item .. (", and so do the whole book's (%s)"):format(table.concat(r.files.book, ", ")) end
      item = item .. "."
    elseif r.book then
      item = item .. (" Only chapter %s's tests and the whole book's (%s) run it."):format(own, table.concat(r.files.book, ", "))
    else
      item = item .. (" Only chapter %s's tests run it."):format(own)
    end
    items[#items + 1] = wrap(item, "  "):gsub("\1", " ")
  end
  return ([[
## Which grades an exercise can move

`make grade` counts each test for one chapter: the chapter of the program its
file tests (`tests/test_NAME.c` tests the program `NAME`), or chapter N for a
test named "Exercise N.M: ...". Some tests also run code written in another
chapter, so an assigned exercise can move the grades of chapters that are not
assigned:

%s

While a stub is in place those tests are skipped, each naming the exercise it
waits for; a wrong answer makes them fail. To count a mistake only in the
chapter where it was made, a teacher grades the assigned chapters alone:

    make grade CHAPTERS="%s"

prints only their lines and their total (its exit status is 0 when all their
tests pass), then one line on how the tests of other chapters that run their
code fared. `make grade` prints every chapter and the total of every test (its
exit status is 0 only when no test failed), and then the assigned chapters'
total on a line of its own. The list above is read from the code
(tools/deps.lua): the solution markers in each program, the programs each
test includes or runs. A teacher may grade with more tests than these (hidden
ones); each counts for the chapter of the program it tests.
]]):format(table.concat(items, "\n"), table.concat(numbers, " "))
end

-- The commands of "Build, test, grade", their comments aligned.
local function commands(chapters, exercises)
  local rows = {
    {"make check EX=" .. (exercises[1] or "N.M"), "is my exercise right? its tests alone, in a second or so"},
    {"make", "tangle the chapters, compile, run every program"},
    {"make test", "the TAP test suite, through prove"},
    {"make grade", "passed/total for every chapter and exercise"},
    {('make grade CHAPTERS="%s"'):format(table.concat(chapters, " ")), "the assigned chapters alone"},
  }
  local width = 0
  for _, row in ipairs(rows) do width = math.max(width, #row[1]) end
  local out = {}
  for _, row in ipairs(rows) do out[#out + 1] = ("    %-" .. width .. "s   # %s"):format(row[1], row[2]) end
  return table.concat(out, "\n")
end

local function student_readme(chapters, exercises, stubs, reach, chapter_files, programs)
  -- The stubs as this handout has them: one example of each form present
  -- (without names, with names), then every stub by chapter and line.
  local bare, named
  for _, stub in ipairs(stubs) do
    if stub.names == 0 then bare = bare or stub else named = named or stub end
  end
  local forms
  if bare and named then
    forms = ([[
Where it was, the chapter's C block holds a stub between two markers, for
example

%s
or, where the BEGIN marker lists variables in brackets, a stub that mentions
them too, so that the compiler does not call them unused while the code that
uses them is missing:

%s]]):format(stub_example(bare), stub_example(named))
  elseif named then
    forms = ([[
Where it was, the chapter's C block holds a stub between two markers, for
example

%s
The names in the BEGIN marker's brackets are variables the stub mentions, so
that the compiler does not call them unused while the code that uses them is
missing.
]]):format(stub_example(named))
  else
    forms = ([[
Where it was, the chapter's C block holds a stub between two markers, for
example

%s]]):format(stub_example(bare))
  end
  local list, width = {}, 0
  for _, stub in ipairs(stubs) do width = math.max(width, #("%s:%d"):format(stub.path, stub.line)) end
  for _, stub in ipairs(stubs) do
    list[#list + 1] = ("    %-" .. width .. "s   %s"):format(("%s:%d"):format(stub.path, stub.line), stub.stub)
  end
  local first = stubs[1]
  -- the program that stops there: one of the exercise's own chapter if it
  -- has one, else the earliest that runs the code (tensor is no program)
  local program, best
  for _, name in ipairs(deps.set_list(programs)) do
    local p = programs[name]
    local own = tonumber(first.exercise:match("^(%d+)"))
    local rank = p.chapter == own and -1 or (p.chapter or 1e9)
    if name ~= "tensor" and p.exercises[first.exercise] and (not best or rank < best) then program, best = name, rank end
  end
  program = program or "PROGRAM"
  return ([[
# Attention by Hand: student handout

This is the book *Attention by Hand* with the code of some exercises cut out.
Start reading at **[book.md](book.md)**.

Assigned: chapter%s %s, that is Exercise%s %s.

## What to do

In each assigned chapter (`chapters/NN-*.md`) the code an exercise asks for is
gone. %s
Replace the `NOT_IMPLEMENTED` line with your code, between the two markers,
which you leave where they are. The prose around the block, the exercise's own
text at the end of the chapter and the chapter's tests say what the code must
compute. The stubs of this handout, by chapter and line:

%s

A stub that is reached stops the program with one line, for example

    %s: %s:%d: not implemented yet: Exercise %s

## Build, test, grade

On Debian or Ubuntu:

%s

`make` compiles every program even while stubs remain, says which programs
still stop at one, and ends with the exercises still to do. In `make test` the
tests of an exercise that is not done fail with "not implemented yet: Exercise
N.M"; tests that only need it on the way (another chapter's, a transcript, the
PyTorch check) are skipped and name it. `make check EX=N.M` tangles again,
builds only what Exercise N.M's tests need, runs them, and prints the verdict
and what each failed test got and expected: the quickest answer to "is it
right?" (`CHAPTERS=N`: a whole chapter). The figures in `figures/` are the
book's: the pictures your programs should draw; `make figures` redraws them
from your code.

`make` needs `gcc`, `make`, `lua5.4`, `gnuplot` and `prove`:

    sudo apt-get install gcc make lua5.4 gnuplot-nox perl

A compiler error names the chapter's Markdown line, so you can fix it where you
wrote it. Do not edit `build/`: it is made again from the chapters.

%s]]):format(#chapters > 1 and "s" or "", and_list(chapters), #exercises > 1 and "s" or "", and_list(exercises),
             forms, table.concat(list, "\n"), program, first.path, first.line, first.exercise,
             commands(chapters, exercises),
             reach_section(exercises, chapter_files, reach, chapters))
end

------------------------------------------------------------------------------
-- Pass 4b: what a course platform reads
------------------------------------------------------------------------------

-- GitHub Classroom's workflow, added to the handout's files (`texts`: path
-- -> text, `kept`: paths). GitHub Classroom runs it on each push to a
-- student's repository: a step installs the book's tools, then each exercise
-- cut is one step of classroom-resources/autograding-command-grader, `make
-- grade EX=N.M`, which exits with 0 only when the exercise's tests ran and
-- passed, and is then worth its max-score (CLASSROOM_POINTS; a teacher may
-- edit it before the handout becomes the assignment's template); the last
-- step, classroom-resources/autograding-grading-reporter, adds them up.
-- Chapter 12's tests train models first: its steps may take longer.
local CLASSROOM = ".github/workflows/classroom.yml"
local CLASSROOM_POINTS, CLASSROOM_MINUTES, CLASSROOM_MINUTES_TRAINING = 10, 10, 30
local function platform_files(texts, kept, exercises)
  local steps, env, ids = {}, {}, {}
  for _, exercise in ipairs(exercises) do
    local id = "exercise-" .. exercise:gsub("%.", "-")
    steps[#steps + 1] = ([[
      - name: Exercise %s
        id: %s
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: Exercise %s
          command: make grade EX=%s
          timeout: %d
          max-score: %d
]]):format(exercise, id, exercise, exercise, exercise:match("^12%.") and CLASSROOM_MINUTES_TRAINING or CLASSROOM_MINUTES,
           CLASSROOM_POINTS)
    env[#env + 1] = ('          %s_RESULTS: "${{steps.%s.outputs.result}}"\n'):format(id:upper(), id)
    ids[#ids + 1] = id
  end
  texts[CLASSROOM] = ([[
# GitHub Classroom's autograding (tools/handout.lua wrote it): one step per
# exercise of this handout, `make grade EX=N.M`, worth its max-score when all
# that exercise's tests pass; the reporter adds the points up.
name: Autograding Tests
'on':
  - push
  - repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Install the book's tools
        run: sudo apt-get update && sudo apt-get install -y gcc make lua5.4 gnuplot-nox perl
%s      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
%s        with:
          runners: %s
]]):format(table.concat(steps), table.concat(env), table.concat(ids, ","))
  kept[#kept + 1] = CLASSROOM
end

------------------------------------------------------------------------------
-- Pass 5: nothing of a solution may remain
------------------------------------------------------------------------------

-- Fail if a removed solution line (trimmed, MIN_LEAK characters or more)
-- occurs anywhere in the handout's files (`texts`: path -> text).
local function check_no_leak(texts, removed, paths)
  local needles = {}
  for _, line in ipairs(removed) do
    local trimmed = line.text:match("^%s*(.-)%s*$")
    local reference = trimmed:match("^<<.+>>$")          -- a chunk's name is not its code
    if #trimmed >= MIN_LEAK and not reference then needles[#needles + 1] = {text = trimmed, exercise = line.exercise} end
  end
  for _, path in ipairs(paths) do
    local text = texts[path]
    for _, needle in ipairs(needles) do
      local at = text:find(needle.text, 1, true)
      if at then
        local line = select(2, text:sub(1, at):gsub("\n", "")) + 1
        U.die("%s:%d: holds a line of the solution of Exercise %s: %s", path, line, needle.exercise, needle.text)
      end
    end
  end
end

------------------------------------------------------------------------------
-- Pass 6: which tests run which exercise's code
------------------------------------------------------------------------------

-- The handout's programs (deps.programs of its chapters, tangled in memory)
-- and, for each exercise, the chapters whose tests run its code
-- (deps.reach). `kept` and `texts` are the handout's files.
local function code_map(kept, texts)
  local sources, tests, is_kept = {}, {}, {}
  for _, path in ipairs(kept) do is_kept[path] = true end
  local function read(path)
    if not is_kept[path] then return nil end
    return texts[path] or U.must_read(path)
  end
  for _, path in ipairs(kept) do
    if path:match("^chapters/[^/]*%.md$") then sources[#sources + 1] = {path = path, text = texts[path] or U.must_read(path)} end
  end
  table.sort(sources, function(a, b) return a.path < b.path end)   -- book order, as the Makefile sorts them
  local outputs, err = tangler.tangle(sources)
  if not outputs then U.die("%s", err) end
  local programs = deps.programs(outputs)
  for _, path in ipairs(kept) do
    local name = path:match("^tests/test_([%w_]+)%.c$")
    if name then
      tests[#tests + 1] = {path = path, name = name, text = read(path)}
    end
  end
  -- the script tests that run the programs: those in make's SCRIPT_TESTS, every
  -- line and += of it, which the Makefile exports as ABH_SCRIPT_TESTS; run by
  -- hand without it, every file of tests/ that is not C (tests/tap.lua and the
  -- like run no program: deps.script_runs_programs leaves them out)
  local listed, scripts = os.getenv("ABH_SCRIPT_TESTS"), {}
  for word in (listed or ""):gmatch("%S+") do scripts[word] = true end
  for _, path in ipairs(kept) do
    local script = scripts[path]
    if not listed then script = path:match("^tests/[^/]+$") and not path:match("%.[ch]$") end
    if script and deps.script_runs_programs(path, read) then
      tests[#tests + 1] = {path = path}
    end
  end
  return programs, deps.reach(programs, tests)
end

------------------------------------------------------------------------------
-- Main
------------------------------------------------------------------------------

local function main(argv)
  local outdir, wanted = nil, {}
  local i = 1
  while i <= #argv do
    if argv[i] == "-o" then
      outdir, i = argv[i + 1], i + 1
    elseif argv[i] == "-h" or argv[i] == "--help" then
      io.stdout:write(USAGE)
      return
    elseif argv[i]:match("^%d+$") then
      wanted[#wanted + 1] = tonumber(argv[i])
    else
      U.die("%s is not a chapter number (CHAPTERS=\"1 3\" assigns chapters 1 and 3)", argv[i])
    end
    i = i + 1
  end
  if not outdir or outdir == "" then io.stderr:write(USAGE) os.exit(1) end
  local state, refusal = outdir_state(outdir)
  if not state then U.die("%s", refusal) end

  local files = book_files()
  local texts, chapters_with_exercises = {}, {}
  for _, path in ipairs(files) do
    local n = chapter_number(path)
    if n then
      texts[path] = U.must_read(path)
      local blocks, err = tangler.parse(path, texts[path])
      if not blocks then U.die("%s", err) end
      for _, block in ipairs(blocks) do
        if #block.regions > 0 then chapters_with_exercises[n] = path end
      end
    end
  end

  -- Which chapters are assigned: those asked for, each with exercises.
  local assigned, numbers = {}, {}
  if #wanted == 0 then
    for n in pairs(chapters_with_exercises) do wanted[#wanted + 1] = n end
  end
  table.sort(wanted)
  for _, n in ipairs(wanted) do
    if not assigned[n] then
      if not chapters_with_exercises[n] then
        U.die("chapter %d has no exercise to hand out (no // BEGIN SOLUTION region in its code)", n)
      end
      assigned[n] = chapters_with_exercises[n]
      numbers[#numbers + 1] = tostring(n)
    end
  end

  -- What the handout leaves out.
  local gone = {["README.md"] = true, [MARKER] = true}
  local kept = {}
  for _, path in ipairs(files) do
    local n = path:match("^solutions/(%d+)%-[^/]*%.md$")
    if n and assigned[tonumber(n)] then gone[path] = true end
    if path:match("^tests/teacher/") or path:match("^tests/mistakes/") or path == "tools/check-mistakes.lua"
       or path:match("^%.ci/") then
      gone[path] = true
    end
    if not gone[path] then kept[#kept + 1] = path end
  end

  -- Cut the assigned chapters; unlink every Markdown file.
  local exercises, removed, stubs, out_texts, text_paths = {}, {}, {}, {}, {}
  for _, path in ipairs(kept) do
    local n = chapter_number(path)
    local text = texts[path]
    if n and assigned[n] then
      local cut_text, cut_exercises, cut_lines, cut_stubs = cut(path, text)
      text = cut_text
      table.move(cut_exercises, 1, #cut_exercises, #exercises + 1, exercises)
      table.move(cut_lines, 1, #cut_lines, #removed + 1, removed)
      table.move(cut_stubs, 1, #cut_stubs, #stubs + 1, stubs)
    end
    if path:match("%.md$") then
      text = unlink(path, text or U.must_read(path), gone, n and assigned[n])
    end
    if text then out_texts[path] = text end
  end
  local programs, reach = code_map(kept, out_texts)
  out_texts["README.md"] = student_readme(numbers, exercises, stubs, reach, assigned, programs)
  out_texts["mk/handout.mk"] = makefile_part(numbers, exercises)
  kept[#kept + 1] = "README.md"
  kept[#kept + 1] = "mk/handout.mk"
  platform_files(out_texts, kept, exercises)

  -- Every text file of the handout is searched for solution lines.
  for _, path in ipairs(kept) do
    if not out_texts[path] then
      local text = U.must_read(path)
      if not text:find("\0", 1, true) then out_texts[path] = text end
    end
    if out_texts[path] then text_paths[#text_paths + 1] = path end
  end
  check_no_leak(out_texts, removed, text_paths)

  -- Write: a fresh directory, marked first as a handout, text files from
  -- memory, the others copied. Only a handout made before is removed.
  local now, why = outdir_state(outdir)
  if now ~= state then U.die("%s", why or (outdir .. " changed while the handout was being made: nothing written")) end
  if state == "handout" then U.must("rm -rf -- " .. q(outdir), "removing the old handout " .. outdir) end
  U.must("mkdir -p -- " .. q(outdir), "making " .. outdir)
  U.write(outdir .. "/" .. MARKER, MARKER_TEXT)
  for _, path in ipairs(kept) do
    if out_texts[path] then
      U.write(outdir .. "/" .. path, out_texts[path])
    else
      U.must(("mkdir -p %s && cp -p %s %s"):format(q((outdir .. "/" .. path):match("^(.*)/")), q(path), q(outdir .. "/" .. path)))
    end
    U.must(("[ ! -x %s ] || chmod +x %s"):format(q(path), q(outdir .. "/" .. path)))
  end
  local list = {}
  for _, exercise in ipairs(exercises) do list[#list + 1] = "Exercise " .. exercise end
  io.stdout:write(("handout: %s: chapter%s %s assigned (%s)\n"):format(
    outdir, #numbers > 1 and "s" or "", table.concat(numbers, ", "), table.concat(list, ", ")))
end

main(arg)
