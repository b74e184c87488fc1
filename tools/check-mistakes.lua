#!/usr/bin/env lua5.4
--[[ check-mistakes.lua: every exercise's own tests catch the mistakes students make.

Usage
-----
    lua5.4 tools/check-mistakes.lua [-v] [EXERCISE ...]      (make check-mistakes)

Run from the top of the book. tests/mistakes/*.lua list, for each exercise whose
code a handout cuts out, mistakes a student could make there: those its worked
solution lists, a tensor taken from the wrong step, a form that is equal on
paper but rounds differently where the chapter asks for the same bits. Each is
an exact piece of the exercise's solution region and what the mistake puts in
its place.

A student's `make grade` reads an exercise's own line ("Exercise 5.6  25/25"),
from the tests a handout ships, so for each mistake this script checks that at
least one of those tests of that exercise, and not only some other chapter's
test or a teacher's hidden one, fails on it. In a copy of the book
(build/mistakes/all, or build/mistakes/5.6 for the exercises named) it makes the mistake in the chapter, builds, runs the test
binaries that hold the exercise's tests (tests/test_NAME.c with
EXERCISE("N.M", ...), and tests/teacher/test_NAME.c, counted apart), and counts
the tests whose names start "Exercise N.M:" that fail. First it checks the book
as it is: every one of those tests passes.

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
runs the exercise's code (tools/deps.lua says which; the data the tests read,
chapter 12's trained models, is made again with it): a correct answer in one
chapter fails no chapter's tests. Each exercise checked lists at least three.

It exits 1 if a mistake is not caught, or named otherwise than its `names`
says, if a correct answer fails a test, if an exercise lists fewer than three
correct answers, or if an entry does not apply (its text is not found once,
inside the exercise's region) or does not compile.
]]

local USAGE = "usage: lua5.4 tools/check-mistakes.lua [-v] [EXERCISE ...]   (e.g. 5.6)\n"

-- --in DIR (given by this script to the copy of itself it runs beside it): check the
-- mistakes of the exercises named in DIR, a copy of the book already built and checked.
local verbose, only, given_copy = false, {}, nil
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "-v" then verbose = true
  elseif a == "--in" and arg[i + 1] then given_copy = arg[i + 1] i = i + 1
  elseif a:match("^%d+%.%d+$") then only[a] = true
  else io.stderr:write("check-mistakes: " .. a .. ": not an exercise number\n" .. USAGE) os.exit(2) end
  i = i + 1
end

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")     -- must_read, write, sh, must (a command that must succeed), die
local deps = dofile(HERE .. "/deps.lua")  -- which test files run which exercises' code

local mistakes = {}
local ls = assert(io.popen("ls tests/mistakes/*.lua 2>/dev/null"))
for path in ls:lines() do
  for _, m in ipairs(dofile(path)) do m.file = path mistakes[#mistakes + 1] = m end
end
ls:close()
local names = {}
for e in pairs(only) do names[#names + 1] = e end
table.sort(names)
local COPY = given_copy or "build/mistakes/" .. (#names > 0 and table.concat(names, "+") or "all")

-- The test binaries holding an exercise's tests: EXERCISE("N.M", ...) in tests/test_NAME.c
-- (public: a handout ships them) and tests/teacher/test_NAME.c (hidden).
local function binaries_of(exercise)
  local found = {}
  for _, dir in ipairs({ "tests", "tests/teacher" }) do
    local ls = io.popen("ls " .. dir .. "/test_*.c 2>/dev/null")
    for path in ls:lines() do
      if U.must_read(path):find('EXERCISE("' .. exercise .. '"', 1, true) then
        local binary = path:gsub("^tests/", "build/tests/"):gsub("test_(%w[%w_]*)%.c$", "%1")
        found[#found + 1] = { path = binary, name = path:match("test_(%w[%w_]*)%.c$"),
                              hidden = dir == "tests/teacher" }
      end
    end
    ls:close()
  end
  return found
end

-- What to build for an exercise: its test binaries and the programs they are named after.
local function targets_of(list)
  local targets = {}
  for _, b in ipairs(list) do
    targets[#targets + 1] = b.path
    if io.open(COPY .. "/build/bin/" .. b.name) then targets[#targets + 1] = "build/bin/" .. b.name end
  end
  return targets
end

-- The book, copied: what git knows of (tracked, or new and not ignored).
if not given_copy then
  io.write("  COPY    the book into " .. COPY .. "\n")
  U.must("rm -rf " .. COPY .. " " .. COPY .. ".2 && mkdir -p " .. COPY ..
         " && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t " .. COPY,
         "copying the book into " .. COPY .. " (git lists its files)")
end

-- Build targets in the copy; returns ok, the log's path.
local function build(targets)
  local log = COPY .. ".log"
  local _, status = U.sh("make --no-print-directory -s -C " .. COPY .. " " .. table.concat(targets, " ") ..
                        " > " .. U.q(log) .. " 2>&1")
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

-- The test binaries, beside an exercise's own, that run its code (tools/deps.lua: the
-- programs they include or name, read from the copy's tangled sources and the
-- dependency files of the tests' compiles): a list like binaries_of's.
local programs
local function dependents_of(exercise, own)
  if not programs then
    local sources, ls = {}, io.popen("ls " .. COPY .. "/build/src/*.c " .. COPY .. "/build/src/*.h 2>/dev/null")
    for path in ls:lines() do sources[#sources + 1] = { path = "src/" .. path:match("([^/]+)$"), text = U.must_read(path) } end
    ls:close()
    programs = deps.programs(sources)
  end
  local skip, found = {}, {}
  for _, b in ipairs(own) do skip[b.path] = true end
  for _, dir in ipairs({ "tests", "tests/teacher" }) do
    local ls = io.popen("ls " .. dir .. "/test_*.c 2>/dev/null")
    for path in ls:lines() do
      local name = path:match("test_(%w[%w_]*)%.c$")
      local binary = path:gsub("^tests/", "build/tests/"):gsub("test_(%w[%w_]*)%.c$", "%1")
      local depfile = U.read(COPY .. "/build/dep/obj-" .. binary:gsub("^build/", ""):gsub("/", "-") .. ".o.d")
      if not skip[binary] and deps.test_exercises(programs, U.must_read(path), depfile)[exercise] then
        found[#found + 1] = { path = binary, name = name, hidden = dir == "tests/teacher" }
      end
    end
    ls:close()
  end
  return found
end

-- The exercises to check, in book order, and the binaries of each.
local exercises, seen, binaries, all, corrects = {}, {}, {}, {}, {}
for _, m in ipairs(mistakes) do
  if (next(only) == nil or only[m.exercise]) and not seen[m.exercise] then
    seen[m.exercise] = true
    exercises[#exercises + 1] = m.exercise
    binaries[m.exercise] = binaries_of(m.exercise)
    if #binaries[m.exercise] == 0 then U.die("no test file holds EXERCISE(\"" .. m.exercise .. "\", ...)") end
    for _, b in ipairs(binaries[m.exercise]) do all[#all + 1] = b.path end
  end
  if seen[m.exercise] and m.correct then corrects[m.exercise] = (corrects[m.exercise] or 0) + 1 end
end
if #exercises == 0 then U.die("tests/mistakes/*.lua list no mistake") end
for e in pairs(only) do if not seen[e] then U.die("tests/mistakes/*.lua list no mistake for Exercise " .. e) end end

if not given_copy then
  io.write("  MAKE    programs, the data the tests read and " .. #all .. " test binaries in " .. COPY .. "\n")
  local built, log = build({ "programs", "test-data", table.unpack(all) })
  if not built then io.stderr:write(U.must_read(log)) U.die("the book does not build in " .. COPY .. " (see " .. log .. ")") end
end

-- The other test files that run the code of each exercise with a correct answer listed:
-- built, and (in the first process) passing on the book as it is.
local others, everything = {}, { "programs", "test-data", table.unpack(all) }
for _, e in ipairs(exercises) do
  if corrects[e] then
    others[e] = dependents_of(e, binaries[e])
    for _, b in ipairs(others[e]) do everything[#everything + 1] = b.path end
  end
end
if #everything > #all + 2 then
  local built, log = build(everything)
  if not built then io.stderr:write(U.must_read(log)) U.die("the test files that run the exercises' code do not build in " .. COPY .. " (see " .. log .. ")") end
end

-- The book as it is: every test of each exercise passes, and every test of the other
-- files that run the code of an exercise with a correct answer listed.
local based = {}
for _, e in ipairs(given_copy and {} or exercises) do
  local n, bad = 0, {}
  for _, b in ipairs(binaries[e]) do
    for _, r in ipairs(run_tests(b.path, e)) do
      n = n + 1
      if not r.ok or r.skip then bad[#bad + 1] = r.name end
    end
  end
  if #bad > 0 or n == 0 then
    U.die(("Exercise %s: %d of its %d tests do not pass on the book as it is: %s"):format(e, #bad, n, bad[1] or "(none ran)"))
  end
  local m = 0
  for _, b in ipairs(others[e] or {}) do
    if not based[b.path] then
      for _, r in ipairs(run_tests(b.path, nil)) do
        if not r.ok then U.die(("%s: a test fails on the book as it is: %s"):format(b.path, r.name)) end
      end
      based[b.path] = true
    end
    m = m + 1
  end
  io.write(("  BASE    Exercise %-5s %3d tests pass on the book as it is%s\n"):format(e, n,
    others[e] and (" (and the %d other test files that run its code)"):format(m) or ""))
end

-- The region of an exercise in a chapter's text: the byte range between its markers.
local function inside_region(text, at, exercise)
  local pos = 1
  while true do
    local b, be = text:find("// BEGIN SOLUTION Exercise " .. exercise:gsub("%.", "%%.") .. "[^\n]*\n", pos)
    if not b then return false end
    local e = text:find("// END SOLUTION Exercise " .. exercise, be, true)
    if not e then return false end
    if at > be and at < e then return true end
    pos = e
  end
end

-- A correct answer, applied: its exercise's tests (public and hidden) and every test
-- of the other files that run its code must pass. Returns 1 if one does not.
local function check_correct(m, what)
  local targets = { "programs", "test-data" }
  for _, b in ipairs(binaries[m.exercise]) do targets[#targets + 1] = b.path end
  for _, b in ipairs(others[m.exercise]) do targets[#targets + 1] = b.path end
  local ok, blog = build(targets)
  if not ok then
    io.write("  FAIL    " .. what .. ": does not compile (" .. blog .. ")\n")
    return 1
  end
  local failed, n, nh, m_others = {}, 0, 0, 0
  for _, b in ipairs(binaries[m.exercise]) do
    for _, r in ipairs(run_tests(b.path, m.exercise)) do
      if b.hidden then nh = nh + 1 else n = n + 1 end
      if not r.ok or r.skip then failed[#failed + 1] = (b.hidden and "(hidden) " or "") .. r.name end
    end
  end
  for _, b in ipairs(others[m.exercise]) do
    for _, r in ipairs(run_tests(b.path, nil)) do
      m_others = m_others + 1
      if not r.ok then failed[#failed + 1] = b.path .. ": " .. r.name end
    end
  end
  io.write(("  %s %s: %s its %d tests (and %d hidden ones), and %d tests of %d other files that run its code\n"):format(
    #failed == 0 and "RIGHT  " or "WRONG  ", what, #failed == 0 and "passes" or #failed .. " tests fail among", n, nh,
    m_others, #others[m.exercise]))
  for _, name in ipairs(failed) do io.write("              " .. name .. "\n") end
  return #failed > 0 and 1 or 0
end

-- Makes each mistake of the exercises in the set `these` in the copy, in turn, and
-- writes each correct answer; returns how many failed (a mistake not caught or named
-- otherwise than its `names`, a correct answer that fails a test, an entry that does
-- not apply), how many mistakes were caught and how many of those were named.
local function check(these)
  local failures, caught_n, named_n = 0, 0, 0
  for _, m in ipairs(mistakes) do
    if these[m.exercise] then
      local path = COPY .. "/" .. m.chapter
      local original = U.must_read(path)
      local changed, applies = original, true
      for _, edit in ipairs(m.edits or { { from = m.from, to = m.to } }) do
        local at, last = changed:find(edit.from, 1, true)
        local again = at and changed:find(edit.from, last + 1, true)
        if not at or again or not inside_region(changed, at, m.exercise) then applies = false break end
        changed = changed:sub(1, at - 1) .. edit.to .. changed:sub(last + 1)
      end
      local what = ("Exercise %-5s %s"):format(m.exercise, m.mistake)
      if not applies then
        failures = failures + 1
        io.write("  FAIL    " .. what .. ": its text is not found exactly once, inside the exercise's region of " ..
                 m.chapter .. "\n")
      elseif m.correct then
        U.write(path, changed)
        failures = failures + check_correct(m, what)
        U.write(path, original)
      else
        U.write(path, changed)
        local ok, blog = build(targets_of(binaries[m.exercise]))
        if not ok then
          failures = failures + 1
          io.write("  FAIL    " .. what .. ": does not compile (" .. blog .. ")\n")
        else
          local caught, n, hidden, nh, why = {}, 0, {}, 0, nil
          for _, b in ipairs(binaries[m.exercise]) do
            for _, r in ipairs(run_tests(b.path, m.exercise)) do
              local bad = not r.ok and not r.skip
              if bad and r.why and (not why or (m.names and not why:find(m.names, 1, true) and r.why:find(m.names, 1, true))) then
                why = r.why
              end
              if b.hidden then
                nh = nh + 1
                if bad then hidden[#hidden + 1] = r.name end
              else
                n = n + 1
                if bad then caught[#caught + 1] = r.name end
              end
            end
          end
          local misnamed = #caught > 0 and m.names and not (why and why:find(m.names, 1, true))
          if #caught == 0 or misnamed then failures = failures + 1 end
          if #caught > 0 then caught_n = caught_n + 1 end
          if #caught > 0 and why then named_n = named_n + 1 end
          io.write(("  %s %s: %d of its %d tests catch it (and %d of %d hidden ones)\n"):format(
            #caught == 0 and "MISSED " or misnamed and "MISNAMED" or "CAUGHT ", what, #caught, n, #hidden, nh))
          if why or misnamed then
            io.write("              what is wrong: " .. (why or "(nothing said)") ..
                     (misnamed and "\n              (it should name: " .. m.names .. ")" or "") .. "\n")
          end
          if verbose or #caught == 0 then
            for _, name in ipairs(caught) do io.write("              " .. name .. "\n") end
            for _, name in ipairs(hidden) do io.write("              (hidden) " .. name .. "\n") end
          end
        end
        U.write(path, original)
      end
    end
  end
  return failures, caught_n, named_n
end

-- Too few correct answers for an exercise: each lists at least three.
local function too_few(these)
  local failures = 0
  for _, e in ipairs(exercises) do
    if these[e] and (corrects[e] or 0) < 3 then
      io.write(("  FAIL    Exercise %-5s lists %d correct answers (correct = true): at least three are needed\n"):format(
        e, corrects[e] or 0))
      failures = failures + 1
    end
  end
  return failures
end

-- The mistakes, in book order. With two cores or more, the exercises are cut in two parts
-- of about as many mistakes: this script checks the first, and a copy of it the second, at
-- the same time, in a copy of the built copy (COPY.2, its lines kept in COPY.2.out and
-- printed after the first part's).
if given_copy then
  local failures, caught_n, named_n = check(seen)
  failures = failures + too_few(seen)
  build(everything)   -- leave the copy's test binaries, programs and data as the book's
  io.write(("  NAMED   %d of %d\n"):format(named_n, caught_n))
  os.exit(failures > 0 and 1 or 0)
end
local cores = tonumber(U.sh("nproc 2>/dev/null"):match("%d+")) or 1
local first, second, count, n = {}, {}, {}, 0
for _, m in ipairs(mistakes) do
  if seen[m.exercise] then count[m.exercise] = (count[m.exercise] or 0) + 1 n = n + 1 end
end
local so_far = 0
for _, e in ipairs(exercises) do
  if cores >= 2 and #exercises > 1 and so_far >= n / 2 then second[#second + 1] = e else first[e] = true end
  so_far = so_far + count[e]
end
local other
if #second > 0 then
  local copy2 = COPY .. ".2"
  U.must("cp -a " .. COPY .. " " .. copy2, "copying " .. COPY .. " to " .. copy2)
  io.write("  SPLIT   Exercises " .. table.concat(second, ", ") .. " at the same time, in " .. copy2 .. "\n")
  other = { out = copy2 .. ".out", pipe = io.popen("lua5.4 tools/check-mistakes.lua --in " .. copy2 ..
    (verbose and " -v " or " ") .. table.concat(second, " ") .. " > " .. copy2 .. ".out 2>&1; echo $?") }
end
local failures, caught_n, named_n = check(first)
failures = failures + too_few(first)
build(everything)
if other then
  local status = tonumber(other.pipe:read("a"):match("%d+"))
  other.pipe:close()
  local lines = U.must_read(other.out)
  local theirs, counted = 0, false
  for line in lines:gmatch("[^\n]+") do
    if line:match("^  FAIL ") or line:match("^  MISSED ") or line:match("^  MISNAMED") or line:match("^  WRONG ") then
      theirs = theirs + 1
    end
    local named, caught = line:match("^  NAMED   (%d+) of (%d+)$")
    if named then named_n, caught_n, counted = named_n + tonumber(named), caught_n + tonumber(caught), true
    else io.write(line, "\n") end
  end
  if status ~= 0 and theirs == 0 then U.die("the check of Exercises " .. table.concat(second, ", ") .. " stopped (see " .. other.out .. ")") end
  if not counted and theirs == 0 then U.die("the check of Exercises " .. table.concat(second, ", ") .. " said nothing of its count (see " .. other.out .. ")") end
  failures = failures + theirs
end
io.write(("check-mistakes: %d of the %d mistakes caught get a failure that says what is wrong\n"):format(named_n, caught_n))
if failures > 0 then
  io.write(("check-mistakes: %d entries failed: mistakes not caught or misnamed, correct answers failing a test, too few correct answers, or not applicable\n"):format(failures))
  os.exit(1)
end
io.write(("check-mistakes: every mistake of Exercises %s is caught by the exercise's own tests, and every correct answer passes\n"):format(table.concat(exercises, ", ")))
