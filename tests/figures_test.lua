#!/usr/bin/env lua5.4
-- figures_test.lua: every committed figure is made for the page (TAP, run by make test).
--
-- For each figures/*.svg: at most 960 px wide; an opaque white background drawn
-- first, so that its black text reads on a dark page; every text at least 9 px
-- when the figure is shown 800 px wide; and referenced from a chapter (not only
-- from a solution) as ![caption](../figures/NAME.svg), whose caption says what to
-- look at (at least eight words) and gives, in backquotes, the command under
-- build/bin/ that produces its numbers.
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
tap.done()
