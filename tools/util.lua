--[[ util.lua: what the book's Lua scripts all need: whole files, the shell, a
one-line stop.

A plain module: a script loads it from its own directory, so that it works run
from anywhere, in the book or in a student handout,

    local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
    local U = dofile(HERE .. "/util.lua")

and a test from tests/ loads it as dofile(HERE .. "/../tools/util.lua").

    U.q(s)                 s as one word for the POSIX shell, in single quotes
    U.read(path)           the whole file (bytes as they are), or nil and why
    U.must_read(path)      the whole file, or die saying why
    U.first_line(path)     its first line, without the newline, or nil
    U.write(path, text)    the whole file, its directory made if need be, or die
    U.sh(command)          run by the shell: its stdout and its exit status (0: it succeeded)
    U.must(command, what)  its stdout; if it fails, die("WHAT failed")
    U.run(command)         its exit status, stdout and stderr
    U.die(fmt, ...)        "NAME: message" on stderr, one line, and exit 1
    U.regions(text, exercise)  the solution regions of Exercise N.M in a chapter's text:
                           a list of {first, last}, the bytes between the end of each
                           `// BEGIN SOLUTION Exercise N.M ...` line and its `// END` marker

die's NAME is U.name: the script's file name without .lua (handout for
tools/handout.lua); a script may set it. An exit status is the shell's: a
command killed by signal N has 128 + N.
]]

local M = {}

M.name = ((arg and arg[0] or "lua"):match("([^/]*)$"):gsub("%.lua$", ""))

function M.q(s)
  return "'" .. s:gsub("'", [['\'']]) .. "'"
end

function M.die(fmt, ...)
  io.stdout:flush()
  io.stderr:write(M.name, ": ", select("#", ...) > 0 and fmt:format(...) or fmt, "\n")
  os.exit(1)
end

function M.read(path)
  local file, err = io.open(path, "rb")
  if not file then return nil, "cannot read " .. err end
  local text, why = file:read("a")
  file:close()
  if not text then return nil, ("cannot read %s: %s"):format(path, why) end   -- a directory
  return text
end

function M.must_read(path)
  local text, why = M.read(path)
  if not text then M.die("%s", why) end
  return text
end

function M.first_line(path)
  local file = io.open(path, "r")
  if not file then return nil end
  local line = file:read("l")
  file:close()
  return line
end

-- Its directory is made (mkdir -p) only when it cannot be opened as one.
function M.write(path, text)
  local dir = path:match("^(.+)/[^/]*$")
  local there = dir and io.open(dir .. "/.")
  if there then there:close()
  elseif dir then M.sh("mkdir -p -- " .. M.q(dir) .. " 2>/dev/null") end   -- if it fails, io.open says why
  local file, err = io.open(path, "wb")
  if not file then M.die("cannot write %s", err) end
  local written, why = file:write(text)
  local closed, why_close = file:close()
  if not (written and closed) then M.die("cannot write %s: %s", path, why or why_close) end
end

local function status_of(_, how, code)
  return how == "signal" and 128 + code or code or 1
end

function M.sh(command)
  local pipe = io.popen(command)
  local out = pipe:read("a")
  return out, status_of(pipe:close())
end

function M.must(command, what)
  local out, status = M.sh(command)
  if status ~= 0 then M.die("%s failed", what or command) end
  return out
end

-- Its stderr goes through a temporary file, removed after.
function M.run(command)
  local err_path = os.tmpname()
  local out, status = M.sh("{ " .. command .. "\n} 2>" .. M.q(err_path))
  local err = M.read(err_path) or ""
  os.remove(err_path)
  return status, out, err
end

-- Read as text, not through the tangler: a chapter copy with a mistake made in it
-- need not tangle. A marker starts its line (after spaces), as the tangler wants it;
-- prose that quotes one is no region. A BEGIN without its END ends the list.
function M.regions(text, exercise)
  local found, pos = {}, 1
  local number = exercise:gsub("%.", "%%.") .. "%f[^%d]"           -- 1.6, not 1.60
  local function marker(kind, from)       -- where its line starts, where it ends
    local at, last = text:find("\n[ \t]*// " .. kind .. " SOLUTION Exercise " .. number .. "[^\n]*", from)
    return at and at + 1, last
  end
  while true do
    local _, be = marker("BEGIN", pos)
    local e = be and marker("END", be)
    if not e then return found end
    found[#found + 1] = { first = be + 2, last = e - 1 }      -- the lines between the two
    pos = e
  end
end

return M
