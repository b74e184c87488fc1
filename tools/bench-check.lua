#!/usr/bin/env lua5.4
--[[ bench-check.lua: how long a student waits for `make check EX=N.M`, and
whether its verdict is the true one.

Usage
-----
    lua5.4 tools/bench-check.lua [EXERCISE ...]       (make bench-check)

Run from the top of the book. In a copy of it (build/bench-check/book), built
and graded once, it plays a student's loop on every exercise whose code a
handout cuts out (or those named), in book order:

  edit    a one-line edit inside the exercise's region (a comment line added)
  break   the first mistake tests/mistakes/*.lua lists for it
  fix     the region as it was
  revert  the one-line edit again, then the book as it is

After each step it times `make check EX=N.M` (tangle, build what the
exercise's tests need, run them, print the verdict), and after break and fix
it runs a full `make grade FORMAT=tsv`, every test of the book, and checks
that the exercise's passed, failed and skipped counts are the quick verdict's.
Every time is printed beside the ratio to the full grade measured in the same
run. It exits 1 if a quick verdict differs from the full one, or if a step's
verdict is not what the step should give (right after edit, fix and revert;
wrong after break).

Times are wall-clock seconds on this machine (its cores and processor are
printed first); run it on an otherwise idle machine.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")

local only = {}
for _, a in ipairs(arg) do
  if not a:match("^%d+%.%d+$") then U.die("%s: not an exercise number (make bench-check EXERCISES=\"5.6\")", a) end
  only[a] = true
end

local COPY = "build/bench-check/book"
local function now() return tonumber(U.sh("date +%s.%N"):match("[%d.]+")) end

-- The command `cmd` in the copy: its exit status, stdout, and the seconds it took. A
-- make there is a student's, not one run by make bench-check: it runs a job per core.
local function timed(cmd)
  local t0 = now()
  local status, out = U.run("cd " .. U.q(COPY) .. " && unset MAKEFLAGS MFLAGS MAKELEVEL && " .. cmd)
  return status, out, now() - t0
end

-- The first mistake of each exercise, in book order.
local mistakes, order = {}, {}
for path in U.must("ls tests/mistakes/*.lua", "ls tests/mistakes"):gmatch("[^\n]+") do
  for _, m in ipairs(dofile(path)) do
    if not mistakes[m.exercise] and (next(only) == nil or only[m.exercise]) then
      mistakes[m.exercise] = m
      order[#order + 1] = m.exercise
    end
  end
end
table.sort(order, dofile(HERE .. "/deps.lua").exercise_less)
for e in pairs(only) do
  if not mistakes[e] then U.die("tests/mistakes/*.lua list no mistake for Exercise %s", e) end
end

-- "Exercise 5.6   47/47, 2 skipped   right" -> {passed, total, skipped}
local function quick_counts(out, e)
  local line = out:match("Exercise " .. e:gsub("%.", "%%.") .. "%s+([^\n]*)")
  if not line then return nil end
  local passed, total = line:match("^(%d+)/(%d+)")
  return {passed = tonumber(passed), total = tonumber(total), skipped = tonumber(line:match(", (%d+) skipped")) or 0}
end

-- The same counts from make grade FORMAT=tsv's lines (result, file, exercise, name).
local function full_counts(tsv, e)
  local c = {passed = 0, total = 0, skipped = 0}
  for result, exercise in tsv:gmatch("([a-z]+)\t[^\t]*\t([^\t]*)\t[^\n]*") do
    if exercise == e then
      if result == "pass" then c.passed, c.total = c.passed + 1, c.total + 1
      elseif result == "fail" then c.total = c.total + 1
      else c.skipped = c.skipped + 1 end
    end
  end
  return c
end

local function same(a, b) return a and b and a.passed == b.passed and a.total == b.total and a.skipped == b.skipped end
local function show(c) return c and ("%d/%d%s"):format(c.passed, c.total, c.skipped > 0 and (", %d skipped"):format(c.skipped) or "") or "(none)" end

local cpu = U.sh("sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1"):gsub("%s+$", "")
io.write(("  MACHINE %s cores, %s\n"):format(U.sh("nproc"):gsub("%s+", ""), cpu))
io.write("  COPY    the book into " .. COPY .. "\n")
U.must("rm -rf " .. COPY .. " && mkdir -p " .. COPY ..
       " && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t " .. COPY, "copying the book (git lists its files)")
io.write("  MAKE    the book, its tests, and a full grade (the baseline)\n")
local status, _, build_time = timed("make --no-print-directory -s > ../make.log 2>&1")
if status ~= 0 then U.die("make failed in %s (see %s/../make.log)", COPY, COPY) end
local gstatus, _, grade_time = timed("make --no-print-directory grade FORMAT=tsv > ../grade.tsv 2>/dev/null")
if gstatus ~= 0 then U.die("make grade fails on the book as it is, in %s (see %s/../grade.tsv)", COPY, COPY) end
local _, _, full_again = timed("make --no-print-directory grade FORMAT=tsv > ../grade.tsv 2>/dev/null")
io.write(("          make %.1f s; make grade %.1f s, then %.1f s with nothing to build (the baseline)\n")
  :format(build_time, grade_time, full_again))

-- The region of exercise e in `text`: where its first BEGIN line ends.
local function region_start(text, e)
  local _, last = text:find("// BEGIN SOLUTION Exercise " .. e:gsub("%.", "%%.") .. "[^\n]*\n")
  return last
end

io.write(("\n  %-8s %-7s %8s %6s   %-16s %-16s %s\n"):format("exercise", "step", "check", "/full", "quick verdict",
  "full grade", "agree"))
local bad, slowest, slowest_what = 0, 0, ""
for _, e in ipairs(order) do
  local m = mistakes[e]
  local path = COPY .. "/" .. m.chapter
  local original = U.must_read(path)
  local at = region_start(original, e)
  if not at then U.die("%s: no region of Exercise %s", m.chapter, e) end
  local edited = original:sub(1, at) .. "// my answer, line by line\n" .. original:sub(at + 1)
  local a, b = edited:find(m.from, 1, true)
  if not a then U.die("Exercise %s: the mistake '%s' is not in %s", e, m.mistake, m.chapter) end
  local broken = edited:sub(1, a - 1) .. m.to .. edited:sub(b + 1)
  local steps = {
    {"edit", edited, true}, {"break", broken, false, true}, {"fix", edited, true, true}, {"revert", original, true},
  }
  for _, step in ipairs(steps) do
    local name, text, right, full = step[1], step[2], step[3], step[4]
    U.write(path, text)
    local _, out, seconds = timed("make --no-print-directory check EX=" .. e .. " 2>&1")
    local quick = quick_counts(out, e)
    local verdict_ok = quick and (right and quick.passed == quick.total and quick.total > 0 or
                                  not right and quick.passed < quick.total)
    local truth, agree = nil, "-"
    if full then
      local _, tsv = timed("make --no-print-directory grade FORMAT=tsv 2>/dev/null")
      truth = full_counts(tsv, e)
      agree = same(quick, truth) and "yes" or "NO"
      if agree == "NO" then bad = bad + 1 end
    end
    if not verdict_ok then
      bad = bad + 1
      agree = agree .. " (the verdict should be " .. (right and "right" or "wrong") .. ")"
      io.stderr:write(out)
    end
    if seconds > slowest then slowest, slowest_what = seconds, ("Exercise %s, %s"):format(e, name) end
    io.write(("  %-8s %-7s %6.2f s %6.3f   %-16s %-16s %s\n"):format(e, name, seconds, seconds / full_again,
      show(quick), truth and show(truth) or "", agree))
  end
end
io.write(("\n  slowest make check: %.2f s (%s), %.3f of a full make grade (%.1f s)\n"):format(slowest, slowest_what,
  slowest / full_again, full_again))
if bad > 0 then
  io.write(("bench-check: %d verdict(s) wrong or not the full grade's\n"):format(bad))
  os.exit(1)
end
io.write("bench-check: every quick verdict is the full grade's\n")
