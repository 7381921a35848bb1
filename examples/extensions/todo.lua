-- A todo list the model can add to, a /todos command to see it, and a reminder of open
-- todos when a run ends. Copy to .agents/extensions/todo.lua. The list lives in api.state,
-- so it survives hot reloads of this file.
api.state.items = api.state.items or {}
local todos = api.state.items

api.tool{
  name = "todo_add",
  description = "Add an item to the user's todo list.",
  parameters = {
    type = "object",
    properties = { text = { type = "string", description = "what to do" } },
    required = { "text" },
  },
  execute = function(args)
    todos[#todos + 1] = args.text
    -- Other extensions may show it (status_line.lua does).
    api.events.emit("todo:count", { count = #todos })
    return "added todo #" .. #todos .. ": " .. args.text
  end,
}

api.command("todos", function()
  if #todos == 0 then return "no todos" end
  local lines = {}
  for i, t in ipairs(todos) do lines[#lines + 1] = i .. ". " .. t end
  return table.concat(lines, "\n")
end, "list the todo items")

api.on("agent_end", function(_, ctx)
  -- Only when the user's run ends, not each child agent's (ctx.depth > 0).
  if ctx.depth == 0 and #todos > 0 then
    ctx.ui.notify(#todos .. " open todo(s): " .. table.concat(todos, "; "))
  end
end)
