-- Port of pi's examples/extensions/session-name.ts.
--
-- /session-name NAME names the session (ctx.session.set_name): /session shows it as
-- `Name: …` and the /resume and `mypi sessions` lists show `[NAME]` before the first prompt.
-- /session-name without a name shows the current one.
--
-- Try it:
--   mypi --provider faux --extensions-dir DIR -p "/session-name Refactor auth module"
--   printf 'hi\n/session-name Refactor auth\n/session-name\n/session\n' | mypi --provider faux --extensions-dir DIR
--   mypi sessions
--
-- Left out: nothing. pi's setSessionName/getSessionName live on `pi`, mypi's on ctx.session.

api.command("session-name", function(args, ctx)
  if args ~= "" then
    ctx.session.set_name(args)
    return "Session named: " .. args
  end
  local current = ctx.session.name()
  return current and ("Session: " .. current) or "No session name set"
end, "set or show the session name: /session-name [new name]")
