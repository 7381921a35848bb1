-- Input shortcuts: `?topic` becomes a request for a short explanation; `ping` is answered
-- with `pong` without calling the model.
api.on("input", function(e)
  if e.text == "ping" then
    return { block = true, reason = "pong" }
  end
  local topic = e.text:match("^%?%s*(.+)$")
  if topic then
    return { updated_input = "Explain " .. topic .. " in three sentences, with one example." }
  end
end)
