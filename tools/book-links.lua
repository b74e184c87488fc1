-- book-links.lua: a pandoc filter that makes the one-page book's links work.
--
--   pandoc -f commonmark_x --lua-filter tools/book-links.lua \
--          -M chapters=chapters/00-tensors.md -M chapters=... book.md chapters/*.md
--
-- On GitHub each chapter is its own page, and chapters link to each other as
-- files: [chapter 0](00-tensors.md), [masks](00-tensors.md#masks-and-broadcasting).
-- In one HTML page those files do not exist. This filter
--   1. gives every heading an id that names its chapter, so that headings
--      with the same words in two chapters ("The module in PyTorch") stay
--      apart: chapter 05-mha.md's title becomes #05-mha, its section
--      "The module in PyTorch" #05-mha-the-module-in-pytorch;
--   2. rewrites every link to a chapter file, with or without a #section,
--      to the matching id on the page; a link to book.md goes to the top of
--      the page, or to the section it names (book.md's ids are pandoc's own).
-- The chapters are the level-1 headings after book.md's title, in the order
-- of the `chapters` metadata list (the order pandoc reads them in). The list
-- may go on with the appendices (chapters/A-name.md, ids like any chapter's:
-- #A-name, #A-name-section) and the solutions (solutions/NN-name.md): their
-- ids start with "solutions-", since they share their chapter's file name.

local chapter_files = {}   -- "chapters/NN-name", "chapters/A-name" or "solutions/NN-name", in book order
local ids = {}             -- that key -> the id of its title

-- GitHub's heading slug: lower case, punctuation dropped, spaces to hyphens.
local function slug(text)
  return (text:lower():gsub("[^%w%s%-_]", ""):gsub("%s", "-"))
end

-- "chapters/05-mha.md" -> "chapters/05-mha"; a path without a folder is in
-- the folder of the file that names it (`here_dir`).
local function file_key(path, here_dir)
  local dir, base = path:match("([%w%-_]+)/([%w%-_]+)%.md$")
  if dir then return dir .. "/" .. base end
  base = path:match("^([%w%-_]+)%.md$")
  if base then return (here_dir or "chapters") .. "/" .. base end
end

local function title_id(key)
  local dir, base = key:match("^(.-)/(.*)$")
  return dir == "chapters" and base or dir .. "-" .. base
end

-- Pass 1: read the list of chapter files from the metadata.
local function read_meta(meta)
  local list = meta.chapters
  if list == nil then return end
  if list.t ~= "MetaList" and type(list) ~= "table" then list = { list } end
  for _, item in ipairs(list) do
    local key = file_key(pandoc.utils.stringify(item))
    chapter_files[#chapter_files + 1] = key
    ids[key] = title_id(key)
  end
end

-- A link's new target: a book file (with or without #section) becomes the
-- matching id; a bare #section is a section of the file the link is in.
local book_id             -- the id of book.md's title, the top of the page

local function new_target(target, here)
  local path, fragment = target:match("^([^#]-%.md)(#?.*)$")
  if path and path:match("^[%./]*book%.md$") then  -- book.md keeps pandoc's own ids
    return fragment ~= "" and fragment or book_id and "#" .. book_id
  end
  if not path then
    if target:sub(1, 1) == "#" and here then return "#" .. ids[here] .. "-" .. target:sub(2) end
    return nil
  end
  local key = file_key(path, here and here:match("^(.-)/"))
  if not key or not ids[key] then return nil end
  if fragment == "" then return "#" .. ids[key] end
  return "#" .. ids[key] .. "-" .. fragment:sub(2)
end

-- Pass 2: walk the book's blocks in order, knowing which chapter each is in:
-- give every heading its chapter's id, and point every link into the page.
local function rewrite(doc)
  local chapter, seen, here = 0, {}, nil
  local function header(h)
    if not here then return nil end
    local id = ids[here]
    if h.level > 1 then id = id .. "-" .. slug(pandoc.utils.stringify(h.content)) end
    local n = seen[id] or 0                      -- same words twice in one chapter
    seen[id] = n + 1
    if n > 0 then id = id .. "-" .. n end
    h.identifier = id
    return h
  end
  local function link(l)
    local target = new_target(l.target, here)
    if target then l.target = target; return l end
  end
  for i, block in ipairs(doc.blocks) do
    if block.t == "Header" and block.level == 1 then
      if chapter == 0 then book_id = block.identifier end
      chapter = chapter + 1
      here = chapter_files[chapter - 1]         -- chapter 1 is book.md's title
    end
    doc.blocks[i] = pandoc.walk_block(block, { Header = header, Link = link })
    if block.t == "Header" then doc.blocks[i] = header(block) or block end
  end
  return doc
end

return {
  { Meta = read_meta },
  { Pandoc = rewrite },
}
