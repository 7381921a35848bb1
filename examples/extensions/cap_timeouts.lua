-- Rewrites tool arguments: every bash call gets at most a 60 s timeout.
api.on("tool_call", function(e)
  if e.name == "bash" and (e.args.timeout_ms == nil or e.args.timeout_ms > 60000) then
    local args = { command = e.args.command, timeout_ms = 60000 }
    return { updated_args = args }
  end
end)
