-- Appends the team's house rules to the system prompt of every run.
api.on("before_agent_start", function(e)
  return { updated_system_prompt = e.system_prompt .. "\n\nHouse rules: answer in English; never push to main." }
end)
