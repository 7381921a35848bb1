-- Blocks dangerous shell commands before they run; the model receives the reason.
local patterns = { "rm%s+%-rf", "rm%s+%-fr", "mkfs", ":%(%)%s*{" }

api.on("tool_call", function(e)
  if e.name ~= "bash" then return end
  for _, p in ipairs(patterns) do
    if e.args.command:find(p) then
      return { block = true, reason = "the guard refuses `" .. e.args.command .. "`: destructive command" }
    end
  end
end)
