--- path: string helpers for '/'-separated file paths (`require("path")`, embedded in mypi).
--
--   path.join("a", "b/c", "d.lua")  --> "a/b/c/d.lua"   (an absolute part starts over)
--   path.dirname("a/b/c.lua")       --> "a/b"           ("." for a bare name, "/" for "/x")
--   path.basename("a/b/c.lua")      --> "c.lua"
--   path.ext("a/b/c.tar.gz")        --> "gz"            ("" when none; no dot; ".bashrc" has none)
--   path.stem("a/b/c.tar.gz")       --> "c.tar"
--   path.normalize("a/./b/../c//")  --> "a/c"           (leading ".." of a relative path stay)
--   path.is_absolute("/x")          --> true
local M = { sep = "/" }

local function strip_trailing(p)
  local s = p:gsub("/+$", "")
  if s == "" and p:sub(1, 1) == "/" then
    return "/"
  end
  return s
end

function M.is_absolute(p)
  return p:sub(1, 1) == "/"
end

function M.join(...)
  local out = ""
  for i = 1, select("#", ...) do
    local part = tostring((select(i, ...)))
    if part ~= "" then
      if M.is_absolute(part) or out == "" then
        out = part
      elseif out:sub(-1) == "/" then
        out = out .. part
      else
        out = out .. "/" .. part
      end
    end
  end
  return out
end

function M.dirname(p)
  p = strip_trailing(p)
  if p == "/" then
    return "/"
  end
  local dir = p:match("^(.*)/[^/]*$")
  if dir == nil then
    return "."
  end
  if dir == "" then
    return "/"
  end
  return strip_trailing(dir)
end

function M.basename(p)
  p = strip_trailing(p)
  if p == "/" then
    return ""
  end
  return p:match("([^/]*)$")
end

function M.ext(p)
  local base = M.basename(p)
  return base:match("^.+%.([^.]*)$") or ""
end

function M.stem(p)
  local base = M.basename(p)
  return base:match("^(.+)%.[^.]*$") or base
end

function M.normalize(p)
  local absolute = M.is_absolute(p)
  local parts = {}
  for part in p:gmatch("[^/]+") do
    if part == ".." then
      if #parts > 0 and parts[#parts] ~= ".." then
        parts[#parts] = nil
      elseif not absolute then
        parts[#parts + 1] = ".."
      end
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  local s = table.concat(parts, "/")
  if absolute then
    return "/" .. s
  end
  return s == "" and "." or s
end

return M
