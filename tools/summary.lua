--[[ summary.lua: the few lines `make` ends with.

Usage
-----
    lua5.4 tools/summary.lua OUT "PROGRAM ..." "BUILT ..." FIGURES [ASSIGNED]

`make` (the default goal, all) runs it last; no other target does. OUT is
build (or build/debug), PROGRAMS the programs `make run` runs, BUILT every
program in OUT/bin, FIGURES how many figures `make figures` drew, and
ASSIGNED, in a student handout (mk/handout.mk), the chapters assigned. In the
book it says what was built, where, and what to run next. In a handout it
says which programs stop at a stub and which exercises are still to do: the
stubs left in the tangled code, build/src (each NOT_IMPLEMENTED("Exercise
N.M"...) line, placed at its chapter line by the #line before it).
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")

local out, programs, built, figures, assigned = arg[1], arg[2] or "", arg[3] or "", tonumber(arg[4]) or 0, arg[5]
if not out then
  io.stderr:write('usage: lua5.4 tools/summary.lua OUT "PROGRAM ..." "BUILT ..." FIGURES [ASSIGNED]\n')
  os.exit(2)
end

local function words(s)
  local list = {}
  for w in s:gmatch("%S+") do list[#list + 1] = w end
  return list
end

local function exists(path)
  local file = io.open(path, "r")
  if file then file:close() end
  return file ~= nil
end

local function say(tag, text) io.write(("  %-7s %s\n"):format(tag, text)) end

local bin = out .. "/bin"
local names, runs = words(built), words(programs)
local first = runs[1] or names[1] or "PROGRAM"

if not assigned then
  say("DONE", ("%d programs in %s, their example runs in %s/run, %d figures in %s/figures"):format(#names, bin, out, figures, out))
  say("", ("next: make test (the test suite); make check EX=N.M (one exercise); %s/%s --help (a program's flags); make help"):format(bin, first))
  os.exit(0)
end

-- A handout: the programs that stopped at a stub wrote no OUT/run/NAME.txt.
local stopped = {}
for _, name in ipairs(runs) do
  if not exists(("%s/run/%s.txt"):format(out, name)) then stopped[#stopped + 1] = name end
end

-- The stubs left, by exercise: {exercise -> {chapter -> {line, ...}}}.
local stubs, order = {}, {}
local src = "build/src"
local seen = {}
for path in U.sh("ls " .. src .. "/*.c " .. src .. "/*.h 2>/dev/null"):gmatch("[^\n]+") do
  local file = io.open(path, "r")
  local chapter, line = nil, 0
  for text in file:lines() do
    local n, where = text:match('^#line (%d+) "([^"]+)"')
    if n then
      chapter, line = where, tonumber(n) - 1
    else
      line = line + 1
      local exercise = text:match('^%s*NOT_IMPLEMENTED%("Exercise (%d+%.%d+)"')
      local key = exercise and ("%s:%d"):format(chapter or path, line)
      if exercise and not seen[key] then
        seen[key] = true
        if not stubs[exercise] then stubs[exercise], order[#order + 1] = {}, exercise end
        local where_ = chapter or path
        stubs[exercise][where_] = stubs[exercise][where_] or {}
        table.insert(stubs[exercise][where_], line)
      end
    end
  end
  file:close()
end

table.sort(order, function(a, b)
  local a1, a2 = a:match("(%d+)%.(%d+)")
  local b1, b2 = b:match("(%d+)%.(%d+)")
  return tonumber(a1) < tonumber(b1) or tonumber(a1) == tonumber(b1) and tonumber(a2) < tonumber(b2)
end)

if #stopped > 0 then
  say("DONE", ("%d programs in %s; %d ran to the end (outputs in %s/run), %d stop%s at a stub: %s")
    :format(#names, bin, #runs - #stopped, out, #stopped, #stopped == 1 and "s" or "", table.concat(stopped, ", ")))
else
  say("DONE", ("%d programs in %s; every one ran to the end (outputs in %s/run)"):format(#names, bin, out))
end
for _, exercise in ipairs(order) do
  local places = {}
  local count = 0
  for chapter, lines in pairs(stubs[exercise]) do
    table.sort(lines)
    count = count + #lines
    places[#places + 1] = ("%s (line%s %s)"):format(chapter, #lines > 1 and "s" or "", table.concat(lines, ", "))
  end
  table.sort(places)
  say("TODO", ("Exercise %s: %d stub%s left in %s"):format(exercise, count, count > 1 and "s" or "", table.concat(places, ", ")))
end
local grade = ('make grade CHAPTERS="%s"'):format(assigned)
if #order > 0 then
  say("", ("next: write each one between its markers (README.md), then make check EX=%s; %s grades them")
    :format(order[1], grade))
else
  say("", ("no stub left: make test runs every test, %s grades the assigned chapters"):format(grade))
end
