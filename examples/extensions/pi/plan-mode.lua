-- Port of pi's examples/extensions/plan-mode/ (index.ts and utils.ts).
--
-- A read-only "plan mode":
--   * /plan (or `mypi --plan`, an api.flag switch) toggles it. In plan mode the model is
--     offered only `read` and `bash` (api.set_active_tools), and bash runs only allowlisted
--     read-only commands (cat, grep, ls, git status/log/diff, ...; anything that writes,
--     installs, redirects with `>` or uses sudo is blocked in tool_call).
--   * The system prompt of each run (before_agent_start) tells the model it is in plan mode
--     and to write a numbered list under a "Plan:" header.
--   * When a run ends in plan mode, the numbered steps are taken from the last answer and
--     you are asked (ctx.ui.select): execute the plan (track progress), stay in plan mode,
--     or refine it (your text from ctx.ui.editor is sent as the next prompt).
--   * Executing: every tool is offered again, each run's system prompt lists the remaining
--     steps and asks for a `[DONE:n]` tag per finished step; turn_end marks them, the status
--     shows `📋 done/total`, and when all are done you get "Plan Complete!".
--   * /todos shows the steps. The state is kept in the session (`plan-mode` custom entries),
--     so `mypi --continue` goes on where it was (re-reading [DONE:n] tags written after
--     execution started).
--
-- Try it (s.jsonl: {"text": "Plan:\n1. Read the README file\n2. Write the summary file"}
--                  {"text": "Reading it now [DONE:1] and writing [DONE:2]"}):
--   printf 'plan the work\n1\n/todos\n' | mypi --provider faux --faux-script s.jsonl --extensions-dir DIR --plan
--
-- Left out: the keyboard shortcut Ctrl+Alt+P (mypi has no key bindings: use /plan); the
-- widget with the checklist above the editor (mypi has no widgets: the status text shows the
-- count and /todos the list); pi's tools grep, find, ls and questionnaire (mypi's built-ins
-- are read, write, edit, bash). pi injects its plan-mode text as a hidden custom message kept
-- in the session, and filters old ones out in `context`; mypi has no custom messages, so the
-- text goes into the run's system prompt instead (which needs no filtering). pi's "Plan
-- Steps" and "Plan Complete!" are display-only messages in the transcript; here they are
-- notices.

api.flag{ name = "plan", type = "bool", description = "start in plan mode (read-only exploration)" }

local PLAN_TOOLS = { "read", "bash" }

-- state: plan mode on, executing a plan, the steps {step, text, completed}
local S = { enabled = false, executing = false, todos = {} }

---------------------------------------------------------------------------------------------
-- Which bash commands plan mode allows (pi's utils.ts, with Lua patterns on the lower-cased
-- command; %f[%w]x%f[%W] is a whole word).
---------------------------------------------------------------------------------------------
local function w(x) return "%f[%w]" .. x .. "%f[%W]" end

local DESTRUCTIVE = {
  w"rm", w"rmdir", w"mv", w"cp", w"mkdir", w"touch", w"chmod", w"chown", w"chgrp", w"ln",
  w"tee", w"truncate", w"dd", w"shred", w"sudo", w"su", w"kill", w"pkill", w"killall",
  w"reboot", w"shutdown", w"vim?", w"nano", w"emacs", w"code", w"subl",
  w"npm" .. "%s+install", w"npm" .. "%s+uninstall", w"npm" .. "%s+update", w"npm" .. "%s+ci",
  w"npm" .. "%s+link", w"npm" .. "%s+publish", w"yarn" .. "%s+add", w"yarn" .. "%s+remove",
  w"yarn" .. "%s+install", w"yarn" .. "%s+publish", w"pnpm" .. "%s+add", w"pnpm" .. "%s+remove",
  w"pnpm" .. "%s+install", w"pnpm" .. "%s+publish", w"pip" .. "%s+install", w"pip" .. "%s+uninstall",
  w"apt" .. "%s+install", w"apt" .. "%s+remove", w"apt" .. "%s+purge", w"apt" .. "%s+update",
  w"apt" .. "%s+upgrade", w"apt%-get" .. "%s+install", w"apt%-get" .. "%s+remove",
  w"apt%-get" .. "%s+update", w"apt%-get" .. "%s+upgrade", w"brew" .. "%s+install",
  w"brew" .. "%s+uninstall", w"brew" .. "%s+upgrade",
  w"systemctl" .. "%s+start", w"systemctl" .. "%s+stop", w"systemctl" .. "%s+restart",
  w"systemctl" .. "%s+enable", w"systemctl" .. "%s+disable",
}
for _, sub in ipairs{ "add", "commit", "push", "pull", "merge", "rebase", "reset", "checkout",
    "stash", "cherry%-pick", "revert", "tag", "init", "clone", "branch%s+%-d" } do
  DESTRUCTIVE[#DESTRUCTIVE + 1] = w"git" .. "%s+" .. sub
end

local SAFE = {}
for _, cmd in ipairs{ "cat", "head", "tail", "less", "more", "grep", "find", "ls", "pwd", "echo",
    "printf", "wc", "sort", "uniq", "diff", "file", "stat", "du", "df", "tree", "which",
    "whereis", "type", "env", "printenv", "uname", "whoami", "id", "date", "cal", "uptime",
    "ps", "top", "htop", "free", "jq", "awk", "rg", "fd", "bat", "exa" } do
  SAFE[#SAFE + 1] = "^%s*" .. cmd .. "%f[%W]"
end
for _, p in ipairs{ "^%s*git%s+status", "^%s*git%s+log", "^%s*git%s+diff", "^%s*git%s+show",
    "^%s*git%s+branch", "^%s*git%s+remote", "^%s*git%s+config%s+%-%-get", "^%s*git%s+ls%-",
    "^%s*npm%s+list", "^%s*npm%s+ls", "^%s*npm%s+view", "^%s*npm%s+info", "^%s*npm%s+outdated",
    "^%s*npm%s+audit", "^%s*yarn%s+list", "^%s*yarn%s+info", "^%s*yarn%s+why", "^%s*node%s+%-%-version",
    "^%s*python%s+%-%-version", "^%s*curl%s", "^%s*wget%s+%-o%s*%-", "^%s*sed%s+%-n" } do
  SAFE[#SAFE + 1] = p
end

local function any(list, s)
  for _, p in ipairs(list) do if s:find(p) then return true end end
  return false
end

local function is_safe(command)
  local c = command:lower()
  -- pi blocks every `>` that is not part of `<>` (so `>`, `>>` and `2>&1`)
  if c:gsub("<>", ""):find(">", 1, true) then return false end
  return not any(DESTRUCTIVE, c) and any(SAFE, c)
end

---------------------------------------------------------------------------------------------
-- Steps: "Plan:" then "1. ..." lines; "[DONE:n]" marks step n.
---------------------------------------------------------------------------------------------
local VERBS = { "use", "run", "execute", "create", "write", "read", "check", "verify", "update",
  "modify", "add", "remove", "delete", "install" }

local function clean_step(text)
  local s = text:gsub("%*%*?([^*]+)%*%*?", "%1"):gsub("`([^`]+)`", "%1")
  local lower = s:lower()
  for _, v in ipairs(VERBS) do
    local rest = lower:match("^" .. v .. "%s+(.*)$")
    if rest then
      s = s:sub(#s - #rest + 1)
      if s:lower():match("^the%s") then s = s:gsub("^%S+%s+", "") end
      break
    end
  end
  s = s:gsub("%s+", " "):match("^%s*(.-)%s*$")
  if #s > 0 then s = s:sub(1, 1):upper() .. s:sub(2) end
  if #s > 50 then s = s:sub(1, 47) .. "..." end
  return s
end

local function extract_steps(message)
  local lower = message:lower()
  local _, header_end = lower:find("%**plan:%**%s-\n")
  if not header_end then return {} end
  local items = {}
  for line in (message:sub(header_end + 1) .. "\n"):gmatch("([^\n]*)\n") do
    local text = line:match("^%s*%d+[.)]%s+%**([^*]+)")
    if text then
      text = text:match("^%s*(.-)%s*$")
      local first = text:sub(1, 1)
      if #text > 5 and first ~= "`" and first ~= "/" and first ~= "-" then
        local cleaned = clean_step(text)
        if #cleaned > 3 then items[#items + 1] = { step = #items + 1, text = cleaned, completed = false } end
      end
    end
  end
  return items
end

local function mark_done(text)
  local n = 0
  for step in text:upper():gmatch("%[DONE:(%d+)%]") do
    for _, t in ipairs(S.todos) do
      if t.step == tonumber(step) then t.completed = true end
    end
    n = n + 1
  end
  return n
end

---------------------------------------------------------------------------------------------

local function update_status(ctx)
  if S.executing and #S.todos > 0 then
    local done = 0
    for _, t in ipairs(S.todos) do if t.completed then done = done + 1 end end
    ctx.ui.set_status("plan-mode", ("📋 %d/%d"):format(done, #S.todos))
  elseif S.enabled then
    ctx.ui.set_status("plan-mode", "⏸ plan")
  else
    ctx.ui.set_status("plan-mode", nil)
  end
end

local function persist()
  local todos = #S.todos > 0 and S.todos or require("json").array()
  api.append_entry("plan-mode", { enabled = S.enabled, executing = S.executing, todos = todos })
end

local function set_plan(on, ctx)
  S.enabled, S.executing, S.todos = on, false, {}
  if on then
    api.set_active_tools(PLAN_TOOLS)
  else
    api.set_active_tools(nil)
  end
  update_status(ctx)
  persist()
end

api.command("plan", function(_, ctx)
  set_plan(not S.enabled, ctx)
  if S.enabled then return "Plan mode enabled. Tools: " .. table.concat(PLAN_TOOLS, ", ") end
  return "Plan mode disabled. Full access restored."
end, "toggle plan mode (read-only exploration)")

api.command("todos", function()
  if #S.todos == 0 then return "No todos. Create a plan first with /plan" end
  local lines = { "Plan Progress:" }
  for i, t in ipairs(S.todos) do
    lines[#lines + 1] = ("%d. %s %s"):format(i, t.completed and "✓" or "○", t.text)
  end
  return table.concat(lines, "\n")
end, "show the current plan's steps")

api.on("tool_call", function(e)
  if not S.enabled or e.name ~= "bash" then return nil end
  local command = tostring(e.args.command or "")
  if not is_safe(command) then
    return { block = true, reason = "Plan mode: command blocked (not allowlisted). Use /plan to disable plan mode first.\nCommand: " .. command }
  end
end)

api.on("before_agent_start", function(e)
  if S.enabled then
    return { updated_system_prompt = e.system_prompt .. [[


[PLAN MODE ACTIVE]
You are in plan mode - a read-only exploration mode for safe code analysis.

Restrictions:
- You can only use: read, bash
- You CANNOT use: edit, write (file modifications are disabled)
- Bash is restricted to an allowlist of read-only commands

Create a detailed numbered plan under a "Plan:" header:

Plan:
1. First step description
2. Second step description
...

Do NOT attempt to make changes - just describe what you would do.]] }
  end
  if S.executing and #S.todos > 0 then
    local remaining = {}
    for _, t in ipairs(S.todos) do
      if not t.completed then remaining[#remaining + 1] = t.step .. ". " .. t.text end
    end
    return { updated_system_prompt = e.system_prompt .. "\n\n[EXECUTING PLAN - Full tool access enabled]\n\nRemaining steps:\n"
      .. table.concat(remaining, "\n") .. "\n\nExecute each step in order.\nAfter completing a step, include a [DONE:n] tag in your response." }
  end
end)

api.on("turn_end", function(e, ctx)
  if ctx.depth > 0 or not S.executing or #S.todos == 0 then return end
  if e.message.role ~= "assistant" then return end
  if mark_done(e.message.content or "") > 0 then update_status(ctx) end
  persist()
end)

local function last_assistant_text(messages)
  for i = #messages, 1, -1 do
    local m = messages[i]
    if m.role == "assistant" and (m.content or "") ~= "" then return m.content end
  end
  return ""
end

api.on("agent_end", function(e, ctx)
  if ctx.depth > 0 then return end
  if S.executing and #S.todos > 0 then
    local all = true
    for _, t in ipairs(S.todos) do if not t.completed then all = false end end
    if all then
      local lines = { "Plan Complete! ✓" }
      for _, t in ipairs(S.todos) do lines[#lines + 1] = "  ✓ " .. t.text end
      api.notify(table.concat(lines, "\n"))
      S.executing, S.todos = false, {}
      api.set_active_tools(nil)
      update_status(ctx)
      persist()
    end
    return
  end

  if not S.enabled or ctx.mode ~= "repl" then return end

  local steps = extract_steps(last_assistant_text(e.messages))
  if #steps > 0 then S.todos = steps end
  if #S.todos > 0 then
    local lines = { ("Plan Steps (%d):"):format(#S.todos) }
    for i, t in ipairs(S.todos) do lines[#lines + 1] = ("%d. ☐ %s"):format(i, t.text) end
    api.notify(table.concat(lines, "\n"))
  end

  local execute = #S.todos > 0 and "Execute the plan (track progress)" or "Execute the plan"
  local choice = ctx.ui.select("Plan mode - what next?", { execute, "Stay in plan mode", "Refine the plan" })
  if choice == execute then
    S.enabled, S.executing = false, #S.todos > 0
    api.set_active_tools(nil)
    update_status(ctx)
    api.append_entry("plan-mode-execute", {})
    persist()
    local msg = #S.todos > 0 and ("Execute the plan. Start with: " .. S.todos[1].text)
      or "Execute the plan you just created."
    api.send_message(msg, { deliver_as = "follow_up" })
  elseif choice == "Refine the plan" then
    local refinement = ctx.ui.editor("")
    refinement = refinement and refinement:match("^%s*(.-)%s*$") or ""
    if refinement ~= "" then api.send_message(refinement, { deliver_as = "follow_up" }) end
    persist()
  else
    persist()
  end
end)

api.on("session_start", function(e, ctx)
  if e.reason == "startup" and api.flags.plan then S.enabled = true end
  if e.reason == "new" then S.enabled, S.executing, S.todos = false, false, {} end

  local entries = ctx.session.entries()
  local saved, execute_at
  for i, entry in ipairs(entries) do
    if entry.type == "custom" and entry.kind == "plan-mode" then saved = entry.data end
    if entry.type == "custom" and entry.kind == "plan-mode-execute" then execute_at = i end
  end
  if saved then
    S.enabled = saved.enabled
    S.executing = saved.executing
    S.todos = saved.todos or {}
    if S.executing and #S.todos > 0 then
      -- re-read [DONE:n] tags written since the execution started
      for i = (execute_at or 0) + 1, #entries do
        local m = entries[i].type == "message" and entries[i].message
        if m and m.role == "assistant" then mark_done(m.content or "") end
      end
    end
  end
  if S.enabled then api.set_active_tools(PLAN_TOOLS) end
  update_status(ctx)
end)
