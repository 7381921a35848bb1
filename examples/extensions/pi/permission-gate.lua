-- Port of pi's examples/extensions/permission-gate.ts.
--
-- Asks before the model runs a dangerous `bash` command (`rm -rf` / `rm -r` / `rm
-- --recursive`, `sudo`, `chmod`/`chown ... 777`): a choice of "Yes" / "No" with
-- ctx.ui.select. Anything but "Yes" blocks the call and the model is told why. In print and
-- json mode nobody can answer (select gives nil at once), so a dangerous command is blocked.
--
-- Try it:
--   printf 'go\nYes\n' | mypi --provider faux --faux-script s.jsonl --extensions-dir DIR
--   (s.jsonl: {"tool_calls": [{"name": "bash", "arguments": {"command": "sudo true"}}]})
--   mypi --provider faux --faux-script s.jsonl --extensions-dir DIR -p go   # blocked: no UI
--
-- Left out: nothing of substance. pi checks `ctx.hasUI` first; mypi has no such flag, but
-- ctx.mode says the same ("repl" is the only mode with a user to ask).

-- Lua patterns have no `\b` and no alternation, so each rule is a function of the
-- lower-cased command (pi's rules are case-insensitive too).
local function word(cmd, w)
  return cmd:find("%f[%w]" .. w .. "%f[%W]") ~= nil
end

local RULES = {
  function(c) return c:find("%f[%w]rm%s+%-rf?") ~= nil or c:find("%f[%w]rm%s+%-%-recursive") ~= nil end,
  function(c) return word(c, "sudo") end,
  function(c) return (word(c, "chmod") or word(c, "chown")) and c:find("777", 1, true) ~= nil end,
}

local function dangerous(command)
  local c = command:lower()
  for _, rule in ipairs(RULES) do
    if rule(c) then return true end
  end
  return false
end

api.on("tool_call", function(e, ctx)
  if e.name ~= "bash" then return nil end
  local command = tostring(e.args.command or "")
  if not dangerous(command) then return nil end

  if ctx.mode ~= "repl" then
    return { block = true, reason = "Dangerous command blocked (no UI for confirmation)" }
  end
  local choice = ctx.ui.select("Dangerous command:\n\n  " .. command .. "\n\nAllow?", { "Yes", "No" })
  if choice ~= "Yes" then
    return { block = true, reason = "Blocked by user" }
  end
  return nil
end)
