-- Port of pi's examples/extensions/notify.ts (partly).
--
-- A desktop notification "mypi: Ready for input" when a run ends (agent_end of the user's
-- agent, REPL only), through a program: `notify-send` (Linux), `osascript` (macOS), or a
-- PowerShell toast under Windows Terminal (WT_SESSION set, as in pi). When none can be run,
-- the terminal's title says "✓ mypi: Ready for input" instead (ctx.ui.set_title), until the
-- next prompt starts.
--
-- Try it:
--   printf 'hello\n' | mypi --provider faux --extensions-dir DIR     (needs notify-send or osascript)
--
-- Left out (not possible from a script): pi's terminal notifications, OSC 777 (Ghostty,
-- iTerm2, WezTerm, rxvt) and OSC 99 (Kitty). They are escape sequences written to the
-- terminal; a mypi script cannot write to the terminal (print goes to the debug log, the
-- standard streams and /dev/tty are refused, and ctx.ui.set_title drops control characters),
-- so only notifications through a program remain.

local TITLE, BODY = "mypi", "Ready for input"

local function try(cmd, args)
  local ok, r = pcall(api.exec, cmd, args, { timeout_ms = 5000 })
  return ok and r.code == 0
end

local function windows_toast_script(title, body)
  local t = "Windows.UI.Notifications"
  return table.concat({
    ("[%s.ToastNotificationManager, %s, ContentType = WindowsRuntime] > $null"):format(t, t),
    ("$xml = [%s.ToastNotificationManager]::GetTemplateContent([%s.ToastTemplateType]::ToastText01)"):format(t, t),
    ("$xml.GetElementsByTagName('text')[0].AppendChild($xml.CreateTextNode('%s')) > $null"):format(body),
    ("[%s.ToastNotificationManager]::CreateToastNotifier('%s').Show([%s.ToastNotification]::new($xml))"):format(t, title, t),
  }, "; ")
end

local function notify()
  if os.getenv("WT_SESSION") then
    return try("powershell.exe", { "-NoProfile", "-Command", windows_toast_script(TITLE, BODY) })
  end
  return try("notify-send", { TITLE, BODY })
    or try("osascript", { "-e", ('display notification "%s" with title "%s"'):format(BODY, TITLE) })
end

api.on("agent_end", function(_, ctx)
  if ctx.depth > 0 or ctx.mode ~= "repl" then return end
  if not notify() then ctx.ui.set_title("✓ " .. TITLE .. ": " .. BODY) end
end)

api.on("before_agent_start", function(_, ctx)
  if ctx.depth == 0 and ctx.mode == "repl" then ctx.ui.set_title(TITLE) end
end)
