--[[ submission.lua: grade a student's handout from a fresh copy of the book.

Usage
-----
    lua5.4 tools/submission.lua [--format text|json|tsv|gradescope] [--chapters "N ..."]
                                [--hidden-visibility V] [--teacher-tests DIR] [--] SUBMISSION

Run from the top of the book: `make grade-submission SUBMISSION=DIR CHAPTERS="7"`
does. SUBMISSION is what a student hands in: their handout's directory, a git
URL (cloned one commit deep), or a directory holding only the assigned
chapters' files (a course platform's upload). What is graded is a handout
made fresh from the book, with the student's code put in; nothing else of the
submission is used, and nothing of it is run but that code, compiled into the
book's own programs and tests:

1. tools/handout.lua makes the handout of the chapters in build/submission/book.
2. For each assigned chapter, the student's copy is found (the same path,
   chapters/NN-*.md, else the one file named NN-*.md nearest the top), and
   the lines between each pair of exercise markers in it,

       // BEGIN SOLUTION Exercise 7.6 (mask)
       ...the student's code...
       // END SOLUTION Exercise 7.6

   replace the stub between the same markers in the fresh handout. A region
   is matched by its place among its exercise's regions (when the student
   has as many as the book), else by its BEGIN line and its place among the
   regions with that line. A region whose code holds a line that would end
   the Markdown code block (a fence) or a marker is not used: its stub stays.
   The student's helper functions are taken the same way: the lines
   between `// BEGIN HELPERS` and `// END HELPERS` of their helpers.h
   (beside their chapters/, at the handout's top) replace the fresh
   handout's empty region; every program and test is compiled with it.
3. Every other difference from the fresh handout is listed, and not used: a
   chapter's lines changed outside the markers (by line, in the student's
   file), a file changed (by line), added, or missing; a symbolic link is
   never followed.
4. make grade runs in the fresh handout: the chapters' own tests (RELATED=0)
   and the hidden ones of the book (TEACHER_TESTS, counted apart), in FORMAT,
   with the list of step 3 added (GRADE_NOTES). Its report is all this
   prints on stdout (progress goes to stderr); its exit status is ours.

The chapters are --chapters, or those the submission's mk/handout.mk assigns
(read as text). Exit status: 0 when every test of the chapters passed, 1
when one failed or the code did not build, 2 when the submission cannot be
read.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local tangler = dofile(HERE .. "/../tangle/tangle.lua")
local U = dofile(HERE .. "/util.lua")
local q = U.q
U.name = "grade-submission"

local USAGE = 'usage: lua5.4 tools/submission.lua [--format F] [--chapters "N ..."] [--hidden-visibility V] ' ..
              '[--teacher-tests DIR] [--] SUBMISSION\n'
local WORK = "build/submission"     -- the fresh handout (book/), a clone (student/), the notes
local MAX_NOTES = 30                -- lines of differences listed, at most
local MARKER = ".abh-handout"       -- make handout's mark at a handout's top: no part of what was handed in
-- the student's helper functions: a file of the handout and its region (tools/handout.lua writes it)
local HELPERS, HELPERS_BEGIN, HELPERS_END = "helpers.h", "// BEGIN HELPERS", "// END HELPERS"

local function say(what, text) io.stderr:write(("  %-7s %s\n"):format(what, text)) end
local function fail(fmt, ...)
  io.stderr:write("grade-submission: ", fmt:format(...), "\n")
  os.exit(2)
end

-- The lines of `text`, without their newlines, and whether it ended in one.
local function lines_of(text)
  local lines = {}
  for line in (text:sub(-1) == "\n" and text or text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  if text == "" then lines = {} end
  return lines, text:sub(-1) == "\n"
end

local function trim(s) return s:match("^%s*(.-)%s*$") end

-- "12-14, 80": line numbers (sorted) as ranges.
local function ranges(numbers)
  table.sort(numbers)
  local out, i = {}, 1
  while i <= #numbers do
    local j = i
    while j < #numbers and numbers[j + 1] <= numbers[j] + 1 do j = j + 1 end
    out[#out + 1] = numbers[i] == numbers[j] and tostring(numbers[i]) or ("%d-%d"):format(numbers[i], numbers[j])
    i = j + 1
  end
  return table.concat(out, ", ")
end

------------------------------------------------------------------------------
-- What was handed in
------------------------------------------------------------------------------

-- The directory to read: SUBMISSION itself, or a clone of it when it is a
-- git URL (scheme://..., user@host:path, or a path ending in .git).
local function fetch(submission)
  if U.sh(("[ -d %s ] && echo dir || true"):format(q(submission))):match("dir") then return submission end
  if submission:match("^%a[%w+.-]*://") or submission:match("^[%w._-]+@[%w._-]+:") or submission:match("%.git/?$") then
    say("CLONE", submission .. " -> " .. WORK .. "/student")
    local status, _, err = U.run(("GIT_TERMINAL_PROMPT=0 git clone --quiet --depth 1 --no-recurse-submodules -- %s %s")
      :format(q(submission), q(WORK .. "/student")))
    if status ~= 0 then fail("git clone %s failed: %s", submission, trim(err)) end
    return WORK .. "/student"
  end
  fail("%s is neither a directory nor a git URL (SUBMISSION=DIR or SUBMISSION=https://...)", submission)
end

-- The files under `dir` (relative paths -> "file" or "link"), without .git/,
-- build/ (what a build made) and the handout's marker.
local function files_in(dir)
  local out = U.must(("cd %s && find . -name .git -prune -o -path ./build -prune -o -path '*/build' -prune -o "
    .. "-type f -printf 'file %%P\\n' -o -type l -printf 'link %%P\\n'"):format(q(dir)), "listing " .. dir)
  local files = {}
  for kind, path in out:gmatch("(%a+) ([^\n]+)") do
    if path ~= MARKER and not path:match("/" .. MARKER:gsub("%p", "%%%0") .. "$") then files[path] = kind end
  end
  return files
end

-- The student's copy of chapter `path` ("chapters/07-cross-attention.md") in
-- `files`: the same path, else the file named NN-*.md nearest the top (one
-- under a chapters/ directory first), never a link or a solutions/ file;
-- and the directory it puts the handout's top in ("" or "handout/"), or
-- nil when the chapter is not in a chapters/ directory (handed in alone).
local function find_chapter(files, path)
  if files[path] == "file" then return path, "" end
  local prefix = path:match("^chapters/(%d+%-)")
  local found = {}
  for candidate, kind in pairs(files) do
    local base = candidate:match("([^/]+)$")
    if kind == "file" and base:sub(1, #prefix) == prefix and base:match("%.md$")
       and not ("/" .. candidate):match("/solutions/") then
      found[#found + 1] = candidate
    end
  end
  local function rank(p) return (p:match("^(.-)chapters/[^/]+$") and 0 or 1000) + select(2, p:gsub("/", "")) end
  table.sort(found, function(a, b) return rank(a) < rank(b) or rank(a) == rank(b) and a < b end)
  if not found[1] then return nil end
  return found[1], found[1]:match("^(.-)chapters/[^/]+$")
end

------------------------------------------------------------------------------
-- The code between the markers
------------------------------------------------------------------------------

-- The solution regions of the book's chapter (the tangler's own reading):
-- each {exercise, first (the BEGIN line), last (the END line), marker}.
local function book_regions(path, text, lines)
  local blocks, err = tangler.parse(path, text)
  if not blocks then U.die("%s", err) end
  local regions = {}
  for _, block in ipairs(blocks) do
    for _, r in ipairs(block.regions) do
      local first = block.line + r.first - 1
      regions[#regions + 1] = {exercise = r.exercise, first = first, last = block.line + r.last - 1, marker = trim(lines[first])}
    end
  end
  return regions
end

-- The regions of the student's chapter, read line by line (their Markdown
-- need not parse): a BEGIN marker and the next END marker of its exercise.
local function student_regions(lines)
  local regions, open = {}, nil
  for i, line in ipairs(lines) do
    local begin = line:match("^%s*// BEGIN SOLUTION Exercise (%d+%.%d+)")
    local stop = line:match("^%s*// END SOLUTION Exercise (%d+%.%d+)")
    if begin then
      open = {exercise = begin, first = i, marker = trim(line)}
    elseif stop and open and stop == open.exercise then
      open.last = i
      regions[#regions + 1] = open
      open = nil
    end
  end
  return regions
end

-- Why the code of a student's region cannot be used, or nil: a line that
-- would end the code block it sits in, or a marker of its own.
local function unusable(lines, region)
  for i = region.first + 1, region.last - 1 do
    if lines[i]:match("^ ? ? ?```") or lines[i]:match("^ ? ? ?~~~") then
      return ("line %d would end the Markdown code block"):format(i)
    end
    if lines[i]:find("BEGIN SOLUTION", 1, true) or lines[i]:find("END SOLUTION", 1, true) then
      return ("line %d is a marker inside the region"):format(i)
    end
  end
end

-- Pair each of the book's regions with the student's: {book region ->
-- student region}, and notes on the regions left as stubs. When the student
-- has as many regions of an exercise as the book, the k-th is the k-th; else the k-th with a BEGIN line is the student's
-- k-th with the same line.
local function match_regions(book, student, path)
  local matched, notes = {}, {}
  local function of(list, exercise)
    local out = {}
    for _, r in ipairs(list) do if r.exercise == exercise then out[#out + 1] = r end end
    return out
  end
  local done = {}
  for _, first in ipairs(book) do
    if not done[first.exercise] then
      done[first.exercise] = true
      local b, s = of(book, first.exercise), of(student, first.exercise)
      for k, r in ipairs(b) do
        local mine
        if #s == #b then
          mine = s[k]      -- an edited marker line is listed with the lines outside the markers
        else
          local seen = 0
          for j = 1, k do seen = seen + (b[j].marker == r.marker and 1 or 0) end
          for _, candidate in ipairs(s) do
            if candidate.marker == r.marker then
              seen = seen - 1
              if seen == 0 then mine = candidate break end
            end
          end
        end
        if mine then
          matched[r] = mine
        else
          notes[#notes + 1] = ("%s: Exercise %s's region `%s` (the book's line %d) is not in it: its stub stays")
            :format(path, r.exercise, r.marker, r.first)
        end
      end
    end
  end
  return matched, notes
end

-- The fresh chapter `text` with the student's code (`slines`) between the
-- markers of each matched region; the number of regions put in, and notes.
local function paste(path, text, slines, spath)
  local lines, final_newline = lines_of(text)
  local book = book_regions(path, text, lines)
  local student = student_regions(slines)
  local matched, notes = match_regions(book, student, spath)
  local used = 0
  for i = #book, 1, -1 do
    local r, s = book[i], matched[book[i]]
    local why = s and unusable(slines, s)
    if why then
      notes[#notes + 1] = ("%s: Exercise %s's region at line %d is not used (%s): its stub stays"):format(spath, r.exercise, s.first, why)
    elseif s then
      local body = table.move(slines, s.first + 1, s.last - 1, 1, {})
      for _ = r.first + 1, r.last - 1 do table.remove(lines, r.first + 1) end
      for k = #body, 1, -1 do table.insert(lines, r.first + 1, body[k]) end
      used = used + 1
    end
  end
  return table.concat(lines, "\n") .. (final_newline and "\n" or ""), used, #book, notes, book, student
end

-- The student's helpers: the fresh handout's helpers.h (`text`) with the
-- lines between its HELPERS markers taken from the student's (`slines`);
-- the new text, its regions and the student's (each {first, last}, for
-- the comparison outside the markers), and a note when the student's
-- region cannot be used (no markers, or a line that is a marker).
local function paste_helpers(text, slines, spath)
  local function region(lines)
    local first, last
    for i, line in ipairs(lines) do
      if trim(line) == HELPERS_BEGIN and not first then first = i
      elseif trim(line) == HELPERS_END and first and not last then last = i end
    end
    return first and last and {first = first, last = last, exercise = "helpers"} or nil
  end
  local lines, final_newline = lines_of(text)
  local book, mine = region(lines), region(slines)
  if not book then U.die("the fresh handout's %s has no %s ... %s region", HELPERS, HELPERS_BEGIN, HELPERS_END) end
  if not mine then
    return text, {book}, {}, ("%s: no %s ... %s region: the handout's empty one stays"):format(spath, HELPERS_BEGIN, HELPERS_END)
  end
  for i = mine.first + 1, mine.last - 1 do
    if slines[i]:find("BEGIN HELPERS", 1, true) or slines[i]:find("END HELPERS", 1, true) then
      return text, {book}, {mine}, ("%s: line %d is a marker inside the helpers' region: the handout's empty one stays"):format(spath, i)
    end
  end
  local out = table.move(lines, 1, book.first, 1, {})
  table.move(slines, mine.first + 1, mine.last - 1, #out + 1, out)
  table.move(lines, book.last, #lines, #out + 1, out)
  return table.concat(out, "\n") .. (final_newline and "\n" or ""), {book}, {mine}, nil
end

------------------------------------------------------------------------------
-- What differs outside the markers
------------------------------------------------------------------------------

-- `lines` with each region's code replaced by one line, and for each line
-- left its number in `lines`.
local function masked(lines, regions)
  local code_at, skip = {}, {}
  for _, r in ipairs(regions) do
    code_at[r.first] = true
    for i = r.first + 1, r.last - 1 do skip[i] = true end
  end
  local out, at = {}, {}
  for i, line in ipairs(lines) do
    if not skip[i] then out[#out + 1], at[#at + 1] = line, i end
    if code_at[i] then out[#out + 1], at[#at + 1] = "\1 the code between the markers", i + 1 end
  end
  return out, at
end

-- Where the student's `mine` differs from the book's `theirs` (lists of
-- lines; `at` maps a line of `mine` to the student's file): "lines 3-5
-- changed", "lines missing after line 9", or nil when they are the same.
local function line_differences(theirs, mine, at)
  local a, b = os.tmpname(), os.tmpname()
  U.write(a, table.concat(theirs, "\n") .. "\n")
  U.write(b, table.concat(mine, "\n") .. "\n")
  local out = U.sh(("diff -a %s %s"):format(q(a), q(b)))
  os.remove(a)
  os.remove(b)
  local changed, gone = {}, {}
  for line in out:gmatch("[^\n]+") do
    local kind, r1, r2 = line:match("^%d+,?%d*([acd])(%d+),?(%d*)$")
    if kind == "d" then
      gone[#gone + 1] = at[tonumber(r1)] or 0
    elseif kind then
      for i = tonumber(r1), tonumber(r2 ~= "" and r2 or r1) do changed[#changed + 1] = at[i] or i end
    end
  end
  local parts = {}
  if #changed > 0 then parts[#parts + 1] = ("line%s %s changed or added"):format(#changed > 1 and "s" or "", ranges(changed)) end
  if #gone > 0 then parts[#parts + 1] = ("the book's lines missing after line%s %s"):format(#gone > 1 and "s" or "", ranges(gone)) end
  return #parts > 0 and table.concat(parts, "; ") or nil
end

-- The note on a chapter's lines outside the markers that differ from the
-- book's (`c`: the book's and the student's lines and regions), or nil.
local function chapter_difference(c, spath)
  local theirs = masked(c.book_lines, c.book_regions)
  local mine, at = masked(c.student_lines, c.student_regions)
  local where = line_differences(theirs, mine, at)
  return where and ("%s: outside the markers, %s"):format(spath, where)
end

-- The notes on every file of the submission's handout (`root` in `sdir`)
-- that differs from the fresh one (`bdir`), the assigned chapters compared
-- outside their markers (`chapters`: path -> {book, student lines and regions}).
local function differences(bdir, bfiles, sdir, sfiles, root, chapters)
  local notes = {}
  local seen = {}
  local paths = {}
  for path in pairs(bfiles) do paths[#paths + 1] = path end
  for path in pairs(sfiles) do
    if path:sub(1, #root) == root and not bfiles[path:sub(#root + 1)] then paths[#paths + 1] = path:sub(#root + 1) end
  end
  table.sort(paths)
  for _, path in ipairs(paths) do
    if not seen[path] then
      seen[path] = true
      local kind = sfiles[root .. path]
      local c = chapters[path]
      if kind == "link" then
        notes[#notes + 1] = ("%s: a symbolic link, not followed"):format(root .. path)
      elseif not kind then
        if not c then notes[#notes + 1] = ("%s: missing (the book's is used)"):format(root .. path) end
      elseif not bfiles[path] then
        notes[#notes + 1] = ("%s: added"):format(root .. path)
      elseif c then
        notes[#notes + 1] = chapter_difference(c, root .. path)
      else
        local theirs, mine = U.must_read(bdir .. "/" .. path), U.must_read(sdir .. "/" .. root .. path)
        if theirs ~= mine then
          local binary = theirs:find("\0", 1, true) or mine:find("\0", 1, true)
          local slines = lines_of(mine)
          local at = {}
          for i = 1, #slines do at[i] = i end
          local where = not binary and line_differences(lines_of(theirs), slines, at)
          notes[#notes + 1] = ("%s: %s"):format(root .. path, where or "changed")
        end
      end
    end
  end
  return notes
end

------------------------------------------------------------------------------
-- Main
------------------------------------------------------------------------------

local function main(argv)
  local format, chapters_arg, visibility, teacher, submission = "text", "", "hidden", "tests/teacher", nil
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--format" then format, i = argv[i + 1], i + 1
    elseif a == "--chapters" then chapters_arg, i = argv[i + 1] or "", i + 1
    elseif a == "--hidden-visibility" then visibility, i = argv[i + 1], i + 1
    elseif a == "--teacher-tests" then teacher, i = argv[i + 1], i + 1
    elseif a == "-h" or a == "--help" then io.stdout:write(USAGE) return 0
    elseif a == "--" then submission, i = argv[i + 1], i + 1
    else submission = a end
    i = i + 1
  end
  if not submission or submission == "" then
    io.stderr:write(USAGE, "grade-submission: name the student's handout: make grade-submission SUBMISSION=DIR-or-git-URL\n")
    return 2
  end
  U.must("rm -rf -- " .. q(WORK) .. " && mkdir -p -- " .. q(WORK), "making " .. WORK)
  local sdir = fetch(submission)
  local sfiles = files_in(sdir)

  -- The chapters: as asked, else as the handout's mk/handout.mk says (read, never run).
  local numbers = {}
  for n in chapters_arg:gmatch("%S+") do numbers[#numbers + 1] = n end
  if #numbers == 0 then
    local mk
    for path, kind in pairs(sfiles) do
      if kind == "file" and (path == "mk/handout.mk" or path:match("^[^/]+/mk/handout%.mk$")) and (not mk or #path < #mk) then mk = path end
    end
    local assigned = mk and (U.read(sdir .. "/" .. mk) or ""):match("\nASSIGNED%s*:=%s*([%d ]+)")
    for n in (assigned or ""):gmatch("%d+") do numbers[#numbers + 1] = n end
    if #numbers == 0 then fail("which chapters? CHAPTERS=\"7\" (the submission has no mk/handout.mk that says)") end
  end
  for _, n in ipairs(numbers) do
    if not n:match("^%d+$") then fail("%s is not a chapter number (CHAPTERS=\"7\")", n) end
  end

  -- 1. A fresh handout of those chapters, from the book.
  local bdir = WORK .. "/book"
  say("HANDOUT", ("%s: chapter%s %s, made fresh from the book"):format(bdir, #numbers > 1 and "s" or "", table.concat(numbers, " ")))
  local status, _, err = U.run(("%s tools/handout.lua -o %s %s"):format(q(arg[-1] or "lua5.4"), q(bdir), table.concat(numbers, " ")))
  if status ~= 0 then io.stderr:write(err) U.die("the fresh handout could not be made from the book") end
  local bfiles = files_in(bdir)

  -- 2. The student's code between the markers of each chapter.
  local notes, took, root = {}, {}, nil
  local chapters = {}
  local paths = {}
  for path in pairs(bfiles) do
    local n = path:match("^chapters/0*(%d+)%-[^/]*%.md$")
    for _, want in ipairs(numbers) do if n and tonumber(n) == tonumber(want) then paths[#paths + 1] = path end end
  end
  table.sort(paths)
  for _, path in ipairs(paths) do
    local spath, sroot = find_chapter(sfiles, path)
    if not spath then
      notes[#notes + 1] = ("%s: not in the submission: every stub of it stays"):format(path)
    else
      if sroot and not root then root = sroot end
      local text = U.must_read(bdir .. "/" .. path)
      local slines = lines_of(U.must_read(sdir .. "/" .. spath))
      local pasted, used, total, region_notes, book, student = paste(path, text, slines, spath)
      U.write(bdir .. "/" .. path, pasted)
      table.move(region_notes, 1, #region_notes, #notes + 1, notes)
      took[#took + 1] = ("%s (%d of %d regions)"):format(spath, used, total)
      chapters[path] = {book_lines = lines_of(text), book_regions = book, student_lines = slines, student_regions = student,
                        spath = spath}
    end
  end

  -- The student's helpers, between the markers of helpers.h beside the chapters.
  if bfiles[HELPERS] and root and sfiles[root .. HELPERS] == "file" then
    local text = U.must_read(bdir .. "/" .. HELPERS)
    local slines = lines_of(U.must_read(sdir .. "/" .. root .. HELPERS))
    local pasted, book, student, note = paste_helpers(text, slines, root .. HELPERS)
    U.write(bdir .. "/" .. HELPERS, pasted)
    if note then notes[#notes + 1] = note else took[#took + 1] = ("%s (its helpers)"):format(root .. HELPERS) end
    chapters[HELPERS] = {book_lines = lines_of(text), book_regions = book, student_lines = slines, student_regions = student,
                         spath = root .. HELPERS}
  end

  -- 3. Every other difference, listed and not used.
  if root and sfiles[root .. "Makefile"] then
    local found = differences(bdir, bfiles, sdir, sfiles, root, chapters)
    table.move(found, 1, #found, #notes + 1, notes)
  else   -- the chapters handed in alone (a platform's upload): only they are compared
    for _, path in ipairs(paths) do
      local c = chapters[path]
      notes[#notes + 1] = c and chapter_difference(c, c.spath)
    end
  end
  local text = {("Graded from a fresh copy of the book; taken from the submission: the code between the exercise markers of %s.")
    :format(#took > 0 and table.concat(took, ", ") or "nothing")}
  if #notes == 0 then
    text[#text + 1] = "Nothing else differs from the handout."
  else
    text[#text + 1] = "Not used (the book's copy was graded instead):"
    for k, note in ipairs(notes) do
      if k > MAX_NOTES then
        text[#text + 1] = ("  ... and %d more"):format(#notes - MAX_NOTES)
        break
      end
      text[#text + 1] = "  " .. note
    end
  end
  local notes_path = WORK .. "/notes.txt"
  U.write(notes_path, table.concat(text, "\n") .. "\n")
  say("NOTES", ("%s: %s"):format(notes_path, #notes == 0 and "nothing differs outside the markers"
    or ("%d difference%s outside the markers, not used (the report lists them)"):format(#notes, #notes > 1 and "s" or "")))

  -- 4. The grade, in the fresh handout, with the book's hidden tests.
  local top = U.must("pwd -P"):gsub("\n$", "")
  local function absolute(p) return p:sub(1, 1) == "/" and p or top .. "/" .. p end
  local keep = {}
  for _, name in ipairs{"PATH", "HOME", "TMPDIR", "XDG_CACHE_HOME", "CCACHE_DIR", "CCACHE_CONFIGPATH", "CCACHE_DISABLE",
                        "ABH_MODEL_CACHE", "CC"} do
    local value = os.getenv(name)
    if value then keep[#keep + 1] = name .. "=" .. q(value) end
  end
  say("GRADE", ("make grade in %s: chapter%s %s, with the hidden tests of %s"):format(bdir, #numbers > 1 and "s" or "",
    table.concat(numbers, " "), teacher))
  local command = ("cd %s && env -i %s LC_ALL=C make --no-print-directory grade FORMAT=%s CHAPTERS=%s EX= RELATED=0 "
    .. "MODE=release V=0 TEACHER_TESTS=%s GRADE_NOTES=%s HIDDEN_VISIBILITY=%s GRADE_LOG=%s")
    :format(q(bdir), table.concat(keep, " "), q(format), q(table.concat(numbers, " ")), q(absolute(teacher)),
            q(absolute(notes_path)), q(visibility), q(absolute(bdir .. "/build/grade/tests.log")))
  io.stdout:flush()
  return os.execute(command) and 0 or 1
end

os.exit(main(arg))
