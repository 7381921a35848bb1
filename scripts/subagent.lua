-- subagent: the `subagent` tool and the `/agents` command. Ships inside mypi; a
-- `subagent.lua` (or `.rhai`) of your own in an extensions folder replaces it, and
-- `--no-builtin-extensions` turns it off.
--
-- Agents are Markdown files: `.agents/agents/*.md` (project, only in a trusted folder) and
-- `~/.agents/agents/*.md` (user; the project's wins when both define a name). Front matter,
-- then the system prompt:
--
--   ---
--   name: scout
--   description: Finds where things are in the code base, fast
--   tools: read, bash
--   model: gpt-4.1-mini
--   thinking: low
--   ---
--   You are a scout. ...
--
-- `tools` (a comma list), `model` and `thinking` (a level) are optional: the default is the
-- parent's (`subagent`
-- itself does not nest: it is left out, with a warning). A file that cannot be read as an
-- agent is reported once, with its path, and skipped.
--
-- The tool runs one agent `{agent, task}`, several in parallel `{tasks = {{agent, task},
-- ...}}` (up to 8, four at a time), or a chain `{chain = {{agent, task}, ...}}` in which
-- `{previous}` in a task is replaced by the previous agent's output (stopping at the first
-- failure). Each child is an in-process agent (`api.run_agent`): its own conversation, the
-- same extensions' hooks, cancelled with the parent.

local fs = require("fs")

local MAX_PARALLEL, AT_ONCE = 8, 4
local LEVELS = { off = true, minimal = true, low = true, medium = true, high = true }
local MAX_FILE_BYTES = 256 * 1024

-- Problems already reported ("path: why"), so each is said once.
local reported = {}

local function report(path, why)
  local line = path .. ": " .. why
  if not reported[line] then
    reported[line] = true
    api.notify("agent file " .. line .. "; skipped")
  end
end

-- Says once that the agent file at `path` has a problem it is used with anyway.
local function warn(path, why)
  local line = path .. ": " .. why
  if not reported[line] then
    reported[line] = true
    api.notify("agent file " .. line)
  end
end

local function trim(s)
  return (s:match("^%s*(.-)%s*$"))
end

local function unquote(s)
  local inner = s:match('^"(.*)"$') or s:match("^'(.*)'$")
  return inner or s
end

-- An agent from one file's text, or nil and why not.
local function parse(path, text)
  text = text:gsub("^\239\187\191", "") -- a UTF-8 byte order mark
  local front, body = text:match("^%-%-%-[ \t]*\r?\n(.-)\r?\n%-%-%-[ \t]*\r?\n(.*)$")
  if not front then
    front = text:match("^%-%-%-[ \t]*\r?\n(.-)\r?\n%-%-%-[ \t]*$")
    body = ""
  end
  if not front then
    return nil, "no front matter (a block between --- lines at the top, with name and description)"
  end
  local fields, n = {}, 0
  for line in (front .. "\n"):gmatch("(.-)\r?\n") do
    n = n + 1
    if not line:match("^%s*$") and not line:match("^%s*#") then
      local key, value = line:match("^([%w_%-]+)%s*:%s*(.-)%s*$")
      if not key then
        return nil, "front matter line " .. n .. " is not 'key: value': " .. line
      end
      fields[key] = unquote(value)
    end
  end
  local name = fields.name
  if not name or name == "" then
    return nil, "the front matter has no name"
  end
  if not name:match("^[%w_%-%.]+$") then
    return nil, "the name '" .. name .. "' has characters other than letters, digits, _ - ."
  end
  if not fields.description or fields.description == "" then
    return nil, "the front matter has no description"
  end
  local tools
  local list = fields.tools and fields.tools:gsub("^%[(.*)%]$", "%1")
  if list and trim(list) ~= "" then
    tools = {}
    for t in list:gmatch("[^,%s\"']+") do
      if t == "subagent" then
        warn(path, "lists the subagent tool, which does not nest: a child agent cannot run "
          .. "subagents (this extension is busy running the child), so it gets the other tools; "
          .. "take subagent out of its tools")
      else
        tools[#tools + 1] = t
      end
    end
  end
  local model = fields.model
  if model == "" then model = nil end
  local thinking = fields.thinking
  if thinking == "" then thinking = nil end
  if thinking and not LEVELS[thinking] then
    warn(path, "thinking: '" .. thinking .. "' is not a level (off, minimal, low, medium, high); "
      .. "the agent thinks at the parent's level")
    thinking = nil
  end
  return {
    name = name,
    description = fields.description,
    tools = tools,
    model = model,
    thinking = thinking,
    prompt = trim(body),
    path = path,
  }
end

-- Adds the agents of folder `dir` (shown as `shown`) to `into`, keeping names already there.
local function load_dir(dir, shown, into)
  for _, file in ipairs(api.read_dir(dir)) do
    if file:match("%.md$") then
      local path, label = dir .. "/" .. file, shown .. "/" .. file
      -- fs.read refuses what is not a regular file (a FIFO would block io.open) and reads
      -- at most the script size limit.
      local ok, text = pcall(fs.read, path)
      if not ok then
        report(label, "cannot read it: " .. tostring(text):gsub("^fs%.read: ", ""))
      else
        if #text > MAX_FILE_BYTES then
          report(label, "it is larger than 256 KiB")
        else
          local agent, why = parse(label, text)
          if not agent then
            report(label, why)
          elseif not into[agent.name] then
            into[agent.name] = agent
          end
        end
      end
    end
  end
end

-- Every agent by name, and their names sorted.
local function agents()
  local found = {}
  -- A project's agents would replace the user's own: only in a trusted folder (the trust
  -- gate says when they are skipped).
  if api.project_trusted() then
    load_dir(".agents/agents", ".agents/agents", found)
  end
  local home = os.getenv("HOME")
  if home and home ~= "" then
    load_dir(home .. "/.agents/agents", "~/.agents/agents", found)
  end
  local names = {}
  for name in pairs(found) do
    names[#names + 1] = name
  end
  table.sort(names)
  return found, names
end

local function description(found, names)
  local lines = {
    "Delegate work to a subagent: a separate agent with its own fresh context and its own "
      .. "instructions, which returns only its final answer. Use it for self-contained tasks "
      .. "(searching, reviewing, planning) whose details would clutter this conversation. "
      .. "Give {agent, task} for one; {tasks: [{agent, task}, ...]} to run up to "
      .. MAX_PARALLEL .. " in parallel; {chain: [{agent, task}, ...]} to run them in order, "
      .. "where {previous} in a task is replaced by the previous agent's output. A task must "
      .. "say everything the agent needs: it does not see this conversation.",
    "",
    "Available agents:",
  }
  for _, name in ipairs(names) do
    lines[#lines + 1] = "- " .. name .. ": " .. found[name].description
  end
  return table.concat(lines, "\n")
end

local STEP = {
  type = "object",
  properties = {
    agent = { type = "string", description = "the agent's name" },
    task = { type = "string", description = "what it should do" },
  },
  required = { "agent", "task" },
}

local function spec(agent, task)
  return {
    task = task,
    name = agent.name,
    system_prompt = agent.prompt,
    tools = agent.tools,
    model = agent.model,
    thinking = agent.thinking,
  }
end

local function failed(text)
  return { content = text, is_error = true }
end

-- The agent called `name`, or nil and the error to return.
local function find(found, names, name)
  local agent = found[name]
  if agent then return agent end
  return nil, failed("unknown agent '" .. tostring(name) .. "'; the agents are: " .. table.concat(names, ", "))
end

local function run_one(found, names, args)
  local agent, err = find(found, names, args.agent)
  if not agent then return err end
  local r = api.run_agent(spec(agent, args.task))
  if r.error then return failed(agent.name .. " failed: " .. r.error) end
  return r.text
end

local function run_parallel(found, names, tasks)
  if #tasks == 0 then return failed("'tasks' is empty") end
  if #tasks > MAX_PARALLEL then
    return failed(#tasks .. " tasks given; at most " .. MAX_PARALLEL .. " run in one call")
  end
  local specs = {}
  for i, t in ipairs(tasks) do
    local agent, err = find(found, names, t.agent)
    if not agent then return err end
    specs[i] = spec(agent, t.task)
  end
  local results = api.run_agents(specs, { concurrency = AT_ONCE })
  local parts, failures = {}, 0
  for i, r in ipairs(results) do
    local head = "## " .. i .. ". " .. specs[i].name
    if r.error then
      failures = failures + 1
      parts[i] = head .. " (failed)\n" .. r.error
    else
      parts[i] = head .. "\n" .. r.text
    end
  end
  local text = table.concat(parts, "\n\n")
  if failures == #results then return failed(text) end
  return text
end

local function run_chain(found, names, chain)
  if #chain == 0 then return failed("'chain' is empty") end
  local previous = ""
  for i, step in ipairs(chain) do
    local agent, err = find(found, names, step.agent)
    if not agent then return err end
    local task = step.task:gsub("{previous}", function() return previous end)
    local r = api.run_agent(spec(agent, task))
    if r.error then
      local text = "step " .. i .. " (" .. agent.name .. ") failed: " .. r.error
      if i > 1 then text = text .. "\n\noutput of step " .. (i - 1) .. ":\n" .. previous end
      return failed(text)
    end
    previous = r.text
  end
  return previous
end

local function execute(args)
  local found, names = agents()
  local modes = (args.agent and 1 or 0) + (args.tasks and 1 or 0) + (args.chain and 1 or 0)
  if modes ~= 1 then
    return failed("give exactly one of {agent, task}, {tasks = [...]} or {chain = [...]}")
  end
  if args.agent then
    if type(args.task) ~= "string" or args.task == "" then
      return failed("'task' is required with 'agent'")
    end
    return run_one(found, names, args)
  elseif args.tasks then
    return run_parallel(found, names, args.tasks)
  end
  return run_chain(found, names, args.chain)
end

-- The registered tool and the description it was registered with.
local tool, registered

-- Registers the tool when there are agents (again when they changed); none without agents.
local function refresh()
  local found, names = agents()
  local text = #names > 0 and description(found, names) or nil
  if text == registered then return found, names end
  if tool then tool:remove() end
  tool, registered = nil, text
  if text then
    tool = api.tool{
      name = "subagent",
      description = text,
      parameters = {
        type = "object",
        properties = {
          agent = { type = "string", description = "the agent to run (one of: " .. table.concat(names, ", ") .. ")" },
          task = { type = "string", description = "what the agent should do, with everything it needs to know" },
          tasks = { type = "array", items = STEP, maxItems = MAX_PARALLEL, description = "run these in parallel" },
          chain = { type = "array", items = STEP, description = "run these in order; {previous} = the previous output" },
        },
      },
      execute = execute,
    }
  end
  return found, names
end

refresh()

api.command("agents", function()
  local found, names = refresh()
  if #names == 0 then
    return "no agents: add .agents/agents/NAME.md (or ~/.agents/agents/NAME.md) with front matter "
      .. "'name' and 'description' (optional 'tools', 'model', 'thinking'); the body is its system prompt"
  end
  local lines = {}
  for _, name in ipairs(names) do
    local a = found[name]
    local extra = {}
    if a.tools then extra[#extra + 1] = "tools: " .. table.concat(a.tools, ", ") end
    if a.model then extra[#extra + 1] = "model: " .. a.model end
    if a.thinking then extra[#extra + 1] = "thinking: " .. a.thinking end
    extra[#extra + 1] = a.path
    lines[#lines + 1] = name .. " - " .. a.description .. " (" .. table.concat(extra, "; ") .. ")"
  end
  return table.concat(lines, "\n")
end, "list the agents the subagent tool can run")
