-- Port of pi's examples/extensions/system-prompt-header.ts.
--
-- Shows the length of the system prompt in effect as a status text ("System: N chars"),
-- read with ctx.system_prompt() when a run's first model request is about to go out (so
-- the rewrites of before_agent_start handlers, e.g. pirate.rhai's, are counted). /system-prompt
-- (a mypi addition) prints the prompt itself.
--
-- Try it:
--   printf 'hello\n/system-prompt\n' | mypi --provider faux --extensions-dir DIR
--
-- Left out: nothing of substance. pi updates on `agent_start`, which mypi does not have;
-- turn_start of turn 1 stands in. The status is cleared on session_shutdown, as in pi.

api.on("turn_start", function(e, ctx)
  if e.turn ~= 1 or ctx.depth > 0 then return end
  ctx.ui.set_status("system-prompt", ("System: %d chars"):format(#ctx.system_prompt()))
end)

api.on("session_shutdown", function(_, ctx)
  ctx.ui.set_status("system-prompt", nil)
end)

api.command("system-prompt", function(_, ctx)
  return ctx.system_prompt()
end, "print the system prompt in effect")
