-- Port of pi's examples/extensions/confirm-destructive.ts.
--
-- Asks before the session is left for another one:
--   * /new (or ctx.new_session()): "Clear session? ..." — no keeps the conversation;
--   * /resume ID: only when the current session has a user message, "Switch session? ...".
-- A "no" cancels through the cancellable events session_before_new / session_before_resume
-- (mypi then answers "no new session was started: REASON" / "the session was not resumed:
-- REASON"). Without a user to ask (print / json mode) nothing is asked and nothing is
-- blocked, as in pi.
--
-- Try it (the second /new is confirmed):
--   printf 'hello\n/new\nn\n/new\ny\n' | mypi --provider faux --extensions-dir DIR
--
-- Left out: pi's `session_before_fork` handler ("Fork from entry ...?"). mypi's /fork has no
-- cancellable event, so a fork cannot be confirmed. pi's confirm takes a title and a message;
-- mypi's takes one question, so they are joined.

local function has_user_message(ctx)
  for _, e in ipairs(ctx.session.entries()) do
    if e.type == "message" and e.message.role == "user" then return true end
  end
  return false
end

api.on("session_before_new", function(e, ctx)
  if ctx.mode ~= "repl" then return nil end
  if not ctx.ui.confirm("Clear session? This will start over without the messages of the current session.") then
    return { cancel = true, reason = "Clear cancelled" }
  end
end)

api.on("session_before_resume", function(e, ctx)
  if ctx.mode ~= "repl" or not has_user_message(ctx) then return nil end
  if not ctx.ui.confirm("Switch session? You have messages in the current session. Switch anyway?") then
    return { cancel = true, reason = "Switch cancelled" }
  end
end)
