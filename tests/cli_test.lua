#!/usr/bin/env lua5.4
-- cli_test.lua: what every program's --help says is true.
--
-- For every program in $ABH_BIN (build/bin): --help and -h print the usage and
-- exit 0, and then every flag the usage lists is tried, with a value of the
-- right kind: the program must take it (exit 0), not refuse it. A program that
-- only times things (a benchmark) is asked `FLAG VALUE --help` instead, which
-- the parser reads in order, so that a refused flag still shows. Then the
-- rules of the shared parser (Appendix A), on every program that lists the flags involved:
-- --flag=value is --flag value; a flag given twice is refused; with --load, a
-- program with heads refuses to guess --heads (and --kv-heads); a --dump
-- directory that cannot be made is refused before anything is printed.
-- $ABH_WRAP, if set, goes before every program (make test-valgrind).
--
--   lua5.4 tests/cli_test.lua          (TAP on stdout; run from the top of the book)

local HERE = arg[0]:match("^(.*)/") or "."
local tap = dofile(HERE .. "/tap.lua")
local U = dofile(HERE .. "/../tools/util.lua")
local ok, skip = tap.ok, tap.skip

local bin = os.getenv("ABH_BIN") or "build/bin"
local wrap = os.getenv("ABH_WRAP") or ""

-- The benchmarks (a program that only times things) and the programs that train
-- (chapter 12's induction), as make names them: BENCHES and TRAINERS, exported as
-- ABH_BENCHES and ABH_TRAINERS. Run by hand without them, a benchmark is a program
-- of $ABH_BIN whose name ends in _bench, and a trainer one whose --help lists --steps.
-- A trainer is given --steps 2 in every run that does not set --steps itself, so
-- that each flag is tried in a moment, not a training run (--steps 0 beside
-- --ablate, which silences a head of a model it does not train).
local BENCHES, TRAINERS = os.getenv("ABH_BENCHES"), os.getenv("ABH_TRAINERS")
local benches, trainers = {}, {}
for name in (BENCHES or ""):gmatch("%S+") do benches[name] = true end
for name in (TRAINERS or ""):gmatch("%S+") do trainers[name] = true end

-- Runs program name with args (a list); returns exit status, stdout, stderr.
local function run(name, args)
  if trainers[name] then
    local given = {}
    for _, a in ipairs(args) do given[a] = true end
    if not (given["--steps"] or given["--help"] or given["-h"]) then
      args = { table.unpack(args) }
      args[#args + 1], args[#args + 2] = "--steps", given["--ablate"] and "0" or "2"   -- a head is silenced untrained
    end
  end
  local words = {}
  for i, a in ipairs(args) do words[i] = U.q(a) end
  return U.run(string.format("%s %s/%s %s", wrap, bin, name, table.concat(words, " ")))
end
local tmp = U.must("mktemp -d /tmp/abh-cli-XXXXXX"):gsub("\n$", "")

tap.version()

-- A refusal: exit 1..127 but not 3 (a stub), nothing on stdout, one line on stderr holding part.
local function refused(status, out, err, part)
  local lines = select(2, err:gsub("\n", ""))
  return status >= 1 and status <= 127 and status ~= 3 and out == "" and lines == 1 and err:find(part, 1, true) ~= nil
end

-- The exercise whose stub stopped a run, in a student handout (exit status 3).
local function stub(status, err)
  return status == 3 and err:match("not implemented yet: (Exercise [%d.]*%d)")
end

-- The flags a usage lists ("  --seq T   ..."), in order, with their value's name, and
-- the defaults it ends with ("defaults: --batch 3 --seq 2 ...").
-- and the examples it lists under "examples:" ("  same-word   ...").
local function read_usage(text)
  local flags, defaults, examples, in_examples = {}, {}, {}, false
  for line in text:gmatch("[^\n]+") do
    local flag, value = line:match("^  (%-%-[%w-]+) ?(%u*)")
    if flag then flags[#flags + 1] = { name = flag, value = value ~= "" and value or nil } end
    if line:match("^%S") then in_examples = line == "examples:" end
    local example = in_examples and line:match("^  ([%w-]+)%s")
    if example then examples[#examples + 1] = example end
    local list = line:match("^defaults: (.*)")
    if list then for f, v in list:gmatch("(%-%-[%w-]+) (%S+)") do defaults[f] = v end end
  end
  return flags, defaults, examples
end

local programs = {}
for name in U.sh("ls " .. U.q(bin)):gmatch("[^\n]+") do
  programs[#programs + 1] = name
  if not BENCHES and name:match("_bench$") then benches[name] = true end
end
table.sort(programs)

local blocked = tmp .. "/a-file"
io.open(blocked, "w"):close()

for _, name in ipairs(programs) do
  local status, usage, err = run(name, { "--help" })
  if not ok(status == 0 and usage:match("^usage: " .. name:gsub("%p", "%%%0")) and err == "",
            name .. " --help prints its usage and exits 0", "exit " .. status, err) then goto next end
  local s2, usage2 = run(name, { "-h" })
  ok(s2 == 0 and usage2 == usage, name .. " -h is --help")

  local flags, defaults, examples = read_usage(usage)
  ok(not usage:find("\ndefaults:%s*\n") and not usage:find("\ndefaults:%s*$"),
     name .. " --help: a defaults line, if any, names the values it would use")
  local lists = {}
  for _, f in ipairs(flags) do lists[f.name] = f end
  if not TRAINERS and lists["--steps"] then trainers[name] = true end
  local case = tmp .. "/" .. name .. "-case"
  local values = { ["--batch"] = "2", ["--seq"] = "3", ["--dim"] = "8", ["--heads"] = "2", ["--kv-heads"] = "1",
                   ["--kv-seq"] = "4", ["--seed"] = "7", ["--dropout"] = "0.2", ["--load"] = case,
                   ["--dump"] = tmp .. "/" .. name .. "-dump", ["--ablate"] = "0.0", ["--steps"] = "2" }
  -- --load reads a case the program dumped itself, with the --heads it was made with
  if lists["--load"] then
    local s, _, e = run(name, { "--quiet", "--dump", case })
    if stub(s, e) then
      skip(name .. ": every flag its --help lists", "needs " .. stub(s, e) .. ", not implemented yet")
      goto next
    end
  end
  -- every example listed runs, and is refused beside a flag that would change its numbers
  for _, example in ipairs(examples) do
    local s, _, e = run(name, { "--example", example, "--quiet", "--dump", tmp .. "/" .. name .. "-" .. example })
    local what = name .. " --example " .. example .. ": an example its --help lists runs"
    if stub(s, e) then skip(what, "needs " .. stub(s, e) .. ", not implemented yet")
    else ok(s == 0 and e == "", what, "exit " .. s, e) end
    s, _, e = run(name, { "--example", example, "--seed", "7" })
    ok(refused(s, "", e, "leave out --seed"), name .. " --example " .. example .. " --seed 7: refused", e)
  end
  if lists["--example"] then
    ok(#examples > 0, name .. " --help: --example comes with a list of examples")
    local s, out, e = run(name, { "--example", "no-such-case" })
    ok(refused(s, out, e, "no such example"), name .. " --example no-such-case: refused, naming --help", e)
  end
  for _, f in ipairs(flags) do
    if f.name ~= "--help" and f.name ~= "--example" then
      local args = {}
      if f.name == "--dropout" then args[#args + 1] = "--train" end
      args[#args + 1] = f.name
      if f.value then
        args[#args + 1] = values[f.name] or "1"
      end
      if f.name == "--load" then
        for _, g in ipairs({ "--heads", "--kv-heads" }) do
          if lists[g] then args[#args + 1] = g; args[#args + 1] = defaults[g] or "1" end   -- 1 divides any D
        end
      end
      if benches[name] then args[#args + 1] = "--help"
      elseif lists["--quiet"] and f.name ~= "--quiet" then args[#args + 1] = "--quiet" end
      local s, out, e = run(name, args)
      local what = string.format("%s %s: a flag its --help lists is taken", name, table.concat(args, " "))
      if stub(s, e) then skip(what, "needs " .. stub(s, e) .. ", not implemented yet")
      else ok(s == 0 and e == "", what, "exit " .. s, e) end
    end
  end

  -- the parser's rules, on the flags this program lists
  if lists["--quiet"] then
    local s, out, e = run(name, { "--quiet", "--quiet" })
    ok(refused(s, out, e, "--quiet is given twice"), name .. " --quiet --quiet: a flag given twice is refused", e)
  end
  if lists["--seq"] and not benches[name] then
    local s, out, e = run(name, { "--seq=3", "--quiet" })
    ok(s == 0 or stub(s, e), name .. " --seq=3: --flag=value is read as --flag value", "exit " .. s, e)
    s, out, e = run(name, { "--seq", "3", "--seq", "4" })
    ok(refused(s, out, e, "--seq is given twice"), name .. " --seq 3 --seq 4 is refused", e)
  end
  if lists["--load"] and lists["--heads"] then
    local s, out, e = run(name, { "--load", case })
    ok(refused(s, out, e, "--load needs --heads"), name .. " --load without --heads is refused: the files do not hold H", e)
    if lists["--kv-heads"] then
      s, out, e = run(name, { "--load", case, "--heads", defaults["--heads"] })
      ok(refused(s, out, e, "--load needs --kv-heads"), name .. " --load without --kv-heads is refused", e)
    end
  end
  if lists["--dump"] then
    local s, out, e = run(name, { "--dump", blocked .. "/sub" })
    ok(refused(s, out, e, "a-file is not a directory") or refused(s, out, e, "Not a directory"),
       name .. " --dump under a file is refused before anything is printed", "exit " .. s, "stdout: " .. out, e)
  end
  ::next::
end

os.execute("rm -rf " .. U.q(tmp))
tap.done()
