#!/usr/bin/env lua5.4
-- figures_test.lua: every committed figure is made for the page (TAP, run by make test).
--
-- For each figures/*.svg: at most 960 px wide; an opaque white background drawn
-- first, so that its black text reads on a dark page; every text at least 9 px
-- when the figure is shown 800 px wide; and referenced from a chapter (not only
-- from a solution) as ![caption](../figures/NAME.svg), whose caption says what to
-- look at (at least eight words) and gives, in backquotes, the command under
-- build/bin/ that produces its numbers.
--
-- Hidden keys: tools/heatmap.gp, given a small case with its mask, must draw a
-- hidden key apart from a weight (hatched; grey and unnumbered when it holds 0)
-- and print a visible exact 0 as "0", a tiny weight as "0.00". A committed figure
-- that hatches cells says what the hatching is, numbers no grey cell, and, when
-- this build drew the same bytes, hatches as many cells as its run's mask hid
-- (build/fig/NAME.mask, written by the figure's rule).
local root = arg and arg[0]:match("^(.*)/tests/[^/]*$") or "."
local HERE = arg[0]:match("^(.*)/") or "."
local tap = dofile(HERE .. "/tap.lua")
local U = dofile(HERE .. "/../tools/util.lua")
local ok = tap.ok

-- the figures, and each chapter's captions
local figures = {}
for path in U.sh("ls " .. root .. "/figures/*.svg"):gmatch("[^\n]+") do figures[#figures + 1] = path end
local captions = {}                               -- name -> { { where, caption }, ... }
for path in U.sh("ls " .. root .. "/chapters/*.md"):gmatch("[^\n]+") do
  local n = 0
  for line in io.lines(path) do
    n = n + 1
    local caption, name = line:match("^!%[(.-)%]%(%.%./figures/([%w_%-]+)%.svg%)")
    if name then
      captions[name] = captions[name] or {}
      table.insert(captions[name], { where = path:match("chapters/.*") .. ":" .. n, caption = caption })
    end
  end
end

for _, path in ipairs(figures) do
  local name = path:match("([%w_%-]+)%.svg$")
  local svg = U.must_read(path)
  local width = tonumber(svg:match('<svg[^>]-width="(%d+)"'))
  ok(width and width <= 960, name .. ".svg is at most 960 px wide", "width " .. tostring(width))
  -- the first thing drawn: a rectangle over the whole figure, filled opaque white
  local first = svg:match('<g id="gnuplot_canvas">%s*(<[^>]*>)') or ""
  local w, fill = first:match('^<rect x="0" y="0" width="(%d+)" height="%d+" fill="([^"]+)"')
  ok(w and tonumber(w) == width and (fill == "#ffffff" or fill == "white"),
     name .. ".svg has an opaque white background", "first element: " .. first)
  local smallest = math.huge
  for size in svg:gmatch('font%-size="([%d.]+)"') do smallest = math.min(smallest, tonumber(size)) end
  local shown = smallest * math.min(1, 800 / (width or 1))
  ok(shown >= 9, name .. ".svg: its smallest text is at least 9 px when shown 800 px wide",
     string.format("smallest font %.1f px, %.1f px at 800 px", smallest, shown))
  local refs = captions[name] or {}
  ok(#refs > 0, name .. ".svg is shown in a chapter", "no ![caption](../figures/" .. name .. ".svg) in chapters/*.md")
  for _, r in ipairs(refs) do
    local words = select(2, r.caption:gsub("%S+", ""))
    ok(words >= 8 and r.caption:find("`build/bin/[^`]+`") ~= nil,
       r.where .. ": " .. name .. ".svg has a caption saying what to look at, with its command",
       "caption: " .. r.caption)
  end
end

-- The cells and the texts of a gnuplot SVG: each polygon's fill and box, each
-- text's anchor and words.
local function polygons(svg)
  local found = {}
  for fill, points in svg:gmatch("<polygon%s+fill%s*=%s*'([^']*)'%s+points%s*=%s*'([^']*)'") do
    local box = { x0 = math.huge, y0 = math.huge, x1 = -math.huge, y1 = -math.huge, fill = fill }
    for x, y in points:gmatch("([%-%d.]+),([%-%d.]+)") do
      x, y = tonumber(x), tonumber(y)
      box.x0, box.x1 = math.min(box.x0, x), math.max(box.x1, x)
      box.y0, box.y1 = math.min(box.y0, y), math.max(box.y1, y)
    end
    found[#found + 1] = box
  end
  return found
end
local function texts(svg)
  local found = {}
  for x, y, words in svg:gmatch('<g transform="translate%(([%-%d.]+),([%-%d.]+)%)"[^>]*>%s*<text>(.-)</text>') do
    words = words:gsub("<[^>]*>", "")                 -- enhanced text: in <tspan>s
    if words:find("%S") then found[#found + 1] = { x = tonumber(x), y = tonumber(y), text = words } end
  end
  return found
end
-- heatmap.gp's hidden keys: grey when they hold 0 (its hidden_grey), and hatched
local function grey(fill) return fill == "rgb(212, 212, 212)" end
local function hatch(fill) return fill:find("^url%(#gpPat") ~= nil end
local function inside(t, box) return t.x > box.x0 and t.x < box.x1 and t.y > box.y0 and t.y < box.y1 end
local function boxes(svg, filled)
  local found = {}
  for _, box in ipairs(polygons(svg)) do if filled(box.fill) then found[#found + 1] = box end end
  return found
end
local function labels_in(list, box)
  local found = {}
  for _, t in ipairs(list) do if inside(t, box) then found[#found + 1] = t.text end end
  return table.concat(found, " ")
end

-- A case drawn by tools/heatmap.gp: row 0 hides key 2 (weight 0), row 1 hides
-- nothing but holds a tiny weight and an exact 0, row 2 hides every key and still
-- has weights (a -1e20 fill's uniform row), row 3 hides every key and is NaN.
local have_gnuplot = select(2, U.sh("command -v gnuplot >/dev/null")) == 0
if not have_gnuplot then
  tap.skip("tools/heatmap.gp draws hidden keys apart from weights", "no gnuplot here")
else
  local tmp = os.tmpname()
  U.write(tmp .. ".dat", "0.7 0.3 0\n0.999999 1e-06 0\n0.5 0.25 0.25\nnan nan nan\n")
  U.write(tmp .. ".mask", "1 1 0\n1 1 1\n0 0 0\n0 0 0\n")
  local status, _, err = U.run(("gnuplot -e \"data='%s.dat'; mask='%s.mask'; out='%s.svg'; heading='case'\" %s/tools/heatmap.gp")
                               :format(tmp, tmp, tmp, root))
  local svg = U.read(tmp .. ".svg") or ""
  for _, suffix in ipairs({ "", ".dat", ".mask", ".svg" }) do os.remove(tmp .. suffix) end
  ok(status == 0, "tools/heatmap.gp draws a case with a mask", err)
  local words, at = texts(svg), {}
  for _, t in ipairs(words) do at[t.text] = at[t.text] or t end
  local greys, hatched = boxes(svg, grey), boxes(svg, hatch)
  -- the cell of row 0 ("0.70"), key 2 (the column of row 1's exact "0")
  local hidden_zero = at["0.70"] and at["0"] and { x = at["0"].x, y = at["0.70"].y }
  local grey_there = 0
  for _, box in ipairs(greys) do if hidden_zero and inside(hidden_zero, box) then grey_there = grey_there + 1 end end
  ok(#greys == 2 and grey_there == 1, "heatmap.gp: a hidden key holding 0 is grey (and so is the legend's swatch), no other cell",
     ("%d grey boxes, %d on row 0, key 2"):format(#greys, grey_there))
  ok(#hatched == 8, "heatmap.gp: each of the 7 hidden keys is hatched, and the legend's swatch", ("%d hatched boxes"):format(#hatched))
  local numbered = {}
  for _, box in ipairs(greys) do if labels_in(words, box) ~= "" then numbered[#numbered + 1] = labels_in(words, box) end end
  ok(#numbered == 0, "heatmap.gp: no grey cell is numbered", "numbers on grey: " .. table.concat(numbered, ", "))
  local said, in_hatch = {}, {}
  for _, box in ipairs(hatched) do
    for word in labels_in(words, box):gmatch("%S+") do said[#said + 1] = word; in_hatch[word] = (in_hatch[word] or 0) + 1 end
  end
  said = table.concat(said, " ")
  ok(in_hatch["NaN"] == 3 and in_hatch["0.50"] == 1 and in_hatch["0.25"] == 2,
     "heatmap.gp: a row with every key hidden keeps its numbers (0.50, 0.25, 0.25; NaN), hatched", "hatched cells say: " .. said)
  ok(at["0"] and at["0.00"] and not in_hatch["0"] and not in_hatch["0.00"],
     "heatmap.gp: a visible exact 0 prints as 0 and a tiny weight as 0.00, neither hatched", "hatched cells say: " .. said)
  ok(at["hidden"] ~= nil, "heatmap.gp: a legend says what the hatched cells are", "no text 'hidden'")
end

-- Every committed figure that hatches cells: a legend, no number on grey, and as
-- many hatched cells as the mask its rule read (when this build drew the same bytes).
for _, path in ipairs(figures) do
  local name = path:match("([%w_%-]+)%.svg$")
  local svg = U.must_read(path)
  local hatched = boxes(svg, hatch)
  local mask = U.read(root .. "/build/fig/" .. name .. ".mask")
  if #hatched > 0 then
    local words = texts(svg)
    local legend = false
    for _, t in ipairs(words) do legend = legend or t.text == "hidden" end
    ok(legend, name .. ".svg says what its hatched cells are", "no text 'hidden'")
    local numbered = 0
    for _, box in ipairs(boxes(svg, grey)) do if labels_in(words, box) ~= "" then numbered = numbered + 1 end end
    ok(numbered == 0, name .. ".svg numbers no grey (hidden, 0) cell", numbered .. " grey cells numbered")
  end
  if mask and U.read(root .. "/build/figures/" .. name .. ".svg") == svg then
    local hidden = 0
    for line in mask:gmatch("[^\n]+") do
      for v in line:gmatch("%S+") do if tonumber(v) == 0 then hidden = hidden + 1 end end
    end
    ok(#hatched == (hidden > 0 and hidden + 1 or 0),
       name .. ".svg hatches every key its run hid (build/fig/" .. name .. ".mask), and its legend's swatch",
       ("%d hidden in the mask, %d hatched boxes"):format(hidden, #hatched))
  end
end
tap.done()
