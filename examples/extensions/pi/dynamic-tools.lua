-- Port of pi's examples/extensions/dynamic-tools.ts.
--
-- Tools registered after load: `echo_session` when the session starts, and one more echo
-- tool per `/add-echo-tool NAME` (lowercase letters, digits and `_`). Each one answers
-- "[NAME] MESSAGE" with details {tool, prefix}; the model can call it from the next request
-- on. A tool registered later is offered only while no extension has narrowed the active
-- tools (api.set_active_tools), as in mypi in general.
--
-- Try it:
--   printf '/add-echo-tool shout\n/tools\n' | mypi --provider faux --extensions-dir DIR
--
-- Left out: pi's promptSnippet and promptGuidelines (a tool's line in pi's generated system
-- prompt and extra guideline bullets): mypi's system prompt does not list the tools, and a
-- tool has only its description. A script that wants extra guidance in the system prompt adds
-- it in before_agent_start.

local registered = {}

local function register_echo(name, prefix)
  if registered[name] then return false end
  registered[name] = true
  api.tool{
    name = name,
    description = "Echo a message with prefix: " .. prefix .. " (use when the user asks for exact echo output)",
    parameters = {
      type = "object",
      properties = { message = { type = "string", description = "Message to echo" } },
      required = { "message" },
    },
    execute = function(args)
      return { content = prefix .. args.message, details = { tool = name, prefix = prefix } }
    end,
  }
  return true
end

api.on("session_start", function(e, ctx)
  if register_echo("echo_session", "[session] ") then
    api.notify("Registered dynamic tool: echo_session")
  end
end)

api.command("add-echo-tool", function(args)
  local name = args:lower()
  if not name:match("^[a-z0-9_]+$") then
    return "Usage: /add-echo-tool <tool_name> (lowercase, numbers, underscores)"
  end
  if not register_echo(name, "[" .. name .. "] ") then return "Tool already registered: " .. name end
  return "Registered dynamic tool: " .. name
end, "register a new echo tool: /add-echo-tool <tool_name>")
