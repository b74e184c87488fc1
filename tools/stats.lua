--[[ stats.lua: how each chapter reads, measured.

Usage: lua5.4 tools/stats.lua [--check] CHAPTER.md ...

For every chapter it prints one line: words (as `wc -w` counts them), code
blocks, the longest block, the blocks that have no sentence before them or no
paragraph after them, how many words a reader reads before the first figure
and before the first map of a hand-set example, and the chapter's C lines by job:

  idea       the module itself: its tensors, its forward pass, its counts
  machinery  making a case, loading, printing, dumping, freeing, parsing, main

Every line of a C block is counted, as a reader meets it: comments, blank
lines, its caption (`// <<x>>=`, counted with the line after it) and its
references (`<<x>>`); only the fences are not. It belongs to the function around it, and a chunk that
is referenced from inside a function belongs to that function, so a pass of a
forward pass counts as idea wherever its block sits. A function is machinery
when its name says it makes, loads, prints, dumps, frees, parses, checks, reads
or times; lines outside any function (structs, tables) are idea. `main` is read
line by line: a line that calls machinery (or `tensors_*`, `args_*`), declares
the list of tensors or returns is machinery, and so is the rest of a call it
begins; the lines that declare the run's tensors, run the module and settle its
inputs are the idea.

"A sentence before" means the last non-blank line before the opening fence is
prose (not a heading, a fence, a table or an HTML comment); "a paragraph after"
the same for the first non-blank line after the closing fence. The table ends
with a key to its columns. -v (make stats V=1) lists the blocks that miss one,
as chapter.md:LINE, and the C lines of each function.

With --check it exits 1 when a target of the reader's edition is missed:
chapters 1 to 9 with more than 25% machinery, any C block over 25 lines, a
block without a sentence before or a paragraph after, chapters 1 to 12 over
7,500 words (they aim at 7,000; the limit keeps headroom), another chapter over
11,000, an appendix over 14,000 (the appendices hold the wiring the chapters
leave out, so they grow as the chapters shrink), a numbered chapter whose first
figure comes after 1,000 words or its hand-set example's first map after 2,500. Chapter 0 and the appendices
are measured, and only the last three apply.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")

local MAX_WORDS, MAX_APPENDIX_WORDS, MAX_C_BLOCK, MAX_MACHINERY = 11000, 14000, 25, 0.25
-- Chapters 1 to 12 aim at 7,000 words (the reader's target); --check holds them to
-- 7,500, so that one more sentence does not fail the suite. A reader meets the first
-- figure within 1,000 words and a hand-set example's map within 2,500.
local STORY_WORDS, STORY_FIRST, STORY_LAST = 7500, 1, 12
local MAX_FIRST_FIGURE, MAX_EXAMPLE_MAP = 1000, 2500

local MACHINERY = { "free", "make", "load", "print", "dump", "parse", "check",
                    "read", "write", "random", "time", "seconds", "median",
                    "usage", "die", "args" }

local function is_machinery(name)
  if name == "main" or name == "main:machinery" then return true end
  if name == "main:idea" then return false end
  for _, word in ipairs(MACHINERY) do
    if name:find(word, 1, true) then return true end
  end
  return false
end

-- What a chunk does, read from its name (an imperative sentence): wiring runs a
-- program (its file's skeleton, main, its flags, its list of tensors, printing,
-- files, the default case it makes); everything else is the idea. A fence may
-- say it outright: role="wiring" or role="idea".
local WIRING = { "command line", "print", "list the tensors", "list the gradients", "flag",
                 "refuse", "dump", "load", "files", "help", "seed the", "default", "on the case",
                 "check the trainer", "wire" }

local function is_wiring(block)
  local role = block.info:match('role="?(%a+)"?')
  if role then return role == "wiring" end
  if block.info:match("file=") then return true end
  local name = (block.chunk or ""):lower()
  for _, word in ipairs(WIRING) do
    if name:find(word, 1, true) then return true end
  end
  for _, line in ipairs(block.body) do
    if line:match("^%s*int%s+main%s*%(") then return true end
  end
  return false
end

local function lines_of(text)
  local t = {}
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do t[#t + 1] = line end
  if t[#t] == "" then t[#t] = nil end
  return t
end

-- The fenced blocks of a chapter: {first, last, info, lang, chunk, body = {lines}}
local function blocks_of(lines)
  local blocks, i = {}, 1
  while i <= #lines do
    local indent, fence, info = lines[i]:match("^( ? ? ?)([`~][`~][`~]+)(.*)$")
    if fence and not fence:find(fence:sub(1, 1) == "`" and "~" or "`", 1, true) then
      local b = { first = i, info = info, lang = info:match("^%s*([%w_+-]*)") or "", body = {} }
      b.chunk = info:match('chunk="([^"]*)"') or info:match("chunk=([^%s}]+)")
               or info:match('file="([^"]*)"') or info:match("file=([^%s}]+)")
      local j = i + 1
      while j <= #lines do
        local close = lines[j]:match("^ ? ? ?([`~]+)%s*$")
        if close and close:sub(1, 1) == fence:sub(1, 1) and #close >= #fence then break end
        b.body[#b.body + 1] = lines[j]
        j = j + 1
      end
      b.last = j
      blocks[#blocks + 1] = b
      i = j + 1
    else
      i = i + 1
    end
  end
  return blocks
end

local function is_prose(line)
  if not line then return false end
  if line:match("^%s*#") or line:match("^%s*[`~][`~][`~]") or line:match("^%s*|")
     or line:match("^%s*<!%-%-") or line:match("^%s*%-%-%->") then return false end
  return true
end

local function neighbour(lines, from, step)
  local i = from + step
  while lines[i] and lines[i]:match("^%s*$") do i = i + step end
  return lines[i]
end

local figure_at
local function words(text)
  local n = 0
  for _ in text:gmatch("%S+") do n = n + 1 end
  return n
end

-- How many words a reader has read before the first figure (example: before the
-- first map whose caption's command runs a hand-set example, --example; a
-- drawing, which mk/ draws with tools/draw_*.gp, is not a map),
-- or nil when the chapter has none.
local drawings                       -- figures drawn by tools/draw_*.gp: drawings of ideas, not maps
figure_at = function(lines, example)
  if example and not drawings then
    drawings = {}
    local ls = io.popen("cat mk/*.mk 2>/dev/null")
    for line in ls:lines() do
      local name = line:match("^%$%(FIG%)/([%w_]+%.svg):.*tools/draw_")
      if name then drawings[name] = true end
    end
    ls:close()
  end
  local before, i = 0, 1
  while i <= #lines do
    if lines[i]:match("^!%[") then
      local j, caption = i, lines[i]
      while not lines[j]:find("](", 1, true) and lines[j + 1] do j = j + 1 caption = caption .. " " .. lines[j] end
      local file = caption:match("%]%([^)]*/([%w_]+%.svg)%)")
      if not example or (caption:find("--example", 1, true) and not drawings[file or ""]) then return before end
    end
    before = before + words(lines[i])
    i = i + 1
  end
  return nil
end

-- Which function each C line sits in. Returns, per block, a list of
-- {name or false} for counted lines, and the references made from inside a
-- function: refs[chunk] = function name.
local function scan_c(block)
  local depth, current, pending, counted, refs, caption, open_call, as_main = 0, false, nil, {}, {}, false, 0, {}
  for k, line in ipairs(block.body) do
    local code = line:gsub("//.*$", ""):gsub('"[^"]*"', '""'):gsub("'[^']*'", "''")
    local ref = line:match("^%s*<<(.-)>>%s*$")
    if k == 1 and line:match("^%s*//%s*<<.*>>%+?=%s*$") then
      caption = true                    -- counted with the line after it
    elseif ref then
      if current then refs[ref] = current end
      counted[#counted + 1] = current
      as_main[#counted] = "main:idea"
    else
      if depth == 0 then
        local name = code:match("([%a_][%w_]*)%s*%(")
        if name and not code:match(";%s*$") and not code:match("^%s*#")
           and not ({ ["if"] = 1, ["for"] = 1, ["while"] = 1, ["switch"] = 1, ["sizeof"] = 1 })[name] then
          pending = name
        end
      end
      if depth == 0 and pending then current = pending end
      -- Each line's job were it in main (see the header), kept for lines of
      -- main and of chunks that main includes.
      local job = open_call > 0 and "main:machinery" or "main:idea"
      for name in code:gmatch("([%a_][%w_]*)%s*%(") do
        if is_machinery(name) or name:match("^tensors_") or name:match("^args_") then job = "main:machinery" end
      end
      if code:match("%f[%w_]Tensors%f[^%w_]") or code:match("%f[%w_]return%f[^%w_]") then job = "main:machinery" end
      if job == "main:machinery" then
        local _, opens = code:gsub("%(", ""); local _, closes = code:gsub("%)", "")
        open_call = math.max(0, open_call + opens - closes)
      end
      counted[#counted + 1] = current
      as_main[#counted] = job
      for c in code:gmatch("[{}]") do
        if c == "{" then
          depth = depth + 1
        else
          depth = depth - 1
          if depth == 0 then
            if current then counted[#counted] = current end
            current, pending = false, nil
          end
        end
      end
      if depth == 0 and code:match(";%s*$") then pending = nil; current = false end
    end
  end
  if caption and #counted > 0 then
    table.insert(counted, 1, counted[1]); table.insert(as_main, 1, as_main[1])
  end
  return counted, refs, as_main
end

local function chapter_stats(path, all_refs)
  local text = U.must_read(path)
  local lines = lines_of(text)
  local s = { path = path, words = words(text), blocks = 0, longest = 0, longest_at = 0,
              first_figure = figure_at(lines, false), example_map = figure_at(lines, true),
              no_before = {}, no_after = {}, idea = 0, machinery = 0, over = {},
              wiring = 0, c_lines = 0, wiring_chunks = {} }
  for _, b in ipairs(blocks_of(lines)) do
    s.blocks = s.blocks + 1
    local n = #b.body
    if n > s.longest then s.longest, s.longest_at = n, b.first end
    if not is_prose(neighbour(lines, b.first, -1)) then s.no_before[#s.no_before + 1] = b.first end
    if not is_prose(neighbour(lines, b.last, 1)) then s.no_after[#s.no_after + 1] = b.first end
    if b.lang == "c" and b.chunk then
      if n > MAX_C_BLOCK then s.over[#s.over + 1] = b.first end
      s.c_lines = s.c_lines + n
      if is_wiring(b) then
        s.wiring = s.wiring + n
        s.wiring_chunks[#s.wiring_chunks + 1] = ("%s:%d: %d lines of wiring in <<%s>>"):format(path, b.first, n, b.chunk)
      end
      b.counted, _, b.as_main = scan_c(b)
      b.path = path
      s.c_blocks = s.c_blocks or {}
      s.c_blocks[#s.c_blocks + 1] = b
    end
  end
  return s
end

local function main(argv)
  local check, verbose, paths = false, false, {}
  for _, a in ipairs(argv) do
    if a == "--check" then check = true
    elseif a == "-v" then verbose = true
    elseif a:match("^%-") then io.stderr:write("stats.lua: unknown option " .. a .. "\n"); os.exit(2)
    else paths[#paths + 1] = a end
  end
  local chapters = {}
  for _, p in ipairs(paths) do chapters[#chapters + 1] = chapter_stats(p) end

  -- A chunk referenced from inside a function belongs to that function;
  -- follow references through fragments until nothing changes.
  local owner = {}
  for _ = 1, 20 do
    local changed = false
    for _, s in ipairs(chapters) do
      for _, b in ipairs(s.c_blocks or {}) do
        local _, refs = scan_c(b)
        for ref, fn in pairs(refs) do
          if owner[ref] ~= fn then owner[ref], changed = fn, true end
        end
        -- references made at depth 0 of a fragment inherit the fragment's owner
        if owner[b.chunk] then
          for _, line in ipairs(b.body) do
            local ref = line:match("^%s*<<(.-)>>%s*$")
            if ref and not refs[ref] and owner[ref] ~= owner[b.chunk] then
              owner[ref], changed = owner[b.chunk], true
            end
          end
        end
      end
    end
    if not changed then break end
  end

  local failed = false
  print(("%-30s %7s %6s %8s %7s %6s %6s %10s %9s %7s %6s %6s"):format(
    "chapter", "words", "blocks", "longest", "C>25", "nobef", "noaft", "C lines", "machinery", "wiring",
    "fig@", "map@"))
  for _, s in ipairs(chapters) do
    for _, b in ipairs(s.c_blocks or {}) do
      for k, fn in ipairs(b.counted) do
        fn = fn or owner[b.chunk]
        if fn == "main" then fn = b.as_main[k] end
        if fn and is_machinery(fn) then s.machinery = s.machinery + 1 else s.idea = s.idea + 1 end
        if verbose then
          local k = (fn or "no function") .. (fn and is_machinery(fn) and " (machinery)" or "")
          s.jobs = s.jobs or {}
          s.jobs[k] = (s.jobs[k] or 0) + 1
        end
      end
    end
    local jobs = {}
    for k, v in pairs(s.jobs or {}) do jobs[#jobs + 1] = { k, v } end
    table.sort(jobs, function(x, y) return x[2] > y[2] or (x[2] == y[2] and x[1] < y[1]) end)
    for i, j in ipairs(jobs) do jobs[i] = ("  %s: %d C lines in %s"):format(s.path, j[2], j[1]) end
    local c = s.idea + s.machinery
    local share = c > 0 and s.machinery / c or 0
    local name = s.path:match("([^/]+)%.md$") or s.path
    local wiring = s.c_lines > 0 and s.wiring / s.c_lines or 0
    print(("%-30s %7d %6d %8d %7d %6d %6d %10d %8.0f%% %6.0f%% %6s %6s"):format(name, s.words, s.blocks, s.longest,
      #s.over, #s.no_before, #s.no_after, c, 100 * share, 100 * wiring,
      s.first_figure or "-", s.example_map or "-"))
    local numbered = tonumber(name:match("^(%d+)%-"))
    local miss = {}
    local most = name:match("^%u%-") and MAX_APPENDIX_WORDS
                 or numbered and numbered >= STORY_FIRST and numbered <= STORY_LAST and STORY_WORDS
                 or MAX_WORDS
    if numbered and s.first_figure and s.first_figure > MAX_FIRST_FIGURE then
      miss[#miss + 1] = ("the first figure after %d words (at most %d)"):format(s.first_figure, MAX_FIRST_FIGURE)
    end
    if numbered and s.example_map and s.example_map > MAX_EXAMPLE_MAP then
      miss[#miss + 1] = ("the hand-set example's map after %d words (at most %d)"):format(s.example_map, MAX_EXAMPLE_MAP)
    end
    if s.words > most then miss[#miss + 1] = ("%d words (at most %d)"):format(s.words, most) end
    if #s.over > 0 then miss[#miss + 1] = ("%d C blocks over %d lines"):format(#s.over, MAX_C_BLOCK) end
    if #s.no_before > 0 then miss[#miss + 1] = ("%d blocks without a sentence before"):format(#s.no_before) end
    if #s.no_after > 0 then miss[#miss + 1] = ("%d blocks without a paragraph after"):format(#s.no_after) end
    if numbered and numbered >= 1 and numbered <= 9 and share > MAX_MACHINERY then
      miss[#miss + 1] = ("machinery %.0f%% of its C lines (at most %.0f%%)"):format(100 * share, 100 * MAX_MACHINERY)
    end
    if verbose then
      for _, j in ipairs(jobs) do print(j) end
      for _, w in ipairs(s.wiring_chunks) do print("  " .. w) end
      for _, l in ipairs(s.over) do print(("  %s:%d: C block over %d lines"):format(s.path, l, MAX_C_BLOCK)) end
      for _, l in ipairs(s.no_before) do print(("  %s:%d: no sentence before"):format(s.path, l)) end
      for _, l in ipairs(s.no_after) do print(("  %s:%d: no paragraph after"):format(s.path, l)) end
    end
    if check and #miss > 0 then
      failed = true
      io.stderr:write(("%s: %s\n"):format(s.path, table.concat(miss, "; ")))
    end
  end
  print("key: words as wc -w counts them; blocks: fenced code blocks; longest: lines of the longest block;")
  print("     C>25: C blocks over 25 lines; nobef, noaft: blocks without a sentence before, a paragraph after;")
  print("     C lines: lines of C blocks; machinery: their share not the idea, by function; wiring: their")
  print("     share in chunks that run a program (main, flags, the list of tensors, printing, files), by chunk")
  print("     (-v, make stats V=1: which, where); fig@, map@: words read before the first figure, and")
  print("     before the first map of a hand-set example (its caption's command has --example)")
  if failed then os.exit(1) end
end

main(arg)
