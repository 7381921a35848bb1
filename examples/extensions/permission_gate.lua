-- Asks before every `bash` and `write` call. In print and JSON mode nobody can answer, so
-- the call is blocked; the model gets the reason either way. Copy to .agents/extensions/.
local ASK = { bash = true, write = true }

api.on("tool_call", function(e, ctx)
  if not ASK[e.name] then return end
  local what = e.name == "bash" and e.args.command or e.args.path
  if ctx.ui.confirm("allow " .. e.name .. " " .. tostring(what) .. "?") then return end
  return { block = true, reason = "the user did not allow " .. e.name .. " " .. tostring(what) }
end)
