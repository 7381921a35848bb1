-- Port of pi's examples/extensions/qna.ts (partly).
--
-- /qna takes the questions out of the last assistant answer (one api.complete call with an
-- extraction prompt: "Q: ..." lines, each followed by an empty "A: " line) and opens them in
-- your editor (ctx.ui.editor). When you save a changed text, it is sent to the agent as your
-- next prompt (api.send_message); an unchanged or empty text is not sent.
--
-- Try it (with a real model, after an answer that asks you something):
--   mypi --extensions-dir DIR      then  /qna
--
-- Left out: pi puts the questions into its own input editor for you to fill in and submit
-- (ctx.ui.setEditorText); mypi cannot prefill its prompt line, so the external editor is
-- used and saving is submitting. pi's spinner with Esc-to-cancel while the model extracts
-- (BorderedLoader) has no equivalent (Ctrl-C still cancels). pi also refuses an answer that
-- was cut off (stopReason); mypi's messages carry no stop reason.

local SYSTEM_PROMPT = [[You are a question extractor. Given text from a conversation, extract any questions that need answering and format them for the user to fill in.

Output format:
- List each question on its own line, prefixed with "Q: "
- After each question, add a blank line for the answer prefixed with "A: "
- If no questions are found, output "No questions found in the last message."

Example output:
Q: What is your preferred database?
A: 

Q: Should we use TypeScript or JavaScript?
A: 

Keep questions in the order they appeared. Be concise.]]

api.command("qna", function(_, ctx)
  if ctx.mode ~= "repl" then return "qna requires the REPL" end
  local last
  local entries = ctx.session.entries()
  for i = #entries, 1, -1 do
    local m = entries[i].type == "message" and entries[i].message
    if m and m.role == "assistant" and (m.content or "") ~= "" then last = m.content break end
  end
  if not last then return "No assistant messages found" end

  local ok, r = pcall(api.complete, { system_prompt = SYSTEM_PROMPT, prompt = last })
  if not ok then return "extraction failed: " .. tostring(r) end

  local edited = ctx.ui.editor(r.text)
  if edited == nil then return "Cancelled (the editor failed)" end
  if edited:match("^%s*$") or edited == r.text then return "Cancelled (nothing changed)" end
  api.send_message(edited)
  return "Answers sent."
end, "put the questions of the last answer into your editor, then send the answers")
