--[[ tap.lua: TAP for the Lua tests, as tests/tap.h is for the C ones.

    local HERE = arg[0]:match("^(.*)/") or "."
    local tap = dofile(HERE .. "/tap.lua")
    local ok, is, like = tap.ok, tap.is, tap.like

    tap.version()                "TAP version 13"
    tap.plan(n)                  "1..n", for a test that knows its count first
    tap.ok(pass, name, ...)      "ok N - name" or "not ok N - name", then the
                                 rest as diagnostics if it failed; returns pass
    tap.is(got, want, name)      ok(got == want), with both as diagnostics
    tap.like(got, pattern, name) ok when the string got matches the Lua pattern
    tap.skip(name, reason)       "ok N - name # SKIP reason" (no name: "ok N # SKIP reason")
    tap.diag(...)                each argument but nil, each of its lines after
                                 "# " (a second line and later: "#   ")
    tap.done()                   "1..N" (unless planned) and exit: 0 when
                                 nothing failed, else 1, closing the main chunk's
                                 to-be-closed variables (a test's cleanup)
    local ROOT, TMP, cleanup <close> = tap.scratch(HERE)
                                 the book's top (absolute), a scratch path that
                                 does not exist yet, and its remover, to hold in
                                 a to-be-closed variable of the main chunk

tap.count and tap.failed count the tests so far and the failed ones.

The TAP lines go to stdout, which prove reads. Diagnostics go to stderr, as
tap.h's do (prove shows them as they come; make grade keeps them in its log),
or, when ABH_TAP_DIAG is "stdout", to stdout, right after their "not ok" line,
so that one reading stdout alone has each failure's got and expected in order.
]]

local M = {count = 0, failed = 0}

local to_stdout = os.getenv("ABH_TAP_DIAG") == "stdout"
local planned = false

function M.diag(...)
  local out = to_stdout and io.stdout or io.stderr
  if not to_stdout then io.stdout:flush() end    -- after the "not ok" line it explains
  for i = 1, select("#", ...) do
    local line = select(i, ...)
    if line ~= nil then out:write("# ", (tostring(line):gsub("\n", "\n#   ")), "\n") end
  end
  out:flush()
end

function M.version()
  io.write("TAP version 13\n")
end

function M.plan(n)
  planned = true
  io.write("1..", n, "\n")
end

function M.ok(pass, name, ...)
  M.count = M.count + 1
  if not pass then M.failed = M.failed + 1 end
  io.write(pass and "ok " or "not ok ", M.count, " - ", name, "\n")
  if not pass then M.diag(...) end
  return pass
end

function M.is(got, want, name)
  return M.ok(got == want, name, "got:      " .. tostring(got), "expected: " .. tostring(want))
end

function M.like(got, pattern, name)
  return M.ok(type(got) == "string" and got:find(pattern) ~= nil, name,
              "got:      " .. tostring(got), "expected to match: " .. pattern)
end

function M.skip(name, reason)
  M.count = M.count + 1
  io.write("ok ", M.count, name and " - " .. name or "", " # SKIP ", reason, "\n")
end

-- The book's top, from the directory of the test (`here`), as an absolute
-- path; a scratch path under the system's temporary directory, not made;
-- and a to-be-closed value that removes it, even when the test dies.
function M.scratch(here)
  local function sh(command)
    local p = assert(io.popen(command))
    local out = p:read("a")
    p:close()
    return out
  end
  local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
  local root = sh("cd " .. q(here .. "/..") .. " && pwd"):gsub("\n$", "")
  local tmp = os.tmpname()
  os.remove(tmp)
  return root, tmp, setmetatable({}, {__close = function() sh("rm -rf -- " .. q(tmp)) end})
end

function M.done()
  if not planned then io.write("1..", M.count, "\n") end
  io.stdout:flush()
  os.exit(M.failed == 0 and 0 or 1, true)
end

return M
