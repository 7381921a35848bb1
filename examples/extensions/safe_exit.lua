-- safe_exit: cancellable events. Before mypi leaves (before_quit) or a new session starts
-- (session_before_new) while the git work tree has uncommitted changes, ask first
-- (ctx.ui.confirm; in print mode nobody can answer, so it says no and the session stays).
-- A shell escape (`!cmd`, the user_shell event) that would delete the tree is refused.
--
-- Try: change a file in a git repository, then /quit or /new.

local function dirty(ctx)
  local r = api.exec("git", { "status", "--porcelain" }, { timeout_ms = 5000 })
  return r.code == 0 and r.stdout ~= ""
end

local function ask(ctx, what)
  if not dirty(ctx) then return nil end
  if ctx.ui.confirm("The work tree has uncommitted changes. " .. what .. " anyway?") then return nil end
  return { cancel = true, reason = "uncommitted changes (commit or stash them first)" }
end

api.on("before_quit", function(e, ctx)
  if e.source == "eof" then return nil end -- the input ended: mypi cannot stay anyway
  return ask(ctx, "Leave")
end)
api.on("session_before_new", function(e, ctx) return ask(ctx, "Start a new session") end)

api.on("user_shell", function(e)
  if e.command:match("rm%s+%-[rf]+%s+[/~]") then
    return { block = true, reason = "safe_exit refuses to delete / or ~ from the shell escape" }
  end
end)
