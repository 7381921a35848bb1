-- Port of pi's examples/extensions/summarize.ts.
--
-- /summarize writes the conversation out (user and assistant text, and the tool calls the
-- assistant made, from ctx.session.entries()) and asks the model for a summary to resume
-- from later: goals, key decisions, progress, open questions and next steps, with headings
-- (one api.complete call, no tools). The summary is printed as the command's output. The
-- model is the current one, or SUMMARY_MODEL (and SUMMARY_PROVIDER) when set.
--
-- Try it:
--   printf 'hello\nlist the files\n/summarize\n' | mypi --provider faux --extensions-dir DIR
--
-- Left out: pi's transient full-screen panel with rendered markdown (closed with Enter or
-- Esc): mypi prints the summary like any command output (the REPL renders markdown in
-- answers, not in command output). pi's fixed model (openai/gpt-5.2 with high reasoning
-- effort) is an option here; mypi has no reasoning-effort setting.

local json = require("json")

local function conversation(entries)
  local sections = {}
  for _, e in ipairs(entries) do
    local m = e.type == "message" and e.message
    if m and (m.role == "user" or m.role == "assistant") then
      local lines = {}
      local text = (m.content or ""):match("^%s*(.-)%s*$")
      if text ~= "" then lines[#lines + 1] = (m.role == "user" and "User: " or "Assistant: ") .. text end
      for _, c in ipairs(m.tool_calls or {}) do
        lines[#lines + 1] = ("Tool %s was called with args %s"):format(c.name, json.encode(c.arguments or {}))
      end
      if #lines > 0 then sections[#sections + 1] = table.concat(lines, "\n") end
    end
  end
  return table.concat(sections, "\n\n")
end

api.command("summarize", function(_, ctx)
  local text = conversation(ctx.session.entries())
  if text == "" then return "No conversation text found" end
  api.notify("Preparing summary...")
  local prompt = table.concat({
    "Summarize this conversation so I can resume it later.",
    "Include goals, key decisions, progress, open questions, and next steps.",
    "Keep it concise and structured with headings.",
    "", "<conversation>", text, "</conversation>",
  }, "\n")
  local ok, r = pcall(api.complete, {
    prompt = prompt, model = os.getenv("SUMMARY_MODEL"), provider = os.getenv("SUMMARY_PROVIDER"),
  })
  if not ok then return "summary failed: " .. tostring(r) end
  return "Conversation Summary\n\n" .. r.text
end, "summarize the conversation so far")
