#!/usr/bin/env lua5.4
--[[ retranscribe.lua: write into the chapters what their programs print now.

Usage: lua5.4 tools/retranscribe.lua [CHAPTER.md ...]    (default: chapters/*.md)

Run from the top of the book after `make`. Every console session of the given
chapters that runs one of the book's programs (tools/sessions.lua) is run
again, and the lines the chapter shows it printing are replaced by what it
prints. Each session that changed is named on stdout (FILE:LINE and its
command), so that the prose around it can be read again: a number quoted in a
sentence is not rewritten. tests/transcripts_test.lua checks the result.
]]

local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")
local S = dofile(HERE .. "/sessions.lua")

local files = { ... }
if #files == 0 then
  for path in U.sh("ls chapters/*.md"):gmatch("[^\n]+") do files[#files + 1] = path end
end

local changed = 0
for _, path in ipairs(files) do
  local text = U.must_read(path)
  local lines = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  if lines[#lines] == "" and text:sub(-1) == "\n" then lines[#lines] = nil end
  local sessions = S.sessions(path)
  for i = #sessions, 1, -1 do                 -- from the end, so earlier line numbers hold
    local s = sessions[i]
    local got = S.run(s.command)
    if table.concat(got, "\n") ~= table.concat(s.expected, "\n") then
      for _ = s.first, s.last do table.remove(lines, s.first) end
      for k = #got, 1, -1 do table.insert(lines, s.first, got[k]) end
      print(("%s:%d: %s"):format(path, s.line, s.command))
      changed = changed + 1
    end
  end
  U.write(path, table.concat(lines, "\n") .. "\n")
end
io.stderr:write(("retranscribe: %d session%s rewritten\n"):format(changed, changed == 1 and "" or "s"))
