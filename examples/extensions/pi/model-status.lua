-- Port of pi's examples/extensions/model-status.ts.
--
-- Reacts to model changes (the model_select event: /model, api.set_model, a resumed
-- session's model): a notice "Model: PROVIDER/MODEL" (not for a resumed session's model,
-- which the user did not pick just now), the status text "🤖 MODEL", and a debug line
-- "PREV → NEXT (SOURCE)" (shown with MYPI_LOG=1).
--
-- Try it, with a provider that has models (custom-provider-qwen-cli.lua registers one):
--   QWEN_CLI_API_KEY=x MYPI_LOG=1 mypi --provider faux --extensions-dir DIR -p "/model qwen-cli/qwen3-coder-flash"
--
-- Left out: nothing of substance. pi's sources are "set" / "cycle" / "restore"; mypi's are
-- "command" / "extension" / "resume" (there is no Ctrl+P cycling). pi's event carries model
-- objects; mypi's carries the provider and model names.

api.on("model_select", function(e, ctx)
  local next = e.provider .. "/" .. e.model
  local prev = (e.previous_provider or "?") .. "/" .. (e.previous_model or "?")
  if e.source ~= "resume" then
    ctx.ui.notify("Model: " .. next)
  end
  ctx.ui.set_status("model", "🤖 " .. e.model)
  api.log(("[model_select] %s → %s (%s)"):format(prev, next, e.source))
end)
