-- Cuts the model's reply as soon as it contains a forbidden word; the partial text is
-- dropped and never stored.
local forbidden = { "password", "hunter2" }

api.on("message_update", function(e)
  local text = e.text:lower()
  for _, w in ipairs(forbidden) do
    if text:find(w, 1, true) then
      return { block = true, reason = "reply cut: it mentioned a forbidden word" }
    end
  end
end)
