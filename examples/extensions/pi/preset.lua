-- Port of pi's examples/extensions/preset.ts.
--
-- Named presets of model, tools and instructions, read from ~/.agents/presets.json and
-- <project>/.agents/presets.json (merged; the project's win by name):
--
--   { "plan":      { "tools": ["read", "bash"],
--                    "instructions": "You are in PLANNING MODE. Do not change files." },
--     "implement": { "provider": "anthropic", "model": "claude-sonnet-4-5",
--                    "tools": ["read", "bash", "edit", "write"] } }
--
-- A preset switches the model (api.set_model; `provider` optional), offers the model only
-- its tools (api.set_active_tools; unknown names are reported and skipped) and appends its
-- instructions to the system prompt of every run (before_agent_start). Choose one with
--   * the option `mypi --preset=NAME` (api.flag; write the `=`),
--   * `/preset NAME`, or `/preset` alone for a numbered list (ctx.ui.select) with "(none)",
--   * `/preset next`, which cycles through them (pi's Ctrl+Shift+U).
-- "(none)" offers every tool again. The status line shows `preset:NAME`. The choice is kept
-- in the session (a `preset-state` custom entry), so `mypi --continue` restores its
-- instructions (without switching model or tools again, as in pi).
--
-- Try it (with a presets.json as above in .agents/):
--   mypi --provider faux --extensions-dir DIR --preset=plan -p /tools
--   printf '/preset\n1\n/tools\n' | mypi --provider faux --extensions-dir DIR
--
-- Left out: `thinkingLevel` (mypi has no thinking levels; a preset's value is ignored with a
-- notice) and the keyboard shortcut (mypi has no key bindings; `/preset next` instead). pi's
-- custom select list shows a description under each name; mypi's select shows one line per
-- option, so the description goes on the same line.

local json = require("json")
local fs = require("fs")
local path = require("path")

api.flag{ name = "preset", type = "string", description = "preset configuration to use" }

local presets, active_name = {}, nil

local function load_file(file, into)
  if not fs.exists(file) then return end
  local ok, data = pcall(function() return json.decode(fs.read(file)) end)
  if not ok or type(data) ~= "table" then
    api.notify("cannot read presets from " .. file .. ": " .. tostring(data))
    return
  end
  for name, p in pairs(data) do into[name] = p end
end

local function load_presets(ctx)
  local all = {}
  load_file("~/.agents/presets.json", all)
  load_file(path.join(ctx.cwd, ".agents", "presets.json"), all)
  return all
end

local function names()
  local list = {}
  for name in pairs(presets) do list[#list + 1] = name end
  table.sort(list)
  return list
end

local function describe(p)
  local parts = {}
  if p.model then parts[#parts + 1] = (p.provider and (p.provider .. "/") or "") .. p.model end
  if p.tools then parts[#parts + 1] = "tools:" .. table.concat(p.tools, ",") end
  if p.instructions then
    local s = p.instructions
    parts[#parts + 1] = '"' .. (#s > 30 and s:sub(1, 27) .. "..." or s) .. '"'
  end
  return table.concat(parts, " | ")
end

local function update_status(ctx)
  ctx.ui.set_status("preset", active_name and ("preset:" .. active_name) or nil)
end

local function apply(name, ctx)
  local p = presets[name]
  if p.model then
    api.set_model(p.model, p.provider and { provider = p.provider } or nil)
  end
  if p.thinkingLevel then
    api.notify(('preset "%s": thinkingLevel is not supported by mypi, ignored'):format(name))
  end
  if p.tools and #p.tools > 0 then
    local known = {}
    for _, t in ipairs(api.tools()) do known[t.name] = true end
    local valid, invalid = {}, {}
    for _, t in ipairs(p.tools) do
      if known[t] then valid[#valid + 1] = t else invalid[#invalid + 1] = t end
    end
    if #invalid > 0 then
      api.notify(('preset "%s": unknown tools: %s'):format(name, table.concat(invalid, ", ")))
    end
    if #valid > 0 then api.set_active_tools(valid) end
  end
  active_name = name
  api.append_entry("preset-state", { name = name })
  update_status(ctx)
  return ('Preset "%s" activated'):format(name)
end

local function clear(ctx)
  active_name = nil
  api.set_active_tools(nil)
  api.append_entry("preset-state", { name = json.null })
  update_status(ctx)
  return "Preset cleared, defaults restored"
end

api.command("preset", function(args, ctx)
  local list = names()
  if #list == 0 then
    return "No presets defined. Add presets to ~/.agents/presets.json or .agents/presets.json"
  end
  if args == "next" then
    local cycle = { "(none)" }
    for _, n in ipairs(list) do cycle[#cycle + 1] = n end
    local at = 1
    for i, n in ipairs(cycle) do if n == (active_name or "(none)") then at = i end end
    local nxt = cycle[at % #cycle + 1]
    if nxt == "(none)" then return clear(ctx) end
    return apply(nxt, ctx)
  end
  if args ~= "" then
    if not presets[args] then
      return ('Unknown preset "%s". Available: %s'):format(args, table.concat(list, ", "))
    end
    return apply(args, ctx)
  end
  local options = {}
  for _, n in ipairs(list) do
    options[#options + 1] = n .. (n == active_name and " (active)" or "") .. " — " .. describe(presets[n])
  end
  options[#options + 1] = "(none) — clear the preset, restore the defaults"
  local choice = ctx.ui.select("Select preset", options)
  if not choice then return nil end
  local picked = choice:match("^(%S+)")
  if picked == "(none)" then return clear(ctx) end
  return apply(picked, ctx)
end, "switch preset: /preset [NAME | next]")

api.on("before_agent_start", function(e)
  local p = active_name and presets[active_name]
  if p and p.instructions then
    return { updated_system_prompt = e.system_prompt .. "\n\n" .. p.instructions }
  end
end)

api.on("session_start", function(e, ctx)
  presets = load_presets(ctx)
  local flag = api.flags.preset
  if e.reason == "startup" and flag and flag ~= "" then
    if presets[flag] then
      api.notify(apply(flag, ctx))
    else
      api.notify(('Unknown preset "%s". Available: %s'):format(flag, table.concat(names(), ", ")))
    end
    return
  end
  -- restore the name (for the instructions) from the session, as pi does
  for _, entry in ipairs(ctx.session.entries()) do
    if entry.type == "custom" and entry.kind == "preset-state" then
      active_name = entry.data and entry.data.name or nil
      if active_name and not presets[active_name] then active_name = nil end
    end
  end
  update_status(ctx)
end)
