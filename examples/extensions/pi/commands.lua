-- Port of pi's examples/extensions/commands.ts.
--
-- /commands lists every slash command (api.commands()), grouped: mypi's built-ins first,
-- then each extension's, as a numbered choice (ctx.ui.select). Choosing one asks whether to
-- show who provides it and its description (ctx.ui.confirm). `/commands OWNER` lists only
-- that owner's (`core`, or an extension's name); in print mode the list is printed.
--
-- Try it:
--   printf '/commands\n3\ny\n' | mypi --provider faux --extensions-dir DIR
--   mypi --provider faux --extensions-dir DIR -p "/commands core"
--
-- Left out: argument completion for /commands (pi's getArgumentCompletions; mypi completes
-- command names and some built-ins' arguments, but an extension cannot add completions);
-- pi's sources "prompt" and "skill" (mypi has no prompt templates or skills) and the path of
-- the file behind a command (api.commands() names the owner, not its file).

api.command("commands", function(args, ctx)
  local groups, order = {}, {}
  for _, c in ipairs(api.commands()) do
    if args == "" or c.owner == args then
      if not groups[c.owner] then
        groups[c.owner] = {}
        order[#order + 1] = c.owner
      end
      table.insert(groups[c.owner], c)
    end
  end
  if #order == 0 then
    return args ~= "" and ("No commands of " .. args .. " found") or "No commands found"
  end
  table.sort(order, function(a, b)
    if a == "core" or b == "core" then return a == "core" and b ~= "core" end
    return a < b
  end)

  local items, by_item = {}, {}
  for _, owner in ipairs(order) do
    items[#items + 1] = "--- " .. (owner == "core" and "Built-in" or ("Extension " .. owner)) .. " ---"
    for _, c in ipairs(groups[owner]) do
      local line = "/" .. c.name .. ((c.description or "") ~= "" and (" - " .. c.description) or "")
      items[#items + 1] = line
      by_item[line] = c
    end
  end

  if ctx.mode ~= "repl" then return table.concat(items, "\n") end

  local selected = ctx.ui.select("Available Commands", items)
  local cmd = selected and by_item[selected]
  if cmd and ctx.ui.confirm("/" .. cmd.name .. ": show where it comes from?") then
    return ("/%s is provided by %s%s"):format(cmd.name,
      cmd.owner == "core" and "mypi itself" or ("the extension " .. cmd.owner),
      (cmd.description or "") ~= "" and (": " .. cmd.description) or "")
  end
  return nil
end, "list the slash commands: /commands [OWNER]")
