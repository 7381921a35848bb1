-- Port of pi's examples/extensions/custom-compaction.ts.
--
-- Replaces mypi's compaction summary with its own: on session_before_compact (automatic,
-- /compact, or after the provider said the request was too long) the older messages are
-- written out as a transcript and summarised by one model call (api.complete) with a prompt
-- asking for goals, decisions, code changes, current state, open questions and next steps;
-- the text returned as `summary` stands for those messages. The summary model is the
-- current one, or COMPACTION_MODEL (and COMPACTION_PROVIDER) when set, e.g. a cheaper one.
-- When the call fails or gives nothing, mypi's own compaction runs.
--
-- Try it:
--   printf 'one\ntwo\nthree\n/compact keep the numbers\n/session\n' | mypi --provider faux --extensions-dir DIR
--
-- Left out: pi summarises *all* messages, the recent turns included, and keeps none whole;
-- mypi hands the handler only the older messages (the last `keep_last` always stay), so
-- those are what is summarised. pi's previous-summary context is not separate: an earlier
-- summary is simply one of the messages. The model lookup and API-key check of pi's model
-- registry have no equivalent: api.complete raises when the provider cannot be used.

local MAX_CHARS = 200000

local function transcript(messages)
  local out = {}
  for _, m in ipairs(messages) do
    local text = m.content or ""
    if m.role == "assistant" and m.tool_calls then
      for _, c in ipairs(m.tool_calls) do
        text = text .. ("\n[tool call %s %s]"):format(c.name, require("json").encode(c.arguments or {}))
      end
    elseif m.role == "tool" then
      text = ("[result of %s] %s"):format(m.name or "tool", text)
    end
    if text ~= "" then out[#out + 1] = ("[%s]: %s"):format(m.role, text) end
  end
  local s = table.concat(out, "\n\n")
  if #s > MAX_CHARS then s = s:sub(-MAX_CHARS) end
  return s
end

api.on("session_before_compact", function(e, ctx)
  api.notify(("Custom compaction: summarising %d messages (~%d tokens, reason %s)..."):format(#e.messages, e.tokens, e.reason))
  local extra = e.instructions and e.instructions ~= "" and ("\n\nThe user asked to keep: " .. e.instructions) or ""
  local prompt = [[You are a conversation summarizer. Create a comprehensive summary of this conversation that captures:

1. The main goals and objectives discussed
2. Key decisions made and their rationale
3. Important code changes, file modifications, or technical details
4. Current state of any ongoing work
5. Any blockers, issues, or open questions
6. Next steps that were planned or suggested

Be thorough but concise. The summary will replace these messages of the conversation, so include all information needed to continue the work effectively.
Format the summary as structured markdown with clear sections.]] .. extra .. "\n\n<conversation>\n" .. transcript(e.messages) .. "\n</conversation>"

  local ok, r = pcall(api.complete, {
    prompt = prompt,
    max_tokens = 8192,
    model = os.getenv("COMPACTION_MODEL"),
    provider = os.getenv("COMPACTION_PROVIDER"),
  })
  if not ok then
    api.notify("Compaction failed: " .. tostring(r) .. "; using the default compaction")
    return nil
  end
  if not r.text or r.text:match("^%s*$") then
    api.notify("Compaction summary was empty, using the default compaction")
    return nil
  end
  return { summary = r.text }
end)
