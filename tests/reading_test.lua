#!/usr/bin/env lua5.4
-- The book as its reader meets it, measured by tools/stats.lua (make stats), in
-- TAP: every chapter and appendix within the targets of the reader's edition.
--     prove --norc -e '' tests/reading_test.lua
-- Chapters 1 to 9 hold at most 25% machinery among their C lines; no chapter has
-- more than 11,000 words (an appendix 14,000), a C block over 25 lines, or a block
-- without a sentence before it and a paragraph after it; chapter 0 has at most 7,000
-- words.

local HERE = arg[0]:match("^(.*)/") or "."
local ROOT = HERE .. "/.."
local tap = dofile(HERE .. "/tap.lua")
local sh = dofile(ROOT .. "/tools/util.lua").sh

local chapters = {}
for path in sh("ls " .. ROOT .. "/chapters/*.md"):gmatch("[^\n]+") do chapters[#chapters + 1] = path end

for _, path in ipairs(chapters) do
  local name = path:match("chapters/(.*)$")
  local err = sh(("lua5.4 %s/tools/stats.lua --check %s 2>&1 >/dev/null"):format(ROOT, path))
  tap.ok(err == "", "chapters/" .. name .. " is within the reader's edition's targets", (err:gsub("\n$", "")))
end

local zero = ROOT .. "/chapters/00-tensors.md"
local words = tonumber(sh("wc -w < " .. zero):match("%d+"))
tap.ok(words <= 7000, "chapters/00-tensors.md has at most 7,000 words before chapter 1 (" .. words .. ")")

tap.done()
