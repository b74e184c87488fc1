-- check.lua: the static checks of the web book, run by make html.
--
--   lua5.4 tools/site/check.lua SITE_DIR FILE.md ...
--
-- The FILE.md are the pages' sources (book.md, chapters/*.md, solutions/*.md,
-- teachers.md).
-- Every source has its page, titled with its first heading; every link and
-- image of every page reaches a file of the site, and an anchor that exists
-- in it; no page links to a .md file; no page gives one id to two elements
-- (a link to it would reach only the first). One line per problem on stderr
-- and exit 1, else one line on stdout saying what was written: pages,
-- chapters, appendices, solutions and figures. (tests/site_test.mjs checks the same
-- pages in a browser.)
local site = arg[1]
local count = { chapters = 0, appendices = 0, solutions = 0 }
local problems = 0
local function say(fmt, ...)
  io.stderr:write("check-html: " .. fmt:format(...) .. "\n")
  problems = problems + 1
end
local U = dofile(((arg and arg[0] or ""):match("^(.*)/") or "tools/site") .. "/../util.lua")
local function read(path) return (U.read(path)) end

local pages = {}            -- file -> { ids = set, text }
for i = 2, #arg do
  local src = arg[i]
  local file = src == "book.md" and "index.html"
    or src == "teachers.md" and "teachers.html"
    or src:match("^chapters/(.*)%.md$") and src:match("^chapters/(.*)%.md$") .. ".html"
    or "solutions-" .. src:match("^solutions/(.*)%.md$") .. ".html"
  if src:match("^chapters/%u%-") then count.appendices = count.appendices + 1
  elseif src:match("^chapters/") then count.chapters = count.chapters + 1
  elseif src:match("^solutions/") then count.solutions = count.solutions + 1 end
  local text = read(site .. "/" .. file)
  if not text then
    say("%s: no page %s/%s", src, site, file)
  else
    local ids, twice = {}, {}
    for id in text:gmatch('%sid="([^"]+)"') do
      if ids[id] and not twice[id] then
        twice[id] = true
        say("%s: the id %s is given to more than one element", file, id)
      end
      ids[id] = true
    end
    pages[file] = { ids = ids, text = text, src = src }
    local title = (read(src) or ""):match("^#%s+([^\n]+)")
    if title and not text:find("<h1", 1, true) then say("%s: the page has no title (%s)", file, title) end
  end
end

local figures = {}
for file, page in pairs(pages) do
  local targets = {}
  for target in page.text:gmatch('%shref="([^"]*)"') do targets[#targets + 1] = target end
  for target in page.text:gmatch('%ssrc="([^"]*)"') do targets[#targets + 1] = target end
  for _, target in ipairs(targets) do
    if not target:match("^%a[%w+.-]*:") then
      local path, anchor = target:match("^([^#]*)#?(.*)$")
      local to = path == "" and file or path
      if to:match("%.md$") then
        say("%s: a link to a Markdown file, %s", file, target)
      elseif to:match("%.html$") then
        if not pages[to] then say("%s: a link to a missing page, %s", file, target)
        elseif anchor ~= "" and not pages[to].ids[anchor] then say("%s: a link to a missing anchor, %s", file, target) end
      elseif not read(site .. "/" .. to) then
        say("%s: a missing file, %s", file, target)
      elseif to:match("^figures/") then
        figures[to] = true
      end
    end
  end
end

if problems > 0 then os.exit(1) end
local nfigures = 0
for _ in pairs(figures) do nfigures = nfigures + 1 end
-- "1 chapter", "2 chapters"
local function n(k, one, many) return k .. " " .. (k == 1 and one or many) end
print(("%s: %s, %s, %s, %s"):format(n(#arg - 1, "page", "pages"), n(count.chapters, "chapter", "chapters"),
  n(count.appendices, "appendix", "appendices"), n(count.solutions, "solution page", "solution pages"),
  n(nfigures, "figure", "figures")))
