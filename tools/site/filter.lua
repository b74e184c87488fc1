-- filter.lua: the pandoc filter behind one page of the web book (make html).
--
--   pandoc -f commonmark_x -t html5 --template tools/site/page.html \
--          --lua-filter tools/site/filter.lua -M page=chapters/05-mha.md \
--          -M pages=book.md -M pages=chapters/00-tensors.md ... chapters/05-mha.md
--
-- `pages` is every page of the site in reading order (book.md, the chapters,
-- the appendices, the solutions, teachers.md); `page` is the one being written. The filter
--   1. names each page's file: book.md is index.html, teachers.md teachers.html,
--      chapters/NN-name.md is NN-name.html, solutions/NN-name.md is
--      solutions-NN-name.html;
--   2. gives every heading GitHub's id (the chapters link to each other the way
--      GitHub shows them), a repeated one made unique as GitHub and pandoc do
--      (running-it, running-it-1, running-it-2), and rewrites every link to a
--      book file, a section of one, or a figure, to the site's file;
--   3. draws each tangled code block (file= or chunk=, see tangle/tangle.lua)
--      as a literate chunk: its name set apart, every <<reference>> a link to
--      the chunk's first block, and under it the blocks that use it, its
--      continuations and the file it ends up in, as noweb and CWEB print them;
--   4. links each exercise to its worked solution and each solution back;
--   5. writes a formula's thousands separators so that MathML keeps them tight,
--      and puts each formula in a span that scrolls when it is wider than a
--      phone (book.css); lets inline code break only at its spaces;
--   6. fills the template's navigation: the chapters with this one marked,
--      previous and next.
-- The chunk index comes from tangle/tangle.lua's own parser, run on every
-- chapter, so the site cannot disagree with what is compiled.

local tangle = dofile("tangle/tangle.lua")

local pages = {}          -- { path, file, title } in reading order
local here                -- the page being written (an entry of pages)
local by_path = {}        -- "chapters/05-mha.md" -> its entry

-- GitHub's heading slug: lower case, punctuation dropped, spaces to hyphens.
local function slug(text)
  return (text:lower():gsub("[^%w%s%-_]", ""):gsub("%s", "-"))
end

local function site_file(path)
  if path == "book.md" then return "index.html" end
  if path == "teachers.md" then return "teachers.html" end
  local dir, base = path:match("^(%w+)/([%w%-_]+)%.md$")
  if dir == "chapters" then return base .. ".html" end
  if dir == "solutions" then return "solutions-" .. base .. ".html" end
end

local function read(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("a")
  f:close()
  return text
end

local function escape(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub('"', "&quot;"))
end

------------------------------------------------------------------------------
-- The chunk index: every tangled block of the book, its id, who uses it
------------------------------------------------------------------------------

local blocks_of = {}      -- page path -> its tangled blocks, in order
local first = {}          -- chunk or file name -> its first block
local all_of = {}         -- name -> its blocks in book order
local users = {}          -- name -> blocks whose code references it
local files_of = {}       -- name -> { file path = true } it ends up in

local function build_index()
  for _, p in ipairs(pages) do
    if p.path:match("^chapters/") then
      local blocks = assert(tangle.parse(p.path, read(p.path)))
      blocks_of[p.path] = blocks
      for _, b in ipairs(blocks) do
        b.page = p
        all_of[b.name] = all_of[b.name] or {}
        table.insert(all_of[b.name], b)
        b.index = #all_of[b.name]
        b.id = (b.kind == "file" and "file-" or "chunk-") .. slug(b.name) .. (b.index > 1 and "-" .. b.index or "")
        first[b.name] = first[b.name] or b
        b.refs = {}
        for i = 2, #b.lines do
          local ref = b.lines[i]:match("^%s*<<(.-)>>%s*$")
          if ref then
            b.refs[#b.refs + 1] = ref
            users[ref] = users[ref] or {}
            table.insert(users[ref], b)
          end
        end
      end
    end
  end
  -- the files each chunk ends up in: walk down from every file block
  local function walk(name, file, seen)
    if seen[name] then return end
    seen[name] = true
    files_of[name] = files_of[name] or {}
    files_of[name][file] = true
    for _, b in ipairs(all_of[name] or {}) do
      for _, ref in ipairs(b.refs) do walk(ref, file, seen) end
    end
  end
  for name, list in pairs(all_of) do
    if list[1].kind == "file" then walk(name, name, {}) end
  end
end

local function href(block)
  return (block.page == here and "" or block.page.file) .. "#" .. block.id
end

------------------------------------------------------------------------------
-- Drawing a chunk: a little C highlighting, links for references
------------------------------------------------------------------------------

local KEYWORDS = {}
for w in ([[auto break case char const continue default do double else enum extern float for
  goto if inline int long register restrict return short signed sizeof static struct switch
  typedef union unsigned void volatile while _Bool _Noreturn bool size_t uint64_t uint32_t
  int64_t uint8_t]]):gmatch("%S+") do KEYWORDS[w] = true end

-- One line of C as HTML: comments, strings, preprocessor lines and keywords in spans.
local function highlight(line)
  if line:match("^%s*#") then return '<span class="pp">' .. escape(line) .. "</span>" end
  local out, i, n = {}, 1, #line
  while i <= n do
    local c = line:sub(i, i)
    if line:sub(i, i + 1) == "//" then
      out[#out + 1] = '<span class="co">' .. escape(line:sub(i)) .. "</span>"
      break
    elseif line:sub(i, i + 1) == "/*" then
      local j = line:find("*/", i + 2, true) or n - 1
      out[#out + 1] = '<span class="co">' .. escape(line:sub(i, j + 1)) .. "</span>"
      i = j + 2
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and line:sub(j, j) ~= c do j = j + (line:sub(j, j) == "\\" and 2 or 1) end
      out[#out + 1] = '<span class="st">' .. escape(line:sub(i, j)) .. "</span>"
      i = j + 1
    elseif c:match("[%a_]") then
      local word = line:match("^[%w_]+", i)
      out[#out + 1] = KEYWORDS[word] and '<span class="kw">' .. word .. "</span>" or word
      i = i + #word
    else
      out[#out + 1] = escape(c)
      i = i + 1
    end
  end
  return table.concat(out)
end

-- A reference: a link to the chunk's first block, then one to each of its
-- continuations, numbered as the lists under a chunk number them.
local function chunk_link(name, text)
  local b = first[name]
  if not b then return escape(text) end
  local more = {}
  for k = 2, #all_of[name] do
    more[#more + 1] = '<a class="more" href="' .. href(all_of[name][k]) .. '" title="block ' .. k ..
      " of this chunk" .. (all_of[name][k].page ~= here and ", " .. escape(all_of[name][k].page.short) or "") ..
      '">' .. k .. "</a>"
  end
  return '<a class="ref" href="' .. href(b) .. '">' .. escape(text) .. "</a>" ..
    (#more > 0 and ' <span class="ref-more">+ ' .. table.concat(more, " ") .. "</span>" or "")
end

-- "where" a block is, for the lists under a chunk: its chunk name, and its
-- page when that is another page.
local function where(b)
  local text = "⟨" .. escape(b.name) .. "⟩"
  if b.index > 1 then text = text .. " " .. b.index end
  if b.page ~= here then text = text .. ' <span class="page">(' .. escape(b.page.short) .. ")</span>" end
  return '<a href="' .. href(b) .. '">' .. text .. "</a>"
end

local function list(items)
  local parts = {}
  for _, b in ipairs(items) do parts[#parts + 1] = where(b) end
  return table.concat(parts, ", ")
end

local function render_chunk(b)
  local head = b.kind == "file"
    and '<span class="chunk-file">' .. escape(b.name) .. "</span>"
    or '<span class="chunk-name">⟨' .. escape(b.name) .. "⟩</span>"
  local op = b.append and "+≡" or "≡"
  local code = {}
  for i = 2, #b.lines do
    local line = b.lines[i]
    local indent, ref = line:match("^(%s*)<<(.-)>>%s*$")
    if ref then
      code[#code + 1] = indent .. '<span class="chunk-ref">' .. chunk_link(ref, "⟨" .. ref .. "⟩") .. "</span>"
    else
      code[#code + 1] = highlight(line)
    end
  end
  local notes = {}
  local all = all_of[b.name]
  if b.index == 1 and #all > 1 then
    local rest = {}
    for k = 2, #all do rest[#rest + 1] = all[k] end
    notes[#notes + 1] = "Continued in " .. list(rest) .. "."
  elseif b.index > 1 then
    notes[#notes + 1] = "Continues " .. where(all[1]) .. "."
  end
  if b.index == 1 and users[b.name] then notes[#notes + 1] = "Used in " .. list(users[b.name]) .. "." end
  if b.index == 1 and b.kind == "chunk" and files_of[b.name] then
    local fs = {}
    for f in pairs(files_of[b.name]) do fs[#fs + 1] = f end
    table.sort(fs)
    for k, f in ipairs(fs) do fs[k] = '<a href="' .. href(first[f]) .. '"><code>build/' .. escape(f) .. "</code></a>" end
    notes[#notes + 1] = "In " .. table.concat(fs, ", ") .. "."
  end
  return table.concat({
    '<div class="chunk" id="' .. b.id .. '">',
    '<div class="chunk-head"><a class="chunk-anchor" href="#' .. b.id .. '">' .. head .. "</a> " .. op .. "</div>",
    '<pre class="chunk-code"><code>' .. table.concat(code, "\n") .. "</code></pre>",
    #notes > 0 and '<div class="chunk-notes">' .. table.concat(notes, " ") .. "</div>" or "",
    "</div>" }, "\n")
end

------------------------------------------------------------------------------
-- Links
------------------------------------------------------------------------------

-- A link target in this page's file (its folder: chapters/ or solutions/, or
-- the top for book.md) -> the site's.
local function new_target(target)
  if target:match("^%a[%w+.-]*:") or target:match("^#") then return nil end
  local path, section = target:match("^([^#]*)(#?.*)$")
  local dir = here.path:match("^(.*)/") or "."
  local full = path
  if dir ~= "." then full = dir .. "/" .. path end
  full = full:gsub("[^/]+/%.%./", ""):gsub("^%./", "")
  if full:match("^figures/") then return full end
  if full == "solutions/" or full == "solutions" then           -- the folder: its first page,
    for _, p in ipairs(pages) do if p.path:match("^solutions/") then return p.file end end
    return false                                                -- or none in a student's handout
  end
  local file = site_file(full)
  if file then return file .. section end
end

------------------------------------------------------------------------------
-- The filter
------------------------------------------------------------------------------

local tangled_seen = 0

local function Meta(meta)
  local list = meta.pages
  if list.t ~= "MetaList" and type(list) ~= "table" then list = { list } end
  for _, item in ipairs(list) do
    local path = pandoc.utils.stringify(item)
    local title = read(path):match("^#%s+([^\n]+)") or path
    local entry = { path = path, file = site_file(path), title = title }
    entry.short = path == "book.md" and "front page"
      or path:match("^solutions/") and "solutions to " .. (title:match("^Solutions?[^:]*: (.*)") or title)
      or title:match("^([%w.]+%.)") and "chapter " .. title:match("^([%w]+)%.") or title
    if path:match("^chapters/%u%-") then entry.short = "Appendix " .. path:match("^chapters/(%u)") end
    pages[#pages + 1] = entry
    by_path[path] = entry
  end
  here = by_path[pandoc.utils.stringify(meta.page)]
  build_index()
  -- navigation: chapters and appendices (the solutions are linked from their chapters)
  local nav, index = {}, 0
  for k, p in ipairs(pages) do
    if p == here then index = k end
    if p.path:match("^chapters/") then
      nav[#nav + 1] = pandoc.MetaMap({ href = p.file, title = p.title, current = p == here or nil })
    end
  end
  meta.nav = pandoc.MetaList(nav)
  meta.front = here.path == "book.md" or nil
  local prev, next = pages[index - 1], pages[index + 1]
  if prev then meta.prev = pandoc.MetaMap({ href = prev.file, title = prev.title }) end
  if next then meta.next = pandoc.MetaMap({ href = next.file, title = next.title }) end
  meta.pagetitle = here.title .. (here.path == "book.md" and "" or " · Attention by Hand")
  return meta
end

-- Every heading takes GitHub's id, which the chapters' links between them use.
-- A page may repeat a heading ("Running it" under each program): as on GitHub,
-- the second takes "-1", the third "-2", so that each id names one heading and
-- the table of contents, which pandoc makes from these ids, reaches each.
-- The chunks' ids are taken first, so that no heading can take one of theirs.
local taken                     -- id -> true, on this page
local function unique(id)
  if id == "" then id = "section" end                            -- as pandoc names one
  if taken[id] then
    local k = 1
    while taken[id .. "-" .. k] do k = k + 1 end
    id = id .. "-" .. k
  end
  taken[id] = true
  return id
end

local function Header(h)
  if not taken then
    taken = {}
    for _, b in ipairs(blocks_of[here.path] or {}) do taken[b.id] = true end
  end
  h.identifier = unique(slug(pandoc.utils.stringify(h.content)))
  return h
end

-- A link whose text is a file name (solutions/05-mha.md, written for GitHub)
-- reads, on the web, as the title of the page it goes to.
local function Link(l)
  local t = new_target(l.target)
  if t == false then return l.content end                       -- a link to nothing here: its text
  if not t then return l end
  l.target = t
  local text = pandoc.utils.stringify(l.content)
  if text:match("^[%w/._-]+%.md$") then
    for _, p in ipairs(pages) do
      if p.file == t:match("^[^#]*") then l.content = pandoc.Inlines(p.title) end
    end
  end
  return l
end

local function Image(img)
  local t = new_target(img.src)
  if t then img.src = t end
  return img
end

-- A thousands separator, 2{,}359{,}296 in TeX, is an operator in pandoc's MathML,
-- which Chromium spaces like one ("2, 359, 296"); as text it stays "2,359,296".
--
-- Chromium draws a <math> wider than its column past the column's edge, with no
-- scrollbar of its own whatever its overflow says: in a span (class "math
-- display" or "math inline", pandoc's own names for them) book.css lets it scroll.
local function Math(m)
  m.text = m.text:gsub("{,}", "\\text{,}")
  return pandoc.Span({ m }, pandoc.Attr("", { "math", m.mathtype == "DisplayMath" and "display" or "inline" }))
end

-- Inline code breaks at its spaces, not inside a word: Chromium would break
-- `1e-5` after its hyphen, `--seed` between its hyphens, `m->w` at the arrow.
-- Each word of up to 30 characters with such a character in it goes in a
-- span.nobr; a longer one may still break anywhere (book.css) rather than run
-- out of a phone's column. Run last: the headings' ids are made from their
-- text, which raw HTML would no longer give.
local NOBR_MAX = 30
local function Code(c)
  if c.identifier ~= "" or #c.classes > 0 or #c.attributes > 0 then return nil end
  local text = c.text:gsub("%S+", function(word)
    if word:find("[^%w_]") and utf8.len(word) and utf8.len(word) <= NOBR_MAX then
      return '<span class="nobr">' .. escape(word) .. "</span>"
    end
    return escape(word)
  end)
  return pandoc.RawInline("html", "<code>" .. text .. "</code>")
end

local function CodeBlock(cb)
  if not (cb.attributes.file or cb.attributes.chunk) then return nil end
  tangled_seen = tangled_seen + 1
  local b = (blocks_of[here.path] or {})[tangled_seen]
  if not b then return nil end
  return pandoc.RawBlock("html", render_chunk(b))
end

------------------------------------------------------------------------------
-- Exercises and their solutions, linked both ways
------------------------------------------------------------------------------

-- "Exercise 1.2" at the start of a paragraph (in bold) or of a heading
local function exercise_number(inlines)
  local text = pandoc.utils.stringify(inlines)
  return text:match("^Exercise (%d+%.%d+)")
end

local function solution_page()
  local base = here.path:match("^chapters/(.*)%.md$")
  return base and by_path["solutions/" .. base .. ".md"]
end

local function chapter_page()
  local base = here.path:match("^solutions/(.*)%.md$")
  return base and by_path["chapters/" .. base .. ".md"]
end

------------------------------------------------------------------------------
-- The "Run it here" panel of a chapter with a program
------------------------------------------------------------------------------

-- The chapter's programs, as its mk/NN-name.mk lists them (PROGRAMS += ...),
-- and the words its figures label an example's maps with: "NAME --example E"
-- -> "the|cat|..." (the keys', FIG_WORDS) or "keys/queries" where the queries'
-- differ (FIG_QWORDS), from a figure's FIG_RUN.
local function chapter_programs()
  local base = here.path:match("^chapters/(%d%d%-[%w%-_]+)%.md$")
  local f = base and io.open("mk/" .. base .. ".mk", "r")
  if not f then return {}, {} end
  local names, runs, words_of, qwords_of, words = {}, {}, {}, {}, {}
  for line in f:lines() do
    local list = line:match("^PROGRAMS%s*%+=%s*(.-)%s*$")
    if list then for name in list:gmatch("%S+") do names[#names + 1] = name end end
    local target, run = line:match("^(%S+):%s*FIG_RUN%s*=%s*(.-)%s*$")
    if target then runs[target] = run end
    local wtarget, w = line:match("^(%S+):%s*FIG_WORDS%s*=%s*(.-)%s*$")
    if wtarget then words_of[wtarget] = w end
    local qtarget, q = line:match("^(%S+):%s*FIG_QWORDS%s*=%s*(.-)%s*$")
    if qtarget then qwords_of[qtarget] = q end
  end
  f:close()
  for target, w in pairs(words_of) do
    local name, example = (runs[target] or ""):match("^([%w_]+) %-%-example ([%w%-]+)$")
    if name then words[name .. " --example " .. example] = w .. (qwords_of[target] and "/" .. qwords_of[target] or "") end
  end
  return names, words
end

-- The page's chunks a panel's reader may want beside it: the C that computed
-- what it draws, and the numbers an example sets by hand.
local PANEL_CHUNKS = {
  { "^Run .+ forward$", "the map is computed by" },
  { "^Take one decoding step$", "each decoding step is" },
  { "^Train the model$", "the training is" },
  { "by hand$", "the example's numbers are set in" },
}
local function panel_chunks()
  local links = {}
  for _, rule in ipairs(PANEL_CHUNKS) do
    for _, b in ipairs(blocks_of[here.path] or {}) do
      if b.index == 1 and b.name:match(rule[1]) then
        links[#links + 1] = rule[2] .. ' <a class="run-chunk" href="#' .. b.id .. '">⟨' .. escape(b.name) .. "⟩</a>"
        break
      end
    end
  end
  return #links > 0 and "<p class=\"run-chunks\">In this chapter's C, " .. table.concat(links, "; ") .. ".</p>" or ""
end

local function json_object(t)
  local keys, parts = {}, {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = string.format("%q:%q", k, t[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- Folded, and empty until it is opened: then its script (make html's
-- run/panel.js, from tools/site/panel.js) loads, and each program's WebAssembly
-- only when it is run. Without run/panel.js (no toolchain) it says so.
local function run_panel(programs, words, program_id)
  local code = {}
  for i, name in ipairs(programs) do code[i] = "<code>" .. escape(name) .. "</code>" end
  return pandoc.RawBlock("html", table.concat({
    '<details class="run-panel" data-programs="' .. escape(table.concat(programs, " ")) ..
      '" data-words="' .. escape(json_object(words)) .. '">',
    "<summary>Run it here: " .. table.concat(code, ", ") .. " in this page</summary>",
    '<div class="run-body"><p>This chapter\'s program, compiled from the C of ' ..
      '<a href="#' .. program_id .. '">The program</a> to WebAssembly, runs in this page on the case you ' ..
      "pick, prints what it prints on your machine, and the page draws the attention weights it " ..
      "writes.</p>" .. panel_chunks() .. "</div>",
    "</details>",
    "<script>document.currentScript.previousElementSibling.addEventListener(\"toggle\", function once(e) {",
    "  e.target.removeEventListener(\"toggle\", once);",
    "  var s = document.createElement(\"script\"); s.src = \"run/panel.js\";",
    "  s.onerror = function () { e.target.querySelector(\".run-body\").insertAdjacentHTML(\"beforeend\",",
    "    \"<p class=run-error>Not built for this copy of the book: make html builds the programs to \" +",
    "    \"WebAssembly when clang, lld, wasi-libc and libclang-rt-14-dev-wasm32 are installed.</p>\"); };",
    "  document.head.appendChild(s);",
    "});</script>" }, "\n"))
end

-- In a chapter, each exercise gets an anchor (#exercise-1-2) and a link to its
-- worked solution, when the book has it; in a solutions page, each exercise's
-- heading gets a link back to the exercise. A chapter with a program gets its
-- panel before "The program" (or "The programs").
local function Blocks(blocks)
  local out = pandoc.List()
  local solutions, chapter = solution_page(), chapter_page()
  local programs, words = chapter_programs()
  for _, b in ipairs(blocks) do
    if #programs > 0 and b.t == "Header" and b.level == 2 and pandoc.utils.stringify(b.content):match("^The programs?$") then
      out:insert(run_panel(programs, words, b.identifier))
      programs = {}
    end
    local n = b.t == "Para" and b.content[1] and b.content[1].t == "Strong" and exercise_number(b.content[1].content)
    if n and solutions then
      local id = "exercise-" .. n:gsub("%.", "-")
      b.content:extend({ pandoc.Space(), pandoc.Link("Its solution →",
        solutions.file .. "#" .. slug("Exercise " .. n), "", pandoc.Attr("", { "to-solution" })) })
      out:insert(pandoc.Div({ b }, pandoc.Attr(id, { "exercise" })))
    else
      out:insert(b)
    end
    n = b.t == "Header" and chapter and exercise_number(b.content)
    if n then
      out:insert(pandoc.Para({ pandoc.Link("← back to Exercise " .. n,
        chapter.file .. "#exercise-" .. n:gsub("%.", "-"), "", pandoc.Attr("", { "to-exercise" })) }))
    end
  end
  return out
end

return {
  { Meta = Meta },
  { Header = Header, Link = Link, Image = Image, CodeBlock = CodeBlock, Math = Math },
  { Blocks = Blocks },
  { Code = Code },
}
