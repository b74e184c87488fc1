--[[ requote.lua: move quoted chapter lines along with the code they name.

Usage: lua5.4 tools/requote.lua REV [FILE.md ...]

The book quotes messages of its programs, and each message begins with the
chapter line of the die() that printed it: `selfatt_v1: chapters/00-tensors.md:1852: ...`
(tests/transcripts_test.lua checks that each still names a line that calls
die()). When an edit moves code, those numbers go stale. For every quoted
`chapters/NAME.md:N` in the given files (default: chapters/*.md and
solutions/*.md) whose line N no longer calls die(), this reads line N of
chapters/NAME.md as it was at git revision REV (one at which the quote was
right), finds that same line (the same text, spaces trimmed) in the
chapters as they are now, and rewrites the quote to its new place, which may be
another chapter (code moved to an appendix). A line found nowhere, or in more
than one place, is left alone and named on stderr; the exit status is then 1.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")

local function lines(text)
  local t = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do t[#t + 1] = line end
  return t
end

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

local function git_show(rev, path)
  local text = U.sh("git show " .. U.q(rev .. ":" .. path) .. " 2>/dev/null")
  return text ~= "" and text or nil
end

local rev = arg[1]
if not rev or rev:match("^%-") then
  io.stderr:write("usage: lua5.4 tools/requote.lua REV [FILE.md ...]\n"); os.exit(2)
end
local files = { table.unpack(arg, 2) }
if #files == 0 then
  for f in U.sh("ls chapters/*.md solutions/*.md"):gmatch("[^\n]+") do files[#files + 1] = f end
end

-- Where each trimmed line of the chapters now is: where[text] = { "chapters/x.md:N", ... }
local where = {}
for chapter in U.sh("ls chapters/*.md"):gmatch("[^\n]+") do
  for n, line in ipairs(lines(U.read(chapter))) do
    local key = trim(line)
    if key ~= "" then
      where[key] = where[key] or {}
      table.insert(where[key], ("%s:%d"):format(chapter, n))
    end
  end
end

local old, now_lines, failed = {}, {}, false
for _, file in ipairs(files) do
  local text = U.read(file)
  local changed = text:gsub("(chapters/[%w_%-]+%.md):(%d+)", function(chapter, n)
    if not now_lines[chapter] then now_lines[chapter] = lines(U.read(chapter) or "") end
    local here = now_lines[chapter][tonumber(n)]
    if here and here:find("die%(") then return nil end   -- still names a die(): leave it
    if not old[chapter] then old[chapter] = lines(git_show(rev, chapter) or "") end
    local was = old[chapter][tonumber(n)]
    local now = was and where[trim(was)]
    if now and #now == 1 then return now[1] end
    failed = true
    io.stderr:write(("%s: %s:%s: %s\n"):format(file, chapter, n,
      not was and "no such line at " .. rev or not now and "that line is nowhere now" or "that line is in more than one place now"))
    return nil
  end)
  if changed ~= text then
    U.write(file, changed)
  end
end
os.exit(failed and 1 or 0)
