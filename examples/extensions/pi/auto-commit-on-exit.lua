-- Port of pi's examples/extensions/auto-commit-on-exit.ts.
--
-- When mypi quits (session_shutdown with reason "quit"), commits every change of the git
-- work tree (`git add -A`, `git commit -m ...`), with a message made from the first line of
-- the last assistant answer: "[mypi] <first 50 characters>" ("Work in progress" without one).
-- Nothing happens outside a git repository or when the tree is clean.
--
-- Try it, in a scratch git repository:
--   echo change >> notes.txt; mypi --provider faux --extensions-dir DIR -p "describe the change"; git log -1 --oneline
--
-- Left out: nothing of substance. pi commits on every session_shutdown; mypi also sends
-- session_shutdown for /new and for reloads, which are not exits, so only "quit" commits.

api.on("session_shutdown", function(e, ctx)
  if e.reason ~= "quit" or ctx.depth > 0 then return end
  local status = api.exec("git", { "status", "--porcelain" }, { timeout_ms = 10000 })
  if status.code ~= 0 or status.stdout:match("^%s*$") then return end

  local last = ""
  local entries = ctx.session.entries()
  for i = #entries, 1, -1 do
    local m = entries[i].type == "message" and entries[i].message
    if m and m.role == "assistant" and (m.content or "") ~= "" then last = m.content break end
  end
  local first = last:match("^[^\n]*"):match("^%s*(.-)%s*$")
  if first == "" then first = "Work in progress" end
  local msg = "[mypi] " .. (#first > 50 and (first:sub(1, 50) .. "...") or first)

  api.exec("git", { "add", "-A" }, { timeout_ms = 30000 })
  local commit = api.exec("git", { "commit", "-m", msg }, { timeout_ms = 30000 })
  if commit.code == 0 then api.notify("Auto-committed: " .. msg) end
end)
