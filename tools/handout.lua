--[[ handout.lua: make a student handout of "Attention by Hand".

Usage
-----
    lua5.4 tools/handout.lua -o DIR [CHAPTER ...]

Run from the top of the book (`make handout CHAPTERS="1 3"` does). Writes a
self-contained copy of the book into DIR (which must not exist yet, or be a
handout made before: it is replaced) in which the exercises of the chapters
given by number are cut out: every solution region of those chapters,

    // BEGIN SOLUTION Exercise 1.6 (att, q, k)
    ...the code...
    // END SOLUTION Exercise 1.6

keeps its two marker lines, which show the student where to write, and its
code becomes one stub line, which compiles and stops the program with
"not implemented yet: Exercise 1.6" when it is reached:

    NOT_IMPLEMENTED("Exercise 1.6", att, q, k);

Without chapter numbers, every chapter that has a solution region is
assigned. The other chapters stay complete.

What the handout leaves out: the worked solutions of the assigned chapters
(solutions/NN-name.md), the teachers' hidden tests (tests/teacher/), the
book's CI and its developer README (a README for students takes its place).
Links to what was left out become plain text. The handout says what is
assigned in mk/handout.mk, which the Makefile reads.

Before it writes anything it checks that no line of an assigned solution
(ten characters or more, spaces trimmed; a line that only names a chunk,
<<...>>, does not count) appears anywhere in the handout, so
that prose or another chapter cannot give the answer away; and it fails with
`path:line: message` on a region error (the tangler's own checks) or on an
assigned chapter without exercises to cut out.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local tangler = dofile(HERE .. "/../tangle/tangle.lua")

local USAGE = "usage: lua5.4 tools/handout.lua -o DIR [CHAPTER ...]   (chapter numbers, e.g. 1 3)\n"
local MIN_LEAK = 10     -- solution lines shorter than this are too common to be evidence

-- Stop with one line on stderr.
local function fail(fmt, ...)
  io.stderr:write("handout: ", fmt:format(...), "\n")
  os.exit(1)
end

-- `s` quoted for the POSIX shell.
local function q(s)
  return "'" .. s:gsub("'", [['\'']]) .. "'"
end

-- Run a shell command; its output, or a failure naming `what`.
local function sh(command, what)
  local pipe = io.popen(command)
  local out = pipe:read("a")
  if not pipe:close() then fail("%s failed", what or command) end
  return out
end

local function read_file(path)
  local file, err = io.open(path, "rb")
  if not file then fail("cannot read %s", err) end
  local text = file:read("a")
  file:close()
  return text
end

local function write_file(path, text)
  local dir = path:match("^(.*)/")
  if dir then sh("mkdir -p " .. q(dir)) end
  local file, err = io.open(path, "wb")
  if not file then fail("cannot write %s", err) end
  file:write(text)
  file:close()
end

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
  local listing = io.popen("git ls-files --cached --others --exclude-standard 2>/dev/null")
  local out = listing:read("a")
  if not listing:close() or out == "" then
    out = sh("find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\\./||' | sort")
  end
  local files = {}
  for path in out:gmatch("[^\n]+") do files[#files + 1] = path end
  return files
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
-- its stub; the exercises cut (in order, without repeats) and the solution
-- lines removed, each {text, exercise}.
local function cut(path, text)
  local blocks, err = tangler.parse(path, text)
  if not blocks then fail("%s", err) end
  local lines, final_newline = lines_of(text)
  local replace, exercises, seen, removed = {}, {}, {}, {}
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
      if not seen[region.exercise] then
        seen[region.exercise] = true
        exercises[#exercises + 1] = region.exercise
      end
    end
  end
  local out = {}
  for i, line in ipairs(lines) do
    if replace[i] == nil then out[#out + 1] = line
    elseif replace[i] then out[#out + 1] = replace[i] end
  end
  return table.concat(out, "\n") .. (final_newline and "\n" or ""), exercises, removed
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

local function student_readme(chapters, exercises)
  return ([[
# Attention by Hand: student handout

This is the book *Attention by Hand* with the code of some exercises cut out.
Start reading at **[book.md](book.md)**.

Assigned: chapter%s %s, that is Exercise%s %s.

## What to do

In each assigned chapter (`chapters/NN-*.md`) the code an exercise asks for is
gone. Where it was, the chapter's C block holds

    // BEGIN SOLUTION Exercise N.M (names)
    NOT_IMPLEMENTED("Exercise N.M", names);
    // END SOLUTION Exercise N.M

Replace the `NOT_IMPLEMENTED` line with your code, between the two markers,
which you leave where they are. The prose around the block, the exercise's own
text at the end of the chapter and the chapter's tests say what the code must
compute. A stub that is reached stops the program with

    selfatt_v1: chapters/01-selfatt-v1.md:LINE: not implemented yet: Exercise 1.6

## Build, test, grade

On Debian or Ubuntu:

    make          # tangle the chapters, compile, run every program
    make test     # the TAP test suite, through prove
    make grade    # passed / total for every chapter and exercise

`make` compiles every program even while stubs remain, and says which programs
still stop at one. In `make test` the tests of an exercise that is not done fail
with "not implemented yet: Exercise N.M"; tests that only need it on the way
(another chapter's, a transcript, the PyTorch check) are skipped and name it.
The figures in `figures/` are the book's: the pictures your programs should
draw; `make figures` redraws them from your code.

`make` needs `gcc`, `make`, `lua5.4`, `gnuplot` and `prove`:

    sudo apt-get install gcc make lua5.4 gnuplot-nox perl

A compiler error names the chapter's Markdown line, so you can fix it where you
wrote it. Do not edit `build/`: it is made again from the chapters.
]]):format(#chapters > 1 and "s" or "", and_list(chapters), #exercises > 1 and "s" or "", and_list(exercises))
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
        fail("%s:%d: holds a line of the solution of Exercise %s: %s", path, line, needle.exercise, needle.text)
      end
    end
  end
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
      fail("%s is not a chapter number (CHAPTERS=\"1 3\" assigns chapters 1 and 3)", argv[i])
    end
    i = i + 1
  end
  if not outdir or outdir == "" then io.stderr:write(USAGE) os.exit(1) end

  local files = book_files()
  local texts, chapters_with_exercises = {}, {}
  for _, path in ipairs(files) do
    local n = chapter_number(path)
    if n then
      texts[path] = read_file(path)
      local blocks, err = tangler.parse(path, texts[path])
      if not blocks then fail("%s", err) end
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
        fail("chapter %d has no exercise to hand out (no // BEGIN SOLUTION region in its code)", n)
      end
      assigned[n] = chapters_with_exercises[n]
      numbers[#numbers + 1] = tostring(n)
    end
  end

  -- What the handout leaves out.
  local gone = {["README.md"] = true}
  local kept = {}
  for _, path in ipairs(files) do
    local n = path:match("^solutions/(%d+)%-[^/]*%.md$")
    if n and assigned[tonumber(n)] then gone[path] = true end
    if path:match("^tests/teacher/") or path:match("^%.ci/") then gone[path] = true end
    if not gone[path] then kept[#kept + 1] = path end
  end

  -- Cut the assigned chapters; unlink every Markdown file.
  local exercises, removed, out_texts, text_paths = {}, {}, {}, {}
  for _, path in ipairs(kept) do
    local n = chapter_number(path)
    local text = texts[path]
    if n and assigned[n] then
      local cut_text, cut_exercises, cut_lines = cut(path, text)
      text = cut_text
      table.move(cut_exercises, 1, #cut_exercises, #exercises + 1, exercises)
      table.move(cut_lines, 1, #cut_lines, #removed + 1, removed)
    end
    if path:match("%.md$") then
      text = unlink(path, text or read_file(path), gone, n and assigned[n])
    end
    if text then out_texts[path] = text end
  end
  out_texts["README.md"] = student_readme(numbers, exercises)
  out_texts["mk/handout.mk"] = makefile_part(numbers, exercises)
  kept[#kept + 1] = "README.md"
  kept[#kept + 1] = "mk/handout.mk"

  -- Every text file of the handout is searched for solution lines.
  for _, path in ipairs(kept) do
    if not out_texts[path] then
      local text = read_file(path)
      if not text:find("\0", 1, true) then out_texts[path] = text end
    end
    if out_texts[path] then text_paths[#text_paths + 1] = path end
  end
  check_no_leak(out_texts, removed, text_paths)

  -- Write: a fresh directory, text files from memory, the others copied.
  sh("rm -rf " .. q(outdir) .. " && mkdir -p " .. q(outdir), "emptying " .. outdir)
  for _, path in ipairs(kept) do
    if out_texts[path] then
      write_file(outdir .. "/" .. path, out_texts[path])
    else
      sh(("mkdir -p %s && cp -p %s %s"):format(q((outdir .. "/" .. path):match("^(.*)/")), q(path), q(outdir .. "/" .. path)))
    end
    sh(("[ ! -x %s ] || chmod +x %s"):format(q(path), q(outdir .. "/" .. path)))
  end
  local list = {}
  for _, exercise in ipairs(exercises) do list[#list + 1] = "Exercise " .. exercise end
  io.stdout:write(("handout: %s: chapter%s %s assigned (%s)\n"):format(
    outdir, #numbers > 1 and "s" or "", table.concat(numbers, ", "), table.concat(list, ", ")))
end

main(arg)
