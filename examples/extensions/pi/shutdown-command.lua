-- Port of pi's examples/extensions/shutdown-command.ts.
--
-- Leaving mypi from a script with ctx.shutdown() (once the agent is idle; before_quit
-- handlers may still keep it open, with source "extension"):
--   * /shutdown — leaves at once (a command runs while the agent is idle);
--   * the tool finish_and_exit — the model calls it when its work is done; mypi leaves
--     after the reply;
--   * the tool deploy_and_exit{environment} — reports progress (ctx.update), then leaves.
--
-- Try it (s.jsonl: {"tool_calls": [{"name": "finish_and_exit", "arguments": {}}]}
--                  {"text": "bye"}):
--   printf 'do it\nstill here?\n' | mypi --provider faux --faux-script s.jsonl --extensions-dir DIR
--   mypi --provider faux --extensions-dir DIR -p /shutdown
--
-- Left out: nothing of substance. pi registers the command as /quit; in mypi /quit is built
-- in (an extension's /quit would become /quit:2), so it is /shutdown here.

api.command("shutdown", function(_, ctx)
  ctx.shutdown()
  return "shutting down"
end, "leave mypi cleanly (ctx.shutdown)")

api.tool{
  name = "finish_and_exit",
  description = "Complete a task and exit mypi",
  parameters = { type = "object", properties = {} },
  execute = function(_, ctx)
    ctx.shutdown()
    return { content = "Shutdown requested. Exiting after this response.", details = {} }
  end,
}

api.tool{
  name = "deploy_and_exit",
  description = "Deploy the application and exit mypi",
  parameters = {
    type = "object",
    properties = { environment = { type = "string", description = "Target environment (e.g., production, staging)" } },
    required = { "environment" },
  },
  execute = function(args, ctx)
    ctx.update("Deploying to " .. args.environment .. "...")
    -- the real work would go here, e.g. api.exec("npm", { "run", "deploy", args.environment })
    ctx.update("Deployment complete, exiting...")
    ctx.shutdown()
    return { content = "Done! Shutdown requested.", details = { environment = args.environment } }
  end,
}
