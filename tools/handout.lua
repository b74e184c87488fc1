--[[ handout.lua: make a student handout of "Attention by Hand".

Usage
-----
    lua5.4 tools/handout.lua [--force] -o DIR [CHAPTER ...]
    lua5.4 tools/handout.lua --leaks DIR

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
handout made before that holds no work, which is replaced whole. A handout
is marked by the file .abh-handout at its top (written first, and last
rewritten with the cksum of every file written; make handout keeps it out
of the handout's git commit, so that a student's clone is never taken for
one). A handout holds work when a file differs from that list or is not on
it (build/ and what its .gitignore names at its top aside), when git status
lists a change, or when its git history has a commit after its first: then
it is refused in one line that says what would be lost, unless --force
(make handout FORCE=1) is given. Anything else is refused in one line naming
DIR, before anything is deleted or written, --force or not: a directory that
holds something else, a file, a symbolic link, the book's own directory or
one that holds it.

Without chapter numbers, every chapter that has a solution region is
assigned. The chapters before the last assigned one that are not assigned
stay complete.

A handout holds the book up to its last assigned chapter, not after it:
the later chapters are left out with their programs, tests (public and
hidden), PyTorch scripts, figures, worked solutions, mk/NN-*.mk rules and
their sections of the appendix pages (see after_last below: a section a
kept program needs is kept, and a later chapter whose chunk an earlier one
uses is held whole). Its README says which chapters it holds.

What the handout leaves out besides: the worked solutions of the assigned chapters
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

Then it looks for the solutions' tokens: each cut line (with as many of
its region's next lines as it takes, three lines at most, to have twelve
tokens that are not braces or a loop's head), read as C tokens with comments and spacing
dropped and every identifier but a called function's name read as ID, in
every file the handout ships but the chapters before the exercise's and
their worked solutions (what a student may reuse). Each place found is one
line on stderr, `FILE:LINE: Exercise N.M: the tokens of its solution,
chapters/NN-x.md:LINE (tokens HASH)` (a cut chapter's lines are the
book's), and a place found stops the handout (ABH_LEAKS=fail, the default);
ABH_LEAKS=report only lists them. A few places are allowed, each for its
reason (ALLOWED below, named by the hash of its tokens): they are counted
on stdout, and `--leaks` prints each, `FILE:LINE: Exercise N.M: allowed:
reason`.
`--leaks DIR` runs the same search over a handout written before (its
assigned chapters read from DIR/mk/handout.mk, their solutions from the
book here), lines in DIR's files: make check-handout runs it.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local tangler = dofile(HERE .. "/../tangle/tangle.lua")
local deps = dofile(HERE .. "/deps.lua")
local U = dofile(HERE .. "/util.lua")     -- q, must_read, write, must (a command that must succeed), die
local q = U.q

local USAGE = "usage: lua5.4 tools/handout.lua [--force] -o DIR [CHAPTER ...]   (chapter numbers, e.g. 1 3)\n" ..
              "       lua5.4 tools/handout.lua --leaks DIR                     (the solutions' tokens in a handout)\n"
local HELPERS, HELPERS_BEGIN, HELPERS_END   -- the student's helpers' file and its markers (Pass 4)
local MIN_LEAK = 10     -- solution lines shorter than this are too common to be evidence
local MARKER = ".abh-handout"   -- at a handout's top: make handout may replace this directory
local MARKER_TEXT = [[
This directory is a student handout of "Attention by Hand", written by
`make handout` (tools/handout.lua). `make handout HANDOUT_DIR=<this directory>`
replaces it whole only while it holds no work: no file changed or added since
the list below, no change git status shows, no commit after its first. Else it
refuses, unless given FORCE=1. Delete this file and make handout will refuse
to touch the directory.
]]
-- The line before the list of files in MARKER: cksum's CRC and size, then the path.
local LISTED = "The files as handed out (cksum, bytes, path):"

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

-- The files under `dir`, path -> "CRC SIZE" (POSIX cksum), leaving out
-- .git/, build/ (make writes it) and the marker.
local function file_sums(dir)
  local out = U.must(("cd -- %s && find . \\( -path ./.git -o -path ./build \\) -prune -o -type f ! -path ./%s -exec cksum {} +")
    :format(q(dir), MARKER), "reading the files of " .. dir)
  local sums = {}
  for crc, size, path in out:gmatch("(%d+) (%d+) %./([^\n]*)") do sums[path] = crc .. " " .. size end
  return sums
end

-- The work a handout made before holds, which replacing it would delete:
-- the files changed or added (sorted) and the commits after its first; or
-- nil and why it cannot be told.
local function work_in(dir)
  local marker = U.must_read(dir .. "/" .. MARKER)
  local listed = marker:match("\n" .. LISTED:gsub("%p", "%%%0") .. "\n(.*)$")
  local git_dir = U.must(("[ -e %s/.git ] && echo yes || true"):format(q(dir))):match("yes")
  if not listed and not git_dir then
    return nil, "its .abh-handout lists no files and it has no git history, so its changes cannot be told"
  end
  local changed, seen = {}, {}
  local function add(path)
    if not seen[path] then seen[path], changed[#changed + 1] = true, path end
  end
  if listed then
    local before, ignored = {}, {}
    for sum, path in listed:gmatch("(%d+ %d+) ([^\n]+)") do before[path] = sum end
    for line in (U.read(dir .. "/.gitignore") or ""):gmatch("[^\n]+") do   -- /build/, /node_modules/: made, not written
      local top = line:match("^/([^/*?%[]+)/?$")
      if top then ignored[top] = true end
    end
    for path, sum in pairs(file_sums(dir)) do
      if before[path] ~= sum and not ignored[path:match("^[^/]+")] then add(path) end
    end
  end
  local commits = 0
  if git_dir then
    local status, s1 = U.sh(("git -C %s --no-optional-locks status --porcelain 2>/dev/null"):format(q(dir)))
    local count, s2 = U.sh(("git -C %s rev-list --all --reflog --count 2>/dev/null"):format(q(dir)))
    if s1 ~= 0 or s2 ~= 0 or not tonumber(count) then
      return nil, "git cannot read its history (is git installed?), so its commits cannot be told"
    end
    for line in status:gmatch("[^\n]+") do add((line:sub(4):gsub('^"(.*)"$', "%1"):gsub("^.* %-> ", ""))) end
    commits = math.max(0, tonumber(count) - 1)
  end
  table.sort(changed)
  return changed, commits
end

-- "3 files changed or added (a, b, c) and 2 commits after the handout's first".
local function describe_work(changed, commits)
  local parts = {}
  if #changed > 0 then
    local shown = table.concat(changed, ", ", 1, math.min(3, #changed))
    parts[#parts + 1] = ("%d file%s changed or added (%s%s)"):format(#changed, #changed > 1 and "s" or "",
      shown, #changed > 3 and (", and %d more"):format(#changed - 3) or "")
  end
  if commits > 0 then
    parts[#parts + 1] = ("%d commit%s after the handout's first"):format(commits, commits > 1 and "s" or "")
  end
  return table.concat(parts, " and ")
end

-- What is at `outdir`: "none", "empty" (an empty directory), "handout" (a
-- directory holding MARKER, with no work in it unless `force`), or a
-- refusal, a message naming it; for a handout, also what replacing it
-- deletes ("": nothing). The book's own directory, and any directory that
-- holds it, is refused even when it is a handout (make handout run in a
-- handout with HANDOUT_DIR=.).
local function outdir_state(outdir, force)
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
  if U.must(("[ -f %s/%s ] && echo yes || true"):format(d, MARKER)):match("yes") then
    local changed, commits = work_in(outdir)       -- or nil and why
    local go_on = "make handout FORCE=1 (or --force) replaces it anyway, or name a new directory"
    if not changed then
      if force then return "handout", "whatever it holds (" .. commits .. ")" end
      return nil, ("%s is a handout, but %s: nothing deleted or written; %s"):format(outdir, commits, go_on)
    end
    local work = describe_work(changed, commits)
    if work ~= "" and not force then
      return nil, ("%s is a handout with work a new one would delete: %s: nothing deleted or written; %s")
        :format(outdir, work, go_on)
    end
    return "handout", work
  end
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
-- names (how many the marker lists)}; and the line in the book of each line
-- of the cut text.
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
      for i = first + 1, last - 1 do
        removed[#removed + 1] = {text = lines[i], exercise = region.exercise, path = path, line = i, region = first}
      end
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
  local out, origin = {}, {}
  for i, line in ipairs(lines) do
    if replace[i] ~= false then origin[#out + 1] = i end
    if replace[i] == nil then out[#out + 1] = line
    elseif replace[i] then
      out[#out + 1] = replace[i]
      if stub_at[i] then
        stub_at[i].line = #out
        stubs[#stubs + 1] = stub_at[i]
      end
    end
  end
  return table.concat(out, "\n") .. (final_newline and "\n" or ""), exercises, removed, stubs, origin
end

------------------------------------------------------------------------------
-- Pass 2b: the book up to the last assigned chapter, not after it
------------------------------------------------------------------------------

-- A handout holds the chapters up to its last assigned one and the parts of
-- the appendix pages they need; what comes after is left out whole: the
-- later chapters with their worked solutions and mk/NN-*.mk rules, the
-- sections of the appendix pages that wire their programs, and then every
-- file that belongs to a program those no longer tangle: its tests (public;
-- the hidden ones never ship), its PyTorch script, a test header only they
-- include, and the figures no chapter kept shows. The tangler, run on what
-- is kept, is the safety net: a chunk used but not defined, or defined but
-- never used, stops the handout.
--
-- Each "## " section of an appendix page belongs to one chapter: "## Chapter
-- N's program(s)" to chapter N, any other to its page's chapter below
-- (its text before the first "## " goes with the page). A page none of
-- whose sections is kept is left out whole.
local APPENDIX_CHAPTER = {
  ["chapters/A-machinery.md"] = {page = 0},                       -- chapter 0's tensor helper
  ["chapters/A-programs-1.md"] = {page = 1},                      -- "## Chapter N's program"
  ["chapters/A-programs-2.md"] = {page = 7},
  ["chapters/A-programs-3.md"] = {page = 11},
  ["chapters/B-ladder.md"] = {page = 10},                         -- the rest of chapter 10's ladder
  -- mha_fast's and mha_bench's wiring (chapter 10); its last two sections hold chapter 9's
  -- decode_costs and decode_bench, which also take chapter 10's clock and median
  ["chapters/B-timing.md"] = {page = 10, sections = {["What decode_costs prints"] = 9,
                                                     ["Timing a decoding step"] = 9}},
  ["chapters/C-backward-fast.md"] = {page = 11},                  -- chapter 11's backward, fast
}

-- The units of appendix page `path`: its text before the first "## ", then
-- each "## " heading line, and the text under it up to the next "### " or
-- "## ", and each "### " subsection; each {lines, chapter, defines (the
-- chunks its blocks define, a set), heading (a "## " line alone)}.
local function appendix_units(path, text)
  local rule = APPENDIX_CHAPTER[path] or {page = 0}
  local units, fence, chapter = {}, nil, 0
  local unit = {lines = {}, chapter = 0, defines = {}}
  units[1] = unit
  for _, line in ipairs((lines_of(text))) do
    local mark = line:match("^ ? ? ?(```+)") or line:match("^ ? ? ?(~~~+)")
    if mark and not fence then fence = mark
    elseif mark and fence and line:match("^%s*([`~]+)%s*$") and mark:sub(1, 1) == fence:sub(1, 1) and #mark >= #fence then fence = nil
    elseif not fence and line:match("^##%s") then
      local heading = line:match("^##%s+(.-)%s*$")
      chapter = tonumber(heading:match("^Chapter (%d+)'s ")) or (rule.sections or {})[heading] or rule.page
      units[#units + 1] = {lines = {line}, chapter = chapter, defines = {}, heading = true}
      unit = {lines = {}, chapter = chapter, defines = {}}
      units[#units + 1] = unit
      line = nil
    elseif not fence and line:match("^###%s") then
      unit = {lines = {}, chapter = chapter, defines = {}}
      units[#units + 1] = unit
    end
    if line then
      unit.lines[#unit.lines + 1] = line
      local name = fence and line:match("^%s*//%s*<<(.-)>>%+?=%s*$")
      if name then unit.defines[name] = true end
    end
  end
  return units
end

-- The text of `units` with those `keep` says, blank lines at the end trimmed;
-- nil when a unit is left out and only the page's intro and headings are kept.
local function units_text(units, keep, final_newline)
  local out, any, all = {}, false, true
  for k, unit in ipairs(units) do
    if keep[k] then
      table.move(unit.lines, 1, #unit.lines, #out + 1, out)
      if k > 1 and not unit.heading then any = true end
    else
      all = false
    end
  end
  if all then any = true end
  if not any then return nil end
  while out[#out] == "" do out[#out] = nil end
  return table.concat(out, "\n") .. (final_newline and "\n" or "")
end

-- The files of the book (`files`, their `texts` for the chapters) that a
-- handout up to chapter `last` leaves out, as a set, the appendix pages it
-- trims (path -> text), and the last chapter it holds: `last`, or a later
-- one whose chunk the code before it uses (chapter 0's tensor helper takes
-- its mask rule from chapter 3), held with the chapters before it.
local after_last
function after_last(files, texts, last)
  local gone, trimmed, all_sources, pages = {}, {}, {}, {}
  for _, path in ipairs(files) do
    local n = chapter_number(path) or tonumber(path:match("^solutions/(%d+)%-[^/]*%.md$") or path:match("^mk/(%d+)%-[^/]*%.mk$"))
    if n and n > last then gone[path] = true end
    if path:match("^chapters/[^/]*%.md$") then
      all_sources[#all_sources + 1] = {path = path, text = texts[path]}
      if not chapter_number(path) then
        local units, keep = appendix_units(path, texts[path]), {}
        for k, unit in ipairs(units) do keep[k] = unit.chapter <= last end
        pages[#pages + 1] = {path = path, units = units, keep = keep}
      end
    end
  end
  table.sort(all_sources, function(a, b) return a.path < b.path end)
  local all_out, err = tangler.tangle(all_sources)
  if not all_out then U.die("%s", err) end
  -- Tangle what is kept; a chunk it uses that only a left-out unit defines
  -- brings that unit back (with its "## " heading), until it tangles.
  local kept_sources, kept_out
  while true do
    kept_sources = {}
    for _, path in ipairs(files) do
      if chapter_number(path) and not gone[path] then kept_sources[#kept_sources + 1] = {path = path, text = texts[path]} end
    end
    for _, page in ipairs(pages) do
      local text = units_text(page.units, page.keep, texts[page.path]:sub(-1) == "\n")
      gone[page.path], trimmed[page.path] = text == nil or nil, text
      if text then kept_sources[#kept_sources + 1] = {path = page.path, text = text} end
    end
    table.sort(kept_sources, function(a, b) return a.path < b.path end)
    local out, kept_err = tangler.tangle(kept_sources)
    if out then kept_out = out break end
    local missing = kept_err:match("undefined chunk <<(.-)>>")
    local found = false
    for _, page in ipairs(missing and pages or {}) do
      for k, unit in ipairs(page.units) do
        if unit.defines[missing] and not page.keep[k] then
          page.keep[k], found = true, true
          for h = k, 1, -1 do if page.units[h].heading then page.keep[h] = true break end end
        end
      end
    end
    -- a later chapter that defines it (chapter 3's mask rule is in the tensor helper) is
    -- held whole, and the chapters up to it
    for _, path in ipairs(missing and not found and files or {}) do
      local n = chapter_number(path)
      if n and n > last and texts[path]:find("\n//%s*<<" .. missing:gsub("%p", "%%%0") .. ">>%+?=") then
        return after_last(files, texts, n)
      end
    end
    if not found then U.die("the book up to chapter %d does not tangle alone: %s", last, kept_err) end
  end
  for path, text in pairs(trimmed) do if text == texts[path] then trimmed[path] = nil end end
  -- what the kept chapters no longer tangle: src/NAME.c, src/NAME.h
  local have, dropped = {}, {}
  for _, o in ipairs(kept_out) do have[o.path] = true end
  for _, o in ipairs(all_out) do
    local base = o.path:match("^src/(.+)$")
    if base and not have[o.path] then dropped[base] = true; dropped[base:match("^(.-)%.[ch]$") or base] = true end
  end
  local function needs_dropped(text)
    for name in text:gmatch('#include%s+"([^"]+)"') do if dropped[name] then return true end end
    for name in text:gmatch('"([%w_]+)"') do if dropped[name] then return true end end
    return false
  end
  -- tests of what is left out, and the test headers only they include
  local headers_used, headers = {}, {}
  for _, path in ipairs(files) do
    local name = path:match("^tests/test_([%w_]+)%.c$") or path:match("^tests/pytorch/([%w_]+)%.py$")
    if name then
      local text = U.must_read(path)
      if dropped[name] or needs_dropped(text) then gone[path] = true
      else for h in text:gmatch('#include%s+"([^"]+%.h)"') do headers_used[h] = true end end
    elseif path:match("^tests/[^/]+%.[ch]$") then
      headers[#headers + 1] = path
    end
  end
  for _, path in ipairs(files) do
    if path:match("^tests/[^/]+%.[ch]$") and not path:match("^tests/test_") then
      for h in U.must_read(path):gmatch('#include%s+"([^"]+%.h)"') do headers_used[h] = true end
    end
  end
  for _, path in ipairs(headers) do
    local base = path:match("^tests/(.+)$")
    local included_by_tests = false
    for _, p in ipairs(files) do
      if p:match("^tests/test_[%w_]+%.c$") and U.must_read(p):find('#include "' .. base .. '"', 1, true) then included_by_tests = true end
    end
    if included_by_tests and not headers_used[base] then gone[path] = true end
  end
  -- the figures no kept chapter shows
  local shown = {}
  for _, source in ipairs(kept_sources) do
    for name in source.text:gmatch("figures/([%w_%-]+%.svg)") do shown[name] = true end
  end
  for _, path in ipairs(files) do
    local name = path:match("^figures/([%w_%-]+%.svg)$")
    if name and not shown[name] then gone[path] = true end
  end
  return gone, trimmed, last
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
# Every program and test is compiled with the student's helpers first.
CFLAGS    += -include %s
]]):format(table.concat(chapters, " "), table.concat(exercises, " "), HELPERS)
end

-- The student's own helper functions: one file of the handout, compiled
-- into every program and test before its first line (mk/handout.mk), with
-- one region between HELPERS_BEGIN and HELPERS_END that make
-- grade-submission carries over, as it does the exercises' regions.
HELPERS = "helpers.h"
HELPERS_BEGIN, HELPERS_END = "// BEGIN HELPERS", "// END HELPERS"
local HELPERS_TEXT = ([[
/* helpers.h: your own helper functions, for any exercise of this handout.

   Every program and test is compiled with this file before its first line
   (mk/handout.mk: -include helpers.h), so a function written here can be
   called from the code you write between any exercise's markers. Write
   them between the two lines below, as static functions (a program that
   does not call one is not warned about it); chapter 0's tensor helper is
   included already. make grade-submission, which grades your handout from
   a fresh copy of the book, takes what is between these two markers, as
   it takes your exercises' code, and nothing else of this file. */
#ifndef ABH_HELPERS_H
#define ABH_HELPERS_H
#include <math.h>
#include "tensor.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

%s

%s

#pragma GCC diagnostic pop
#endif
]]):format(HELPERS_BEGIN, HELPERS_END)

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

-- What the handout holds: "chapters 0 to 5 and the parts of the appendices
-- they use; chapters 6 to 13, after the last one assigned, are left out".
local function holds(held, later)
  local function span(list)
    if #list == 1 then return "chapter " .. list[1] end
    return ("chapters %d to %d"):format(list[1], list[#list])
  end
  local text = ("It holds %s and the parts of the appendices they use"):format(span(held))
  if #later == 0 then return text .. ": the whole book." end
  return text .. (": %s, after the last one assigned, %s left out, with their programs, tests and figures.")
    :format(span(later), #later == 1 and "is" or "are")
end

local function student_readme(chapters, exercises, stubs, reach, chapter_files, programs, held, later)
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

%s

## What to do

In each assigned chapter (`chapters/NN-*.md`) the code an exercise asks for is
gone. %s
Replace the `NOT_IMPLEMENTED` line with your code, between the two markers,
which you leave where they are. The prose around the block, the exercise's own
text at the end of the chapter and the chapter's tests say what the code must
compute. The stubs of this handout, by chapter and line:

%s

A helper function of your own, which several exercises may call, goes in
`helpers.h`, between its lines `// BEGIN HELPERS` and `// END HELPERS`, as a
`static` function: every program and test is compiled with that file first.
Those lines and your exercises' regions are what a teacher's `make
grade-submission` takes from your handout; a change anywhere else is listed
in its report, and not used.

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
             wrap(holds(held, later), ""), forms, table.concat(list, "\n"), program, first.path, first.line, first.exercise,
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

-- And none of its tokens: a solution line written with other spacing, other
-- comments or other variable names is the same answer. Each file is read as
-- C tokens (a Markdown file's fenced blocks as C, its prose with no comments
-- or character literals), every identifier but a keyword or a called
-- function's name (one before "(") read as ID. A needle is a line of a cut
-- region, with as many of the region's next lines (at most LEAK_WINDOW) as
-- it takes to make MIN_TOKENS tokens that are not scaffolding (braces, a
-- loop's head). The chapters before the exercise's teach what a student may
-- reuse: they and their worked solutions (which must hold their own
-- answers) do not count, and a needle they hold as written (names and all)
-- is taught, no leak anywhere. Everything else the handout ships counts:
-- the exercise's own chapter outside the stub, later chapters and their
-- solutions, appendices, tests, tools (gnuplot's figures aside).
-- ABH_LEAKS=fail (the default) refuses a handout with a leak;
-- ABH_LEAKS=report lists them and goes on.
local MIN_TOKENS, LEAK_WINDOW = 12, 3

local KEYWORDS = {}
for word in ([[auto bool break case char const continue default do double else enum extern float for goto
  if inline int long register restrict return short signed sizeof static struct switch typedef union
  unsigned void volatile while]]):gmatch("%S+") do KEYWORDS[word] = true end
local PUNCT = {}
for p in ([[... <<= >>= -> ++ -- << >> <= >= == != && || += -= *= /= %= &= ^= |= ##]]):gmatch("%S+") do PUNCT[p] = true end

-- Append the tokens of `text`, which starts at line `line`, to `toks` and
-- their lines to `at`; `code`: C code (comments dropped, 'c' a character),
-- else prose. Returns the line after it.
local function scan(text, line, code, toks, at)
  local i, n = 1, #text
  while i <= n do
    local b = text:byte(i)
    if b == 10 then
      line, i = line + 1, i + 1
    elseif b == 32 or b == 9 or b == 13 or b == 12 or b == 11 then
      i = i + 1
    else
      local two, tok = text:sub(i, i + 1), nil
      if code and two == "//" then
        i = text:find("\n", i, true) or n + 1
      elseif code and two == "/*" then
        local stop = (text:find("*/", i + 2, true) or n) + 1
        line = line + select(2, text:sub(i, stop):gsub("\n", ""))
        i = stop + 1
      else
        tok = text:match("^[%a_][%w_]*", i) or text:match("^%.?%d[%w_.]*", i)
        if not tok and b == 34 then                                -- "...": to its end, or the line's
          local j = i + 1
          while j <= n and text:byte(j) ~= 34 and text:byte(j) ~= 10 do j = j + (text:byte(j) == 92 and 2 or 1) end
          tok = text:sub(i, text:byte(j) == 34 and j or j - 1)
        end
        tok = tok or (code and text:match("^'\\?[^'\n]'", i))
          or (PUNCT[text:sub(i, i + 2)] and text:sub(i, i + 2)) or (PUNCT[two] and two) or text:sub(i, i)
        toks[#toks + 1], at[#at + 1] = tok, line
        line = line + select(2, tok:gsub("\n", ""))
        i = i + #tok
      end
    end
  end
  return line
end

-- The tokens of `toks` with every identifier but a keyword or a called
-- function's name read as ID.
local function normalise(toks)
  local out = {}
  for k, tok in ipairs(toks) do
    out[k] = (tok:match("^[%a_]") and not KEYWORDS[tok] and toks[k + 1] ~= "(") and "ID" or tok
  end
  return out
end

-- The normalised tokens of a file and the line of each; a Markdown file's
-- fenced blocks are code, the rest prose.
local function file_tokens(path, text)
  local toks, at = {}, {}
  if not path:match("%.md$") then
    scan(text, 1, true, toks, at)
    return normalise(toks), at, toks
  end
  local lines = lines_of(text)
  local start, fence = 1, nil
  local function flush(stop)      -- lines start..stop-1, code when inside a fence
    scan(table.concat(lines, "\n", start, stop - 1), start, fence ~= nil, toks, at)
    start = stop
  end
  for k, line in ipairs(lines) do
    local mark = line:match("^ ? ? ?(```+)") or line:match("^ ? ? ?(~~~+)")
    if mark and not fence then
      flush(k + 1)                -- the fence line is prose
      fence = mark
    elseif mark and fence and line:match("^%s*([`~]+)%s*$") and mark:sub(1, 1) == fence:sub(1, 1) and #mark >= #fence then
      flush(k)
      fence = nil
    end
  end
  flush(#lines + 1)
  return normalise(toks), at, toks
end

-- How many of a line's tokens, from its start, are scaffolding, which holds
-- no answer: a brace, "else", the head of a for, while, if or switch. They
-- are part of a needle, but only the others count towards its MIN_TOKENS,
-- so that a loop that copies or scales an array is no needle alone.
local function scaffolding(toks)
  local k = 1
  while true do
    local tok = toks[k]
    if tok == "{" or tok == "}" or tok == "else" or tok == "do" then
      k = k + 1
    elseif (tok == "for" or tok == "while" or tok == "if" or tok == "switch") and toks[k + 1] == "(" then
      local depth = 0
      repeat
        k = k + 1
        depth = depth + (toks[k] == "(" and 1 or toks[k] == ")" and -1 or 0)
      until depth == 0 or not toks[k]
      k = k + 1
    else
      return math.min(k - 1, #toks)
    end
  end
end

-- The needles of the cut lines (`removed`, in order, by region): each
-- {toks, raw (its tokens as written, joined by spaces), exercise, path,
-- first, last (its lines in the chapter)}.
local function needles_of(removed)
  local needles, seen, k = {}, {}, 1
  while k <= #removed do
    local j = k
    while removed[j + 1] and removed[j + 1].region == removed[k].region and removed[j + 1].path == removed[k].path do j = j + 1 end
    local texts = {}
    for m = k, j do texts[#texts + 1] = removed[m].text:match("^%s*<<.+>>%s*$") and "" or removed[m].text end
    local raw, at = {}, {}
    scan(table.concat(texts, "\n"), removed[k].line, true, raw, at)
    local toks = normalise(raw)
    local rows = {}               -- the region's lines that have tokens: {toks, raw, line}
    for m, tok in ipairs(toks) do
      if not rows[#rows] or rows[#rows].line ~= at[m] then rows[#rows + 1] = {toks = {}, raw = {}, line = at[m]} end
      table.insert(rows[#rows].toks, tok)
      table.insert(rows[#rows].raw, raw[m])
    end
    for a = 1, #rows do
      local needle, written, b, counted = {}, {}, a, 0
      while rows[b] and b < a + LEAK_WINDOW and counted < MIN_TOKENS do
        table.move(rows[b].toks, 1, #rows[b].toks, #needle + 1, needle)
        table.move(rows[b].raw, 1, #rows[b].raw, #written + 1, written)
        counted = counted + #rows[b].toks - scaffolding(rows[b].toks)
        b = b + 1
      end
      local key = removed[k].exercise .. "\0" .. table.concat(needle, " ")
      if counted >= MIN_TOKENS and not seen[key] then
        seen[key] = true
        needles[#needles + 1] = {toks = needle, raw = table.concat(written, " "), exercise = removed[k].exercise,
                                 path = removed[k].path, first = rows[a].line, last = rows[b - 1].line}
      end
    end
    k = j + 1
  end
  return needles
end

-- FNV-1a, 32 bits, of `text`, as eight hex digits: how ALLOWED names a run of
-- tokens without quoting it (this file ships in every handout).
local function tokens_hash(text)
  local h = 2166136261
  for k = 1, #text do
    h = ((h ~ text:byte(k)) * 16777619) & 0xffffffff
  end
  return ("%08x"):format(h)
end

-- The places where a solution's tokens are allowed: each with its exercise,
-- the file, where in it, the hashes of the runs of tokens allowed there (as
-- written, names and all, joined by spaces: a leak's line shows its hash,
-- so a changed line or a new place is found again) and why it gives no
-- answer away. The check prints each place it allows, "FILE:LINE: Exercise
-- N.M: allowed: reason". A handout holds no chapter after its last assigned
-- one, so these are met only when a later chapter is assigned too.
local ALLOWED = {
  {exercise = "1.6", path = "chapters/11-backward.md", at = "attend_lean_backward's scale", tokens = {"9ecc3fe5"},
   reason = "the scale 1/sqrt(d) that chapter 1's prose gives before the exercise, of the backward pass's recomputed weights, with no matmul_bt after it"},
  {exercise = "5.6", path = "chapters/06-mqa-gqa.md", at = "mqa_forward's and gqa_forward's passes 2 and 7", tokens = {"456ef557", "fdfdc340", "b16784f4", "29254858"},
   reason = "MQA's and GQA's own passes 2 and 7 (only the queries split; keys and values in G heads), with the calls chapters 0 and 5 name before the exercise"},
  {exercise = "5.6", path = "chapters/07-cross-attention.md", at = "passes 2, 7 and 8", tokens = {"456ef557", "391da05c", "341839c0", "4887dc6a", "cb5a9ed4"},
   reason = "cross-attention's own passes on S source positions, with the calls chapters 0 and 5 name before the exercise"},
  {exercise = "5.6", path = "chapters/08-variants.md", at = "mha_qkv's, mha_shared_heads' and mhsa_relu's splits, weighted sums and merges", tokens = {"dc6ce226", "cb5a9ed4", "de75511d", "87c9f3b6", "031d9bf2", "9ff1030f", "456ef557", "f2345f9f", "a4abe8ab"},
   reason = "the variants' own splits, weighted sums without dropout and merges, with the calls chapters 0 and 5 name before the exercise"},
  {exercise = "5.6", path = "chapters/11-backward.md", at = "passes 7 and 2 back", tokens = {"b519ce66", "33122677", "de0148e4", "584e210c"},
   reason = "the gradients split where the forward pass merged and merged where it split, with G key heads"},
  {exercise = "5.6", path = "chapters/13-positions.md", at = "rope's passes 2 and 7", tokens = {"456ef557", "b16784f4", "29254858", "fdfdc340"},
   reason = "chapter 6's GQA passes 2 and 7, around the rotation chapter 13 adds"},
  {exercise = "5.6", path = "chapters/A-programs-3.md", at = "chapter 13's turning layer, forward and back", tokens = {"b519ce66", "33122677", "de0148e4", "584e210c"},
   reason = "chapter 11's forward and backward passes with G key heads, around the rotation chapter 13 adds"},
  {exercise = "6.7", path = "chapters/11-backward.md", at = "attend_backward's rows", tokens = {"5acdd590"},
   reason = "a group's R*T query rows, which chapter 6's prose states, read by the backward pass as pass 3 reads them"},
  {exercise = "6.7", path = "tests/test_tensor.c", at = "the test of matmul", tokens = {"04a92b72"},
   reason = "chapter 0's own test of matmul, which chapter 0 teaches"},
  {exercise = "8.6", path = "chapters/08-variants.md", at = "mha_shared_heads' pass 3", tokens = {"3bc7b294"},
   reason = "the einsum post's score, unscaled as chapter 8's prose says mhsa_relu's is; the exercise is where the causal -10000 goes"},
  {exercise = "11.6", path = "chapters/11-backward.md", at = "dot", tokens = {"530feceb"},
   reason = "a dot product, which chapter 1 teaches; the exercise is which rows it takes and what the sum is taken from"},
  {exercise = "11.6", path = "chapters/C-backward-fast.md", at = "chapter 11's lean forward pass: dot", tokens = {"530feceb"},
   reason = "a dot product, which chapter 1 teaches; the exercise is which rows it takes and what the sum is taken from"},
  {exercise = "11.6", path = "chapters/C-backward-fast.md", at = "step 7", tokens = {"02be5ef5"},
   reason = "ds = p * (dp - D), D the row's sum computed before: the formula the comment above the exercise's stub states"},
}

-- The places of the handout's files (`texts`: path -> text, the paths
-- `paths`) that hold a needle's tokens, merged by exercise and file, each
-- {exercise, path, from, to, src, first, last}, in order; `origins` (path ->
-- the book's line of each line of a cut chapter) gives a cut chapter's
-- places at the book's lines, where they are fixed.
local function find_leaks(needles, texts, paths, origins)
  local index, files = {}, {}                  -- the first MIN_TOKENS tokens -> {file, position}, ...
  for _, path in ipairs(paths) do
    if not path:match("%.svg$") then           -- gnuplot's figures: numbers, no code
      local toks, at, raw = file_tokens(path, texts[path])
      local file = {path = path, toks = toks, at = at, written = raw,
                    chapter = tonumber(path:match("^chapters/(%d+)%-[^/]*%.md$") or path:match("^solutions/(%d+)%-[^/]*%.md$"))}
      if file.chapter then file.raw = " " .. table.concat(raw, " ") .. " " end
      files[#files + 1] = file
      for p = 1, #toks - MIN_TOKENS + 1 do
        local key = table.concat(toks, " ", p, p + MIN_TOKENS - 1)
        local list = index[key]
        if not list then list = {}; index[key] = list end
        list[#list + 1] = {file, p}
      end
    end
  end
  local hits = {}
  for _, needle in ipairs(needles) do
    local own, taught = tonumber(needle.exercise:match("^(%d+)")), false
    for _, file in ipairs(files) do
      if file.chapter and file.chapter < own and file.raw:find(" " .. needle.raw .. " ", 1, true) then taught = true end
    end
    for _, place in ipairs(taught and {} or index[table.concat(needle.toks, " ", 1, MIN_TOKENS)] or {}) do
      local file, p = place[1], place[2]
      local same = not (file.chapter and file.chapter < own)     -- an earlier chapter (or its solutions) teaches it
      for m = MIN_TOKENS + 1, #needle.toks do
        if not same or file.toks[p + m - 1] ~= needle.toks[m] then same = false break end
      end
      if same then
        local from, to, book = file.at[p], file.at[p + #needle.toks - 1], origins[file.path] or {}
        local hash, allowed = tokens_hash(table.concat(file.written, " ", p, p + #needle.toks - 1)), nil
        for _, entry in ipairs(ALLOWED) do
          if entry.exercise == needle.exercise and entry.path == file.path then
            for _, h in ipairs(entry.tokens) do if h == hash then allowed = entry end end
          end
        end
        hits[#hits + 1] = {exercise = needle.exercise, path = file.path, from = book[from] or from, to = book[to] or to,
                           src = needle.path, first = needle.first, last = needle.last, allowed = allowed, hash = hash}
      end
    end
  end
  local function exercise_order(e) local a, b = e:match("^(%d+)%.(%d+)") return tonumber(a) * 1000 + tonumber(b) end
  table.sort(hits, function(x, y)
    if x.exercise ~= y.exercise then return exercise_order(x.exercise) < exercise_order(y.exercise) end
    if x.path ~= y.path then return x.path < y.path end
    if x.from ~= y.from then return x.from < y.from end
    return x.first < y.first
  end)
  local merged = {}
  for _, h in ipairs(hits) do
    local m = merged[#merged]
    if m and m.exercise == h.exercise and m.path == h.path and h.from <= m.to + 1 and m.allowed == h.allowed then
      m.to, m.first, m.last = math.max(m.to, h.to), math.min(m.first, h.first), math.max(m.last, h.last)
      if not m.hashes:find(h.hash, 1, true) then m.hashes = m.hashes .. " " .. h.hash end
    else
      merged[#merged + 1] = {exercise = h.exercise, path = h.path, from = h.from, to = h.to, src = h.src, first = h.first,
                             last = h.last, allowed = h.allowed, hashes = h.hash}
    end
  end
  return merged
end

-- "a:3" or "a:3-5".
local function place(path, from, to)
  return from == to and ("%s:%d"):format(path, from) or ("%s:%d-%d"):format(path, from, to)
end

-- List the leaks on stderr, one line each, then how many there are; with
-- ABH_LEAKS=fail (the default) a leak stops the script, saying `stopped`
-- (what it did not do). The places ALLOWED are not leaks: `list_allowed`
-- prints each on stdout, else one line counts them. `where` names the
-- handout. Returns how many leaks there are.
local function report_leaks(places, where, stopped, list_allowed)
  local mode = os.getenv("ABH_LEAKS") or "fail"
  if mode ~= "report" and mode ~= "fail" then U.die("ABH_LEAKS=%s: it is fail (refuse a leak) or report (list the leaks)", mode) end
  local leaks, allowed = {}, 0
  for _, l in ipairs(places) do
    if l.allowed then
      allowed = allowed + 1
      if list_allowed then
        io.stdout:write(("%s: Exercise %s: allowed: %s\n"):format(place(l.path, l.from, l.to), l.exercise, l.allowed.reason))
      end
    else
      leaks[#leaks + 1] = l
    end
  end
  if allowed > 0 and not list_allowed then
    io.stdout:write(("handout: %s: %d place%s with a solution's tokens allowed, each for its reason (tools/handout.lua --leaks %s lists them)\n")
      :format(where, allowed, allowed == 1 and "" or "s", where))
  end
  for _, l in ipairs(leaks) do
    io.stderr:write(("%s: Exercise %s: the tokens of its solution, %s (tokens %s)\n"):format(
      place(l.path, l.from, l.to), l.exercise, place(l.src, l.first, l.last), l.hashes))
  end
  if #leaks == 0 then return 0 end
  local found = ("%s: %d place%s hold%s the tokens of a solution it cuts (listed above)")
    :format(where, #leaks, #leaks > 1 and "s" or "", #leaks > 1 and "" or "s")
  if mode == "fail" then U.die("%s: %s (ABH_LEAKS=fail)", found, stopped) end
  io.stderr:write(("handout: %s; ABH_LEAKS=report: reported, not refused\n"):format(found))
  return #leaks
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

-- --leaks DIR: the token check of a handout written before (make
-- check-handout runs it), its assigned chapters read from DIR/mk/handout.mk
-- and their solutions from the book here; exit 1 on a leak with ABH_LEAKS=fail.
local function leaks_main(dir)
  if not dir or dir == "" then io.stderr:write(USAGE) os.exit(1) end
  local assigned = (U.read(dir .. "/mk/handout.mk") or ""):match("\nASSIGNED%s*:=([^\n]*)")
  if not assigned then U.die("%s is not a handout: it has no mk/handout.mk naming the chapters assigned", dir) end
  local wanted = {}
  for n in assigned:gmatch("%d+") do wanted[tonumber(n)] = true end
  local removed, origins = {}, {}
  for _, path in ipairs(book_files()) do
    local n = chapter_number(path)
    if n and wanted[n] then
      local _, _, lines, _, origin = cut(path, U.must_read(path))
      table.move(lines, 1, #lines, #removed + 1, removed)
      origins[path] = origin
    end
  end
  local texts, paths = {}, {}
  local listing = U.must(("cd -- %s && find . \\( -path ./.git -o -path ./build \\) -prune -o -type f ! -path ./%s -print | sed 's|^\\./||' | LC_ALL=C sort")
    :format(q(dir), MARKER), "listing " .. dir)
  for path in listing:gmatch("[^\n]+") do
    local text = U.must_read(dir .. "/" .. path)
    if not text:find("\0", 1, true) then texts[path], paths[#paths + 1] = text, path end
  end
  local needles = needles_of(removed)
  local leaks = find_leaks(needles, texts, paths, origins)
  local found = report_leaks(leaks, dir, "the handout leaks", true)
  if found == 0 then
    io.stdout:write(("handout: %s: no file holds the tokens of a solution it cuts (%d token sequence%s searched)\n"):format(dir, #needles, #needles == 1 and "" or "s"))
  end
end

local function main(argv)
  local outdir, wanted, force = nil, {}, false
  local i = 1
  while i <= #argv do
    if argv[i] == "-o" then
      outdir, i = argv[i + 1], i + 1
    elseif argv[i] == "--force" then
      force = true
    elseif argv[i] == "--leaks" then
      return leaks_main(argv[i + 1])
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
  local state, refusal = outdir_state(outdir, force)
  if not state then U.die("%s", refusal) end

  local files = book_files()
  local texts, chapters_with_exercises = {}, {}
  for _, path in ipairs(files) do
    local n = chapter_number(path)
    if path:match("^chapters/[^/]*%.md$") then texts[path] = U.must_read(path) end
    if n then
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

  -- What the handout leaves out: what comes after its last assigned chapter,
  -- then the assigned chapters' worked solutions and what only teachers use.
  local last = tonumber(numbers[#numbers])
  local gone, trimmed
  gone, trimmed, last = after_last(files, texts, last)
  for path, text in pairs(trimmed) do texts[path] = text end
  local held, later = {}, {}      -- the chapters it holds, and those it leaves out, by number
  for _, path in ipairs(files) do
    local n = chapter_number(path)
    if n then table.insert(n <= last and held or later, n) end
  end
  table.sort(held)
  table.sort(later)
  gone["README.md"], gone[MARKER], gone[HELPERS] = true, true, true
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
  local exercises, removed, stubs, out_texts, text_paths, origins = {}, {}, {}, {}, {}, {}
  for _, path in ipairs(kept) do
    local n = chapter_number(path)
    local text = texts[path]
    if n and assigned[n] then
      local cut_text, cut_exercises, cut_lines, cut_stubs, origin = cut(path, text)
      text, origins[path] = cut_text, origin
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
  out_texts["README.md"] = student_readme(numbers, exercises, stubs, reach, assigned, programs, held, later)
  out_texts["mk/handout.mk"] = makefile_part(numbers, exercises)
  out_texts[HELPERS] = HELPERS_TEXT
  kept[#kept + 1] = "README.md"
  kept[#kept + 1] = "mk/handout.mk"
  kept[#kept + 1] = HELPERS
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
  report_leaks(find_leaks(needles_of(removed), out_texts, text_paths, origins), outdir, "nothing written")

  -- Write: a fresh directory, marked first as a handout, text files from
  -- memory, the others copied. Only a handout made before is removed.
  local now, why = outdir_state(outdir, force)
  if now ~= state then U.die("%s", why or (outdir .. " changed while the handout was being made: nothing written")) end
  if state == "handout" then
    if why and why ~= "" then io.stderr:write(("handout: %s: --force: deleting %s\n"):format(outdir, why)) end
    U.must("rm -rf -- " .. q(outdir), "removing the old handout " .. outdir)
  end
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
  -- the marker, last, lists every file as written: what tells a student's work
  local sums, listed = file_sums(outdir), {}
  for path, sum in pairs(sums) do listed[#listed + 1] = sum .. " " .. path end
  table.sort(listed, function(a, b) return a:match("^%d+ %d+ (.*)") < b:match("^%d+ %d+ (.*)") end)
  U.write(outdir .. "/" .. MARKER, MARKER_TEXT .. "\n" .. LISTED .. "\n" .. table.concat(listed, "\n") .. "\n")
  local list = {}
  for _, exercise in ipairs(exercises) do list[#list + 1] = "Exercise " .. exercise end
  io.stdout:write(("handout: %s: chapter%s %s assigned (%s)\n"):format(
    outdir, #numbers > 1 and "s" or "", table.concat(numbers, ", "), table.concat(list, ", ")))
end

main(arg)
