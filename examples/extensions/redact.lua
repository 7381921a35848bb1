-- Redacts secrets from tool results before the model (and the session file) sees them.
local secrets = { "sk%-[%w_%-]+", "AKIA[0-9A-Z]+", "ghp_[%w]+" }

api.on("tool_result", function(e)
  local text, n = e.result, 0
  for _, p in ipairs(secrets) do
    local count
    text, count = text:gsub(p, "[redacted]")
    n = n + count
  end
  if n > 0 then return { updated_result = text } end
end)
