-- Port of pi's examples/extensions/reload-runtime.ts.
--
-- Reloading every extension from a script (ctx.reload(), as /reload does: files are
-- discovered again, every extension gets session_shutdown "reload" and session_start
-- "reload"): the command /reload-runtime, and the tool reload_runtime for the model (after
-- it has written or changed an extension, say). The reload happens once the current call has
-- ended.
--
-- Try it (s.jsonl: {"tool_calls": [{"name": "reload_runtime", "arguments": {}}]}
--                  {"text": "reloaded"}):
--   printf 'reload please\n' | mypi --provider faux --faux-script s.jsonl --extensions-dir DIR
--   mypi --provider faux --extensions-dir DIR -p /reload-runtime
--
-- Left out: nothing; the tool is simpler. pi's tools cannot reload (only commands can), so
-- pi's tool queues "/reload-runtime" as a follow-up user message. In mypi a queued message is
-- never run as a slash command, but a tool may call ctx.reload() itself.

api.on("session_start", function(e)
  if e.reason == "reload" then api.notify("reloaded (session_start reason reload)") end
end)

api.command("reload-runtime", function(_, ctx)
  ctx.reload()
  return "reloading extensions"
end, "reload every extension (ctx.reload)")

api.tool{
  name = "reload_runtime",
  description = "Reload mypi's extensions (after creating or changing one)",
  parameters = { type = "object", properties = {} },
  execute = function(_, ctx)
    ctx.reload()
    return { content = "Extensions will be reloaded when this call ends.", details = {} }
  end,
}
