-- Port of pi's examples/extensions/claude-rules.ts.
--
-- Finds the project's rule files (every .md below .claude/rules/, sub-folders included) when
-- the session starts, and lists them in every run's system prompt (before_agent_start) with
-- the advice to `read` the ones relevant to the task. A notice says how many were found.
--
-- Try it:
--   mkdir -p .claude/rules/backend; echo "Use tabs." > .claude/rules/style.md; echo "x" > .claude/rules/backend/api.md
--   mypi --provider faux --extensions-dir DIR -p hello; printf 'hi\n/rules\n' | mypi --provider faux --extensions-dir DIR
--
-- Left out: nothing. /rules (a mypi addition) lists the files found.

local fs = require("fs")
local path = require("path")

local rules = {}

local function find_md(dir, prefix, out)
  for _, name in ipairs(fs.list(dir)) do
    if name:sub(-1) == "/" then
      find_md(path.join(dir, name:sub(1, -2)), prefix .. name, out)
    elseif name:match("%.md$") then
      out[#out + 1] = prefix .. name
    end
  end
  return out
end

api.on("session_start", function(_, ctx)
  rules = find_md(path.join(ctx.cwd, ".claude", "rules"), "", {})
  if #rules > 0 then api.notify(("Found %d rule(s) in .claude/rules/"):format(#rules)) end
end)

api.on("before_agent_start", function(e)
  if #rules == 0 then return nil end
  local list = {}
  for i, f in ipairs(rules) do list[i] = "- .claude/rules/" .. f end
  return { updated_system_prompt = e.system_prompt .. "\n\n## Project Rules\n\nThe following project rules are available in .claude/rules/:\n\n"
    .. table.concat(list, "\n")
    .. "\n\nWhen working on tasks related to these rules, use the read tool to load the relevant rule files for guidance.\n" }
end)

api.command("rules", function()
  if #rules == 0 then return "no rules in .claude/rules/" end
  return table.concat(rules, "\n")
end, "list the rule files found in .claude/rules/")
