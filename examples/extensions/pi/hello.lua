-- Port of pi's examples/extensions/hello.ts.
--
-- The smallest tool: `hello{name}` answers "Hello, NAME!" and keeps {greeted = NAME} as the
-- result's details (stored in the session, never sent to the model).
--
-- Try it (s.jsonl: {"tool_calls": [{"name": "hello", "arguments": {"name": "world"}}]}
--                  {"text": "greeted"}):
--   mypi --provider faux --faux-script s.jsonl --extensions-dir DIR -p go --json
--
-- Left out: nothing.

api.tool{
  name = "hello",
  description = "A simple greeting tool",
  parameters = {
    type = "object",
    properties = { name = { type = "string", description = "Name to greet" } },
    required = { "name" },
  },
  execute = function(args)
    return { content = "Hello, " .. args.name .. "!", details = { greeted = args.name } }
  end,
}
