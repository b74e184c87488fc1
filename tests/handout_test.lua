#!/usr/bin/env lua5.4
-- Tests of tools/handout.lua, in TAP version 13:
--     prove --norc -e '' tests/handout_test.lua
-- Each test writes a small book into a scratch directory (two chapters, their
-- solutions, a teacher's test, a README and a CI script), makes a handout of
-- it, and checks one rule: what is cut, what is kept, what is left out, what
-- is refused, where it may write, what its README says. The last tests run
-- the real Makefile's `make handout` on the small book (TESTS= leaves its
-- compile check nothing to compile). The end-to-end check of the real book is
-- tools/check-handout.sh.

local HERE = arg[0]:match("^(.*)/") or "."
local tap = dofile(HERE .. "/tap.lua")
local U = dofile(HERE .. "/../tools/util.lua")
local ok, is = tap.ok, tap.is
local q, sh, read, write = U.q, U.sh, U.read, U.write

local ROOT, TMP, cleanup <close> = tap.scratch(HERE)     -- removed when the script ends

-- Chapter 1 of the small book: a file block with a solution region (lines
-- 5 to 9: the BEGIN marker is line 6), and a link to its solutions.
local CHAPTER_1 = [[
# 1. One

```c {file=src/one.c}
// <<src/one.c>>=
int one(int a, int b) {
    // BEGIN SOLUTION Exercise 1.1 (a, b)
    int sum_of_both = a + b;
    return sum_of_both * 2;
    // END SOLUTION Exercise 1.1
}
```

## Exercises

Worked solutions: [solutions/01-one.md](../solutions/01-one.md), after you have tried.

**Exercise 1.1.** Write `one`. See also [chapter 2](02-two.md).
]]

local CHAPTER_2 = [[
# 2. Two

```c {file=src/two.c}
// <<src/two.c>>=
int two(void) { return 2; }
```

Worked solutions: [solutions/02-two.md](../solutions/02-two.md).
]]

-- A chapter 3 with an exercise whose one line is too short to be evidence:
-- assigned, it makes chapter 2 one before the last assigned chapter.
local CHAPTER_3 = [[
# 3. Three

```c {file=src/three.c}
// <<src/three.c>>=
int three(void) {
    // BEGIN SOLUTION Exercise 3.1
    return 3;
    // END SOLUTION Exercise 3.1
}
```
]]

-- Write the small book into a new directory, with `changes` (path -> text,
-- or false to leave a file out); return the directory.
local books = 0
local function small_book(changes)
  books = books + 1
  local dir = TMP .. "/book" .. books
  local files = {
    ["chapters/01-one.md"] = CHAPTER_1,
    ["chapters/02-two.md"] = CHAPTER_2,
    ["solutions/01-one.md"] = "# Solutions to chapter 1\n\nThe answer doubles the sum.\n",
    ["solutions/02-two.md"] = "# Solutions to chapter 2\n\nSee [chapter 1's](01-one.md).\n",
    ["tests/teacher/test_one.c"] = "/* hidden */\n",
    ["tests/mistakes/01-one.lua"] = "return {{from = [[return sum_of_both * 2;]], to = [[return 2;]]}}\n",
    ["tools/check-mistakes.lua"] = "-- makes the mistakes of tests/mistakes\n",
    ["tests/test_one.c"] = "/* public */\n",
    ["README.md"] = "# The developers' README\n",
    [".ci/run"] = "#!/bin/sh\nmake test\n",
    ["book.md"] = "# Book\n\n[One](chapters/01-one.md), [its solutions](solutions/01-one.md), [two's](solutions/02-two.md).\n",
  }
  for path, text in pairs(changes or {}) do files[path] = text end
  for path, text in pairs(files) do
    if text then write(dir .. "/" .. path, text) end
  end
  return dir
end

-- Make a handout of the book in `dir` with `args` into `outdir` (default
-- out, relative to `dir`); return status, stdout, stderr.
local function handout(dir, args, outdir)
  return U.run(("cd %s && lua5.4 %s -o %s %s"):format(q(dir), q(ROOT .. "/tools/handout.lua"), q(outdir or "out"), args))
end

-- Every file under `dir` (relative paths, sorted, one per line), or "".
local function tree(dir)
  return (sh(("cd %s 2>/dev/null && find . -type f ! -path './.git/*' | sed 's|^\\./||' | sort"):format(q(dir))))
end

tap.version()

do  -- chapter 1 assigned
  local dir = small_book()
  local status, out, err = handout(dir, "1")
  is(status, 0, "a handout of a chapter with a solution region is made")
  is(out, "handout: out: chapter 1 assigned (Exercise 1.1)\n", "it says what is assigned")
  is(err, "", "and nothing on stderr")
  local one = read(dir .. "/out/chapters/01-one.md") or ""
  ok(one:find('\n    // BEGIN SOLUTION Exercise 1.1 %(a, b%)\n    NOT_IMPLEMENTED%("Exercise 1.1", a, b%);\n    // END SOLUTION Exercise 1.1\n}'),
     "the region's code becomes one stub, indented like it, naming the exercise and the names; the markers stay", one)
  ok(not one:find("sum_of_both", 1, true), "no line of the solution is left in the chapter")
  ok(one:find("\nWorked solutions are not part of this handout: your teacher has them.\n", 1, true),
     "the chapter's pointer to its worked solutions says they are not here")
  ok(one:find("See also chapter 2.", 1, true), "a link to a chapter after the last assigned one becomes its text")
  is(read(dir .. "/out/solutions/01-one.md"), nil, "the assigned chapter's worked solutions are left out")
  is(read(dir .. "/out/chapters/02-two.md"), nil, "a chapter after the last assigned one is left out")
  is(read(dir .. "/out/solutions/02-two.md"), nil, "and so are its worked solutions")
  is(read(dir .. "/out/tests/teacher/test_one.c"), nil, "the teachers' hidden tests are left out")
  ok(not read(dir .. "/out/tests/mistakes/01-one.lua") and not read(dir .. "/out/tools/check-mistakes.lua"),
     "so are the mistakes the exercises' tests must catch, which quote the solutions, and their check")
  is(read(dir .. "/out/tests/test_one.c"), "/* public */\n", "the public tests stay")
  is(read(dir .. "/out/.ci/run"), nil, "the book's CI is left out")
  ok((read(dir .. "/out/README.md") or ""):find("^# Attention by Hand: student handout"), "the README is the students'")
  is(read(dir .. "/out/book.md"), "# Book\n\n[One](chapters/01-one.md), its solutions, two's.\n",
     "a link to a file left out becomes its text; other links stay")
  local mk = read(dir .. "/out/mk/handout.mk") or ""
  ok(mk:find("\nHANDOUT   := 1\n", 1, true) and mk:find("\nASSIGNED  := 1\n", 1, true) and mk:find("\nEXERCISES := 1.1\n", 1, true),
     "mk/handout.mk tells the Makefile it is a handout, and what is assigned", mk)
  local tangled = sh(("cd %s/out && lua5.4 %s -o build chapters/01-one.md && cat build/src/one.c"):format(
    q(dir), q(ROOT .. "/tangle/tangle.lua")))
  local chapter_line = 0
  for line in one:gmatch("([^\n]*)\n") do
    chapter_line = chapter_line + 1
    if line:find("NOT_IMPLEMENTED", 1, true) then break end
  end
  ok(tangled:find('\n#line 4 "chapters/01%-one%.md"\n// <<src/one%.c>>=\nint one%(int a, int b%) {\n    // BEGIN[^\n]*\n    NOT_IMPLEMENTED')
     and chapter_line == 7, "the handout tangles, and #line puts the stub at its own line of the chapter, 7", tangled)
end

do  -- the book up to the last assigned chapter, not after it
  local PROGRAMS = "# Appendix A, continued. The wiring of each program\n\nIntro.\n\n" ..
    "## Chapter 1's program\n\nOne's help:\n\n```c {chunk=\"Help one\"}\n// <<Help one>>=\nstatic int helper(void) { return 1; }\n```\n\n" ..
    "## Chapter 2's program\n\nTwo's help:\n\n```c {chunk=\"Help two\"}\n// <<Help two>>=\nstatic int help2(void) { return 2; }\n```\n"
  local dir = small_book{
    ["chapters/A-programs-1.md"] = PROGRAMS,
    ["chapters/01-one.md"] = CHAPTER_1:gsub("int one%(int a", "<<Help one>>\nint one(int a") .. "\n![One](../figures/one.svg)\n",
    ["chapters/02-two.md"] = CHAPTER_2:gsub("int two%(void%)", "<<Help two>>\nint two(void)") .. "\n![Two](../figures/two.svg)\n",
    ["figures/one.svg"] = "<svg/>\n", ["figures/two.svg"] = "<svg/>\n",
    ["mk/01-one.mk"] = "PROGRAMS += one\n", ["mk/02-two.mk"] = "PROGRAMS += two\n",
    ["tests/test_two.c"] = '#include "two.c"\n', ["tests/pytorch/two.py"] = "# two\n", ["tests/pytorch/one.py"] = "# one\n",
    ["tests/two_cases.h"] = "/* two's cases */\n", ["tests/test_one.c"] = '#include "one.c"\n#include "tap.h"\n',
    ["tests/tap.h"] = "/* tap */\n", ["tests/test_both.c"] = '#include "two_cases.h"\nint main(void) { return run("two"); }\n'}
  local status, out, err = handout(dir, "1")
  ok(status == 0 and out:find("chapter 1 assigned", 1, true), "a handout of chapter 1 from a book of two chapters", out, err)
  is(tree(dir .. "/out"):gsub("%.abh%-handout\n", ""), table.concat({".github/workflows/classroom.yml", "README.md", "book.md",
     "chapters/01-one.md", "chapters/A-programs-1.md", "figures/one.svg", "helpers.h", "mk/01-one.mk", "mk/handout.mk",
     "tests/pytorch/one.py", "tests/tap.h", "tests/test_one.c"}, "\n") .. "\n",
     "it leaves out chapter 2, its mk rules, figures, tests (and a header only they include), PyTorch script and the " ..
     "tests that run its program", tree(dir .. "/out"))
  is(read(dir .. "/out/chapters/A-programs-1.md"), PROGRAMS:match("^(.-)\n\n## Chapter 2's") .. "\n",
     "and the appendix's section on chapter 2's program")
  ok((read(dir .. "/out/README.md") or ""):find("It holds chapter 1 and the parts of the appendices they use: chapter 2, after\nthe last one assigned, is left out", 1, true),
     "the README says which chapters it holds", read(dir .. "/out/README.md"))
  local mk = read(dir .. "/out/mk/handout.mk") or ""
  ok(mk:find("\nCFLAGS    += -include helpers.h\n", 1, true) and (read(dir .. "/out/helpers.h") or ""):find("\n// BEGIN HELPERS\n\n// END HELPERS\n", 1, true),
     "every program is compiled with helpers.h, whose region for the student's helpers is empty", mk)
end

do  -- no chapter named: every chapter with a region; a second run replaces the first
  local dir = small_book()
  handout(dir, "1")
  os.remove(dir .. "/out/book.md")                      -- a file deleted is no work
  write(dir .. "/out/build/bin/one", "made by make\n")   -- nor is what make builds
  local status, out = handout(dir, "")
  ok(status == 0 and out == "handout: out: chapter 1 assigned (Exercise 1.1)\n",
     "without chapter numbers, every chapter with exercises is assigned", out)
  ok(read(dir .. "/out/book.md") and not read(dir .. "/out/build/bin/one"),
     "a handout made again over one without work replaces it whole")
end

do  -- nothing lost: a handout with work in it is refused, unless --force
  local dir = small_book()
  handout(dir, "1")
  local marker = read(dir .. "/out/.abh-handout") or ""
  ok(marker:find("\nThe files as handed out (cksum, bytes, path):\n", 1, true) and
     marker:find("\n%d+ %d+ chapters/01%-one%.md\n"), "the marker lists every file as written, with its cksum", marker)
  local chapter = dir .. "/out/chapters/01-one.md"
  local mine = (read(chapter) or ""):gsub('NOT_IMPLEMENTED%("Exercise 1.1", a, b%);', "return (a + b) * 2;")
  write(chapter, mine)
  write(dir .. "/out/notes.txt", "my notes\n")
  local status, out, err = handout(dir, "1")
  ok(status == 1 and out == "" and err == "handout: out is a handout with work a new one would delete: " ..
     "2 files changed or added (chapters/01-one.md, notes.txt): nothing deleted or written; " ..
     "make handout FORCE=1 (or --force) replaces it anyway, or name a new directory\n",
     "a handout with a changed and an added file is refused in one line naming them and how to go on", out, err)
  ok(read(chapter) == mine and read(dir .. "/out/notes.txt") == "my notes\n", "and the student's work is still there")
  status, out, err = handout(dir, "--force 1")
  ok(status == 0 and err:find("handout: out: --force: deleting 2 files changed or added (chapters/01-one.md, notes.txt)\n", 1, true),
     "--force replaces it, saying what it deletes", out, err)
  ok(not read(dir .. "/out/notes.txt") and (read(chapter) or ""):find("NOT_IMPLEMENTED", 1, true), "with a fresh handout")

  write(dir .. "/out/.abh-handout", "a handout made before its files were listed\n")
  status, _, err = handout(dir, "1")
  ok(status == 1 and err:find("^handout: out is a handout, but its .abh%-handout lists no files and it has no git history"),
     "a handout whose changes cannot be told (no list, no .git) is refused", err)
  status = handout(dir, "--force 1")
  is(status, 0, "and replaced with --force")

  write(dir .. "/mine/notes.txt", "my notes\n")
  status, _, err = handout(dir, "--force 1", "mine")
  ok(status == 1 and err:find("^handout: mine is not empty and is not a handout made before"),
     "--force replaces only a handout: a directory holding something else is still refused", err)
end

do  -- refusals: one line, nothing written
  local dir = small_book()
  local status, _, err = handout(dir, "2")
  ok(status == 1 and err == "handout: chapter 2 has no exercise to hand out (no // BEGIN SOLUTION region in its code)\n",
     "a chapter without a solution region cannot be assigned", err)
  is(sh("ls " .. q(dir) .. "/out 2>/dev/null"), "", "and nothing is written")

  status, _, err = handout(dir, "one")
  ok(status == 1 and err:find("^handout: one is not a chapter number"), "a word that is not a chapter number is refused", err)

  dir = small_book{["chapters/01-one.md"] = CHAPTER_1:gsub("// END SOLUTION Exercise 1.1", "// BEGIN SOLUTION Exercise 1.2")}
  status, _, err = handout(dir, "1")
  is(err, "handout: chapters/01-one.md:9: nested solution region: Exercise 1.1 opened at line 6 is still open\n",
     "a nested solution marker is refused with the chapter's path and line")
  dir = small_book{["chapters/01-one.md"] = CHAPTER_1:gsub("    // END SOLUTION Exercise 1.1\n", "")}
  status, _, err = handout(dir, "1")
  is(err, "handout: chapters/01-one.md:6: unterminated solution region: no // END SOLUTION Exercise 1.1 before the end of the block\n",
     "an unterminated solution region is refused at its BEGIN line")

  dir = small_book{["chapters/02-two.md"] = CHAPTER_2 .. "\nAs chapter 1 does: `return sum_of_both * 2;`\n",
                   ["chapters/03-three.md"] = CHAPTER_3}
  status, _, err = handout(dir, "1 3")
  ok(status == 1 and err == "handout: chapters/02-two.md:10: holds a line of the solution of Exercise 1.1: return sum_of_both * 2;\n",
     "a line of the solution anywhere else in the book stops the handout, naming the place", err)
  is(sh("ls " .. q(dir) .. "/out 2>/dev/null"), "", "and nothing is written")
end

do  -- an appendix (chapters/A-*.md): copied as it is, its chunks tangled with the chapters'
  local APPENDIX = "# Appendix A. More\n\nAbout [chapter 1](01-one.md).\n\n" ..
                   "```c {chunk=\"Help one\"}\n// <<Help one>>=\nstatic int helper(void) { return 1; }\n```\n"
  local dir = small_book{["chapters/A-more.md"] = APPENDIX,
                         ["chapters/01-one.md"] = CHAPTER_1:gsub("int one%(int a", "<<Help one>>\nint one(int a")}
  local status, out, err = handout(dir, "1")
  ok(status == 0 and out == "handout: out: chapter 1 assigned (Exercise 1.1)\n", "a book with an appendix hands out its chapters", out, err)
  is(read(dir .. "/out/chapters/A-more.md"), APPENDIX, "the appendix is copied as it is")
  local tangled = sh(("cd %s/out && lua5.4 %s -o build chapters/01-one.md chapters/A-more.md && cat build/src/one.c"):format(
    q(dir), q(ROOT .. "/tangle/tangle.lua")))
  ok(tangled:find("static int helper(void) { return 1; }\n", 1, true) and tangled:find("NOT_IMPLEMENTED", 1, true),
     "and its chunk still goes into the chapter's code, beside the stub", tangled)
  status, out, err = handout(dir, "A")
  ok(status == 1 and err:find("^handout: A is not a chapter number"), "an appendix cannot be assigned: it has no exercises", err)
end

do  -- where a handout may go: new, empty, or a handout made before; nothing else
  local dir = small_book()
  local status = handout(dir, "1")
  ok(status == 0 and read(dir .. "/out/.abh-handout"), "a handout is marked: .abh-handout at its top")

  write(dir .. "/notes/notes.txt", "my notes\n")
  local err
  status, _, err = handout(dir, "1", "notes")
  ok(status == 1 and err == "handout: notes is not empty and is not a handout made before (it has no .abh-handout): nothing deleted or written; name a new or empty directory\n",
     "a directory holding something else is refused in one line naming it", err)
  is(tree(dir .. "/notes"), "notes.txt\n", "and nothing in it is deleted or written")

  sh("mkdir -p " .. q(dir .. "/empty"))
  status = handout(dir, "1", "empty")
  ok(status == 0 and read(dir .. "/empty/chapters/01-one.md"), "an empty directory takes the handout")

  write(dir .. "/a-file", "mine\n")
  status, _, err = handout(dir, "1", "a-file")
  ok(status == 1 and err == "handout: a-file exists and is not a directory: nothing written\n", "a file is refused", err)
  is(read(dir .. "/a-file"), "mine\n", "and left as it was")

  sh(("ln -s notes %s"):format(q(dir .. "/link")))
  status, _, err = handout(dir, "1", "link")
  ok(status == 1 and err:find("^handout: link is a symbolic link: nothing written"), "a symbolic link is refused", err)
  is(tree(dir .. "/notes"), "notes.txt\n", "and what it points to is untouched")

  -- a handout is itself a book: made from inside it, . and .. hold the book
  local before = tree(dir .. "/out")
  status, _, err = handout(dir .. "/out", "1", ".")
  ok(status == 1 and err == "handout: . holds the book the handout is made from: nothing written (name a new directory)\n",
     "a handout cannot be made over the book it is made from, even when that book is a handout", err)
  status = handout(dir .. "/out", "1", "..")
  is(status, 1, "nor over a directory that holds the book")
  is(tree(dir .. "/out"), before, "and nothing of the book is deleted")
end

do  -- a handout kept inside the book is not part of the next one
  local dir = small_book()
  handout(dir, "1", "inside")
  local status, _, err = handout(dir, "1", "inside")
  ok(status == 0, "a handout inside the book can be made again over itself", err)
  is(read(dir .. "/inside/inside/README.md"), nil, "and it does not copy the old handout into the new one")
end

-- A chapter whose solution is long enough for its tokens to be evidence:
-- line 8 is the region's first line of code.
local CHAPTER_1_LONG = [[
# 1. One

```c {file=src/one.c}
// <<src/one.c>>=
static int combine(int x, int y, int k) { return x * k + y; }
int one(int a, int b) {
    // BEGIN SOLUTION Exercise 1.1 (a, b)
    int sum_of_both = combine(a, b, 2) + combine(b, a, 3);   // both ways
    return sum_of_both * 2;
    // END SOLUTION Exercise 1.1
}
```

## Exercises

**Exercise 1.1.** Write `one`.
]]
local SAME_TOKENS = "int total=combine( p,q,2 )+combine(q , p, 3); /* other names */"

do  -- no leak by tokens: other names, spacing and comments are the same answer
  local dir = small_book{["chapters/01-one.md"] = CHAPTER_1_LONG,
                         ["chapters/02-two.md"] = CHAPTER_2 .. "\nLike chapter 1, `" .. SAME_TOKENS .. "`, but\n",
                         ["chapters/00-zero.md"] = "# 0. Zero\n\n```c\n" .. SAME_TOKENS .. "\n```\n",
                         ["solutions/00-zero.md"] = "# Zero\n\n    " .. SAME_TOKENS .. "\n",
                         ["tests/test_one.c"] = "/* public */\nint other(void) {\n    " .. SAME_TOKENS .. "\n}\n",
                         ["tests/test_two.c"] = "int total = combine(p, q, 2) - combine(q, p, 3);\n",
                         ["chapters/03-three.md"] = CHAPTER_3}
  local status, out, err = handout(dir, "1 3")
  local hash = err:match(" %(tokens (%x+)%)\n")
  ok(status == 1 and err:gsub(" %(tokens %x+%)", "") ==
          "chapters/02-two.md:10: Exercise 1.1: the tokens of its solution, chapters/01-one.md:8\n" ..
          "tests/test_one.c:3: Exercise 1.1: the tokens of its solution, chapters/01-one.md:8\n" ..
          "handout: out: 2 places hold the tokens of a solution it cuts (listed above): nothing written (ABH_LEAKS=fail)\n",
     "a solution line with other names, spacing and comments is found in a later chapter's prose and a test, FILE:LINE " ..
     "and the exercise; a chapter before the exercise's and its solutions do not count, nor do other tokens; " ..
     "by default the handout is refused", err)
  ok(hash and err:find(" (tokens " .. hash .. ")\ntests/test_one.c:3: ", 1, true), "each place names the hash of its tokens", err)
  is(sh("ls " .. q(dir) .. "/out 2>/dev/null"), "", "and nothing is written")
  local report = ("cd %s && ABH_LEAKS=report lua5.4 %s"):format(q(dir), q(ROOT .. "/tools/handout.lua"))
  status, out, err = U.run(report .. " -o out 1 3")
  ok(status == 0 and out:find("^handout: out: chapters 1, 3 assigned") and
     err:sub(-100) == ("\nhandout: out: 2 places hold the tokens of a solution it cuts (listed above); ABH_LEAKS=report: reported, not refused\n"):sub(-100),
     "ABH_LEAKS=report lists them and makes the handout", out, err)
  is(U.run(report .. " --leaks out"), 0, "--leaks DIR, on the handout written, exits 0 with ABH_LEAKS=report")
  local _, _, listed = U.run(report .. " --leaks out")
  is(listed, err, "and lists the same places")
  status, out, err = U.run(("cd %s && lua5.4 %s --leaks out"):format(q(dir), q(ROOT .. "/tools/handout.lua")))
  ok(status == 1 and err:find("\nhandout: out: 2 places hold the tokens of a solution it cuts %(listed above%): the handout leaks %(ABH_LEAKS=fail%)\n$"),
     "by default --leaks exits 1 on a leak", out, err)

  dir = small_book{["chapters/01-one.md"] = CHAPTER_1_LONG .. "\nThat is, `" .. SAME_TOKENS .. "`.\n"}
  local env = ("cd %s && ABH_LEAKS=fail lua5.4 %s -o out 1"):format(q(dir), q(ROOT .. "/tools/handout.lua"))
  status, out, err = U.run(env)
  err = err:gsub(" %(tokens %x+%)", "")
  ok(status == 1 and err == "chapters/01-one.md:18: Exercise 1.1: the tokens of its solution, chapters/01-one.md:8\n" ..
     "handout: out: 1 place holds the tokens of a solution it cuts (listed above): nothing written (ABH_LEAKS=fail)\n",
     "the exercise's own chapter outside the stub counts, at the book's line; ABH_LEAKS=fail refuses the handout", out, err)
  is(sh("ls " .. q(dir) .. "/out 2>/dev/null"), "", "and nothing is written")
  status, _, err = U.run(("cd %s && ABH_LEAKS=maybe lua5.4 %s -o out 1"):format(q(dir), q(ROOT .. "/tools/handout.lua")))
  ok(status == 1 and err:find("^handout: ABH_LEAKS=maybe: it is fail"), "ABH_LEAKS is report or fail", err)

  dir = small_book{["chapters/01-one.md"] = CHAPTER_1_LONG,
                   ["tests/test_one.c"] = "for (int i = 0; i < n; i++) y[i] = x[i];\nint s = combine(a, b, 2);\n"}
  status, _, err = handout(dir, "1")
  ok(status == 0 and err == "", "a loop that copies an array, or a part of a line, is no leak", err)
end

-- A chapter with two regions: one whose marker lists names, one without.
local CHAPTER_1_FORMS = CHAPTER_1:gsub("\n## Exercises", [[

```c {chunk="Check"}
// <<Check>>=
// BEGIN SOLUTION Exercise 1.1
int checked_twice_over = 1;
// END SOLUTION Exercise 1.1
```

## Exercises]]):gsub("%}\n```\n", "}\n<<Check>>\n```\n", 1)

do  -- the README shows the stubs as the handout has them, and what they reach
  local dir = small_book{["chapters/01-one.md"] = CHAPTER_1_FORMS, ["chapters/03-three.md"] = CHAPTER_3,
                         ["tests/test_two.c"] = '#include "two.c"\nint main(void) { return run("one", NO_ARGS); }\n'}
  local status, _, err = handout(dir, "1 3")
  is(status, 0, "a chapter with a named and an unnamed region is handed out", err)
  local readme = read(dir .. "/out/README.md") or ""
  ok(readme:find("\n    // BEGIN SOLUTION Exercise 1.1\n    NOT_IMPLEMENTED(\"Exercise 1.1\");\n    // END SOLUTION Exercise 1.1\n", 1, true),
     "the README shows a stub without names, as the handout has it", readme)
  ok(readme:find("\n    // BEGIN SOLUTION Exercise 1.1 (a, b)\n    NOT_IMPLEMENTED(\"Exercise 1.1\", a, b);\n    // END SOLUTION Exercise 1.1\n", 1, true),
     "and one with the names its marker lists", readme)
  ok(not readme:find('NOT_IMPLEMENTED("Exercise N.M"', 1, true), "and no made-up stub form (\"Exercise N.M\", names)", readme)
  local chapter = read(dir .. "/out/chapters/01-one.md") or ""
  local lines = {}
  local n = 0
  for line in chapter:gmatch("([^\n]*)\n") do
    n = n + 1
    if line:find("NOT_IMPLEMENTED", 1, true) then lines[#lines + 1] = n end
  end
  local flat = readme:gsub("%s+", " ")
  ok(#lines == 2 and flat:find(("chapters/01-one.md:%d NOT_IMPLEMENTED(\"Exercise 1.1\", a, b);"):format(lines[1]), 1, true)
     and flat:find(("chapters/01-one.md:%d NOT_IMPLEMENTED(\"Exercise 1.1\");"):format(lines[2]), 1, true),
     "the README lists every stub at its line of the handout's chapter", readme)
  ok(flat:find("Exercise 1.1 (chapters/01-one.md) is code of one. Besides chapter 1's own tests, those of chapter 2 (tests/test_two.c) run it.", 1, true),
     "the README says which other chapters' tests run an assigned exercise's code (read from the tests)", readme)
  ok(readme:find('make grade CHAPTERS="1 3"', 1, true), "and how to grade the assigned chapters alone", readme)
end

-- The real Makefile in the small book: make handout with no programs to
-- compile (TESTS= empties the compile check), so that it runs in a moment.
local function with_makefile(dir)
  for _, path in ipairs{"Makefile", "tools/handout.lua", "tools/deps.lua", "tools/util.lua", "tools/ensure-tools.sh", "tools/summary.lua", "tangle/tangle.lua"} do
    write(dir .. "/" .. path, read(ROOT .. "/" .. path))
  end
  return dir
end

local function make(dir, args)
  -- not the settings of a make that runs this test (make test V=1 ...): make
  -- passes them down in MAKEFLAGS and in the environment
  return U.run(("cd %s && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory V=0 CHAPTERS= HANDOUT_KEEP_BUILD= TESTS= %s")
    :format(q(dir), args))
end

do  -- make handout: where it writes, and what it refuses
  local dir = with_makefile(small_book())
  local target = TMP .. "/made by make"
  local status, out, err = make(dir, ("handout CHAPTERS=1 HANDOUT_DIR=%s"):format(q(target)))
  ok(status == 0 and read(target .. "/chapters/01-one.md"), "make handout writes to a HANDOUT_DIR with a space in its name", out, err)
  is(read(target .. ".log"), nil, "and writes no log beside it")
  ok(read(dir .. "/build/handout-check.log"), "its compile check's log is in the book's build/")
  if sh("command -v git"):find("git") then
    local committed = sh(("git -C %s ls-files"):format(q(target)))
    ok(committed:find("chapters/01-one.md", 1, true) and not committed:find(".abh-handout", 1, true) and read(target .. "/.abh-handout"),
       "the handout's commit leaves out its marker, which stays in the directory", committed)
  end
  status, out, err = make(dir, ("handout CHAPTERS=1 HANDOUT_DIR=%s"):format(q(target)))
  ok(status == 0 and out:find("GIT", 1, true), "make handout can be run again over the handout it made", out, err)

  if sh("command -v git"):find("git") then
    -- a student's work, uncommitted, then committed, is never replaced without FORCE=1
    local chapter = target .. "/chapters/01-one.md"
    local mine = (read(chapter) or ""):gsub('NOT_IMPLEMENTED%("Exercise 1.1", a, b%);', "return (a + b) * 2;")
    write(chapter, mine)
    status, out, err = make(dir, ("handout CHAPTERS=1 HANDOUT_DIR=%s"):format(q(target)))
    local lines = select(2, err:gsub("\nhandout: ", "")) + (err:find("^handout: ") and 1 or 0)
    ok(status ~= 0 and lines == 1 and err:find("handout: " .. target .. " is a handout with work a new one would delete: " ..
       "1 file changed or added (chapters/01-one.md): nothing deleted or written; make handout FORCE=1", 1, true),
       "a second make handout over an uncommitted solution is refused, in one line", out, err)
    is(read(chapter), mine, "and the solution survives")
    sh(("cd %s && git add -A && git -c user.name=S -c user.email=s@x.invalid commit -qm 'my answer'"):format(q(target)))
    local log = sh(("git -C %s log --format=%%s"):format(q(target)))
    status, out, err = make(dir, ("handout CHAPTERS=1 HANDOUT_DIR=%s"):format(q(target)))
    ok(status ~= 0 and err:find("1 file changed or added (chapters/01-one.md) and 1 commit after the handout's first", 1, true),
       "a committed solution is refused too, naming the commit", out, err)
    ok(log:find("^my answer\n") and sh(("git -C %s log --format=%%s"):format(q(target))) == log and read(chapter) == mine,
       "and its history is intact", log)
    sh(("cd %s && git reset -q --hard HEAD~1"):format(q(target)))
    status, out, err = make(dir, ("handout CHAPTERS=1 HANDOUT_DIR=%s"):format(q(target)))
    ok(status ~= 0 and err:find(": 1 commit after the handout's first: nothing deleted", 1, true),
       "a commit only the reflog still holds is work too", out, err)
    status, out, err = make(dir, ("handout CHAPTERS=1 HANDOUT_DIR=%s FORCE=1"):format(q(target)))
    ok(status == 0 and sh(("git -C %s rev-list --all --reflog --count"):format(q(target))) == "1\n"
       and (read(chapter) or ""):find("NOT_IMPLEMENTED", 1, true), "FORCE=1 replaces it with a new handout, one commit", out, err)
  end

  status, out, err = make(dir, "handout CHAPTERS=1")
  ok(status == 0 and read(dir .. "/handout/chapters/01-one.md"), "the default handout is handout/ at the top of the book", out, err)
  status, out, err = make(dir, "clean")
  ok(status == 0 and not read(dir .. "/build/handout-check.log") and read(dir .. "/handout/chapters/01-one.md"),
     "make clean deletes build/ and leaves the handout alone", out, err)

  write(dir .. "/theirs/notes.txt", "my notes\n")
  status, out, err = make(dir, "handout CHAPTERS=1 HANDOUT_DIR=theirs")
  ok(status ~= 0 and err:find("^handout: theirs is not empty and is not a handout made before"),
     "make handout refuses a directory holding something else", out, err)
  is(tree(dir .. "/theirs"), "notes.txt\n", "deletes nothing in it and writes nothing")
  is(read(dir .. "/theirs.log"), nil, "and writes no log beside it")
end

tap.done()   -- closes the state, running `cleanup`
