-- Port of pi's examples/extensions/tool-override.ts.
--
-- Replaces the built-in `read` tool with an audited one: every read is logged to
-- ~/.agents/read-access.log (time, ALLOWED/BLOCKED, absolute path), reads of sensitive files
-- (.env, .env.*, secrets.*/credentials.* as json/yaml/yml/toml, anything under .ssh/, .aws/
-- or .gnupg/) are refused, and every other read is done by the built-in itself
-- (api.builtin_tool("read").execute), so its behaviour (offset/limit, truncation, folders)
-- and its display stay. /read-log shows the last 20 lines of the log.
--
-- Try it (s.jsonl: {"tool_calls": [{"name": "read", "arguments": {"path": ".env"}},
--                                  {"name": "read", "arguments": {"path": "README.md"}}]}
--                  {"text": "done"}):
--   mypi --provider faux --faux-script s.jsonl --extensions-dir DIR -p go; mypi --extensions-dir DIR -p /read-log
--
-- Left out: nothing of substance. pi's override re-implements reading (with its own 50 KB
-- cut); mypi's delegates to the built-in instead. The blocked result is an error result here
-- (is_error), where pi returns it as a normal result with `details.blocked`.

local fs = require("fs")
local path = require("path")

local LOG = "~/.agents/read-access.log"
local BLOCKED = {
  "%.env$", "%.env%.[^/]+$",
  "secrets?%.json$", "secrets?%.yaml$", "secrets?%.yml$", "secrets?%.toml$",
  "credentials?%.json$", "credentials?%.yaml$", "credentials?%.yml$", "credentials?%.toml$",
  "/%.ssh/", "/%.aws/", "/%.gnupg/",
}

local function is_blocked(p)
  local lower = p:lower()
  for _, pat in ipairs(BLOCKED) do
    if lower:find(pat) then return true end
  end
  return false
end

local function log_access(p, allowed, reason)
  local line = ("[%s] %s: %s%s\n"):format(os.date("!%Y-%m-%dT%H:%M:%SZ"), allowed and "ALLOWED" or "BLOCKED",
    p, reason and (" (" .. reason .. ")") or "")
  pcall(function()
    local old = fs.exists(LOG) and fs.read(LOG) or ""
    fs.write(LOG, old .. line)
  end)
end

local builtin = api.builtin_tool("read")

api.tool{
  name = "read",
  description = builtin.description .. "\n- Reads are logged; sensitive files (.env, secrets, credentials, ~/.ssh, ~/.aws, ~/.gnupg) are refused.",
  parameters = builtin.parameters,
  execute = function(args, ctx)
    local p = tostring(args.path or ""):gsub("^@", "")
    local abs = path.normalize(path.is_absolute(p) and p or path.join(ctx.cwd, p))
    if is_blocked(abs) then
      log_access(abs, false, "matches blocked pattern")
      return { is_error = true, details = { blocked = true }, content = ('Access denied: "%s" matches a blocked pattern (sensitive file). '
        .. "This tool blocks access to .env files, secrets, credentials, and SSH/AWS/GPG directories."):format(p) }
    end
    log_access(abs, true)
    return builtin.execute(args, ctx)
  end,
}

api.command("read-log", function()
  if not fs.exists(LOG) then return "No access log found" end
  local lines = {}
  for line in fs.read(LOG):gmatch("[^\n]+") do lines[#lines + 1] = line end
  return "Recent file access:\n" .. table.concat(lines, "\n", math.max(1, #lines - 19))
end, "show the last 20 lines of the read access log")
