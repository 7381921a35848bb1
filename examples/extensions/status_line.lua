-- status_line: a status line above the prompt and the terminal title (ctx.ui.set_status,
-- ctx.ui.set_title), kept current by a repeating timer (api.timer) from the context's size
-- (ctx.context_usage, ctx.is_idle), and the todo count other extensions announce
-- (api.events.on "todo:count"; the todo example emits it).
--
-- Try: mypi, then watch the line above the prompt; `/status off` clears it.

local todos = nil
local shown = true

local function refresh(ctx)
  if not shown then return end
  local u = ctx.context_usage()
  local parts = { string.format("ctx %d%% of %dk", math.floor(u.percent), u.window // 1000) }
  if todos then parts[#parts + 1] = todos .. " todos" end
  if not ctx.is_idle() then parts[#parts + 1] = "working" end
  ctx.ui.set_status("status", table.concat(parts, " · "))
end

api.on("session_start", function(e, ctx)
  ctx.ui.set_title("mypi — " .. (ctx.cwd:match("[^/]+$") or ctx.cwd))
  refresh(ctx)
end)
api.on("agent_end", function(e, ctx) refresh(ctx) end)
api.events.on("todo:count", function(data, ctx)
  todos = data.count
  refresh(ctx)
end)
api.timer(5000, refresh, { ["repeat"] = true })

api.command("status", function(args, ctx)
  shown = args ~= "off"
  if shown then refresh(ctx) else ctx.ui.set_status("status", nil) end
  return shown and "status line on" or "status line off"
end, "show or hide the status line: /status [off]")
