-- onepage.lua: the web book as one page, for printing (make pdf).
--
--   lua5.4 tools/site/onepage.lua SITE_DIR PAGE.html ... > book.html
--
-- Reads the site's pages in the order given (the front page, the chapters, the
-- appendices, the solutions) and writes one HTML page holding the text of each,
-- as the site drew it: chunks named and linked, formulas as MathML, figures with
-- their captions. Every id of page P becomes P--id, so that the pages' ids stay
-- apart, and every link between pages becomes a link within this one: P.html#x
-- to #P--x, P.html to the top of P, #x to #P--x. Each page starts a new sheet
-- (the stylesheet's print rules). A link to a page not given stays as it was.
local site = arg[1]
local pages, names = {}, {}
for i = 2, #arg do
  pages[#pages + 1] = arg[i]
  names[arg[i]] = arg[i]:gsub("%.html$", "")
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

-- the page's own text: what its <main> holds, without the previous/next links
local function body(text)
  local main = text:match("<main>(.*)</main>") or error("no <main> in a page of the site")
  return (main:gsub('<nav class="prev%-next".-</nav>', ""))
end

local function retarget(href, here)
  if href:match("^%a[%w+.-]*:") then return href end              -- http:, mailto:
  local page, anchor = href:match("^([^#]*)#?(.*)$")
  if page == "" then return "#" .. here .. "--" .. anchor end
  local name = names[page]
  if not name then return href end                                  -- a figure, or a page not here
  return "#" .. name .. "--" .. anchor
end

local head = read(site .. "/" .. pages[1]):match("^(.-<body[^>]*>)")
  :gsub("<title>.-</title>", "<title>Attention by Hand</title>")
  :gsub('<body[^>]*>', '<body class="onepage">')
io.write(head, "\n<main>\n")
for _, file in ipairs(pages) do
  local here = names[file]
  local text = body(read(site .. "/" .. file))
  text = text:gsub('(%sid=")([^"]*)(")', function(a, id, b) return a .. here .. "--" .. id .. b end)
  text = text:gsub('(%shref=")([^"]*)(")', function(a, href, b) return a .. retarget(href, here) .. b end)
  io.write('<section class="page" id="', here, '--">\n', text, "\n</section>\n")
end
io.write("</main>\n</body>\n</html>\n")
