-- Port of pi's examples/extensions/titlebar-spinner.ts.
--
-- A braille spinner in the terminal's title while the agent works: "⠋ π - NAME - FOLDER"
-- (the session's name when it has one), animated every 80 ms with a repeating api.timer and
-- ctx.ui.set_title; when the run ends the title goes back to "π - NAME - FOLDER".
--
-- Try it, in a terminal whose title you can see:
--   mypi --extensions-dir DIR            (then send a prompt that takes a while)
--
-- Left out: nothing of substance. pi starts on `agent_start`; mypi has no such event, so
-- the spinner starts with before_agent_start. set_title does nothing off a terminal and in
-- print / json mode, so there the timer is not started at all.

local path = require("path")

local FRAMES = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
local timer, frame = nil, 0

local function base_title(ctx)
  local folder = path.basename(ctx.cwd)
  local name = ctx.session.name()
  return name and ("π - " .. name .. " - " .. folder) or ("π - " .. folder)
end

local function stop(ctx)
  if timer then timer:remove() timer = nil end
  frame = 0
  ctx.ui.set_title(base_title(ctx))
end

local function start(ctx)
  stop(ctx)
  timer = api.timer(80, function(tctx)
    frame = frame + 1
    tctx.ui.set_title(FRAMES[(frame - 1) % #FRAMES + 1] .. " " .. base_title(tctx))
  end, { ["repeat"] = true })
end

api.on("before_agent_start", function(_, ctx)
  if ctx.mode == "repl" and ctx.depth == 0 then start(ctx) end
end)
api.on("agent_end", function(_, ctx)
  if ctx.depth == 0 and timer then stop(ctx) end
end)
api.on("session_shutdown", function(_, ctx)
  if timer then stop(ctx) end
end)
