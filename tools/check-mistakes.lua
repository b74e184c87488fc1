#!/usr/bin/env lua5.4
--[[ check-mistakes.lua: every exercise's own tests catch the mistakes students make.

Usage
-----
    lua5.4 tools/check-mistakes.lua [-v] [EXERCISE ...]      (make check-mistakes)

Run from the top of the book. tests/mistakes/*.lua list, for each exercise whose
code a handout cuts out, mistakes a student could make there: those its worked
solution lists, a tensor taken from the wrong step, a scale or an index that is
off. Each is an exact piece of the exercise's solution region and what the
mistake puts in its place.

A student's `make grade` reads an exercise's own line ("Exercise 5.6  25/25"),
from the tests a handout ships, so for each mistake this script checks that at
least one of those tests of that exercise, and not only some other chapter's
test or a teacher's hidden one, fails on it. In a copy of the book
(build/mistakes/all, or build/mistakes/5.6 for the exercises named) it makes the
mistake in the chapter, builds the test binaries that hold the exercise's tests
(tests/test_NAME.c with EXERCISE("N.M", ...), and tests/teacher/test_NAME.c,
counted apart) and the programs they run, runs them, and counts the tests whose
names start "Exercise N.M:" that fail. First it checks the book as it is: every
one of those tests passes.

It prints a line per mistake: how many of the exercise's tests caught it, and
(with -v, or when none did) their names, which the worked solutions quote. A
failing test may say what is wrong ("#   what is wrong: ..." among its
diagnostics, tap.h's what_is_wrong()): the line names the first such cause, and the
last line counts the mistakes that got one. A mistake with `names = "TEXT"`
must get a cause that contains TEXT.

An entry may make several changes at once: `edits = { { from = ..., to = ... },
... }` in place of its `from` and `to`, each found once inside a region of the
exercise. An entry with `correct = true` is no mistake but a correct answer written
another way (the loops of a helper spelled out, a division for a
multiplication, another order of a sum). It must pass every test of its
exercise, the hidden ones too, and every test of every other test file that
runs the exercise's code (tools/deps.lua says which): a correct answer in one
chapter fails no chapter's tests. Each exercise checked lists at least three.
Chapter 12's trained models, which tests/test_induction_models.c reads, are
made again with the first correct answer of an exercise whose code trains them
(0.7, 6.7, 11.6, 12.4: half a minute of training each time); its other correct
answers run that test on the book's models, since its thresholds are what any
correct training gives (twelve seeds and a softmax written otherwise, see the
test), and a rounding otherwise moves a model no further than another seed.

How it keeps to a few minutes (CI runs it on two cores): each entry builds only
what its runs need (the test binaries, the programs they include or name, the
models only for the test that reads them), in a copy whose build is kept from
one entry to the next, so make recompiles only what the chapter's change reached
(and ccache, when there is one, what it has seen before); the copy compiles at
-O1 where the book says -O2 (the same float operations in the same order: see
CFLAGS below); and with two cores, two copies check the exercises at once, each
taking the next one not taken, the longest first. Each exercise's lines are
printed in book order, with the time it took.

It exits 1 if a mistake is not caught, or named otherwise than its `names`
says, if a correct answer fails a test, if an exercise lists fewer than three
correct answers, or if an entry does not apply (its text is not found once,
inside the exercise's region) or does not compile.
]]

local USAGE = "usage: lua5.4 tools/check-mistakes.lua [-v] [EXERCISE ...]   (e.g. 5.6)\n"

-- --worker COPY QUEUE (given by this script to the copies of itself it starts): check,
-- in COPY (a copy of the book already built and checked), the exercises named that
-- no other worker has claimed in QUEUE, one at a time, and leave each one's lines there.
local verbose, only, worker, given = false, {}, nil, {}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "-v" then verbose = true
  elseif a == "--worker" and arg[i + 2] then worker = { copy = arg[i + 1], queue = arg[i + 2] } i = i + 2
  elseif a:match("^%d+%.%d+$") then only[a] = true given[#given + 1] = a
  else io.stderr:write("check-mistakes: " .. a .. ": not an exercise number\n" .. USAGE) os.exit(2) end
  i = i + 1
end

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")     -- must_read, write, sh, must, die, regions
local deps = dofile(HERE .. "/deps.lua")  -- which test files run which programs and exercises' code

-- The copy's compiles: -O1 where the book says -O2 (a file that sets its own flags, as
-- the trainer's -O3 or the fast rungs', keeps them). Neither lets gcc reorder a float
-- sum or contract a*b+c (-std=c11, no -ffast-math), so the tests see the same numbers
-- as the book's build, and the compiles take half the time. ABH_MISTAKES_CFLAGS=-O2
-- checks with the book's own flags.
local CFLAGS = os.getenv("ABH_MISTAKES_CFLAGS") or "-O1"

local mistakes = {}
local ls = assert(io.popen("ls tests/mistakes/*.lua 2>/dev/null"))
for path in ls:lines() do
  for _, m in ipairs(dofile(path)) do m.file = path mistakes[#mistakes + 1] = m end
end
ls:close()
local names = {}
for e in pairs(only) do names[#names + 1] = e end
table.sort(names)
local COPY = worker and worker.copy or "build/mistakes/" .. (#names > 0 and table.concat(names, "+") or "all")

-- The test files of the book: { path = build/tests/NAME or build/tests/teacher/NAME,
-- name = NAME, source = tests/test_NAME.c or tests/teacher/test_NAME.c, hidden }.
local test_files = {}
for _, dir in ipairs({ "tests", "tests/teacher" }) do
  local ls = io.popen("ls " .. dir .. "/test_*.c 2>/dev/null")
  for source in ls:lines() do
    local name = source:match("test_(%w[%w_]*)%.c$")
    test_files[#test_files + 1] = { path = source:gsub("^tests/", "build/tests/"):gsub("test_(%w[%w_]*)%.c$", "%1"),
                                    name = name, source = source, text = U.must_read(source),
                                    hidden = dir == "tests/teacher" }
  end
  ls:close()
end

-- The test binaries holding an exercise's tests: EXERCISE("N.M", ...) in tests/test_NAME.c
-- (public: a handout ships them) and tests/teacher/test_NAME.c (hidden).
local function binaries_of(exercise)
  local found = {}
  for _, t in ipairs(test_files) do
    if t.text:find('EXERCISE("' .. exercise .. '"', 1, true) then found[#found + 1] = t end
  end
  return found
end

-- The programs of the copy's tangled sources (tools/deps.lua), read once, before any
-- mistake is made in it: the markers and includes it reads are in every variant alike.
local programs
local function programs_of_copy()
  if not programs then
    local sources, ls = {}, io.popen("ls " .. COPY .. "/build/src/*.c " .. COPY .. "/build/src/*.h 2>/dev/null")
    for path in ls:lines() do sources[#sources + 1] = { path = "src/" .. path:match("([^/]+)$"), text = U.must_read(path) } end
    ls:close()
    programs = deps.programs(sources)
  end
  return programs
end

-- What the compile of a test file read (gcc -MMD's dependency file in the copy), or nil.
local function depfile_of(t)
  return U.read(COPY .. "/build/dep/obj-" .. t.path:gsub("^build/", ""):gsub("/", "-") .. ".o.d")
end

-- What running the test files of `list` needs built: the binaries, the programs they
-- run (they include or name them: tools/deps.lua) and, for the tests that read chapter
-- 12's trained models, the data (test-data). Nothing else: not every program.
local function reads_models(t) return t.text:find("ABH_MODELS", 1, true) ~= nil end
local function targets_of(list, no_data)
  local targets, seen = {}, {}
  local function add(target) if not seen[target] then seen[target] = true targets[#targets + 1] = target end end
  for _, t in ipairs(list) do
    add(t.path)
    for name in pairs(deps.test_programs(programs_of_copy(), t.text, depfile_of(t))) do
      if name ~= "tensor" and U.read(COPY .. "/build/src/" .. name .. ".c") then add("build/bin/" .. name) end
    end
    if reads_models(t) and not no_data then add("test-data") end
  end
  return targets
end

-- The test files, beside an exercise's own, that run its code (tools/deps.lua: the
-- programs they include or name, read from the copy's tangled sources and the
-- dependency files of the tests' compiles): a list like binaries_of's.
local function dependents_of(exercise, own)
  local skip, found = {}, {}
  for _, t in ipairs(own) do skip[t.path] = true end
  for _, t in ipairs(test_files) do
    if not skip[t.path] and deps.test_exercises(programs_of_copy(), t.text, depfile_of(t))[exercise] then
      found[#found + 1] = t
    end
  end
  return found
end

-- Build targets in the copy; returns ok, the log's path.
local function build(targets)
  local log = COPY .. ".log"
  local _, status = U.sh("make --no-print-directory -s -C " .. COPY .. " MODE_CFLAGS=" .. U.q(CFLAGS) .. " " ..
                         table.concat(targets, " ") .. " > " .. U.q(log) .. " 2>&1")
  return status == 0, log
end

-- Runs a test binary in the copy; returns a list of { ok, skip, name, why } for the
-- exercise's tests (every test, if exercise is nil), `why` the first cause its failure
-- names ("what is wrong: ...", tap.h's what_is_wrong()), if any.
local function run_tests(binary, exercise)
  local results, prefix = {}, exercise and "Exercise " .. exercise .. ": " or ""
  local p = io.popen("cd " .. COPY .. " && ABH_BIN=build/bin ABH_WRAP= ABH_TAP_DIAG=stdout " .. binary .. " 2>/dev/null")
  local failed     -- the last test that failed: a cause said after it (and after tests that passed since) is its
  for line in p:lines() do
    local no, name = line:match("^(n?o?t? ?)ok %d+ %- (.*)$")
    if not name and line:match("^ok %d+ # skip") then no, name = "", line end
    if name then
      if name:sub(1, #prefix) == prefix then
        local skip = name:match(" # SKIP ") ~= nil or name:match("^ok %d+ # skip") ~= nil
        results[#results + 1] = { ok = no == "", skip = skip, name = (name:gsub(" # SKIP .*", "")) }
        if no ~= "" then failed = results[#results] end
      elseif no ~= "" then
        failed = nil
      end
    elseif failed and not failed.why then
      failed.why = line:match("^#%s+what is wrong: (.*)$")
    end
  end
  p:close()
  return results
end

-- The exercises to check, in book order, the test files of each, and how many entries
-- and correct answers each lists.
local exercises, seen, binaries, corrects, entries = {}, {}, {}, {}, {}
for _, m in ipairs(mistakes) do
  if (next(only) == nil or only[m.exercise]) and not seen[m.exercise] then
    seen[m.exercise] = true
    exercises[#exercises + 1] = m.exercise
    binaries[m.exercise] = binaries_of(m.exercise)
    if #binaries[m.exercise] == 0 then U.die("no test file holds EXERCISE(\"" .. m.exercise .. "\", ...)") end
  end
  if seen[m.exercise] then
    entries[m.exercise] = (entries[m.exercise] or 0) + 1
    if m.correct then corrects[m.exercise] = (corrects[m.exercise] or 0) + 1 end
  end
end
if #exercises == 0 then U.die("tests/mistakes/*.lua list no mistake") end
for e in pairs(only) do if not seen[e] then U.die("tests/mistakes/*.lua list no mistake for Exercise " .. e) end end

-- A correct answer, applied: its exercise's tests (public and hidden) and every test
-- of the other files that run its code must pass. Returns 1 if one does not.
local function check_correct(m, what, others, say, trains)
  local list = {}
  for _, t in ipairs(binaries[m.exercise]) do list[#list + 1] = t end
  for _, t in ipairs(others) do list[#list + 1] = t end
  local ok, blog = build(targets_of(list, not trains))
  if not ok then
    say("  FAIL    " .. what .. ": does not compile (" .. blog .. ")")
    return 1
  end
  local failed, n, nh, m_others = {}, 0, 0, 0
  for _, t in ipairs(binaries[m.exercise]) do
    for _, r in ipairs(run_tests(t.path, m.exercise)) do
      if t.hidden then nh = nh + 1 else n = n + 1 end
      if not r.ok or r.skip then failed[#failed + 1] = (t.hidden and "(hidden) " or "") .. r.name end
    end
  end
  for _, t in ipairs(others) do
    for _, r in ipairs(run_tests(t.path, nil)) do
      m_others = m_others + 1
      if not r.ok then failed[#failed + 1] = t.path .. ": " .. r.name end
    end
  end
  local models = ""
  for _, t in ipairs(others) do
    if reads_models(t) then models = trains and " (chapter 12's models trained again with it)" or " (with the book's models)" end
  end
  say(("  %s %s: %s its %d tests (and %d hidden ones), and %d tests of %d other files that run its code%s"):format(
    #failed == 0 and "RIGHT  " or "WRONG  ", what, #failed == 0 and "passes" or #failed .. " tests fail among", n, nh,
    m_others, #others, models))
  for _, name in ipairs(failed) do say("              " .. name) end
  return #failed > 0 and 1 or 0
end

-- A mistake, made: at least one of its exercise's own public tests must fail, and say
-- what `names` says is wrong, if it says. Returns failed (0 or 1), caught, named (0 or 1).
local function check_mistake(m, what, say)
  local ok, blog = build(targets_of(binaries[m.exercise]))
  if not ok then
    say("  FAIL    " .. what .. ": does not compile (" .. blog .. ")")
    return 1, 0, 0
  end
  local caught, n, hidden, nh, why = {}, 0, {}, 0, nil
  for _, t in ipairs(binaries[m.exercise]) do
    for _, r in ipairs(run_tests(t.path, m.exercise)) do
      local bad = not r.ok and not r.skip
      if bad and r.why and (not why or (m.names and not why:find(m.names, 1, true) and r.why:find(m.names, 1, true))) then
        why = r.why
      end
      if t.hidden then
        nh = nh + 1
        if bad then hidden[#hidden + 1] = r.name end
      else
        n = n + 1
        if bad then caught[#caught + 1] = r.name end
      end
    end
  end
  local misnamed = #caught > 0 and m.names and not (why and why:find(m.names, 1, true))
  say(("  %s %s: %d of its %d tests catch it (and %d of %d hidden ones)"):format(
    #caught == 0 and "MISSED " or misnamed and "MISNAMED" or "CAUGHT ", what, #caught, n, #hidden, nh))
  if why or misnamed then
    say("              what is wrong: " .. (why or "(nothing said)") ..
        (misnamed and "\n              (it should name: " .. m.names .. ")" or ""))
  end
  if verbose or #caught == 0 then
    for _, name in ipairs(caught) do say("              " .. name) end
    for _, name in ipairs(hidden) do say("              (hidden) " .. name) end
  end
  return (#caught == 0 or misnamed) and 1 or 0, #caught > 0 and 1 or 0, (#caught > 0 and why) and 1 or 0
end

-- An entry's edits made in `text`, each found once and inside a region of the
-- exercise; nil if one is not.
local function apply(text, m)
  for _, edit in ipairs(m.edits or { { from = m.from, to = m.to } }) do
    local at, last = text:find(edit.from, 1, true)
    local again = at and text:find(edit.from, last + 1, true)
    local inside = false
    for _, r in ipairs(at and U.regions(text, m.exercise) or {}) do
      inside = inside or (at >= r.first and last <= r.last)
    end
    if not at or again or not inside then return nil end
    text = text:sub(1, at - 1) .. edit.to .. text:sub(last + 1)
  end
  return text
end

-- The chapter `text`, an entry's edits made, given back the number of lines of
-- `original`: the lines the edits add are joined away in the prose after the code block
-- of the exercise's last region (or the lines they remove are added there, blank). So
-- every later block keeps its lines, and its `#line` numbers: the tangled files that do
-- not hold the exercise's code stay as they were, and make recompiles nothing of them
-- (chapter 0's tensor.h is included by every test). Where that prose is too short,
-- the text is given back as it is.
local function keep_lines(text, original, exercise)
  local function lines(t) return select(2, t:gsub("\n", "")) end
  local extra = lines(text) - lines(original)
  local regions = U.regions(text, exercise)
  if extra == 0 or #regions == 0 then return text end
  local _, fence = text:find("\n```[^\n]*\n", regions[#regions].last)       -- the block's closing fence line
  if not fence then return text end
  if extra < 0 then return text:sub(1, fence) .. ("\n"):rep(-extra) .. text:sub(fence + 1) end
  local next_fence = text:find("\n```", fence, true) or #text
  local prose = text:sub(fence + 1, next_fence - 1)          -- whole lines, none of them a fence
  local joined, n = prose:gsub("\n", " ", extra)
  if n < extra then return text end
  return text:sub(1, fence) .. joined .. text:sub(next_fence)
end

-- Makes each mistake of exercise `e` in the copy, in turn, and writes each of its
-- correct answers, each in the chapter and then undone; the copy is built between them
-- (make rebuilds what the chapter's change reached). Returns how many entries failed
-- (a mistake not caught or named otherwise than its `names`, a correct answer that
-- fails a test, an entry that does not apply, too few correct answers), how many
-- mistakes were caught and how many of those were named. say(line) prints.
local function check_exercise(e, say)
  local failures, caught_n, named_n, trained = 0, 0, 0, false
  local others = corrects[e] and dependents_of(e, binaries[e]) or {}
  local data = false                     -- whether a test that runs its code reads chapter 12's models
  for _, t in ipairs(others) do data = data or reads_models(t) end
  for _, m in ipairs(mistakes) do
    if m.exercise == e then
      local path = COPY .. "/" .. m.chapter
      local original = U.must_read(path)
      local changed = apply(original, m)
      changed = changed and keep_lines(changed, original, m.exercise)
      local what = ("Exercise %-5s %s"):format(m.exercise, m.mistake)
      if not changed then
        failures = failures + 1
        say("  FAIL    " .. what .. ": its text is not found exactly once, inside the exercise's region of " .. m.chapter)
      else
        U.write(path, changed)
        if m.correct then
          failures = failures + check_correct(m, what, others, say, data and not trained)
        else
          local failed, caught, named = check_mistake(m, what, say)
          failures, caught_n, named_n = failures + failed, caught_n + caught, named_n + named
        end
        U.write(path, original)
        if m.correct and data and not trained then
          -- the models trained with the first correct answer, then the book's again (from
          -- the model cache: the book's trainer made them), which the others are tested on
          trained = true
          local ok, blog = build({ "test-data" })
          if not ok then say("  FAIL    the book's models, made again after " .. what .. " (" .. blog .. ")") failures = failures + 1 end
        end
      end
    end
  end
  if (corrects[e] or 0) < 3 then
    say(("  FAIL    Exercise %-5s lists %d correct answers (correct = true): at least three are needed"):format(
      e, corrects[e] or 0))
    failures = failures + 1
  end
  return failures, caught_n, named_n
end

-- The CPU time of this process and of the commands it ran and waited for (Linux's
-- /proc: utime, stime, cutime and cstime, in ticks of 1/100 s), or 0 elsewhere.
local function cpu_seconds()
  local fields, stat = {}, U.read("/proc/self/stat") or ""
  for field in (stat:match("%) (.*)$") or ""):gmatch("%S+") do fields[#fields + 1] = tonumber(field) or 0 end
  return ((fields[12] or 0) + (fields[13] or 0) + (fields[14] or 0) + (fields[15] or 0)) / 100
end

-- A worker: claims the exercises named, one at a time (a directory QUEUE/E.claim, made
-- by one worker only), checks each and leaves its lines in QUEUE/E.out and its counts in
-- QUEUE/E.counts ("failures caught named"), written last.
if worker then
  programs_of_copy()
  for _, e in ipairs(given) do
    if U.sh("mkdir " .. U.q(worker.queue .. "/" .. e .. ".claim") .. " 2>/dev/null && echo yes"):match("yes") then
      local lines, started, cpu = {}, os.time(), cpu_seconds()
      local failures, caught, named = check_exercise(e, function(line) lines[#lines + 1] = line end)
      lines[#lines + 1] = ("  TIME    Exercise %-5s %d entries in %d s, %.0f s of CPU (in %s)"):format(e, entries[e],
        os.time() - started, cpu_seconds() - cpu, COPY)
      U.write(worker.queue .. "/" .. e .. ".out", table.concat(lines, "\n") .. (#lines > 0 and "\n" or ""))
      U.write(worker.queue .. "/" .. e .. ".counts.tmp", ("%d %d %d\n"):format(failures, caught, named))
      os.rename(worker.queue .. "/" .. e .. ".counts.tmp", worker.queue .. "/" .. e .. ".counts")
    end
  end
  os.exit(0)
end

-- The book, copied: what git knows of (tracked, or new and not ignored).
local STARTED = os.time()
io.write("  COPY    the book into " .. COPY .. "\n")
U.must("rm -rf " .. COPY .. " " .. COPY .. ".2 " .. COPY .. ".queue && mkdir -p " .. COPY .. " " .. COPY .. ".queue" ..
       " && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t " .. COPY,
       "copying the book into " .. COPY .. " (git lists its files)")

-- Built: the test files of each exercise, the others that run the code of each exercise
-- with a correct answer listed, and what they run. The first build tangles and compiles
-- the tests, whose dependency files say what the others are.
local own_list = {}
for _, e in ipairs(exercises) do for _, t in ipairs(binaries[e]) do own_list[#own_list + 1] = t end end
io.write("  MAKE    " .. #own_list .. " test binaries, what they run and the test files that run the exercises' code, in " ..
         COPY .. " (" .. CFLAGS .. ")\n")
local built, log = build({ "build/.tangled" })
if built then built, log = build(targets_of(own_list)) end
if not built then io.stderr:write(U.must_read(log)) U.die("the book does not build in " .. COPY .. " (see " .. log .. ")") end
-- (Again until no other file turns up: a test's dependency file, once compiled, may
-- show a program it reads through a header, which its #include lines do not.)
local others, count = {}, -1
while true do
  local base_list, n = {}, 0
  for _, t in ipairs(own_list) do base_list[#base_list + 1] = t end
  for _, e in ipairs(exercises) do
    others[e] = corrects[e] and dependents_of(e, binaries[e]) or {}
    for _, t in ipairs(others[e]) do base_list[#base_list + 1] = t n = n + 1 end
  end
  if n == count then break end
  count = n
  built, log = build(targets_of(base_list))
  if not built then io.stderr:write(U.must_read(log)) U.die("the test files that run the exercises' code do not build in " .. COPY .. " (see " .. log .. ")") end
end

-- The book as it is: every test of each exercise passes, and every test of the other
-- files that run the code of an exercise with a correct answer listed.
local based = {}
for _, e in ipairs(exercises) do
  local n, bad = 0, {}
  for _, t in ipairs(binaries[e]) do
    for _, r in ipairs(run_tests(t.path, e)) do
      n = n + 1
      if not r.ok or r.skip then bad[#bad + 1] = r.name end
    end
  end
  if #bad > 0 or n == 0 then
    U.die(("Exercise %s: %d of its %d tests do not pass on the book as it is: %s"):format(e, #bad, n, bad[1] or "(none ran)"))
  end
  for _, t in ipairs(others[e]) do
    if not based[t.path] then
      for _, r in ipairs(run_tests(t.path, nil)) do
        if not r.ok then U.die(("%s: a test fails on the book as it is: %s"):format(t.path, r.name)) end
      end
      based[t.path] = true
    end
  end
  io.write(("  BASE    Exercise %-5s %3d tests pass on the book as it is%s\n"):format(e, n,
    corrects[e] and (" (and the %d other test files that run its code)"):format(#others[e]) or ""))
end

-- The entries, in two copies at once with two cores or more (COPY and COPY.2, a copy of
-- the built one): each worker takes the next exercise no other has taken, the longest
-- first (those whose correct answers train chapter 12's models again, then those with
-- the most builds to do). Each exercise's lines are printed in book order as they come.
local cost = {}
for _, e in ipairs(exercises) do
  local trains = false
  for _, t in ipairs(others[e]) do trains = trains or t.text:find("ABH_MODELS", 1, true) ~= nil end
  cost[e] = (trains and 1000 or 0) + entries[e] + (corrects[e] or 0) * #others[e]
end
local order = {}
for k, e in ipairs(exercises) do order[k] = e end
table.sort(order, function(a, b) return cost[a] > cost[b] or cost[a] == cost[b] and deps.exercise_less(a, b) end)
local cores = tonumber(U.sh("nproc 2>/dev/null"):match("%d+")) or 1
local copies = { COPY }
if cores >= 2 and #exercises > 1 then
  U.must("cp -a " .. COPY .. " " .. COPY .. ".2", "copying " .. COPY .. " to " .. COPY .. ".2")
  copies[2] = COPY .. ".2"
end
local total = 0
for _, e in ipairs(exercises) do total = total + entries[e] end
io.write(("  CHECK   %d entries of %d exercises, in %s\n"):format(total, #exercises, table.concat(copies, " and ")))
io.stdout:flush()
local QUEUE, workers = COPY .. ".queue", {}
for k, copy in ipairs(copies) do
  local status = QUEUE .. "/worker-" .. k .. ".status"
  workers[k] = { out = copy .. ".out", status = status,
                 pipe = io.popen("lua5.4 " .. HERE .. "/check-mistakes.lua --worker " .. U.q(copy) .. " " .. U.q(QUEUE) ..
                   (verbose and " -v " or " ") .. table.concat(order, " ") .. " > " .. U.q(copy .. ".out") ..
                   " 2>&1; echo $? > " .. U.q(status)) }
end
local function done(e) return U.read(QUEUE .. "/" .. e .. ".counts") end
local function running()
  for _, w in ipairs(workers) do if not U.read(w.status) then return true end end
  return false
end
local failures, caught_n, named_n = 0, 0, 0
for _, e in ipairs(exercises) do
  while not done(e) do
    -- a worker that stopped leaves a claim without counts
    local claimed = U.sh("ls -d " .. U.q(QUEUE .. "/" .. e .. ".claim") .. " 2>/dev/null") ~= ""
    if not running() and not done(e) then
      for _, w in ipairs(workers) do io.stderr:write(U.read(w.out) or "") end
      U.die("the check of Exercise " .. e .. (claimed and " stopped" or " never started") .. " (see " ..
            table.concat(copies, ".out, ") .. ".out)")
    end
    U.sh("sleep 1")
  end
  io.write(U.must_read(QUEUE .. "/" .. e .. ".out"))
  io.stdout:flush()
  local f, c, n = U.must_read(QUEUE .. "/" .. e .. ".counts"):match("(%d+) (%d+) (%d+)")
  failures, caught_n, named_n = failures + tonumber(f), caught_n + tonumber(c), named_n + tonumber(n)
end
for _, w in ipairs(workers) do
  w.pipe:close()
  local status = tonumber((U.read(w.status) or ""):match("%d+"))
  if status ~= 0 then io.stderr:write(U.read(w.out) or "") U.die("a worker stopped (see " .. w.out .. ")") end
end
io.write(("check-mistakes: %d of the %d mistakes caught get a failure that says what is wrong (%d s, %.0f s of CPU)\n"):format(
  named_n, caught_n, os.time() - STARTED, cpu_seconds()))
if failures > 0 then
  io.write(("check-mistakes: %d entries failed: mistakes not caught or misnamed, correct answers failing a test, too few correct answers, or not applicable\n"):format(failures))
  os.exit(1)
end
io.write(("check-mistakes: every mistake of Exercises %s is caught by the exercise's own tests, and every correct answer passes\n"):format(table.concat(exercises, ", ")))
