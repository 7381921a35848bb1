-- Port of pi's examples/extensions/custom-provider-qwen-cli/ (index.ts).
--
-- Registers the provider `qwen-cli`: Qwen's OpenAI-compatible endpoint (DashScope's
-- compatible mode) with the models qwen3-coder-plus (the default), qwen3-coder-flash and
-- vision-model, the key read from QWEN_CLI_API_KEY. /model lists them, `/model
-- qwen-cli/qwen3-coder-flash` switches to one, `mypi --provider qwen-cli` starts with it.
-- /qwen-cli shows which models are registered and whether the key is set; `/qwen-cli use
-- MODEL` switches with api.set_model.
--
-- Try it:
--   QWEN_CLI_API_KEY=sk-... mypi --provider qwen-cli --extensions-dir DIR -p "hello"
--   QWEN_CLI_API_KEY=x mypi --provider faux --extensions-dir DIR -p "/qwen-cli use qwen3-coder-flash"
--
-- Left out: pi's OAuth device-code login (`/login qwen-cli`, token refresh, and the
-- per-account base URL from the token's `resource_url`): mypi's providers take a key from an
-- environment variable only, and have no /login. The models' per-model fields that mypi does
-- not know (reasoning, input kinds, max tokens, compat flags) are dropped; context windows are
-- kept. The vision model is listed, but mypi sends no images.

local NAME = "qwen-cli"
local MODELS = {
  { name = "qwen3-coder-plus", context_window = 1000000 },
  { name = "qwen3-coder-flash", context_window = 1000000 },
  { name = "vision-model", context_window = 262144 },
}

api.provider{
  name = NAME,
  api = "openai",
  base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1",
  api_key_env = "QWEN_CLI_API_KEY",
  models = MODELS,
}

api.command("qwen-cli", function(args, ctx)
  local model = args:match("^use%s+(%S+)$")
  if model then
    api.set_model(model, { provider = NAME })
    return "switching to " .. NAME .. "/" .. model .. " once the agent is idle"
  end
  local names = {}
  for _, m in ipairs(MODELS) do names[#names + 1] = m.name end
  return ("provider %s: %s; key %s; in use: %s"):format(NAME, table.concat(names, ", "),
    os.getenv("QWEN_CLI_API_KEY") and "set (QWEN_CLI_API_KEY)" or "missing: set QWEN_CLI_API_KEY", ctx.model)
end, "show the qwen-cli provider, or switch: /qwen-cli use MODEL")
