-- One tool made of two MCP calls: the model asks for a sum and gets it said back by the echo
-- tool, in one step. Written for @modelcontextprotocol/server-everything (configured as
-- "everything" in .mcp.json); change the three names below for another server.
--
-- Both calls pass the tool_call / tool_result hooks like the model's own calls (with
-- origin = {extension = "mcp_compose"}), so a guard extension still sees and can block them.
local SERVER, ADD, ECHO = "everything", "get-sum", "echo"

api.tool {
  name = "sum_and_echo",
  description = "Add two numbers on the MCP server and have the server echo the result.",
  parameters = {
    type = "object",
    properties = { a = { type = "number" }, b = { type = "number" } },
    required = { "a", "b" },
  },
  execute = function(args, ctx)
    local sum = api.mcp.call(SERVER, ADD, { a = args.a, b = args.b })
    local said = api.mcp.call(SERVER, ECHO, { message = sum.text, text = sum.text })
    return said.text
  end,
}
