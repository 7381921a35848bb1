-- Port of pi's examples/extensions/provider-payload.ts.
--
-- Logs the JSON body of every model request (before_provider_request) to
-- .agents/provider-payload.log in the project, pretty-printed, one request after the other;
-- useful to debug what is sent (messages, tools, caching fields). Uncomment the two lines at
-- the end of the handler to change the payload instead (here: temperature 0).
--
-- Try it:
--   mypi --provider faux --extensions-dir DIR -p hello; cat .agents/provider-payload.log
--
-- Left out: nothing. pi's handler returns the new payload itself; mypi's returns
-- {updated_payload = ...}.

local json = require("json")
local fs = require("fs")
local path = require("path")

api.on("before_provider_request", function(e, ctx)
  local log = path.join(ctx.cwd, ".agents", "provider-payload.log")
  if not fs.exists(log) then fs.write(log, "") end -- creates .agents/ too
  local f = assert(io.open(log, "a"))
  f:write(("// %s, %s\n"):format(os.date("!%Y-%m-%dT%H:%M:%SZ"), e.provider), json.encode(e.payload, { pretty = true }), "\n\n")
  f:close()
  -- e.payload.temperature = 0
  -- return { updated_payload = e.payload }
end)
