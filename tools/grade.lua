--[[ grade.lua: run the book's TAP tests and grade them by chapter and exercise.

Usage
-----
    lua5.4 tools/grade.lua [--format text|json|tsv|gradescope] [--log FILE]
                           [--chapters "N ..." [--own] | --assigned "N ..."]
                           [--notes FILE] [--hidden-visibility V] TEST ...
    lua5.4 tools/grade.lua --format json|gradescope [--notes FILE] --build-failed LOG

`make grade` runs it with every test of the suite (build/tests/NAME, the
script tests, and the teacher's hidden tests when there are some). Each TEST
is run as prove runs it (an executable, with $ABH_BIN and $ABH_WRAP as make
exports them), and its TAP output is read:

- a test whose name starts "Exercise N.M: " counts for that exercise, in
  chapter N (EXERCISE in tests/tap.h names them so);
- any other test counts for the chapter of the program its file tests: the
  chapter that build/src/NAME.c was tangled from (its first line says), the
  tensor helper's for `tensor` and `fuzz`; the rest (stress, the tangler,
  the transcripts, PyTorch) count for the whole book.

A file that crashes, or ends before its plan, counts as one failed test.
Skipped tests (no PyTorch here, or an exercise not done yet that the test
needs) are neither passed nor failed; each line says how many.

The tests' stderr (their diagnostics: "# Failed test ...", what a program
printed) never reaches the report: with --log FILE it is kept there, one
section per test file, and the report names FILE when a test failed.

--chapters "5" (make grade CHAPTERS="5") grades those chapters alone: only
their lines, their total, and the exit status is theirs. One more line says
how the tests of other chapters (and of the whole book) that run those
chapters' exercise code fared: a mistake in chapter 5 can fail chapter 7's
tests too (tools/deps.lua finds which, from build/src and the tests'
sources). With --own (make grade RELATED=0) only the chapters' own tests
run, not those elsewhere. --assigned "5" (make grade in a student handout)
prints the full report, then the total of those chapters alone on a line of
its own.

A teacher's hidden test (build/tests/teacher/NAME) is counted apart as well:
the text report adds a line "of which public tests ..., hidden tests ...",
the JSON report "public" and "hidden". --notes FILE adds FILE's text to the
report (make grade-submission says there what it took from a submission).

Output: one line per chapter (all its tests) and per exercise (its own),
"passed/total", a total, and
the names of the tests that failed (text); or the same as one JSON object
(json), described at the end of this file; or one line per test, "result
file exercise description" separated by tabs (tsv: the description is the
test's name, and for a skipped test the reason it was skipped; a file
skipped whole is one line, "skip FILE - the whole file: REASON"); or
Gradescope's results.json (gradescope: a point per test that ran, described
at the end of this file). The exit status is 0 when no test failed (of the
chapters graded), 1 otherwise, 2 on a usage error; with --exercises (make
grade EX=5.6, a course platform's check of one exercise) also 1 when none of
its tests ran. --build-failed LOG writes the report of a build that failed
(json or gradescope: score 0 and the compiler's message, read from LOG) and
exits with 1.
]]

local USAGE = 'usage: lua5.4 tools/grade.lua [--format text|json|tsv] [--log FILE] [--chapters "N ..." | --assigned "N ..."] TEST ...\n'
local SHOW_FAILED = 3      -- failed test names listed per line of the text report
local HERE = arg and arg[0] and arg[0]:match("^(.*)/") or "tools"
local deps = dofile(HERE .. "/deps.lua")
local U = dofile(HERE .. "/util.lua")
local q, first_line = U.q, U.first_line
local function read_all(path) return (U.read(path)) end

-- The lines of `text`, without their newlines (none for "").
local function lines_of(text)
  local lines = {}
  for line in (text:sub(-1) == "\n" and text or text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  if text == "" then lines = {} end
  return lines
end

------------------------------------------------------------------------------
-- Running a test and reading its TAP
------------------------------------------------------------------------------


-- Where make check and make grade keep a test's run (see `results` below):
-- build/tests/NAME is "NAME", build/tests/teacher/NAME "teacher/NAME" (any
-- MODE's build), a script keeps its path ("tests/cli_test.lua").
local function key_of(path)
  if path:match("^tests/") then return path end
  return path:match("^.-/tests/(.+)$") or path
end

-- With --tap DIR the tests are not run here: make has run each one (the
-- Makefile's $(TAP)/KEY.tap rules, two or more at once) and left DIR/KEY.tap
-- (its stdout, each failure's diagnostics after it), KEY.err and KEY.status.
local results


-- Run the test at `path` (or read its run from `results`); its TAP (stdout)
-- as lines and its exit status. Its stderr goes to a temporary file, whose
-- text is appended to `log` (an open file, or nil) under a line naming the test.
local function run(path, log)
  local lines, status, err = {}, nil, ""
  if results then
    local base = results .. "/" .. key_of(path)
    local tap = read_all(base .. ".tap")
    if not tap then
      io.stderr:write("grade: ", path, " was not run (no ", base, ".tap): run it through make check or make grade\n")
      os.exit(2)
    end
    for line in tap:gmatch("[^\n]+") do lines[#lines + 1] = line end
    status = tonumber((read_all(base .. ".status") or ""):match("%d+")) or 1
    err = read_all(base .. ".err") or ""
  else
    local err_path = os.tmpname()
    local pipe = io.popen(q(path) .. " 2>" .. q(err_path))
    for line in pipe:lines() do lines[#lines + 1] = line end
    local _
    _, _, status = pipe:close()
    err = read_all(err_path) or ""
    os.remove(err_path)
  end
  if log and err ~= "" then
    log:write(("== %s (exit status %s): its stderr\n"):format(path, tostring(status or 1)), err,
              err:sub(-1) == "\n" and "" or "\n")
  end
  return lines, status or 1
end

-- The tests in `lines`, each {name, result = "pass" | "fail" | "skip"},
-- and the file's verdict: nil if it is sound, else why it is not.
local function read_tap(lines, status)
  local tests, planned, skipped_file = {}, nil, nil
  for _, line in ipairs(lines) do
    local negated, rest = line:match("^(n?o?t? ?)ok %d+(.*)$")
    local last = tests[#tests]
    if line:match("^#") and last and last.result == "fail" then
      -- a failure's diagnostics (got, expected), when the test wrote them to stdout
      last.diag = last.diag or {}
      last.diag[#last.diag + 1] = line
    elseif negated then
      local name, directive, reason = rest:match("^%s*%-?%s*(.-)%s*#%s*(%a+)%s*(.-)%s*$")
      if not name then name = rest:match("^%s*%-?%s*(.-)%s*$") end
      local result = negated == "" and "pass" or "fail"
      if directive and directive:upper() == "SKIP" then result = "skip" else reason = nil end
      name = name:gsub("\\#", "#")
      tests[#tests + 1] = {name = name, result = result, reason = reason ~= "" and reason or nil}
    else
      local n, reason = line:match("^1%.%.(%d+)%s*#?%s*(.*)$")
      if n then
        planned = tonumber(n)
        if planned == 0 then skipped_file = reason ~= "" and reason or "skipped" end
      end
    end
  end
  local broken
  if not planned then broken = "no plan: it ended early (exit status " .. status .. ")"
  elseif planned ~= #tests and not skipped_file then broken = ("planned %d tests, ran %d"):format(planned, #tests)
  elseif status ~= 0 then
    local failed = 0
    for _, t in ipairs(tests) do failed = failed + (t.result == "fail" and 1 or 0) end
    if failed == 0 then broken = "exit status " .. status .. " with no failed test" end
  end
  return tests, broken, skipped_file
end

------------------------------------------------------------------------------
-- Where a test counts
------------------------------------------------------------------------------



-- The chapter a tangled source belongs to ("chapters/05-mha.md"), or nil: the
-- last of the chapters its first line says it came from (they are in book
-- order, and a program borrows chunks from earlier chapters, not later ones).
local function chapter_of_source(path)
  return deps.home_chapter(first_line(path))
end

-- The chapter (file path) the tests of the test at `path` count for, or nil
-- for the whole book. build/tests/NAME or build/tests/teacher/NAME tests the
-- program build/src/NAME.c (or the header build/src/NAME.h a chapter tangles
-- for its tests), or NAME less its last _words (mha_fast_core tests mha_fast);
-- tensor and fuzz test the tensor helper.
local function chapter_of_test(path, src)
  local name = path:match("([^/]+)$")
  if name == "tensor" or name == "fuzz" then name = "tensor" end
  while name do
    for _, ext in ipairs({".c", ".h"}) do
      if read_all(src .. "/" .. name .. ext) then return chapter_of_source(src .. "/" .. name .. ext) end
    end
    name = name:match("^(.+)_[^_]+$")
  end
end

-- The title of a chapter: its first heading, without the "#" and number.
local function title_of(chapter)
  local line = first_line(chapter) or ""
  return line:match("^#%s*%d+%.%s*(.-)%s*$") or line:match("^#%s*(.-)%s*$") or chapter
end

-- The file of chapter `number` ("chapters/05-mha.md"), or nil.
local function chapter_file(number)
  local ls = io.popen(("ls chapters/%02d-*.md 2>/dev/null"):format(number))
  local found = ls:read("l")
  ls:close()
  return found
end

-- The programs of the tangled sources in `src` (tools/deps.lua).
local function programs_in(src)
  local sources = {}
  local ls = io.popen("ls " .. q(src) .. "/*.c " .. q(src) .. "/*.h 2>/dev/null")
  for path in ls:lines() do
    sources[#sources + 1] = {path = "src/" .. path:match("([^/]+)$"), text = read_all(path) or ""}
  end
  ls:close()
  return deps.programs(sources)
end

-- The C source of the test at `path` and its text: build/tests/NAME is
-- tests/test_NAME.c, build/tests/teacher/NAME is $ABH_TEACHER_TESTS/test_NAME.c;
-- nil for a script.
local function test_source(path)
  local dir, name = path:match("^(.-)/?([^/]+)$")
  local source
  if dir:match("/teacher$") then source = (os.getenv("ABH_TEACHER_TESTS") or "tests/teacher") .. "/test_" .. name .. ".c"
  elseif dir:match("tests$") and not name:find(".", 1, true) and not path:match("^tests/") then
    source = "tests/test_" .. name .. ".c"
  end
  return source, source and read_all(source)
end

-- The dependency file gcc wrote when it compiled the test at `path` (the
-- Makefile's -MMD, in $ABH_DEP), or nil: a test not compiled yet, or a script.
local function test_depfile(path)
  local dir = os.getenv("ABH_DEP")
  return dir and read_all(dir .. "/obj-tests-" .. key_of(path):gsub("/", "-") .. ".o.d")
end

-- The exercises whose code each test file runs: {path -> set}, read from
-- the tangled sources and the tests' sources (tools/deps.lua); a script
-- runs every program when it (or a file it names) reads $ABH_BIN, and none
-- otherwise.
local function code_run_by(paths, programs)
  local runs = {}
  for _, path in ipairs(paths) do
    local source, text = test_source(path)
    if text then
      runs[path] = deps.test_exercises(programs, text, test_depfile(path))
    elseif not source and deps.script_runs_programs(path, read_all) then
      runs[path] = deps.test_exercises(programs, nil)
    else
      runs[path] = {}
    end
  end
  return runs
end

-- The exercises a test file holds tests of: EXERCISE("N.M", ...) in its C source.
local function exercises_tested_in(path)
  local _, text = test_source(path)
  local found = {}
  for exercise in (text or ""):gmatch('EXERCISE%("(%d+%.%d+)"') do found[exercise] = true end
  return found
end

------------------------------------------------------------------------------
-- Tallies
------------------------------------------------------------------------------

-- failures: "FILE: name" of each failed test; failed_tests: the tests themselves
-- ({name, diag = {"# ...", ...}}, with `path`), for the details make check shows.
local function tally() return {passed = 0, failed = 0, skipped = 0, failures = {}, failed_tests = {}} end

local function count(t, test, where)
  if test.result == "pass" then t.passed = t.passed + 1
  elseif test.result == "skip" then t.skipped = t.skipped + 1
  else
    t.failed = t.failed + 1
    t.failures[#t.failures + 1] = where .. ": " .. test.name
    t.failed_tests[#t.failed_tests + 1] = test
    test.path = where
  end
end

local function add(into, t)
  into.passed, into.failed, into.skipped = into.passed + t.passed, into.failed + t.failed, into.skipped + t.skipped
  table.move(t.failures, 1, #t.failures, #into.failures + 1, into.failures)
  table.move(t.failed_tests, 1, #t.failed_tests, #into.failed_tests + 1, into.failed_tests)
end

-- Grade the tests at `paths`: {chapters = {number -> {file, title, tally,
-- exercises = {"N.M" -> tally}}}, book = tally, total = tally, files =
-- {{path, tests, broken, skipped, list = {test, ...}}}}; every test also
-- gets `chapter`, the number of the chapter it counts for (nil: the book).
local function grade(paths, src, log)
  local report = {chapters = {}, book = tally(), total = tally(), files = {}}
  local function chapter(number, file)
    local c = report.chapters[number]
    if not c then
      c = {number = number, file = file, tally = tally(), exercises = {}}
      report.chapters[number] = c
    end
    c.file = c.file or file
    return c
  end
  for _, path in ipairs(paths) do
    local lines, status = run(path, log)
    local tests, broken, skipped_file = read_tap(lines, status)
    local home = chapter_of_test(path, src)
    local home_number = home and tonumber(home:match("(%d+)%-"))
    local home_tally = home and chapter(home_number, home).tally or report.book
    if broken then tests[#tests + 1] = {name = "the file itself: " .. broken, result = "fail"} end
    report.files[#report.files + 1] = {path = path, tests = #tests, broken = broken, skipped = skipped_file, list = tests,
                                       chapter = home_number}
    for _, test in ipairs(tests) do
      local exercise = test.name:match("^Exercise (%d+%.%d+): ")
      local t = home_tally
      test.chapter, test.file, test.hidden = home_number, path, key_of(path):match("^teacher/") ~= nil
      if exercise then
        local c = chapter(tonumber(exercise:match("^(%d+)")))
        c.exercises[exercise] = c.exercises[exercise] or tally()
        t = c.exercises[exercise]
        test.chapter = c.number
        count(c.tally, test, path)
      end
      count(t, test, path)
      count(report.total, test, path)
    end
    if skipped_file then
      report.book.skipped_files = (report.book.skipped_files or 0) + 1
    end
  end
  for number, c in pairs(report.chapters) do
    c.file = c.file or chapter_file(number)
    c.title = c.file and title_of(c.file) or ("chapter " .. number)
  end
  return report
end

-- The selection of chapters `numbers` ({n, ...}) in `report`: their total,
-- and the tests of other chapters and of the whole book that run their
-- exercises' code (`runs`, from code_run_by): {numbers, total = tally,
-- related = tally, related_chapters = {n, ...}, related_book = bool}.
local function selection_of(report, numbers, runs)
  local chosen = {}
  for _, n in ipairs(numbers) do chosen[n] = true end
  local selection = {numbers = numbers, total = tally(), related = tally(), related_chapters = {}, related_book = false}
  for _, n in ipairs(numbers) do
    local c = report.chapters[n]
    if c then add(selection.total, c.tally) end
  end
  local related_chapters = {}
  for _, f in ipairs(report.files) do
    local runs_ours = false
    for exercise in pairs(runs[f.path] or {}) do
      if chosen[tonumber(exercise:match("^(%d+)"))] then runs_ours = true end
    end
    if runs_ours then
      for _, test in ipairs(f.list) do
        if not chosen[test.chapter] then
          count(selection.related, test, f.path)
          if test.chapter then related_chapters[test.chapter] = true else selection.related_book = true end
        end
      end
    end
  end
  selection.related_chapters = deps.set_list(related_chapters)
  return selection
end

------------------------------------------------------------------------------
-- Reports
------------------------------------------------------------------------------

local function sorted_keys(t, less)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, less)
  return keys
end

local exercise_less = deps.exercise_less

local function score(t)
  local total = t.passed + t.failed
  local s = ("%d/%d"):format(t.passed, total)
  if t.skipped > 0 then s = s .. (", %d skipped"):format(t.skipped) end
  return s
end

-- "a", "a and b", "a, b and c".
local function and_list(items)
  if #items <= 1 then return items[1] or "" end
  return table.concat(items, ", ", 1, #items - 1) .. " and " .. items[#items]
end

-- "chapter 5", "chapters 5 and 6".
local function chapters_named(numbers)
  local names = {}
  for _, n in ipairs(numbers) do names[#names + 1] = tostring(n) end
  return ("chapter%s %s"):format(#names > 1 and "s" or "", and_list(names))
end

-- One line per test: result (pass, fail, skip), file, exercise ("-" for
-- none) and description (the name; a skipped test's reason after it, or in
-- its place when it has none), separated by tabs; only the tests of the
-- chapters in `chosen` when it is given.
local function tsv_report(report, chosen)
  local out = {}
  local function line(result, path, exercise, description)
    out[#out + 1] = table.concat({result, path, exercise, (description:gsub("[\t\n]", " "))}, "\t")
  end
  for _, f in ipairs(report.files) do
    if f.skipped and (not chosen or chosen[f.chapter]) then line("skip", f.path, "-", "the whole file: " .. f.skipped) end
    for _, test in ipairs(f.list) do
      if not chosen or chosen[test.chapter] then
        local description = test.name
        if test.reason then description = description == "" and test.reason or ("%s (skipped: %s)"):format(description, test.reason) end
        if description == "" then description = "(no description)" end
        line(test.result, f.path, test.name:match("^Exercise (%d+%.%d+): ") or "-", description)
      end
    end
  end
  return #out > 0 and table.concat(out, "\n") .. "\n" or ""
end

local function text_report(report, selection, assigned, log_path)
  local out = {}
  local width = 54
  for _, c in pairs(report.chapters) do
    width = math.max(width, #("  chapter %d  %s"):format(c.number, c.title:match("^(.-):") or c.title))
  end
  local function line(label, t, indent)
    out[#out + 1] = ("%-" .. width .. "s %9s"):format(indent .. label, score(t))
    for i, failure in ipairs(t.failures) do
      if i > SHOW_FAILED then
        out[#out + 1] = ("%s    ... and %d more"):format(indent, #t.failures - SHOW_FAILED)
        break
      end
      out[#out + 1] = ("%s    not ok: %s"):format(indent, failure)
    end
  end
  local chosen
  if selection then
    chosen = {}
    for _, n in ipairs(selection.numbers) do chosen[n] = true end
    out[#out + 1] = ("Grade of %s alone (passed/total; a chapter's line counts its exercises' tests too):")
      :format(chapters_named(selection.numbers))
  else
    out[#out + 1] = "Grade, by chapter and exercise (passed/total; a chapter's line counts its exercises' tests too):"
  end
  local numbers = selection and selection.numbers or sorted_keys(report.chapters)
  for _, number in ipairs(numbers) do
    local c = report.chapters[number] or {number = number, title = title_of(chapter_file(number) or ""), tally = tally(), exercises = {}}
    -- the chapter's line counts all its tests; it lists the failures that
    -- are not listed under one of its exercises
    local own, in_exercise = {}, {}
    for k, v in pairs(c.tally) do own[k] = v end
    own.failures = {}
    for _, t in pairs(c.exercises) do
      for _, f in ipairs(t.failures) do in_exercise[f] = true end
    end
    for _, f in ipairs(c.tally.failures) do
      if not in_exercise[f] then own.failures[#own.failures + 1] = f end
    end
    line(("chapter %d  %s"):format(number, c.title:match("^(.-):") or c.title), own, "  ")
    for _, exercise in ipairs(sorted_keys(c.exercises, exercise_less)) do
      line("Exercise " .. exercise, c.exercises[exercise], "      ")
    end
  end
  -- after the total: its public and hidden tests apart, when there are hidden ones
  local function visibility_line()
    local public, hidden = report.public, report.hidden
    if hidden and hidden.passed + hidden.failed + hidden.skipped > 0 then
      out[#out + 1] = ("of which public tests %s, hidden tests (the teacher's) %s"):format(score(public), score(hidden))
    end
  end
  local failed
  if selection then
    local t = selection.total
    failed = t.failed
    out[#out + 1] = ""
    out[#out + 1] = ("total of %s: %s: %s"):format(chapters_named(selection.numbers), score(t),
      t.failed == 0 and "every test passed" or ("%d failed"):format(t.failed))
    visibility_line()
    local r, where = selection.related, {}
    if #selection.related_chapters > 0 then where[#where + 1] = chapters_named(selection.related_chapters) end
    if selection.related_book then where[#where + 1] = "the whole book" end
    if #where > 0 then
      out[#out + 1] = ("not counted here: the tests of %s in files that also run this code, %s: %s (make grade lists them)")
        :format(and_list(where), score(r), r.failed == 0 and "none failed" or ("%d failed"):format(r.failed))
    end
  else
    line("whole book (stress, tangler, transcripts, PyTorch)", report.book, "  ")
    out[#out + 1] = ""
    local t = report.total
    failed = t.failed
    out[#out + 1] = ("total %s: %s"):format(score(t),
      t.failed == 0 and "every test passed" or ("%d failed"):format(t.failed))
    visibility_line()
    if assigned then
      local a = assigned.total
      out[#out + 1] = ("assigned, %s alone: %s: %s (make grade CHAPTERS=\"%s\" shows only them)")
        :format(chapters_named(assigned.numbers), score(a), a.failed == 0 and "every test passed" or ("%d failed"):format(a.failed),
                table.concat(assigned.numbers, " "))
    end
  end
  if failed > 0 and log_path then
    out[#out + 1] = ("what the failed tests printed: %s"):format(log_path)
  end
  if report.notes then out[#out + 1] = "\n" .. report.notes:gsub("\n$", "") end
  return table.concat(out, "\n") .. "\n"
end

-- JSON: strings escaped, numbers as they are, tables as objects or arrays.
local function json(value, indent)
  indent = indent or ""
  local kind = type(value)
  if kind == "string" then
    return '"' .. value:gsub('[%c"\\]', function(c)
      local named = {['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t"}
      return named[c] or ("\\u%04x"):format(c:byte())
    end) .. '"'
  elseif kind == "number" or kind == "boolean" then
    return tostring(value)
  elseif value == nil then
    return "null"
  end
  local inner, parts = indent .. "  ", {}
  if value[1] ~= nil or next(value) == nil and getmetatable(value) == "array" then
    for _, v in ipairs(value) do parts[#parts + 1] = inner .. json(v, inner) end
    return #parts == 0 and "[]" or "[\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "]"
  end
  for _, k in ipairs(value.__order or sorted_keys(value)) do
    if k ~= "__order" then parts[#parts + 1] = inner .. json(k) .. ": " .. json(value[k], inner) end
  end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
end

local function array(t)
  if getmetatable(t) == "array" then return t end      -- a table met twice (the total of a selection)
  return setmetatable(t, {__metatable = "array"})
end

local function counts(t)
  return {passed = t.passed, failed = t.failed, skipped = t.skipped, tests = t.passed + t.failed,
          failed_tests = array(t.failures), __order = {"passed", "failed", "skipped", "tests", "failed_tests"}}
end

local function json_report(report, selection, assigned, log_path)
  local chapters = array{}
  local wanted = selection and selection.numbers or sorted_keys(report.chapters)
  for _, number in ipairs(wanted) do
    local c = report.chapters[number] or {number = number, tally = tally(), exercises = {}, file = chapter_file(number)}
    c.title = c.title or title_of(c.file or "")
    local exercises = array{}
    for _, exercise in ipairs(sorted_keys(c.exercises, exercise_less)) do
      local e = counts(c.exercises[exercise])
      e.exercise = exercise
      table.insert(e.__order, 1, "exercise")
      exercises[#exercises + 1] = e
    end
    local entry = counts(c.tally)
    entry.chapter, entry.title, entry.file, entry.exercises = number, c.title, c.file, exercises
    entry.__order = {"chapter", "title", "file", "passed", "failed", "skipped", "tests", "failed_tests", "exercises"}
    chapters[#chapters + 1] = entry
  end
  local files = array{}
  for _, f in ipairs(report.files) do
    files[#files + 1] = {path = f.path, tests = f.tests, broken = f.broken or false, skipped = f.skipped or false,
                         __order = {"path", "tests", "broken", "skipped"}}
  end
  local function selected(s)
    local related = counts(s.related)
    related.chapters, related.whole_book = array(s.related_chapters), s.related_book
    table.insert(related.__order, 1, "chapters")
    table.insert(related.__order, 2, "whole_book")
    local entry = counts(s.total)
    entry.chapters, entry.related = array(s.numbers), related
    table.insert(entry.__order, 1, "chapters")
    entry.__order[#entry.__order + 1] = "related"
    return entry
  end
  local total = selection and selection.total or report.total
  local failed = total.failed > 0
  local top = {all_passed = total.failed == 0, total = counts(total), chapters = chapters, files = files,
               log = failed and log_path or nil, public = counts(report.public), hidden = counts(report.hidden),
               submission = report.notes and array(lines_of(report.notes)),
               __order = {"all_passed", "total", "public", "hidden", "chapters", "whole_book", "selected", "assigned",
                          "files", "log", "submission"}}
  if selection then top.selected = selected(selection) else top.whole_book = counts(report.book) end
  if assigned and not selection then top.assigned = selected(assigned) end
  for i = #top.__order, 1, -1 do
    if top[top.__order[i]] == nil then table.remove(top.__order, i) end
  end
  return json(top) .. "\n"
end

------------------------------------------------------------------------------
-- Course platforms: Gradescope's results.json
------------------------------------------------------------------------------

-- `text` with every byte of an invalid UTF-8 sequence made "?" (a compiler's
-- message may hold any byte; a platform's JSON parser takes only UTF-8).
local function utf8_clean(text)
  if utf8.len(text) then return text end
  local out, i = {}, 1
  while i <= #text do
    local n = text:byte(i) < 0x80 and 1 or text:byte(i) >= 0xF0 and 4 or text:byte(i) >= 0xE0 and 3
              or text:byte(i) >= 0xC2 and 2 or 0
    local piece = n > 0 and text:sub(i, i + n - 1)
    if piece and #piece == n and utf8.len(piece) == 1 then out[#out + 1], i = piece, i + n
    else out[#out + 1], i = "?", i + 1 end
  end
  return table.concat(out)
end

-- At most `max` lines of `text`, and a line saying how many were left out.
local function first_lines(text, max)
  local lines = lines_of(text)
  if #lines <= max then return table.concat(lines, "\n") end
  return table.concat(lines, "\n", 1, max) .. ("\n... (%d more lines)"):format(#lines - max)
end

-- What a failed test printed (its TAP diagnostics, without "# " and the
-- "Failed test" line that repeats its name), or its reason when skipped.
local function test_output(test)
  local out = {}
  for _, d in ipairs(test.diag or {}) do
    local text = d:gsub("^#%s?", "")
    if not text:match("^%s*Failed test '") then out[#out + 1] = text end
  end
  return first_lines(table.concat(out, "\n"), 40)
end

-- The graded tests, in file order: those of the exercises `wanted`, else of
-- the chapters `chosen` (sets), else every test.
local function graded_tests(report, chosen, wanted)
  local list = {}
  for _, f in ipairs(report.files) do
    for _, test in ipairs(f.list) do
      local exercise = test.name:match("^Exercise (%d+%.%d+): ")
      if wanted and exercise and wanted[exercise] or not wanted and (not chosen or chosen[test.chapter]) then
        list[#list + 1] = test
      end
    end
  end
  return list
end

-- The graded tests' public and hidden (teachers', tests/teacher/) tallies.
local function by_visibility(tests)
  local public, hidden = tally(), tally()
  for _, test in ipairs(tests) do count(test.hidden and hidden or public, test, test.file) end
  return public, hidden
end

-- Gradescope's results.json (see the end of this file): one entry per test
-- that ran, one point each; a skipped test is left out of the score and of
-- the maximum, and named in the top-level output.
local function gradescope_report(tests, report, hidden_visibility)
  local entries, score, skipped = array{}, 0, {}
  for _, test in ipairs(tests) do
    if test.result == "skip" then
      skipped[#skipped + 1] = ("  %s (%s)%s"):format(test.name, key_of(test.file), test.reason and ": " .. test.reason or "")
    else
      local passed = test.result == "pass"
      local source = test.hidden and "hidden test " .. key_of(test.file) or test_source(test.file) or test.file
      entries[#entries + 1] = {name = utf8_clean(("%s (%s)"):format(test.name, source)), score = passed and 1 or 0,
        max_score = 1, status = passed and "passed" or "failed", output = utf8_clean(test_output(test)),
        visibility = test.hidden and hidden_visibility or "visible",
        __order = {"name", "score", "max_score", "status", "output", "visibility"}}
      score = score + (passed and 1 or 0)
    end
  end
  local public, hidden = report.public, report.hidden
  local out = {("%d of %d tests passed: public tests %d/%d"):format(score, #entries, public.passed, public.passed + public.failed)}
  if hidden.passed + hidden.failed > 0 then
    out[1] = out[1] .. (", and %d hidden tests (the teacher's)"):format(hidden.passed + hidden.failed)
  end
  if #skipped > 0 then
    out[#out + 1] = ("%d skipped, counted in neither the score nor the maximum:"):format(#skipped)
    out[#out + 1] = first_lines(table.concat(skipped, "\n"), 10)
  end
  if report.notes then out[#out + 1] = "\n" .. report.notes:gsub("\n$", "") end
  return json({score = score, output = utf8_clean(table.concat(out, "\n")), tests = entries,
               __order = {"score", "output", "tests"}}) .. "\n"
end

-- The report of a build that failed (make grade's tangle or compile, whose
-- log is `log`): json and gradescope still get one, score 0, with the
-- compiler's message (the log less make's progress lines).
local function build_failed_report(format, log, notes)
  -- a message (a line, and the indented lines that show its source) once:
  -- a program and its test compile the same chapter and fail alike
  local kept, seen, keep = {}, {}, false
  for _, line in ipairs(lines_of(log)) do
    if line:match("^  %u+ +%S") or line:match("^make[%[:]") or line:match("^make ") then
      keep = false
    elseif line:match("^%S") then
      keep = not seen[line]
      seen[line] = true
      if keep then kept[#kept + 1] = line end
    elseif keep then
      kept[#kept + 1] = line
    end
  end
  local output = "The code did not build, so no test ran: score 0. The compiler said:\n\n" ..
                 first_lines(table.concat(kept, "\n"), 60) .. (notes and "\n\n" .. notes:gsub("\n$", "") or "")
  output = utf8_clean(output)
  if format == "gradescope" then
    return json({score = 0, output = output, tests = array{}, __order = {"score", "output", "tests"}}) .. "\n"
  elseif format == "json" then
    return json({all_passed = false, built = false, output = output, submission = notes and array(lines_of(notes)),
                 __order = {"all_passed", "built", "output", "submission"}}) .. "\n"
  end
  return ""
end

------------------------------------------------------------------------------
-- Main
------------------------------------------------------------------------------

local function usage_error(fmt, ...)
  io.stderr:write("grade: ", fmt:format(...), "\n")
  os.exit(2)
end

-- The chapter numbers in `words` ("5 7"), each one with a chapters/NN-*.md.
local function chapter_numbers(words, option)
  local numbers, seen = {}, {}
  for word in words:gmatch("%S+") do
    local n = word:match("^%d+$") and tonumber(word)
    if not n then usage_error("%s is not a chapter number (%s=\"5 7\" grades chapters 5 and 7)", word, option) end
    if not chapter_file(n) then usage_error("there is no chapter %d (no chapters/%02d-*.md)", n, n) end
    if not seen[n] then seen[n], numbers[#numbers + 1] = true, n end
  end
  table.sort(numbers)
  return numbers
end

-- The exercise numbers in `words` ("5.6 7.6"), each one tested by a file of
-- `paths`: a set, and the list in order.
local function exercise_numbers(words, paths)
  local known = {}
  for _, path in ipairs(paths) do
    for e in pairs(exercises_tested_in(path)) do known[e] = true end
  end
  local set, list = {}, {}
  for word in words:gmatch("%S+") do
    if not word:match("^%d+%.%d+$") then usage_error("%s is not an exercise number (EX=\"5.6\" checks Exercise 5.6)", word) end
    if not known[word] then
      local n = tonumber(word:match("^(%d+)"))
      local ours = {}
      for e in pairs(known) do if tonumber(e:match("^(%d+)")) == n then ours[#ours + 1] = e end end
      table.sort(ours, exercise_less)
      usage_error("no test checks Exercise %s: %s", word, #ours > 0 and
        ("chapter %d's exercises with tests are %s (the others are answered in solutions/)"):format(n, and_list(ours))
        or ("chapter %d has no exercise with tests"):format(n))
    end
    if not set[word] then set[word], list[#list + 1] = true, word end
  end
  table.sort(list, exercise_less)
  return set, list
end

-- The tests of `paths` that make check and make grade run for the exercises
-- `wanted` and the chapters `chosen` (sets; nil: no such limit; both nil: all).
-- An exercise's: the files that hold its tests. A chapter's: the files whose
-- tests count for it (its programs' tests, and those holding its exercises'
-- tests), and every other file that runs its exercises' code, whose tests
-- make grade CHAPTERS=N names on a line of their own.
local function select_tests(paths, programs, src, wanted, chosen, own)
  if not wanted and not chosen then return paths end
  local runs = chosen and not own and code_run_by(paths, programs)
  local picked = {}
  for _, path in ipairs(paths) do
    local take = false
    local function chapter_chosen(exercise) return chosen and chosen[tonumber(exercise:match("^(%d+)"))] end
    for e in pairs(exercises_tested_in(path)) do
      if wanted and wanted[e] or chapter_chosen(e) then take = true end
    end
    if chosen then
      local home = chapter_of_test(path, src)
      if home and chosen[tonumber(home:match("(%d+)%-"))] then take = true end
      for e in pairs(runs and runs[path] or {}) do if chapter_chosen(e) then take = true end end
    end
    if take then picked[#picked + 1] = path end
  end
  return picked
end

-- The makefile that runs `picked` (make check and make grade include it): each
-- test's run, $(TAP)/KEY.tap, needs its binary (the Makefile's rule says so)
-- and the programs it runs, which make builds first, so no run meets a stale
-- program: those its C source includes or names ("mha", tools/deps.lua), or
-- every program for a script that reads $ABH_BIN; and $(TEST_DATA), chapter
-- 12's trained models, for a test that reads $ABH_MODELS. `built` is the set
-- of programs the Makefile builds.
local function write_plan(file_path, picked, programs, built)
  local out, runs = {}, {}
  for _, path in ipairs(picked) do
    local target = "$(TAP)/" .. key_of(path) .. ".tap"
    runs[#runs + 1] = target
    local needs, source, text = {}, test_source(path)
    if text then
      local names = deps.set_list(deps.test_programs(programs, text, test_depfile(path)))
      for _, name in ipairs(names) do
        if built[name] then needs[#needs + 1] = "$(BIN)/" .. name end
      end
      if text:find("ABH_MODELS", 1, true) then needs[#needs + 1] = "$(TEST_DATA)" end
    elseif not source and deps.script_runs_programs(path, read_all) then
      needs[#needs + 1] = "$(PROGRAM_BINS) $(TEST_DATA)"
    end
    if #needs > 0 then out[#out + 1] = target .. ": " .. table.concat(needs, " ") end
  end
  table.insert(out, 1, "grade-run: " .. table.concat(runs, " "))
  local file = io.open(file_path, "w")
  if not file then usage_error("cannot write %s", file_path) end
  file:write("# Written by tools/grade.lua --plan: the tests make check or make grade runs.\n",
             table.concat(out, "\n"), "\n")
  file:close()
end

-- The report of make check: for each exercise asked for (EX), or each chapter
-- (CHAPTERS) with its exercises, one line "passed/total", then every failed
-- test by name with what it printed (got, expected), and nothing else.
local DETAILS, DETAIL_LINES = 3, 10
local function check_report(report, exercises, selection)
  local out, failed = {}, {}
  local function line(label, t)
    local verdict = t.failed == 0 and (t.passed > 0 and "right" or "not checked yet") or ("%d failed"):format(t.failed)
    out[#out + 1] = ("%-22s %9s   %s"):format(label, score(t), verdict)
    for _, test in ipairs(t.failed_tests) do failed[#failed + 1] = test end
  end
  if exercises then
    for _, e in ipairs(exercises) do
      local c = report.chapters[tonumber(e:match("^(%d+)"))]
      line("Exercise " .. e, c and c.exercises[e] or tally())
    end
  else
    for _, number in ipairs(selection.numbers) do
      local c = report.chapters[number] or {tally = tally(), exercises = {}}
      local own = tally()
      own.passed, own.skipped = c.tally.passed, c.tally.skipped
      for _, test in ipairs(c.tally.failed_tests) do
        if not test.name:match("^Exercise ") then count(own, test, test.path) else own.failed = own.failed + 1 end
      end
      line(("chapter %d"):format(number), own)
      for _, e in ipairs(sorted_keys(c.exercises, exercise_less)) do line("  Exercise " .. e, c.exercises[e]) end
    end
    local r = selection.related
    if r.passed + r.failed > 0 then line("tests elsewhere running it", r) end
  end
  -- a stub not yet replaced fails every test of its exercise: one line says so
  local stub
  for _, test in ipairs(failed) do
    local found
    for _, d in ipairs(test.diag or {}) do found = found or d:match("not implemented yet: (Exercise [%d.]+)") end
    if not found or (stub and stub ~= found) then stub = false break end
    stub = found
  end
  if stub then
    out[#out + 1] = ("%s's stub is still in the chapter: every test failed on it (write its code between the markers)")
      :format(stub)
    failed = {}
  end
  for i, test in ipairs(failed) do
    out[#out + 1] = ("not ok  %s: %s"):format(test.path, test.name)
    if i <= DETAILS then
      local shown = 0
      for _, d in ipairs(test.diag or {}) do
        local text = d:gsub("^#%s?", "")
        if not text:match("^%s*Failed test '") and shown < DETAIL_LINES then
          out[#out + 1] = "        " .. text
          shown = shown + 1
        end
      end
    end
  end
  if #failed > DETAILS then
    out[#out + 1] = ("(what the first %d printed is shown; build/grade/tests.log has the rest)"):format(DETAILS)
  end
  return table.concat(out, "\n") .. "\n"
end

local format, log_path, chapters_arg, assigned_arg, exercises_arg, plan_path, built_arg, paths =
  "text", nil, nil, nil, nil, nil, nil, {}
local own, notes_path, failed_log, hidden_visibility = false, nil, nil, "hidden"
local i = 1
while i <= #arg do
  if arg[i] == "--own" then
    own = true
  elseif arg[i] == "--notes" then
    notes_path, i = arg[i + 1], i + 1
  elseif arg[i] == "--build-failed" then
    failed_log, i = arg[i + 1], i + 1
  elseif arg[i] == "--hidden-visibility" then
    hidden_visibility, i = arg[i + 1], i + 1
  elseif arg[i] == "--format" then
    format, i = arg[i + 1], i + 1
  elseif arg[i] == "--log" then
    log_path, i = arg[i + 1], i + 1
  elseif arg[i] == "--chapters" then
    chapters_arg, i = arg[i + 1] or "", i + 1
  elseif arg[i] == "--exercises" then
    exercises_arg, i = arg[i + 1] or "", i + 1
  elseif arg[i] == "--assigned" then
    assigned_arg, i = arg[i + 1] or "", i + 1
  elseif arg[i] == "--plan" then
    plan_path, i = arg[i + 1], i + 1
  elseif arg[i] == "--programs" then
    built_arg, i = arg[i + 1] or "", i + 1
  elseif arg[i] == "--tap" then
    results, i = arg[i + 1], i + 1
  elseif arg[i] == "-h" or arg[i] == "--help" then
    io.stdout:write(USAGE)
    os.exit(0)
  else
    paths[#paths + 1] = arg[i]
  end
  i = i + 1
end
local reports = {text = text_report, json = json_report, tsv = tsv_report, check = check_report, gradescope = true}
if not reports[format] then usage_error("FORMAT must be text, json, tsv or gradescope, not '%s'", tostring(format)) end
local VISIBILITIES = {hidden = true, after_due_date = true, after_published = true, visible = true}
if not VISIBILITIES[hidden_visibility or ""] then
  usage_error("HIDDEN_VISIBILITY must be hidden, after_due_date, after_published or visible, not '%s'", tostring(hidden_visibility))
end
local notes = notes_path and notes_path ~= "" and read_all(notes_path) or nil
if notes == "" then notes = nil end
if failed_log then
  io.stdout:write(build_failed_report(format, read_all(failed_log) or "(no log: " .. failed_log .. ")", notes))
  os.exit(1)
end
if #paths == 0 then io.stderr:write(USAGE) os.exit(2) end
local chosen = chapters_arg and chapters_arg:match("%S") and chapter_numbers(chapters_arg, "CHAPTERS")
local assigned_numbers = assigned_arg and assigned_arg:match("%S") and chapter_numbers(assigned_arg, "ASSIGNED")
local wanted, wanted_list
if exercises_arg and exercises_arg:match("%S") then wanted, wanted_list = exercise_numbers(exercises_arg, paths) end
local chosen_set
if chosen then
  chosen_set = {}
  for _, n in ipairs(chosen) do chosen_set[n] = true end
end
local src = (os.getenv("ABH_SRC") or "build/src")
local programs = programs_in(src)
paths = select_tests(paths, programs, src, wanted, chosen_set, own)

if plan_path then
  local built = {}
  for name in (built_arg or ""):gmatch("%S+") do built[name] = true end
  write_plan(plan_path, paths, programs, built)
  os.exit(0)
end

local log
if log_path then
  log = io.open(log_path, "w")
  if not log then usage_error("cannot write the log %s", log_path) end
end
local report = grade(paths, src, log)
if log then log:close() end
local runs = (chosen or assigned_numbers) and code_run_by(paths, programs)
local selection = chosen and selection_of(report, chosen, runs)
local assigned = assigned_numbers and selection_of(report, assigned_numbers, runs)

-- With EX, what is graded is those exercises' tests alone.
local failed
if wanted then
  local t = tally()
  for _, e in ipairs(wanted_list) do
    local c = report.chapters[tonumber(e:match("^(%d+)"))]
    if c and c.exercises[e] then add(t, c.exercises[e]) end
  end
  failed = t.failed
  if format ~= "check" then
    -- make grade EX=...: the report of those exercises' chapters, cut to them
    chosen_set = {}
    for _, e in ipairs(wanted_list) do chosen_set[tonumber(e:match("^(%d+)"))] = true end
    for n, c in pairs(report.chapters) do
      if not chosen_set[n] then report.chapters[n] = nil else
        for e in pairs(c.exercises) do if not wanted[e] then c.exercises[e] = nil end end
        c.tally = tally()
        for _, e in pairs(c.exercises) do add(c.tally, e) end
      end
    end
    local numbers = deps.set_list(chosen_set)
    selection = {numbers = numbers, total = t, related = tally(), related_chapters = {}, related_book = false}
    if format == "tsv" then
      local only = {}
      for _, f in ipairs(report.files) do
        local list = {}
        for _, test in ipairs(f.list) do
          local e = test.name:match("^Exercise (%d+%.%d+): ")
          if e and wanted[e] then list[#list + 1] = test end
        end
        f.list, f.skipped = list, nil
        only[#only + 1] = f
      end
      report.files = only
    end
  end
else
  failed = (selection and selection.total or report.total).failed
end
local graded = graded_tests(report, chosen_set, wanted)
report.public, report.hidden = by_visibility(graded)
report.notes = notes
-- make grade EX=N.M is a course platform's test of the exercise (GitHub Classroom's
-- points): its exit status is 0 only when its tests ran and all passed
if wanted and format ~= "check" and report.public.passed + report.hidden.passed == 0 and failed == 0 then
  io.stderr:write(("grade: no test of Exercise %s ran (all were skipped)\n"):format(table.concat(wanted_list, ", ")))
  failed = 1
end

if format == "tsv" then
  io.stdout:write(tsv_report(report, chosen_set))
elseif format == "check" then
  io.stdout:write(check_report(report, wanted_list, selection or
    {numbers = sorted_keys(report.chapters), related = tally()}))
elseif format == "gradescope" then
  io.stdout:write(gradescope_report(graded, report, hidden_visibility))
else
  io.stdout:write(reports[format](report, selection, assigned, log_path))
end
if format == "tsv" and failed > 0 and log_path then
  io.stderr:write(("grade: %d failed; what the failed tests printed: %s\n"):format(failed, log_path))
end
os.exit(failed == 0 and 0 or 1)

--[[ The JSON report
{
  "all_passed": true when no test failed (of the chapters selected, with --chapters),
  "total": {"passed", "failed", "skipped", "tests" (passed + failed), "failed_tests": ["FILE: name", ...]},
  "chapters": [{"chapter": 1, "title", "file", the counts of every test that counts for the chapter
                (its exercises' included), "exercises": [{"exercise": "1.6", the counts}, ...]}, ...],
  "whole_book": the counts of the tests of no one chapter (not with --chapters),
  "selected": with --chapters, {"chapters": [5], the counts of their tests (as "total"), "related":
              {"chapters": [6, 7], "whole_book": true, the counts of the tests of other chapters and of
              the whole book that run the selected chapters' exercise code}},
  "assigned": with --assigned (make grade in a handout), the same for the assigned chapters,
  "files": [{"path", "tests", "broken": false or why, "skipped": false or why}, ...],
  "log": when a test failed, the file holding what the tests printed on stderr,
  "public", "hidden": the counts of the graded tests (as "total") that are the book's
            (tests/) and the teacher's (tests/teacher/), apart,
  "submission": with --notes, its lines (make grade-submission: what it took from
                the submission, and the edits outside the markers it did not use)
}
When the build failed (--build-failed LOG): {"all_passed": false, "built": false,
"output": the compiler's message, "submission"}.

Gradescope's results.json (--format gradescope; Gradescope's "Autograder
Specifications" describe it):
{
  "score": the points of the tests that passed,
  "output": one line of counts (public tests passed, how many hidden), the
            tests skipped (counted in neither the score nor the maximum), and
            the notes of --notes; when the build failed, the compiler's message,
  "tests": [{"name": "Exercise 1.6: ... (tests/test_selfatt_v1.c)", "score": 0 or 1,
             "max_score": 1, "status": "passed" or "failed", "output": what it printed
             when it failed (got, expected), "visibility": "visible", or for a
             teacher's hidden test --hidden-visibility (default "hidden")}, ...]
}
]]
