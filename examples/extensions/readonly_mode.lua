-- readonly_mode: tools and models as data, and command-line options. `mypi --readonly`
-- offers the model only the tools that cannot change files (api.flag, api.flags,
-- api.set_active_tools, api.tools); `/readonly on|off` switches at any time. The bash tool
-- is wrapped (api.builtin_tool) so that while read-only it refuses commands that write.
-- `mypi --cheap-model=NAME` switches to that model after start-up (api.set_model), and a
-- local OpenAI-compatible server can be offered as a provider (api.provider) when
-- LOCAL_LLM_URL is set.
--
-- Try: mypi --readonly, then /tools; /readonly off.

api.flag{ name = "readonly", type = "bool", description = "offer the model only tools that read" }
api.flag{ name = "cheap-model", type = "string", description = "switch to this model at start" }

local readonly = false
local bash = api.builtin_tool("bash")

local function set(on)
  readonly = on
  if on then
    local names = {}
    for _, t in ipairs(api.tools()) do
      if t.name == "read" or t.name == "bash" or t.name:match("^list_") then names[#names + 1] = t.name end
    end
    api.set_active_tools(names)
  else
    api.set_active_tools(nil)
  end
end

api.tool{
  name = "bash", description = bash.description, parameters = bash.parameters,
  execute = function(args, ctx)
    if readonly and (args.command:match("[^2]>") or args.command:match("%f[%w]rm%f[%W]")) then
      return { content = "read-only mode: this command could change files", is_error = true }
    end
    return api.builtin_tool("bash").execute(args, ctx)
  end,
}

api.on("session_start", function(e, ctx)
  if api.flags.readonly then set(true) end
  if api.flags["cheap-model"] then api.set_model(api.flags["cheap-model"]) end
end)

api.command("readonly", function(args)
  set(args ~= "off")
  local active = {}
  for _, t in ipairs(api.tools()) do if t.active then active[#active + 1] = t.name end end
  return (readonly and "read-only: " or "all tools: ") .. table.concat(active, ", ")
end, "offer only reading tools: /readonly [on|off]")

local url = os.getenv("LOCAL_LLM_URL")
if url and url ~= "" then
  api.provider{ name = "local", api = "openai", base_url = url, api_key_env = "LOCAL_LLM_KEY",
    models = { os.getenv("LOCAL_LLM_MODEL") or "local-model" } }
end
