-- Port of pi's examples/extensions/todo.ts.
--
-- A `todo` tool for the model (actions list, add TEXT, toggle ID, clear) and a /todos
-- command for you. The state lives in the session, not in a file: every result carries the
-- whole list in its `details` (kept in the session, never sent to the model), and on
-- session_start (start-up, --continue, /new, /resume, reload) the list is rebuilt from the
-- last `todo` result in ctx.session.entries(). A renderer prints the calls and results
-- compactly in the REPL (`todo add "buy milk"`, `✓ Added #1 buy milk`, a list of at most 5).
--
-- Try it:
--   mypi --provider faux --faux-script s.jsonl --extensions-dir DIR      (then /todos)
--   (s.jsonl: {"tool_calls": [{"name": "todo", "arguments": {"action": "add", "text": "buy milk"}}]}
--             {"text": "added"})
--   mypi --provider faux --extensions-dir DIR --continue -p /todos          # rebuilt from the session
--
-- Left out: the full-screen /todos component (ctx.ui.custom, closed with Escape): mypi's
-- command simply prints the list. pi's "expanded" view (Ctrl+O shows every item) has no
-- equivalent, so the renderer always shows at most 5 items. pi rebuilds on tree navigation and
-- fork too; mypi has no session tree, and /fork copies the session (the list comes along).

local schema = require("schema")

local GREEN, DIM, ACCENT, RED, RESET = "\27[32m", "\27[2m", "\27[36m", "\27[31m", "\27[0m"

local todos, next_id = {}, 1

local function copy(list)
  local out = {}
  for i, t in ipairs(list) do out[i] = { id = t.id, text = t.text, done = t.done } end
  return out
end

local function rebuild(ctx)
  todos, next_id = {}, 1
  for _, e in ipairs(ctx.session.entries()) do
    local m = e.type == "message" and e.message or nil
    if m and m.role == "tool" and m.name == "todo" and m.details then
      todos, next_id = copy(m.details.todos or {}), m.details.next_id or 1
    end
  end
end

api.on("session_start", function(e, ctx) rebuild(ctx) end)

local function result(action, text, err)
  local details = { action = action, todos = copy(todos), next_id = next_id, error = err }
  if #details.todos == 0 then details.todos = require("json").array() end
  return { content = text, details = details }
end

api.tool{
  name = "todo",
  description = "Manage a todo list. Actions: list, add (text), toggle (id), clear",
  parameters = schema.object{
    action = schema.enum({ "list", "add", "toggle", "clear" }),
    text = schema.string("Todo text (for add)"):optional(),
    id = schema.number("Todo ID (for toggle)"):optional(),
  },
  execute = function(args)
    if args.action == "list" then
      if #todos == 0 then return result("list", "No todos") end
      local lines = {}
      for _, t in ipairs(todos) do
        lines[#lines + 1] = ("[%s] #%d: %s"):format(t.done and "x" or " ", t.id, t.text)
      end
      return result("list", table.concat(lines, "\n"))
    elseif args.action == "add" then
      if not args.text or args.text == "" then
        return result("add", "Error: text required for add", "text required")
      end
      local t = { id = next_id, text = args.text, done = false }
      next_id = next_id + 1
      todos[#todos + 1] = t
      return result("add", ("Added todo #%d: %s"):format(t.id, t.text))
    elseif args.action == "toggle" then
      if args.id == nil then return result("toggle", "Error: id required for toggle", "id required") end
      for _, t in ipairs(todos) do
        if t.id == args.id then
          t.done = not t.done
          return result("toggle", ("Todo #%d %s"):format(t.id, t.done and "completed" or "uncompleted"))
        end
      end
      return result("toggle", ("Todo #%d not found"):format(args.id), ("#%d not found"):format(args.id))
    else -- clear
      local n = #todos
      todos, next_id = {}, 1
      return result("clear", ("Cleared %d todos"):format(n))
    end
  end,
}

api.renderer("todo", {
  call = function(args)
    local s = "todo " .. DIM .. tostring(args.action) .. RESET
    if args.text then s = s .. ' "' .. args.text .. '"' end
    if args.id then s = s .. " " .. ACCENT .. "#" .. args.id .. RESET end
    return s
  end,
  result = function(text, d)
    if not d then return nil end                 -- an older result: the default lines
    if d.error then return RED .. "Error: " .. d.error .. RESET end
    if d.action == "add" then
      local t = d.todos[#d.todos]
      return GREEN .. "✓ Added " .. RESET .. ACCENT .. "#" .. t.id .. RESET .. " " .. t.text
    elseif d.action == "list" then
      if #d.todos == 0 then return DIM .. "No todos" .. RESET end
      local lines = { #d.todos .. " todo(s):" }
      for i = 1, math.min(5, #d.todos) do
        local t = d.todos[i]
        lines[#lines + 1] = (t.done and GREEN .. "✓" or DIM .. "○") .. RESET .. " " .. ACCENT .. "#" .. t.id .. RESET .. " " .. t.text
      end
      if #d.todos > 5 then lines[#lines + 1] = DIM .. "... " .. (#d.todos - 5) .. " more" .. RESET end
      return table.concat(lines, "\n")
    elseif d.action == "clear" then
      return GREEN .. "✓ " .. RESET .. "Cleared all todos"
    end
    return GREEN .. "✓ " .. RESET .. text
  end,
})

api.command("todos", function()
  if #todos == 0 then return "No todos yet. Ask the agent to add some!" end
  local done = 0
  for _, t in ipairs(todos) do if t.done then done = done + 1 end end
  local lines = { ("%d/%d completed"):format(done, #todos) }
  for _, t in ipairs(todos) do
    lines[#lines + 1] = ("  %s #%d %s"):format(t.done and "✓" or "○", t.id, t.text)
  end
  return table.concat(lines, "\n")
end, "show all todos of the current session")
