-- Port of pi's examples/extensions/handoff.ts (partly).
--
-- /handoff GOAL moves the work to a fresh session instead of compacting: the conversation
-- so far (ctx.session.entries()) and your goal go to the model (one api.complete call) with
-- a prompt asking for a self-contained brief — context, decisions, files involved, the next
-- task. The brief opens in your editor (ctx.ui.editor) for review; when you save it, a new
-- session starts (ctx.new_session(), which session_before_new handlers may refuse) and the
-- brief is sent there as the first prompt (api.send_message). The old session stays as it
-- was; /resume goes back to it.
--
-- Try it (with a real model, after some work):
--   mypi --extensions-dir DIR      then  /handoff now implement this for teams as well
--
-- Left out: pi leaves the brief in its own input editor for you to submit
-- (ctx.ui.setEditorText); mypi cannot prefill the prompt, so saving the file is submitting
-- it (an empty file cancels). pi records the old session as the new one's parent
-- (newSession({parentSession})); mypi's sessions have no parent link, so the brief names
-- the old session's id instead. pi's spinner with Esc-to-cancel (BorderedLoader) has no
-- equivalent.

local json = require("json")

local SYSTEM_PROMPT = [[You are a context transfer assistant. Given a conversation history and the user's goal for a new thread, generate a focused prompt that:

1. Summarizes relevant context from the conversation (decisions made, approaches taken, key findings)
2. Lists any relevant files that were discussed or modified
3. Clearly states the next task based on the user's goal
4. Is self-contained - the new thread should be able to proceed without the old conversation

Format your response as a prompt the user can send to start the new thread. Be concise but include all necessary context. Do not include any preamble like "Here's the prompt" - just output the prompt itself.]]

local function history(entries)
  local out = {}
  for _, e in ipairs(entries) do
    local m = e.type == "message" and e.message
    if m then
      local text = m.content or ""
      for _, c in ipairs(m.tool_calls or {}) do
        text = text .. ("\n[called %s %s]"):format(c.name, json.encode(c.arguments or {}))
      end
      if m.role == "tool" and #text > 2000 then text = text:sub(1, 2000) .. " [...]" end
      if text ~= "" then out[#out + 1] = ("[%s]: %s"):format(m.role, text) end
    end
  end
  return table.concat(out, "\n\n")
end

api.command("handoff", function(goal, ctx)
  if ctx.mode ~= "repl" then return "handoff requires the REPL" end
  if goal == "" then return "Usage: /handoff <goal for new thread>" end
  local text = history(ctx.session.entries())
  if text == "" then return "No conversation to hand off" end

  local ok, r = pcall(api.complete, {
    system_prompt = SYSTEM_PROMPT,
    prompt = "## Conversation History\n\n" .. text .. "\n\n## User's Goal for New Thread\n\n" .. goal,
  })
  if not ok then return "Handoff generation failed: " .. tostring(r) end

  local brief = ctx.ui.editor(r.text .. "\n\n(Handed off from session " .. ctx.session_id .. ".)\n")
  if brief == nil or brief:match("^%s*$") then return "Cancelled" end
  ctx.new_session()
  api.send_message(brief, { deliver_as = "follow_up" })
  return "Handing off to a new session."
end, "transfer the context to a new focused session: /handoff <goal>")
