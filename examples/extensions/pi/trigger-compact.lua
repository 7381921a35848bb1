-- Port of pi's examples/extensions/trigger-compact.ts (partly).
--
-- Watches the context's size (ctx.context_usage(): tokens, the model's window, percent):
-- after each turn, past a threshold (100,000 tokens, or COMPACT_THRESHOLD_TOKENS), it tells
-- you once per session to run /compact. /context-usage (a mypi addition) prints the numbers.
--
-- Try it:
--   COMPACT_THRESHOLD_TOKENS=10 mypi --provider faux --extensions-dir DIR -p "a prompt of some length"
--   mypi --provider faux --extensions-dir DIR -p /context-usage
--
-- Left out (missing in mypi): starting a compaction from a script. pi's ctx.compact({
-- customInstructions, onComplete, onError }) has no equivalent (a queued message is never run
-- as the /compact command either), so pi's /trigger-compact command and the automatic
-- compaction at the threshold are reduced to the notice. mypi compacts on its own before a
-- request would not fit the window.

local THRESHOLD = tonumber(os.getenv("COMPACT_THRESHOLD_TOKENS") or "") or 100000
local warned_for = nil

api.on("turn_end", function(_, ctx)
  if ctx.depth > 0 or warned_for == ctx.session_id then return end
  local u = ctx.context_usage()
  if u.tokens > THRESHOLD then
    warned_for = ctx.session_id
    api.notify(("context is at %d tokens (%.1f%% of %d); run /compact [what to keep] to summarise the older turns")
      :format(u.tokens, u.percent, u.window))
  end
end)

api.command("context-usage", function(_, ctx)
  local u = ctx.context_usage()
  return ("about %d of %d tokens (%.1f%%); this extension warns past %d"):format(u.tokens, u.window, u.percent, THRESHOLD)
end, "show the context's size")
