#!/usr/bin/env lua5.4
-- transcripts_test.lua: the book never lies about what its programs print.
--
-- Every ```console block in chapters/*.md is a shell session: lines that
-- start with "$ " are commands, the lines after them are what they print.
-- Each command that runs one of the book's programs (build/bin/NAME ...) is
-- run again, from the top of the repository, and its output must equal the
-- chapter's, line for line. Other commands (make, python3 ...) are left alone.
-- $ABH_BIN replaces build/bin, so `make test MODE=debug` checks the debug build;
-- $ABH_WRAP, if set, goes before the program (make test-valgrind: valgrind).
-- In a student handout, a session whose program stops at an exercise's stub
-- is skipped, naming the exercise. Error messages quoted elsewhere in the
-- chapters and solutions must name a chapter line that still calls die(), and
-- every figure drawn from a program's run gives the command beside it.
--
--   lua5.4 tests/transcripts_test.lua [CHAPTER.md ...]     (TAP on stdout)

local HERE = arg[0]:match("^(.*)/") or "."
local tap = dofile(HERE .. "/tap.lua")
local U = dofile(HERE .. "/../tools/util.lua")
local ok = tap.ok

local bin = os.getenv("ABH_BIN") or "build/bin"
local wrap = os.getenv("ABH_WRAP") or ""

local S = dofile(HERE .. "/../tools/sessions.lua")
local function run(command) return S.run(command, bin, wrap) end

-- The exercise whose stub stopped a run ("Exercise 1.6"), if one did: in a
-- student handout, a program whose exercise is not done yet stops with exit
-- status 3 and "not implemented yet: Exercise 1.6". Its sessions are skipped.
local function stub_in(lines, status)
  if status ~= 3 then return nil end
  for i = #lines, 1, -1 do
    local exercise = lines[i]:match("not implemented yet: (Exercise [%d.]*%d)")
    if exercise then return exercise end
  end
end

-- A session that loads a directory make trains (chapter 12's build/induction/NAME)
-- needs what the training needed: in a handout whose exercise stopped the training
-- at its stub, the directory is missing and NAME.err names the exercise.
local function made_without(command)
  local dir = command:match("%-%-load (build/%S+)")
  local there = dir and io.open(dir .. "/.")
  if there then there:close() end
  if not dir or there then return nil end
  local f = io.open(dir:gsub("/$", "") .. ".err")
  if not f then return nil end
  local err = f:read("a")
  f:close()
  return err:match("not implemented yet: (Exercise [%d.]*%d)")
end

-- The first line where two lists differ, or nil when they are equal.
local function first_difference(got, want)
  for i = 1, math.max(#got, #want) do
    if got[i] ~= want[i] then return i end
  end
end

-- ---------------------------------------------------------------------------
-- main

local chapters = { ... }
if #chapters == 0 then
  for path in U.sh("ls chapters/*.md"):gmatch("[^\n]+") do chapters[#chapters + 1] = path end
end

tap.version()
for _, chapter in ipairs(chapters) do
  for _, s in ipairs(S.sessions(chapter)) do
    local got, exited_ok, status = run(s.command)
    local i = first_difference(got, s.expected)
    local name = string.format("%s:%d: `%s` prints what the chapter shows", s.chapter, s.line, s.command)
    local stub = stub_in(got, status) or made_without(s.command)
    if stub and i then
      tap.skip(name, "needs " .. stub .. ", not implemented yet")
    else
      ok(exited_ok and not i, name, not exited_ok and "the command failed" or nil,
         i and string.format("first difference at output line %d", i) or nil,
         i and "chapter: " .. tostring(s.expected[i]) or nil,
         i and "program: " .. tostring(got[i]) or nil)
    end
  end
end
-- Every figure drawn from a program's run (FIG_RUN in mk/*.mk) gives, in the
-- lines around it, the exact command that redraws its numbers.
local fig_run = {}
for mk in U.sh("ls mk/*.mk"):gmatch("[^\n]+") do
  for line in io.lines(mk) do
    local name, command = line:match("^%$%(FIG%)/([%w_%-]+)%.svg: FIG_RUN = (.-)%s*$")
    if name then fig_run[name] = command end
  end
end
local runs = 0
for _ in pairs(fig_run) do runs = runs + 1 end
ok(runs >= 10, ("mk/*.mk name the run behind each figure ($(FIG)/NAME.svg: FIG_RUN = ...): %d of them"):format(runs))
local with_figures = { table.unpack(chapters) }
for path in U.sh("ls solutions/*.md 2>/dev/null"):gmatch("[^\n]+") do with_figures[#with_figures + 1] = path end
for _, chapter in ipairs(with_figures) do
  local lines = {}
  for text in io.lines(chapter) do lines[#lines + 1] = text end
  for n, text in ipairs(lines) do
    local name = text:match("^!%[.-%]%(%.%./figures/([%w_%-]+)%.svg%)")
    if name and fig_run[name] then
      local near = table.concat(lines, " ", math.max(1, n - 8), math.min(#lines, n + 5)):gsub("%s+", " ")
      local want = "build/bin/" .. fig_run[name]
      ok(near:find(want, 1, true) ~= nil,
         string.format("%s:%d: figures/%s.svg gives the command that redraws it, `%s`", chapter, n, name, want))
    end
  end
end

-- Error messages quoted outside console sessions (```text blocks, the
-- solutions) name the chapter line of the die() that printed them: that line
-- must still hold a die() call, or the quote is stale.
-- (Not in a student handout: there the chapters move as the student writes.)
local quoted = {}
local handout = io.open("mk/handout.mk")
if handout then
  handout:close()
  tap.skip(nil, "a handout: quoted chapter lines move as its exercises are written")
else
  for path in U.sh("ls chapters/*.md solutions/*.md 2>/dev/null"):gmatch("[^\n]+") do quoted[#quoted + 1] = path end
end
for _, path in ipairs(quoted) do
  local n = 0
  for text in io.lines(path) do
    n = n + 1
    for file, line in text:gmatch("(chapters/[%d%u]%d?%-[%w%-]+%.md):(%d+):") do   -- 05-mha.md, A-machinery.md
      local source, at = io.open(file), 0
      if source then
        local held
        for code in source:lines() do
          at = at + 1
          if at == tonumber(line) then held = code break end
        end
        source:close()
        ok(held and held:find("die%(") ~= nil,
           string.format("%s:%d: the quoted %s:%s is a line that calls die()", path, n, file, line),
           "that line is now: " .. tostring(held))
      end
    end
  end
end

-- A ```text block introduced as an excerpt of a file a build writes, by the line
-- before it ending "(from `build/...`):", shows lines of that file: each one must
-- be a line of it. (Chapter 12's training log: too slow to run as a session.)
-- A file a handout could not make (its program stopped at a stub) is skipped.
for _, chapter in ipairs(chapters) do
  local lines = {}
  for text in io.lines(chapter) do lines[#lines + 1] = text end
  for n, text in ipairs(lines) do
    local file = text:match("%(from `(build/[^`]+)`%):%s*$")
    if file and (lines[n + 1] or ""):match("^```text") then
      local name = string.format("%s:%d: every line of the excerpt is a line of %s", chapter, n + 1, file)
      local have, f = {}, io.open(file)
      if not f then
        tap.skip(name, file .. " was not made (make makes it)")
      else
        for line in f:lines() do have[line] = true end
        f:close()
        local missing
        for i = n + 2, #lines do
          if lines[i]:match("^```") then break end
          if not have[lines[i]] then missing = missing or lines[i] end
        end
        ok(not missing, name, "not in the file: " .. tostring(missing))
      end
    end
  end
end

tap.done()
