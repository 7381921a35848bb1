-- /summary: one model call (api.complete, no tools, no child agent) that summarizes the
-- conversation so far, e.g. to paste into a hand-off note. The transcript is what the last
-- run ended with (`agent_end`), kept in api.state so it survives hot reloads.
local MAX_CHARS = 20000

api.on("agent_end", function(e, ctx)
  if ctx.depth > 0 then return end -- a child agent's run is not the session
  local lines = {}
  for _, m in ipairs(e.messages) do
    if (m.role == "user" or m.role == "assistant") and m.content ~= "" then
      lines[#lines + 1] = m.role .. ": " .. m.content
    end
  end
  api.state.transcript = table.concat(lines, "\n")
end)

api.command("summary", function()
  local transcript = api.state.transcript
  if not transcript or transcript == "" then return "nothing to summarize yet" end
  if #transcript > MAX_CHARS then transcript = transcript:sub(-MAX_CHARS) end
  local r = api.complete{
    system_prompt = "You write short, factual summaries of coding sessions.",
    prompt = "Summarize this session in at most five bullet points:\n\n" .. transcript,
    max_tokens = 400,
  }
  return r.text
end, "summarize this session with one model call")
