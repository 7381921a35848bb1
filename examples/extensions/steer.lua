-- Drives the running agent: after a failing bash command, a steer message reaches the model
-- in the very next request; after every run, one follow-up asks for a summary.
local asked = false

api.on("tool_result", function(e)
  if e.name == "bash" and e.is_error then
    api.send_message("The last command failed: read its output before trying again.", { deliver_as = "steer" })
  end
end)

api.on("agent_end", function()
  if not asked then
    asked = true
    api.send_message("Summarise what you did in one sentence.", { deliver_as = "follow_up" })
  end
end)
