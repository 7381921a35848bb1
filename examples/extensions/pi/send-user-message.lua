-- Port of pi's examples/extensions/send-user-message.ts.
--
-- Sending user messages from a script (api.send_message):
--   * /ask TEXT      — sends TEXT as a prompt; refused while the agent is busy;
--   * /steer TEXT    — a steering message: when the agent is busy, the model gets it after
--                      the tool calls under way; when idle it runs at once;
--   * /followup TEXT — runs once the agent is done (at once when idle);
--   * /askwith TEXT  — one message made of several parts ("User request: TEXT", "Please
--                      respond concisely.").
-- A queued message goes through the `input` event (source "extension") and is never run as
-- a slash command.
--
-- Try it:
--   mypi --provider faux --extensions-dir DIR -p "/ask What is 2+2?"
--
-- Left out: pi's structured content (text and image parts): mypi's messages are text, so
-- /askwith joins its parts with a blank line. In mypi a slash command typed while a prompt
-- runs waits until the run has ended, so ctx.is_idle() is always true in a command and the
-- "busy" branches (kept from pi) do not trigger from the REPL; /steer and /followup then
-- start a run at once.

api.command("ask", function(args, ctx)
  if args == "" then return "Usage: /ask <message>" end
  if not ctx.is_idle() then return "Agent is busy. Use /steer or /followup instead." end
  api.send_message(args)
end, "send a user message to the agent")

api.command("steer", function(args, ctx)
  if args == "" then return "Usage: /steer <message>" end
  api.send_message(args, { deliver_as = "steer" })
end, "send a steering message (after the current tool calls)")

api.command("followup", function(args, ctx)
  if args == "" then return "Usage: /followup <message>" end
  api.send_message(args, { deliver_as = "follow_up" })
  if not ctx.is_idle() then return "Follow-up queued" end
end, "queue a follow-up message (after the current run)")

api.command("askwith", function(args, ctx)
  if args == "" then return "Usage: /askwith <message>" end
  if not ctx.is_idle() then return "Agent is busy" end
  api.send_message(table.concat({ "User request: " .. args, "Please respond concisely." }, "\n\n"))
end, "send a user message made of several parts")
