--[[ sessions.lua: the console sessions a chapter shows, and running them again.

    local S = dofile("tools/sessions.lua")
    S.sessions(path)  -> list of {chapter, line, command, expected = {lines}, first, last}
    S.run(command, bin, wrap) -> output lines (stdout and stderr), exited 0?, status

A ```console block is a shell session: a line that starts with "$ " is a
command, the lines after it what it prints. Only commands that run one of the
book's programs (build/bin/NAME ...) are sessions; `first` and `last` are the
line numbers of what the chapter shows it printing (last < first: nothing).
Used by tests/transcripts_test.lua (the book never lies about what its
programs print) and tools/retranscribe.lua (write what they print now).
]]

local HERE = debug.getinfo(1, "S").source:match("^@(.*)/") or "tools"
local U = dofile(HERE .. "/util.lua")
local M = {}

function M.sessions(path)
  local found, inside, current, n = {}, false, nil, 0
  for text in io.lines(path) do
    n = n + 1
    text = text:gsub("\r$", "")
    if not inside and text:match("^```console%s*$") then
      inside = true
    elseif inside and text:match("^```%s*$") then
      inside, current = false, nil
    elseif inside then
      local command = text:match("^%$ (.*)$")
      if command then
        current = nil
        if command:match("^build/bin/") then
          current = { chapter = path, line = n, command = command, expected = {}, first = n + 1, last = n }
          found[#found + 1] = current
        end
      elseif current then
        current.expected[#current.expected + 1] = text
        current.last = n
      end
    end
  end
  return found
end

-- Runs a command, build/bin replaced by `bin`, after `wrap` (valgrind, say);
-- returns its output lines (stdout and stderr), whether it exited 0, and its
-- exit status. bash with pipefail, so that in `build/bin/x | tail -4` the
-- status and the error messages are x's, not only tail's.
function M.run(command, bin, wrap)
  local script = "{ " .. (wrap or "") .. " " .. (bin or "build/bin") .. command:sub(#"build/bin" + 1) .. " ; } 2>&1"
  local out, status = U.sh("bash -o pipefail -c " .. U.q(script))
  local lines = {}
  for text in out:gmatch("[^\n]*") do lines[#lines + 1] = text end
  if lines[#lines] == "" then lines[#lines] = nil end   -- after the last newline
  return lines, status == 0, status
end

return M
