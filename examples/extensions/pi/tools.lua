-- Port of pi's examples/extensions/tools.ts.
--
-- /tools-on-off turns tools on and off for the model: it lists every tool (api.tools()) as
-- `[x] name` / `[ ] name` (ctx.ui.select); choosing one flips it and the list comes again,
-- until you choose "Done" or answer nothing. `/tools-on-off NAME ...` flips the named tools
-- without asking. The selection is applied with api.set_active_tools and kept in the session
-- (a `tools-config` custom entry), so `mypi --continue` restores it; tools that no longer
-- exist are dropped.
--
-- Try it:
--   printf '/tools-on-off\n1\n4\n5\n/tools\n' | mypi --provider faux --extensions-dir DIR
--   mypi --provider faux --extensions-dir DIR -p "/tools-on-off bash write"
--
-- Left out: pi's settings-list component (arrow keys, Enter to toggle, Esc to close): mypi's
-- numbered select asks once per change. The command is not called /tools as in pi: that name
-- is mypi's built-in list of the active tools (the extension's would become /tools:2).

local json = require("json")

local enabled = nil -- set of names; nil = not known yet (every tool active)

local function all_names()
  local names = {}
  for _, t in ipairs(api.tools()) do names[#names + 1] = t.name end
  return names
end

local function current_set()
  local set = {}
  for _, t in ipairs(api.tools()) do if t.active then set[t.name] = true end end
  return set
end

local function apply()
  local list = json.array()
  for _, n in ipairs(all_names()) do if enabled[n] then list[#list + 1] = n end end
  api.set_active_tools(list)
  api.append_entry("tools-config", { enabled = list })
  return list
end

local function restore(ctx)
  local saved
  for _, e in ipairs(ctx.session.entries()) do
    if e.type == "custom" and e.kind == "tools-config" and e.data then saved = e.data.enabled end
  end
  if not saved then enabled = current_set() return end
  local exists = {}
  for _, n in ipairs(all_names()) do exists[n] = true end
  enabled = {}
  for _, n in ipairs(saved) do if exists[n] then enabled[n] = true end end
  local list = json.array()
  for _, n in ipairs(all_names()) do if enabled[n] then list[#list + 1] = n end end
  api.set_active_tools(list)
end

api.on("session_start", function(e, ctx) restore(ctx) end)

local function summary(list)
  return #list == 0 and "no tools active" or ("active: " .. table.concat(list, ", "))
end

api.command("tools-on-off", function(args, ctx)
  enabled = enabled or current_set()
  if args ~= "" then
    local exists = {}
    for _, n in ipairs(all_names()) do exists[n] = true end
    for name in args:gmatch("%S+") do
      if not exists[name] then return "no tool named " .. name .. "; the tools are " .. table.concat(all_names(), ", ") end
      enabled[name] = not enabled[name] or nil
    end
    return summary(apply())
  end
  local changed = false
  while true do
    local options = {}
    for _, n in ipairs(all_names()) do
      options[#options + 1] = (enabled[n] and "[x] " or "[ ] ") .. n
    end
    options[#options + 1] = "Done"
    local choice = ctx.ui.select("Tool configuration (choose a tool to turn it on or off)", options)
    if not choice or choice == "Done" then break end
    local name = choice:sub(5)
    enabled[name] = not enabled[name] or nil
    changed = true
  end
  if not changed then return nil end
  return summary(apply())
end, "turn tools on or off: /tools-on-off [NAME ...]")
