#!/usr/bin/env lua5.4
-- Tests of tangle/tangle.lua, in TAP version 13:
--     prove --norc -e '' tests/tangle_test.lua
-- Each group builds a small book, tangles it through the module or the
-- command line, and checks one rule of the tangler. Chapters are written as
-- long strings; the comments beside them give the line numbers that matter.

-- TAP (tests/tap.lua) and files, directories and commands (tools/util.lua)
local HERE = arg[0]:match("^(.*)/") or "."
local tap = dofile(HERE .. "/tap.lua")
local U = dofile(HERE .. "/../tools/util.lua")
local ok, is, like, skip = tap.ok, tap.is, tap.like, tap.skip
local q, sh, read, write = U.q, U.sh, U.read, U.write

-- The modification time of `path` in seconds, as a string.
local function mtime(path)
  return (sh("stat -c %Y " .. q(path)))
end

-- The files under `dir`, relative to it, sorted, one per line ("" if none
-- or if `dir` does not exist).
local function files_under(dir)
  return (sh("cd " .. q(dir) .. " 2>/dev/null && find . -type f | sort"))
end

-- The interpreter running this test (the most negative index of arg).
local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i] or "lua5.4"
end

local ROOT = sh("cd " .. q(HERE .. "/..") .. " && pwd"):gsub("\n$", "")
local TANGLE = ROOT .. "/tangle/tangle.lua"
local LUA = interpreter()

-- A scratch directory for every test, removed when the script ends, even
-- by an error (a to-be-closed variable of the main chunk).
local TMP = os.tmpname()
os.remove(TMP)
sh("mkdir -p " .. q(TMP))
local cleanup <close> = setmetatable({}, {__close = function() sh("rm -rf -- " .. q(TMP)) end})
local scratch_dirs = 0

-- A new empty directory under TMP.
local function new_dir()
  scratch_dirs = scratch_dirs + 1
  local dir = TMP .. "/" .. scratch_dirs
  sh("mkdir -p " .. q(dir))
  return dir
end

-- Write the chapters `chapters` (path -> text) into `dir`.
local function book(dir, chapters)
  for path, text in pairs(chapters) do write(dir .. "/" .. path, text) end
end

-- Run the tangler's command line in `dir` with `words` (already quoted for
-- the shell); return its exit status, standard output and standard error.
local function run(dir, words)
  return U.run(("cd %s && %s %s %s"):format(q(dir), q(LUA), q(TANGLE), words))
end

tap.version()

------------------------------------------------------------------------------
-- Loading the module
------------------------------------------------------------------------------

local globals_before = {}
for name in pairs(_G) do globals_before[name] = true end
local assigned = {}
setmetatable(_G, {__newindex = function(t, name, value)
  assigned[#assigned + 1] = tostring(name)
  rawset(t, name, value)
end})

local T = dofile(TANGLE)

ok(type(T) == "table" and type(T.main) == "function" and type(T.parse) == "function"
   and type(T.tangle) == "function" and type(T.write) == "function",
   "loading the module returns its table without running main")

do  -- run every pass, writing included, while globals are watched
  local dir = new_dir()
  book(dir, {["chapters/g.md"] = "```c {file=g.c}\n// <<g.c>>=\nint g;\n```\n"})
  local outputs = T.tangle{{path = "chapters/g.md", text = read(dir .. "/chapters/g.md")}}
  T.write(outputs, dir .. "/out")
  T.main{"-o", dir .. "/main", dir .. "/chapters/g.md"}
  T.tangle{{path = "chapters/bad.md", text = "```c {file=b.c}\n// <<b.c>>=\n<<Nowher>>\n```\n```c {chunk=Nowhere}\n// <<Nowhere>>=\n```\n"}}
end
setmetatable(_G, nil)
local new_globals = {}
for name in pairs(_G) do
  if not globals_before[name] then new_globals[#new_globals + 1] = name end
end
is(table.concat(assigned, ", ") .. table.concat(new_globals, ", "), "",
   "loading and running the module creates no global variable")

if sh("command -v luac5.4") ~= "" then
  local listing = sh("luac5.4 -p -l -l " .. q(TANGLE))
  ok(listing:find("GETTABUP") and not listing:find("SETTABUP"),
     "no function of the tangler assigns a global variable (luac listing)")
else
  skip("no function of the tangler assigns a global variable (luac listing)", "no luac5.4")
end

do
  local dir = new_dir()
  local status, out, err = run(dir, "--help")
  local loaded = sh(("cd %s && %s -e %s 2>&1"):format(q(dir), q(LUA),
    q(("local M = dofile(%q) io.write(type(M.tangle))"):format(TANGLE))))
  is(loaded, "function", "dofile from another script returns the module")
  local required = sh(("cd %s && %s -e %s 2>&1"):format(q(ROOT), q(LUA),
    q('package.path = "tangle/?.lua;" .. package.path io.write(type(require("tangle").main))')))
  is(required, "function", "require returns the module without running main")
  ok(status == 0 and out:find("^usage: ") and err == "", "run as a script, the file runs main")
end

------------------------------------------------------------------------------
-- Tangling: a file, a chunk appended across two chapters
------------------------------------------------------------------------------

-- Tangle chapters given as path, text, path, text ... through the module.
local function tangle(...)
  local args, sources = {...}, {}
  for i = 1, #args, 2 do sources[#sources + 1] = {path = args[i], text = args[i + 1]} end
  return T.tangle(sources)
end

-- The text of the output called `path` in `outputs`.
local function output(outputs, path)
  for _, file in ipairs(outputs or {}) do
    if file.path == path then return file.text end
  end
end

local A = [[
# A

```c {file=src/a.c}
// <<src/a.c>>=
int main(void) {
    <<Body>>
    return 0;
}
```

Some prose.

```c {chunk="Body"}
// <<Body>>=
int x = 1;
```
]]  -- caption of src/a.c on line 4, reference on 6, Body's caption on 14

local B = [[
# B

```c {chunk="Body"}
// <<Body>>+=
x += 2;
```
]]  -- the appended piece's caption on line 4

local A_C = [[
/* Generated by tangle/tangle.lua from chapters/01-a.md, chapters/02-b.md. Edit the chapters, not this file. */
#line 4 "chapters/01-a.md"
// <<src/a.c>>=
int main(void) {
#line 14 "chapters/01-a.md"
    // <<Body>>=
    int x = 1;
#line 4 "chapters/02-b.md"
    // <<Body>>+=
    x += 2;
#line 7 "chapters/01-a.md"
    return 0;
}
]]

do
  local outputs, err = tangle("chapters/01-a.md", A, "chapters/02-b.md", B)
  local a = output(outputs, "src/a.c") or ""
  is(err, nil, "a correct book tangles without error")
  is(outputs and #outputs, 1, "a book with one file block gives one output")
  is(a, A_C, "a file is tangled with a generated comment, its captions and #line directives")
  like(a, "int x = 1;\n#line 4 \"chapters/02%-b.md\"\n    // <<Body>>%+=\n    x %+= 2;",
       "a chunk's blocks from two chapters are joined in book order")
  like(a, "\n#line 7 \"chapters/01%-a.md\"\n    return 0;",
       "a #line directive follows an expanded reference back to the referring block")
  like(a, "\n#line 4 \"chapters/02%-b.md\"\n",
       "a #line directive names the other chapter when the lines switch chapters")
  like(a, "^/%* Generated by tangle/tangle%.lua from chapters/01%-a%.md, chapters/02%-b%.md%. Edit the chapters, not this file%. %*/\n",
       "the generated comment names every chapter that contributed")
  local swapped = tangle("chapters/02-b.md", (B:gsub("<<Body>>%+=", "<<Body>>=")), "chapters/01-a.md", (A:gsub("<<Body>>=", "<<Body>>+=")))
  like(output(swapped, "src/a.c"), "x %+= 2;\n#line 14 \"chapters/01%-a%.md\"\n    // <<Body>>%+=\n    int x = 1;",
       "book order is the order of the chapters given, not their names")
  local alone = tangle("chapters/01-a.md", A)
  like(output(alone, "src/a.c"), "^/%* Generated by tangle/tangle%.lua from chapters/01%-a%.md%. Edit the chapter, not this file%. %*/\n",
       "the generated comment of a one-chapter file says 'the chapter'")
end

------------------------------------------------------------------------------
-- Indentation, order, references
------------------------------------------------------------------------------

local NESTED = [[
```c {file=n.c}
// <<n.c>>=
void f(void) {
    <<Outer>>
}
```
```c {chunk="Outer"}
// <<Outer>>=
for (;;) {
    <<Inner>>

}
```
```c {chunk="Inner"}
// <<Inner>>=
break;
```
]]  -- line 11 of the chapter is blank

local NESTED_C = [[
/* Generated by tangle/tangle.lua from chapters/n.md. Edit the chapter, not this file. */
#line 2 "chapters/n.md"
// <<n.c>>=
void f(void) {
#line 8 "chapters/n.md"
    // <<Outer>>=
    for (;;) {
#line 15 "chapters/n.md"
        // <<Inner>>=
        break;
#line 11 "chapters/n.md"

    }
#line 5 "chapters/n.md"
}
]]

do
  local outputs, err = tangle("chapters/n.md", NESTED)
  local n = output(outputs, "n.c") or tostring(err)
  is(n, NESTED_C, "nested references are expanded in place")
  like(n, "\n    // <<Outer>>=\n    for %(;;%) {\n",
       "a reference's indentation is put before every line of its chunk")
  like(n, "\n        // <<Inner>>=\n        break;\n",
       "the indentation of nested references accumulates")
  like(n, "\n#line 11 \"chapters/n.md\"\n\n    }\n", "a blank line of a chunk is not indented")
  like(n, "\n#line %d+ \"chapters/n.md\"\n", "#line directives start at column 0 even inside an indented chunk")

  local tabbed = tangle("chapters/t.md", "```c {file=t.c}\n// <<t.c>>=\n\t<<T>>\n```\n```c {chunk=T}\n// <<T>>=\nt;\n```\n")
  like(output(tabbed, "t.c"), "\n\t// <<T>>=\n\tt;\n", "a reference indented by a tab puts the tab before every line")

  local twice = tangle("chapters/2.md", "```c {file=2.c}\n// <<2.c>>=\n<<X>>\n<<X>>\n```\n```c {chunk=X}\n// <<X>>=\nx;\n```\n")
  local _, copies = (output(twice, "2.c") or ""):gsub("\nx;", "")
  is(copies, 2, "a chunk referenced twice is expanded twice")

  local ordered = tangle("chapters/o.md", "```c {file=z.c}\n// <<z.c>>=\n```\n```c {file=a.c}\n// <<a.c>>=\n```\n")
  is(ordered and ordered[1].path .. " " .. ordered[2].path, "z.c a.c",
     "outputs come in the order of their file blocks, not sorted")

  local quoted = tangle('chap"ter\\.md', '```c {file=q.c}\n// <<q.c>>=\n```\n')
  like(output(quoted, "q.c"), '\n#line 2 "chap\\"ter\\\\%.md"\n', "a chapter path is escaped in a #line directive")

  local sample = tangle("chapters/line.md", "```c {file=l.c}\n// <<l.c>>=\nint a;\n<<Y>>\nint b;\n```\n```c {chunk=Y}\n// <<Y>>=\n```\n")
  like(output(sample, "l.c"), '// <<Y>>=\n#line 5 "chapters/line.md"\nint b;', "a #line follows an expansion even when the chunk is only its caption")
end

------------------------------------------------------------------------------
-- What is read: fences, info strings, line endings
------------------------------------------------------------------------------

local IGNORED = [[
```c
// <<Not a chunk>>=
<<Not a reference>>
```
```console
$ <<not a reference either>>
```
```c {.numberLines #listing}
<<Still not a reference>>
```
```
<<plain>>
```
```c {file=kept.c}
// <<kept.c>>=
kept;
```
]]

local FENCES = table.concat({
  "````c {file=f.c}",    -- 1: a fence of four backticks
  "// <<f.c>>=",         -- 2
  "```",                 -- 3: too short to close it
  "~~~~",                -- 4: another character
  "```` not alone",      -- 5: text after the fence
  "`````   ",            -- 6: longer, trailing spaces: closes
  "~~~c {file=g.c}",     -- 7
  "// <<g.c>>=",         -- 8
  "~~~ ",                -- 9: closes
  "   ```c {file=i.c}",  -- 10: indented by 3 spaces
  "   // <<i.c>>=",      -- 11
  "     two;",           -- 12: loses 3 of its 5 spaces
  "   ```",              -- 13
  "    ```c {file=no.c}", -- 14: 4 spaces: indented code, not a fence
  "    // <<no.c>>=",    -- 15
  "    ```",             -- 16
}, "\n") .. "\n"

do
  local outputs, err = tangle("chapters/i.md", IGNORED)
  is(err, nil, "blocks without file= or chunk= are not checked")
  is(outputs and #outputs == 1 and outputs[1].path, "kept.c", "blocks without file= or chunk= are ignored")

  outputs, err = tangle("chapters/f.md", FENCES)
  is(err, nil, "a book with ``` and ~~~ fences of several lengths tangles")
  like(output(outputs, "f.c"), '\n// <<f.c>>=\n```\n~~~~\n```` not alone\n$',
       "a fence is closed only by the same character, at least as long, alone on its line")
  like(output(outputs, "g.c"), '#line 8 "chapters/f.md"\n// <<g.c>>=\n$', "~~~ fences work like ``` fences")
  like(output(outputs, "i.c"), '#line 11 "chapters/f.md"\n// <<i.c>>=\n  two;\n$',
       "an opening fence indented by 3 spaces removes that indentation from the code")
  is(output(outputs, "no.c"), nil, "a fence indented by 4 spaces is not a fence")

  local crlf = tangle("chapters/crlf.md", "# Title\r\n\r\n```c {file=crlf.c}\r\n// <<crlf.c>>=\r\n    <<R>>\r\n```\r\n```c {chunk=R}\r\n// <<R>>=\r\nint r;\r\n```\r\n")
  is(output(crlf, "crlf.c"), '/* Generated by tangle/tangle.lua from chapters/crlf.md. Edit the chapter, not this file. */\n#line 4 "chapters/crlf.md"\n// <<crlf.c>>=\n#line 8 "chapters/crlf.md"\n    // <<R>>=\n    int r;\n',
     "CRLF line endings are read as plain newlines")

  local last = tangle("chapters/last.md", "```c {file=last.c}\n// <<last.c>>=\nint last;\n```")
  like(output(last, "last.c"), "\nint last;\n$", "a last fence without a trailing newline still closes its block")
  local last_crlf = tangle("chapters/last.md", "```c {file=last.c}\r\n// <<last.c>>=\r\nint last;\r\n```\r")
  like(output(last_crlf, "last.c"), "\nint last;\n$", "a last fence ending in a lone carriage return still closes its block")

  local bom = tangle("chapters/bom.md", "\239\187\191```c {file=bom.c}\n// <<bom.c>>=\n```\n")
  ok(output(bom, "bom.c"), "a byte order mark before the first fence is ignored")

  local attrs = tangle("chapters/at.md", '```c {#top .numberLines file="src/with space.c" data-x=1}\n// <<src/with space.c>>=\n<<Bare>>\n```\n```c {chunk=Bare}\n// <<Bare>>=\n```\n')
  ok(output(attrs, "src/with space.c"), "a quoted value may hold spaces, a bare value is one word, other attributes are ignored")
end

do  -- M.parse
  local blocks, err = T.parse("chapters/01-a.md", A)
  is(err, nil, "parse accepts a correct chapter")
  local file, chunk = blocks and blocks[1] or {}, blocks and blocks[2] or {}
  is(blocks and #blocks, 2, "parse returns only the tangler blocks")
  is(("%s %s %s %s %s"):format(file.kind, file.name, file.path, file.line, file.append),
     "file src/a.c chapters/01-a.md 4 false", "parse gives a file block's kind, name, chapter and caption line")
  is(table.concat(file.lines or {}, "|"), "// <<src/a.c>>=|int main(void) {|    <<Body>>|    return 0;|}",
     "a block's lines start at its caption and end before the closing fence")
  is(("%s %s %s"):format(chunk.kind, chunk.name, chunk.line), "chunk Body 14", "parse gives a chunk block's kind, name and caption line")
  local appended = T.parse("chapters/02-b.md", B)
  is(appended and appended[1].append, true, "a += caption marks the block as appending")
end

------------------------------------------------------------------------------
-- Errors: one line "PATH:LINE: message"
------------------------------------------------------------------------------

-- Check that tangling the chapters (path, text, ...) fails with `want`.
local function fails_with(want, name, ...)
  local outputs, err = tangle(...)
  return ok(outputs == nil and err == want, name, "got:      " .. tostring(err), "expected: " .. want)
end

-- A chapter holding one file block, f.c, whose body is `body`.
local function file_with(body)
  return "```c {file=f.c}\n// <<f.c>>=\n" .. body .. "```\n"   -- body starts on line 3
end

-- A chunk block named `name` with caption operator `op` and body `body`.
local function chunk(name, op, body)
  return ('```c {chunk="%s"}\n// <<%s>>%s\n%s```\n'):format(name, name, op or "=", body or "")
end

local SCORES = chunk("Compute the scores", "=", "s;\n")   -- 4 lines

fails_with("chapters/u.md:3: undefined chunk <<Nowhere>>",
  "an undefined chunk is reported at the reference line",
  "chapters/u.md", file_with("<<Nowhere>>\n"))
fails_with("chapters/u.md:4: undefined chunk <<COMPUTE THE SCORES>>; did you mean <<Compute the scores>>?",
  "an undefined chunk suggests a defined name that differs only in case",
  "chapters/u.md", file_with("<<Compute the scores>>\n    <<COMPUTE THE SCORES>>\n") .. SCORES)
fails_with("chapters/u.md:3: undefined chunk <<Compute th scre>>; did you mean <<Compute the scores>>?",
  "an undefined chunk suggests a defined name within 3 edits",
  "chapters/u.md", file_with("<<Compute th scre>>\n<<Compute the scores>>\n") .. SCORES)
fails_with("chapters/u.md:3: undefined chunk <<Compute XXXX scores>>",
  "an undefined chunk suggests nothing when no name is within 3 edits",
  "chapters/u.md", file_with("<<Compute XXXX scores>>\n<<Compute the scores>>\n") .. SCORES)
fails_with("chapters/u.md:7: undefined chunk <<Nowhere>>",
  "an undefined chunk inside a chunk is reported at its reference",
  "chapters/u.md", file_with("<<Compute the scores>>\n") .. chunk("Compute the scores", "=", "<<Nowhere>>\n"))

fails_with("chapters/01-a.md:5: chunk <<Spare>> is defined but never used",
  "a chunk defined but never used is reported at its first definition",
  "chapters/01-a.md", file_with("") .. chunk("Spare"), "chapters/02-b.md", chunk("Spare", "+="))
fails_with("chapters/01-a.md:2: chunk <<Spare>> is defined but never used",
  "a chunk is unused when the book has no file at all",
  "chapters/01-a.md", chunk("Spare"))
fails_with("chapters/u.md:5: chunk <<Lonely>> is defined but never used",
  "a chunk used only by an unused chunk is unused too",
  "chapters/u.md", file_with("") .. chunk("Lonely", "=", "<<Leaf>>\n") .. chunk("Leaf"))

fails_with("chapters/c.md:11: reference cycle: <<A>> -> <<B>> -> <<A>>",
  "a reference cycle is reported at the reference that closes it, naming the chain",
  "chapters/c.md", file_with("<<A>>\n") .. chunk("A", "=", "<<B>>\n") .. chunk("B", "=", "<<A>>\n"))
fails_with("chapters/c.md:7: reference cycle: <<A>> -> <<A>>",
  "a chunk that refers to itself is a reference cycle",
  "chapters/c.md", file_with("<<A>>\n") .. chunk("A", "=", "<<A>>\n"))

fails_with("chapters/02-b.md:4: f.c is also written by chapters/01-a.md:2",
  "a file written by two chapters is reported at the second, naming the first",
  "chapters/01-a.md", file_with(""), "chapters/02-b.md", "# B\n\n" .. file_with(""))
fails_with("chapters/01-a.md:5: f.c is also written by chapters/01-a.md:2",
  "a file written twice in one chapter is reported at the second block",
  "chapters/01-a.md", file_with("") .. file_with(""))

fails_with("chapters/p.md:1: file path /etc/f.c is absolute; it must be relative to the output directory",
  "an absolute file path is reported at the fence",
  "chapters/p.md", "```c {file=/etc/f.c}\n// <</etc/f.c>>=\n```\n")
fails_with("chapters/p.md:1: file path src/../../f.c has a .. part; it must stay inside the output directory",
  "a file path with a .. part is reported",
  "chapters/p.md", "```c {file=src/../../f.c}\n// <<src/../../f.c>>=\n```\n")
fails_with("chapters/p.md:1: empty file path",
  "an empty quoted file path is reported",
  "chapters/p.md", '```c {file=""}\n// <<>>=\n```\n')
fails_with("chapters/p.md:1: empty file path",
  "an empty bare file path is reported",
  "chapters/p.md", "```c {file=}\n// <<>>=\n```\n")
fails_with("chapters/p.md:1: file path src//f.c has an empty or . part",
  "a file path with an empty part is reported",
  "chapters/p.md", "```c {file=src//f.c}\n// <<src//f.c>>=\n```\n")
fails_with("chapters/p.md:1: file path ./f.c has an empty or . part",
  "a file path with a . part is reported",
  "chapters/p.md", "```c {file=./f.c}\n// <<./f.c>>=\n```\n")

fails_with("chapters/k.md:2: missing caption: the first line should be // <<X>>= (or +=)",
  "a chunk block without a caption is reported at its first line",
  "chapters/k.md", '```c {chunk="X"}\nint x;\n```\n')
fails_with("chapters/k.md:2: missing caption: the first line should be // <<f.c>>=",
  "a file block without a caption is reported at its first line",
  "chapters/k.md", "```c {file=f.c}\n// f.c\n```\n")
fails_with("chapters/k.md:1: missing caption: the first line should be // <<X>>= (or +=)",
  "an empty tangler block is reported at its fence",
  "chapters/k.md", '```c {chunk="X"}\n```\n')
fails_with('chapters/k.md:2: caption <<Y>> does not match chunk="X"',
  "a caption naming another chunk is reported",
  "chapters/k.md", '```c {chunk="X"}\n// <<Y>>=\n```\n')
fails_with("chapters/k.md:2: caption <<src/f.c>> does not match file=f.c",
  "a file block's caption must be its path",
  "chapters/k.md", "```c {file=f.c}\n// <<src/f.c>>=\n```\n")
fails_with('chapters/k.md:2: caption <<Two words>> does not match chunk="Two"',
  "a bare attribute value ends at the first space",
  "chapters/k.md", "```c {chunk=Two words}\n// <<Two words>>=\n```\n")

fails_with("chapters/k.md:6: chunk <<X>> has no earlier definition; its first caption takes =, not +=",
  "+= on a chunk's first definition is reported",
  "chapters/k.md", file_with("<<X>>\n") .. chunk("X", "+="))
fails_with("chapters/k.md:9: chunk <<Xs>> has no earlier definition; its first caption takes =, not +=; did you mean <<X>>?",
  "+= on an unknown chunk suggests a close name defined before it",
  "chapters/k.md", file_with("<<X>>\n") .. chunk("X") .. chunk("Xs", "+="))
fails_with("chapters/02-b.md:2: chunk <<X>> is already defined at chapters/01-a.md:6; append to it with +=",
  "= on a chunk's later definition is reported, naming the first",
  "chapters/01-a.md", file_with("<<X>>\n") .. chunk("X"), "chapters/02-b.md", chunk("X"))
fails_with("chapters/k.md:2: a file has one block: its caption takes =, not +=",
  "+= on a file block is reported",
  "chapters/k.md", "```c {file=f.c}\n// <<f.c>>+=\n```\n")

fails_with("chapters/k.md:1: a block takes file= or chunk=, not both",
  "a block with both file= and chunk= is reported at its fence",
  "chapters/k.md", '```c {file=f.c chunk="X"}\n// <<f.c>>=\n```\n')
fails_with('chapters/k.md:1: unterminated quote in {chunk="X}',
  "an unterminated quote in the attributes is reported",
  "chapters/k.md", '```c {chunk="X}\n// <<X>>=\n```\n')
fails_with("chapters/k.md:1: attribute file= given twice",
  "an attribute given twice is reported",
  "chapters/k.md", "```c {file=f.c file=g.c}\n// <<f.c>>=\n```\n")
fails_with("chapters/k.md:1: empty chunk name",
  "an empty chunk name is reported",
  "chapters/k.md", '```c {chunk=""}\n// <<>>=\n```\n')

fails_with("chapters/t.md:5: unterminated code block: no closing ```",
  "an unterminated fence is reported at its opening line",
  "chapters/t.md", file_with("") .. "\n```c {chunk=X}\n// <<X>>=\n")
fails_with("chapters/t.md:3: unterminated code block: no closing ~~~~",
  "an unterminated fence of a block that is not tangled is reported too",
  "chapters/t.md", "# T\n\n~~~~python\nprint(1)\n~~~\n")

------------------------------------------------------------------------------
-- Solution regions: // BEGIN SOLUTION Exercise N.M ... // END SOLUTION Exercise N.M
------------------------------------------------------------------------------

-- A chapter whose file block f.c holds `body` (starting on line 3).
local function solved(body) return file_with(body) end

do
  local text = solved("int f(int a, int b) {\n    // BEGIN SOLUTION Exercise 3.2 (a, b)\n    return a + b;\n" ..
                      "    // END SOLUTION Exercise 3.2\n}\n")
  local blocks, err = T.parse("chapters/03-f.md", text)
  local region = blocks and blocks[1].regions[1] or {}
  is(err, nil, "a chapter with a solution region parses")
  is(("%s %s %s %s"):format(region.exercise, table.concat(region.names or {}, ","), region.first, region.last),
     "3.2 a,b 3 5", "parse gives a region's exercise, the names for its stub and its marker lines")
  local outputs = tangle("chapters/03-f.md", text)
  like(output(outputs, "f.c"), "\n    // BEGIN SOLUTION Exercise 3%.2 %(a, b%)\n    return a %+ b;\n    // END SOLUTION Exercise 3%.2\n",
       "the markers stay in the C as comments, around the code")
  local plain = T.parse("chapters/03-f.md", solved("    // BEGIN SOLUTION Exercise 3.1\n    x;\n    // END SOLUTION Exercise 3.1\n" ..
                                                  "    // BEGIN SOLUTION Exercise 3.1\n    y;\n    // END SOLUTION Exercise 3.1\n"))
  is(plain and #plain[1].regions .. " " .. #plain[1].regions[1].names, "2 0",
     "an exercise may have several regions, and a region no names")
  ok(T.parse("notes/x.md", solved("// BEGIN SOLUTION Exercise 9.1\nx;\n// END SOLUTION Exercise 9.1\n")),
     "a chapter whose name has no number takes any exercise number")
end

fails_with("chapters/03-f.md:4: nested solution region: Exercise 3.1 opened at line 3 is still open",
  "a solution region inside another is reported at the inner BEGIN",
  "chapters/03-f.md", solved("// BEGIN SOLUTION Exercise 3.1\n// BEGIN SOLUTION Exercise 3.2\nx;\n" ..
                             "// END SOLUTION Exercise 3.2\n// END SOLUTION Exercise 3.1\n"))
fails_with("chapters/03-f.md:3: unterminated solution region: no // END SOLUTION Exercise 3.1 before the end of the block",
  "a solution region not closed in its block is reported at its BEGIN",
  "chapters/03-f.md", solved("// BEGIN SOLUTION Exercise 3.1\nx;\n"))
fails_with("chapters/03-f.md:4: END SOLUTION Exercise 3.1 without a BEGIN SOLUTION before it in this block",
  "an END without a BEGIN is reported",
  "chapters/03-f.md", solved("x;\n// END SOLUTION Exercise 3.1\n"))
fails_with("chapters/03-f.md:5: END SOLUTION Exercise 3.2 closes the region of Exercise 3.1 (opened at line 3)",
  "an END that names another exercise is reported",
  "chapters/03-f.md", solved("// BEGIN SOLUTION Exercise 3.1\nx;\n// END SOLUTION Exercise 3.2\n"))
fails_with("chapters/03-f.md:4: empty solution region for Exercise 3.1",
  "an empty solution region is reported",
  "chapters/03-f.md", solved("// BEGIN SOLUTION Exercise 3.1\n// END SOLUTION Exercise 3.1\n"))
fails_with("chapters/03-f.md:3: Exercise 4.1 is not an exercise of this chapter (3)",
  "a region numbered for another chapter is reported",
  "chapters/03-f.md", solved("// BEGIN SOLUTION Exercise 4.1\nx;\n// END SOLUTION Exercise 4.1\n"))
fails_with("chapters/A-f.md:3: Exercise 3.1 is in appendix A: an appendix has no exercises (a handout would not cut it out)",
  "a region in an appendix is reported: a handout cuts only numbered chapters",
  "chapters/A-f.md", solved("// BEGIN SOLUTION Exercise 3.1\nx;\n// END SOLUTION Exercise 3.1\n"))
fails_with("chapters/03-f.md:3: malformed solution marker: write // BEGIN SOLUTION Exercise N.M (names) or // END SOLUTION Exercise N.M",
  "a line that mentions BEGIN SOLUTION but is not a marker is reported",
  "chapters/03-f.md", solved("/* BEGIN SOLUTION 3.1 */\nx;\n"))
fails_with("chapters/03-f.md:3: solution marker: \"a + b\" is not a C identifier (the names in brackets are the variables the stub mentions)",
  "a name in a marker's brackets must be an identifier",
  "chapters/03-f.md", solved("// BEGIN SOLUTION Exercise 3.1 (a + b)\nx;\n// END SOLUTION Exercise 3.1\n"))
fails_with("chapters/03-f.md:5: malformed solution marker: nothing may follow the exercise number but, after BEGIN, (names)",
  "an END marker takes no names",
  "chapters/03-f.md", solved("// BEGIN SOLUTION Exercise 3.1\nx;\n// END SOLUTION Exercise 3.1 (x)\n"))
fails_with("chapters/03-f.md:10: unterminated solution region: no // END SOLUTION Exercise 3.1 before the end of the block",
  "a region cannot span two blocks: it must end in the block it begins in",
  "chapters/03-f.md", solved("<<X>>\n") .. "\nText.\n\n```c {chunk=X}\n// <<X>>=\n// BEGIN SOLUTION Exercise 3.1\nx;\n```\n" ..
  "\n```c {chunk=X}\n// <<X>>+=\n// END SOLUTION Exercise 3.1\n```\n")

do  -- the command line reports a marker error like any other, and writes nothing
  local dir = new_dir()
  book(dir, {["chapters/03-m.md"] = solved("// BEGIN SOLUTION Exercise 3.1\nx;\n")})
  local status, _, err = run(dir, "-o out chapters/03-m.md")
  ok(status == 1 and err == "chapters/03-m.md:3: unterminated solution region: no // END SOLUTION Exercise 3.1 before the end of the block\n"
     and files_under(dir .. "/out") == "", "the command reports an unterminated region in one line and writes nothing", err)
end

------------------------------------------------------------------------------
-- Writing files: M.write
------------------------------------------------------------------------------

do
  local dir = new_dir()
  local outputs = {{path = "src/deep/w.c", text = "w\n"}, {path = "top.c", text = "t\n"}}
  local written, err = T.write(outputs, dir .. "/out/")
  is(table.concat(written or {err}, " "), dir .. "/out/src/deep/w.c " .. dir .. "/out/top.c",
     "write creates the directories and returns the paths it wrote")
  is(read(dir .. "/out/src/deep/w.c"), "w\n", "write puts each output's text in its file")
  written = T.write(outputs, dir .. "/out")
  is(written and #written, 0, "write returns no path when nothing changed")
  is(files_under(dir), "./out/src/deep/w.c\n./out/top.c\n", "write leaves no temporary file behind")
  local blocked, err2 = T.write({{path = "top.c/x.c", text = "x\n"}}, dir .. "/out")
  ok(blocked == nil and err2:find("^" .. dir:gsub("%p", "%%%0") .. "/out/top%.c: cannot create directory: File exists$"),
     "write reports a directory it cannot create", tostring(err2))
end

------------------------------------------------------------------------------
-- The command line
------------------------------------------------------------------------------

local ONE = "# One\n\n```c {file=src/one.c}\n// <<src/one.c>>=\nint one;\n```\n"
local TWO = "# Two\n\n```c {file=two.c}\n// <<two.c>>=\nint two;\n```\n"
local OLD = "200102030405.06"   -- a time in the past, for touch -t

do
  local dir = new_dir()
  book(dir, {["chapters/01-one.md"] = ONE, ["chapters/02-two.md"] = TWO})
  local chapters = "chapters/01-one.md chapters/02-two.md"

  local status, out, err = run(dir, chapters)
  is(status .. "|" .. out .. "|" .. err, "0||", "the command exits 0 and prints nothing on success")
  is(files_under(dir .. "/build"), "./src/one.c\n./two.c\n",
     "the command writes under build by default, creating directories, leaving no temporary file")
  like(read(dir .. "/build/src/one.c") or "", '^/%* Generated .-%*/\n#line 4 "chapters/01%-one%.md"\n// <<src/one%.c>>=\nint one;\n$',
       "the command writes the tangled text: the comment, a #line, the block")

  sh(("touch -t %s %s %s"):format(OLD, q(dir .. "/build/src/one.c"), q(dir .. "/build/two.c")))
  local old_time = mtime(dir .. "/build/two.c")
  status, out = run(dir, "-v " .. chapters)
  is(status .. "|" .. out, "0|", "-v prints nothing when no file changed")
  is(mtime(dir .. "/build/two.c"), old_time, "an unchanged file is not rewritten (its mtime is kept)")

  write(dir .. "/chapters/02-two.md", TWO:gsub("int two;", "long two;"))
  status, out = run(dir, "-v " .. chapters)
  is(status .. "|" .. out, "0|build/two.c\n", "-v prints one line per file written, and only those")
  ok(mtime(dir .. "/build/two.c") ~= old_time and read(dir .. "/build/two.c"):find("long two;"),
     "a changed file is rewritten")
  is(mtime(dir .. "/build/src/one.c"), old_time, "a file beside a changed one is not rewritten")
  is(files_under(dir .. "/build"), "./src/one.c\n./two.c\n", "rewriting a file leaves no temporary file behind")

  write(dir .. "/chapters/03-bad.md", "```c {file=three.c}\n// <<three.c>>=\n<<Nowhere>>\n```\n")
  write(dir .. "/chapters/02-two.md", TWO:gsub("int two;", "short two;"))
  local before = read(dir .. "/build/two.c")
  status, out, err = run(dir, "-v " .. chapters .. " chapters/03-bad.md")
  is(status .. "|" .. out .. "|" .. err, "1||chapters/03-bad.md:3: undefined chunk <<Nowhere>>\n",
     "an error exits 1 with one line PATH:LINE: message on stderr and nothing on stdout")
  ok(read(dir .. "/build/two.c") == before and files_under(dir .. "/build") == "./src/one.c\n./two.c\n",
     "on an error no file is rewritten, not even one whose chapter changed")
end

do
  local dir = new_dir()
  book(dir, {["chapters/01-one.md"] = ONE, ["chapters/02-bad.md"] = file_with("<<A>>\n") .. chunk("A", "=", "<<A>>\n")})
  local status, _, err = run(dir, "chapters/01-one.md chapters/02-bad.md")
  is(status .. "|" .. err, "1|chapters/02-bad.md:7: reference cycle: <<A>> -> <<A>>\n",
     "the command reports a reference cycle")
  is(files_under(dir .. "/build"), "", "on an error nothing is written, even for the correct chapters")

  status, _, err = run(dir, "chapters/01-one.md chapters/missing.md")
  is(status .. "|" .. err, "1|chapters/missing.md: cannot read: No such file or directory\n",
     "a chapter that does not exist is reported, and the command exits 1")
  status, _, err = run(dir, "chapters")
  is(status .. "|" .. err, "1|chapters: cannot read: Is a directory\n", "a chapter that is a directory is reported")
  is(files_under(dir .. "/build"), "", "nothing is written when a chapter cannot be read")
end

do
  local dir = new_dir()
  local odd = "out dir/it's"
  book(dir, {["-dash.md"] = ONE})
  local status, out, err = run(dir, "-v -o " .. q(odd) .. " -- -dash.md")
  is(status .. "|" .. out .. "|" .. err, "0|" .. odd .. "/src/one.c\n|",
     "-o names the output directory, even one with spaces and quotes, and -- ends the options")
  like(read(dir .. "/" .. odd .. "/src/one.c"), '\n#line 4 "%-dash%.md"\n',
       "#line directives name the chapter exactly as given on the command line")

  status, out, err = run(dir, "-h")
  ok(status == 0 and out:find("^usage: lua5%.4 tangle/tangle%.lua %[%-o OUTDIR%] %[%-v%] CHAPTER%.md") and err == "",
     "-h prints the usage on stdout and exits 0", out, err)
  status, out, err = run(dir, "-x -dash.md")
  is(status .. "|" .. out .. "|" .. err, "1||tangle: unknown option -x (try -h)\n", "an unknown option exits 1 with a hint")
  status, _, err = run(dir, "")
  is(status .. "|" .. err, "1|tangle: no chapters given (try -h)\n", "no chapters exits 1 with a hint")
  status, _, err = run(dir, "x.md -o")
  is(status .. "|" .. err, "1|tangle: -o needs a directory (try -h)\n", "-o without a directory exits 1")
end

------------------------------------------------------------------------------
-- Malformed chapters: a result or one line "PATH:LINE: message", never a
-- Lua error (which the module raises again, as a bug of the tangler's)
------------------------------------------------------------------------------

-- Tangle chapters (path, text, ...) under pcall; return "ok" (with the
-- outputs), "error" with the message, or "bug" with the Lua error.
local function outcome(...)
  local done, outputs, err = pcall(tangle, ...)
  if not done then return "bug", outputs end
  if outputs then return "ok", outputs end
  return "error", err
end

-- Check that the chapter `text` (as chapters/m.md) fails with `want`.
local function malformed(want, name, text)
  local kind, result = outcome("chapters/m.md", text)
  return ok(kind == "error" and result == want, name, "got:      " .. kind .. ": " .. tostring(result), "expected: " .. want)
end

do  -- random bytes, biased towards the characters the tangler reads
  math.randomseed(20240601)
  local pieces = {"```", "~~~", "````", "c {file=", "c {chunk=", "}", '"', "<<", ">>", ">>=", ">>+=", "// ",
                  "\n", "\r\n", "\t", " ", "a", "/", "..", "\0", "\255", "\r"}
  local bugs, bad_errors = {}, {}
  for _ = 1, 400 do
    local text = {}
    for _ = 1, math.random(0, 60) do
      text[#text + 1] = math.random() < 0.7 and pieces[math.random(#pieces)] or string.char(math.random(0, 255))
    end
    text = table.concat(text)
    local kind, result = outcome("chapters/r.md", text)
    if kind == "bug" then bugs[#bugs + 1] = ("%q: %s"):format(text, result) end
    if kind == "error" and not result:find("^chapters/r%.md:%d+: [^\n]+$") then
      bad_errors[#bad_errors + 1] = ("%q: %s"):format(text, result)
    end
  end
  ok(#bugs == 0, "400 chapters of random bytes never raise a Lua error", table.unpack(bugs, 1, math.min(#bugs, 3)))
  ok(#bad_errors == 0, "every error on random bytes is one line chapters/r.md:LINE: message",
     table.unpack(bad_errors, 1, math.min(#bad_errors, 3)))
end

do
  local dir = new_dir()
  local junk = {}
  math.randomseed(7)
  for i = 1, 3000 do junk[i] = string.char(math.random(0, 255)) end
  book(dir, {["chapters/junk.md"] = "```c {file=j.c}\n// <<j.c>>=\n" .. table.concat(junk) .. "\n"})
  local status, out, err = run(dir, "chapters/junk.md")
  is(status .. "|" .. out .. "|" .. err, "1||chapters/junk.md:1: unterminated code block: no closing ```\n",
     "the command answers a chapter of random bytes with one line, PATH:LINE: message")
end

malformed("chapters/m.md:3: unterminated code block: no closing ```",
  "CRLF line endings: an unterminated fence is reported at its line",
  "# M\r\n\r\n```c {file=a.c}\r\n// <<a.c>>=\r\nint a;\r\n")
malformed("chapters/m.md:1: unterminated code block: no closing ````",
  "a fence of four backticks is not closed by three",
  "````c {file=a.c}\n// <<a.c>>=\n```\nint a;\n```\n")
malformed("chapters/m.md:2: missing caption: the first line should be // <<a.c>>=",
  "a caption indented by a tab is still a caption, but one that is not C is reported",
  "```c\t{file=a.c}\n\t# <<a.c>>=\n```\n")
malformed("chapters/m.md:7: reference cycle: <<A>> -> <<A>>",
  "a chunk that refers to itself is a cycle, reported at the reference (CRLF, tabs)",
  "```c {file=a.c}\r\n// <<a.c>>=\r\n\t<<A>>\r\n```\r\n```c {chunk=A}\r\n// <<A>>=\r\n\t<<A>>\r\n```\r\n")
do
  local kind, result = outcome("chapters/m.md", "\t```c {file=a.c}\n\t// <<a.c>>=\n\t```\n")
  ok(kind == "ok" and #result == 0, "a fence indented by a tab is not a fence (CommonMark: indented code), so it writes nothing",
     kind .. ": " .. tostring(result))
  kind, result = outcome("chapters/m.md", "```c {file=a.c}\n// <<a.c>>=\nchar s[] = \"\0\255\254\";\n```\n")
  ok(kind == "ok" and output(result, "a.c"):find("\"\0\255\254\";\n", 1, true),
     "NUL bytes and invalid UTF-8 in a block are copied as they are", kind .. ": " .. tostring(result))
  kind, result = outcome("chapters/m.md", "")
  ok(kind == "ok" and #result == 0, "an empty chapter writes nothing", kind)
end

do  -- references that multiply: a Lua stack overflow, or gigabytes, without limits
  local chain = {file_with("<<C1>>\n")}
  for i = 1, 100000 do chain[#chain + 1] = chunk("C" .. i, "=", i < 100000 and "<<C" .. i + 1 .. ">>\n" or "x\n") end
  local kind, result = outcome("chapters/m.md", table.concat(chain))
  ok(kind == "error" and result == "chapters/m.md:403: references nested more than 100 deep (<<C1>> -> ... -> <<C101>>)",
     "references nested 100000 deep are reported at the 101st, not a Lua stack overflow", kind .. ": " .. tostring(result))
  local bomb = {file_with("<<C1>>\n")}
  for i = 1, 9 do bomb[#bomb + 1] = chunk("C" .. i, "=", i < 9 and ("<<C" .. i + 1 .. ">>\n"):rep(10) or "x\n") end
  kind, result = outcome("chapters/m.md", table.concat(bomb))
  ok(kind == "error" and result:find("^chapters/m%.md:%d+: f%.c would be over 100000 lines or 16 MiB: a chunk is expanded again and again %(<<C%d>> here%)$"),
     "a chunk expanded 10^8 times is stopped at 100000 lines, not by running out of memory", kind .. ": " .. tostring(result))
  kind, result = outcome("chapters/m.md", file_with(("<<Wide>>\n"):rep(20)) .. chunk("Wide", "=", ("x"):rep(1 << 20) .. "\n"))
  ok(kind == "error" and result:find("^chapters/m%.md:%d+: f%.c would be over 100000 lines or 16 MiB"),
     "a file over 16 MiB is stopped too", kind .. ": " .. tostring(result))
end

do  -- the fuzzer's seeds and every input it found: tests/fuzz/{corpus,regressions}/tangle
  local check = dofile(ROOT .. "/tests/fuzz/tangle_check.lua")(T)
  for _, dir in ipairs{"corpus", "regressions"} do
    local names = sh("ls " .. q(ROOT .. "/tests/fuzz/" .. dir .. "/tangle"))
    for name in names:gmatch("[^\n]+") do
      local done, err = pcall(check, read(ROOT .. "/tests/fuzz/" .. dir .. "/tangle/" .. name))
      ok(done, "tests/fuzz/" .. dir .. "/tangle/" .. name .. ": a result or one line PATH:LINE: message", tostring(err))
    end
  end
end

------------------------------------------------------------------------------
-- Where the tangler writes: only inside the output directory, never through
-- a symbolic link, never half a file
------------------------------------------------------------------------------

do
  local dir = new_dir()
  book(dir, {["chapters/01-one.md"] = ONE, ["chapters/02-two.md"] = TWO})
  local chapters = "chapters/01-one.md chapters/02-two.md"
  sh(("cd %s && mkdir -p elsewhere build && ln -s ../elsewhere build/src"):format(q(dir)))
  local status, out, err = run(dir, chapters)
  is(status .. "|" .. out .. "|" .. err,
     "1||chapters/01-one.md:4: build/src is a symbolic link; the tangler writes only inside build and never through a link (remove it)\n",
     "a directory in the output directory that is a symbolic link is refused, naming the block")
  is(files_under(dir .. "/elsewhere") .. "|" .. files_under(dir .. "/build"), "|",
     "nothing is written, neither where the link points nor beside it")

  sh(("cd %s && rm build/src && echo precious > victim && ln -s ../victim build/two.c"):format(q(dir)))
  status, out, err = run(dir, chapters)
  is(status .. "|" .. err,
     "1|chapters/02-two.md:4: build/two.c is a symbolic link; the tangler writes only inside build and never through a link (remove it)\n",
     "an output file that is a symbolic link is refused")
  is(read(dir .. "/victim"), "precious\n", "the file the link points to is untouched")

  sh(("cd %s && rm build/two.c && mkdir real && ln -s real linked"):format(q(dir)))
  status, out, err = run(dir, "-o linked " .. chapters)
  is(status .. "|" .. err .. "|" .. files_under(dir .. "/real"), "0||./src/one.c\n./two.c\n",
     "the output directory itself may be a link: it is the user's choice")

  sh(("cd %s && rm -rf build && mkdir -p build/two.c/inside"):format(q(dir)))
  status, out, err = run(dir, chapters)
  ok(status == 1 and err:find("^build/two%.c: cannot write: [^\n]+\n$"),
     "a file that cannot be replaced (a directory is in its way) is reported", err)
  is(files_under(dir .. "/build"), "./src/one.c\n", "a failed write leaves no temporary or partial file")
end

do
  local dir = new_dir()
  local written, err = T.write({{path = "ok.c", text = "x\n"}, {path = "../out.c", text = "x\n"}}, dir .. "/out")
  is(tostring(written) .. "|" .. tostring(err) .. "|" .. files_under(dir),
     "nil|../out.c: file path ../out.c has a .. part; it must stay inside the output directory|",
     "M.write called directly refuses a path with a .. part too, before writing anything")
  written, err = T.write({{path = "/tmp/out.c", text = "x\n"}}, dir .. "/out")
  like(err, "is absolute", "M.write called directly refuses an absolute path")
end

------------------------------------------------------------------------------
-- gcc reads the #line directives
------------------------------------------------------------------------------

local BAD_C = [[
# A chapter with two mistakes

```c {file=src/bad.c}
// <<src/bad.c>>=
int main(void) {
    <<Use a name>>
    return also_undeclared;
}
```

```c {chunk="Use a name"}
// <<Use a name>>=
int x = undeclared_name;
```
]]  -- the mistakes are on lines 7 and 13

if sh("command -v gcc") ~= "" then
  local dir = new_dir()
  book(dir, {["chapters/01-bad.md"] = BAD_C})
  local status = run(dir, "chapters/01-bad.md")
  local diagnostics = sh(("cd %s && LC_ALL=C gcc -fdiagnostics-color=never -std=c11 -c build/src/bad.c -o /dev/null 2>&1"):format(q(dir)))
  is(status, 0, "a chapter with a C mistake tangles")
  like(diagnostics, "\nchapters/01%-bad%.md:13:%d+: error: 'undeclared_name' undeclared",
       "gcc reports a mistake in a chunk at its line in the chapter")
  like(diagnostics, "\nchapters/01%-bad%.md:7:%d+: error: 'also_undeclared' undeclared",
       "gcc reports a mistake after an expanded reference at its line in the chapter")
else
  skip("gcc reports a mistake in a chunk at its line in the chapter", "no gcc")
end

------------------------------------------------------------------------------

tap.done()   -- closes the state, running `cleanup`
