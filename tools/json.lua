--[[ json.lua: read JSON, for the tools that check what the book's graders write.

    local json = dofile(HERE .. "/json.lua")
    local value, err = json.decode(text)

An object is a table, an array a table with [1], [2], ... (and n, its
length), a string a Lua string (\uXXXX as UTF-8, surrogate pairs joined),
a number a Lua number, true and false themselves, null json.null. Text
that is not JSON (RFC 8259) gives nil and "json: at byte N: what was
expected"; so does anything after the value but spaces.
]]

local M = {null = setmetatable({}, {__tostring = function() return "null" end})}

local ESCAPES = {['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t"}

function M.decode(text)
  local at = 1
  local function fail(what) error({("json: at byte %d: %s"):format(at, what)}, 0) end
  local function space() at = text:find("[^ \t\r\n]", at) or #text + 1 end
  local value
  local function literal(word, result)
    if text:sub(at, at + #word - 1) ~= word then fail("expected " .. word) end
    at = at + #word
    return result
  end
  local function number()
    local sign, int, frac, exp = text:match("^(-?)(%d+)(%.?%d*)([eE]?[-+]?%d*)", at)
    if not int or #int > 1 and int:sub(1, 1) == "0" or frac == "." or exp ~= "" and not exp:match("%d$") then
      fail("a malformed number")
    end
    at = at + #sign + #int + #frac + #exp
    return tonumber(sign .. int .. frac .. exp)
  end
  local function string_()
    local out = {}
    at = at + 1
    while true do
      local c = text:sub(at, at)
      if c == "" then fail("an unterminated string") end
      if c == '"' then at = at + 1 break end
      if c:byte() < 0x20 then fail("a control character in a string") end
      if c == "\\" then
        local e = text:sub(at + 1, at + 1)
        if e == "u" then
          local hex = text:match("^%x%x%x%x", at + 2)
          if not hex then fail("a malformed \\u escape") end
          local code = tonumber(hex, 16)
          at = at + 6
          local low = code >= 0xD800 and code <= 0xDBFF and text:match("^\\u(%x%x%x%x)", at)
          if low and tonumber(low, 16) >= 0xDC00 and tonumber(low, 16) <= 0xDFFF then
            code = 0x10000 + (code - 0xD800) * 0x400 + (tonumber(low, 16) - 0xDC00)
            at = at + 6
          end
          out[#out + 1] = utf8.char(code)
        elseif ESCAPES[e] then
          out[#out + 1], at = ESCAPES[e], at + 2
        else
          fail("a malformed escape")
        end
      else
        local run = text:match('^[^"\\%c]+', at)
        out[#out + 1], at = run, at + #run
      end
    end
    return table.concat(out)
  end
  local function sequence(close, item)
    at = at + 1
    space()
    if text:sub(at, at) == close then at = at + 1 return end
    while true do
      item()
      space()
      local c = text:sub(at, at)
      at = at + 1
      if c == close then return end
      if c ~= "," then at = at - 1 fail("expected , or " .. close) end
      space()
    end
  end
  function value()
    space()
    local c = text:sub(at, at)
    if c == "{" then
      local object = {}
      sequence("}", function()
        if text:sub(at, at) ~= '"' then fail("expected a key") end
        local key = string_()
        space()
        if text:sub(at, at) ~= ":" then fail("expected :") end
        at = at + 1
        object[key] = value()
      end)
      return object
    elseif c == "[" then
      local array = {n = 0}
      sequence("]", function()
        array.n = array.n + 1
        array[array.n] = value()
      end)
      return array
    elseif c == '"' then return string_()
    elseif c == "t" then return literal("true", true)
    elseif c == "f" then return literal("false", false)
    elseif c == "n" then return literal("null", M.null)
    elseif c:match("[-%d]") then return number()
    end
    fail(c == "" and "unexpected end" or "unexpected " .. c)
  end
  local ok, result = pcall(function()
    local v = value()
    space()
    if at <= #text then fail("text after the value") end
    return v
  end)
  if ok then return result end
  if type(result) == "table" then return nil, result[1] end
  error(result, 0)
end

return M
