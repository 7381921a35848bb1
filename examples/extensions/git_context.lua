-- Tells the model where it is in git: the branch and `git status --short`, added to the
-- system prompt of every run (nothing when the folder is not a git work tree).
api.on("before_agent_start", function(e)
  local branch = api.exec("git", { "symbolic-ref", "--short", "HEAD" }, { timeout_ms = 2000 })
  if branch.code ~= 0 then return end
  local status = api.exec("git", { "status", "--short" }, { timeout_ms = 2000 })
  local changes = status.stdout ~= "" and status.stdout or "(clean)\n"
  return {
    updated_system_prompt = e.system_prompt
      .. "\n\nGit branch: " .. branch.stdout:gsub("%s+$", "")
      .. "\nGit status --short:\n" .. changes,
  }
end)
