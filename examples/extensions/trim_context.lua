-- Sends only the last 2 tool results in full; older ones are replaced by a short note in
-- what the model receives (the session file keeps everything).
local KEEP = 2

api.on("context", function(e)
  local total = 0
  for _, m in ipairs(e.messages) do
    if m.role == "tool" then total = total + 1 end
  end
  if total <= KEEP then return end
  local seen, out = 0, {}
  for _, m in ipairs(e.messages) do
    if m.role == "tool" then
      seen = seen + 1
      if seen <= total - KEEP then
        m.content = "[old tool result dropped to save context]"
      end
    end
    out[#out + 1] = m
  end
  return { updated_messages = out }
end)
