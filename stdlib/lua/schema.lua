--- schema: a small builder for the JSON Schema of a tool's parameters (`require("schema")`,
-- embedded in mypi).
--
--   local s = require("schema")
--   api.tool{
--     name = "read_lines",
--     parameters = s.object{
--       path = s.string("file to read"),
--       n = s.integer("how many lines"):optional(),
--       mode = s.enum({"head", "tail"}, "which end"):default("head"),
--     },
--     execute = function(args, ctx) ... end,
--   }
--
-- gives {type = "object", properties = {...}, required = {"path"}}: every property is
-- required unless marked :optional() (or given a :default()). Builders: string, integer,
-- number, boolean, enum(values), array(items), object(properties), any(); each takes an
-- optional description. Methods: :optional(), :default(value), :describe(text).
local M = {}

local optional = setmetatable({}, { __mode = "k" })

local Node = {}
Node.__index = Node

local function node(t, description)
  t.description = description
  return setmetatable(t, Node)
end

--- Not listed in the enclosing object's `required`.
function Node:optional()
  optional[self] = true
  return self
end

--- A default value (which also makes the property optional).
function Node:default(value)
  rawset(self, "default", value)
  optional[self] = true
  return self
end

function Node:describe(text)
  self.description = text
  return self
end

function M.string(description)
  return node({ type = "string" }, description)
end

function M.integer(description)
  return node({ type = "integer" }, description)
end

function M.number(description)
  return node({ type = "number" }, description)
end

function M.boolean(description)
  return node({ type = "boolean" }, description)
end

--- Any JSON value.
function M.any(description)
  return node({}, description)
end

--- One of `values` (strings, or numbers).
function M.enum(values, description)
  local t = { enum = values }
  local all_strings = true
  for _, v in ipairs(values) do
    if type(v) ~= "string" then
      all_strings = false
    end
  end
  if all_strings then
    t.type = "string"
  end
  return node(t, description)
end

function M.array(items, description)
  return node({ type = "array", items = items or {} }, description)
end

function M.object(properties, description)
  properties = properties or {}
  local required = {}
  for name, prop in pairs(properties) do
    if not optional[prop] then
      required[#required + 1] = name
    end
  end
  table.sort(required)
  local t = { type = "object", properties = properties }
  if #required > 0 then
    t.required = required
  end
  return node(t, description)
end

--- Whether `node` was marked optional.
function M.is_optional(n)
  return optional[n] == true
end

return M
