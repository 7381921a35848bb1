-- Port of pi's examples/extensions/inline-bash.ts.
--
-- Expands `!{command}` in a prompt before it is sent: each command runs with `bash -c`
-- (api.exec, 30 s timeout) and its trimmed output replaces the pattern, e.g.
--   What's in !{pwd}?   ->   What's in /home/me/project?
-- A notice lists what was expanded. A whole-line `!cmd` is mypi's shell escape and never
-- reaches the `input` event, so it is not affected.
--
-- Try it:
--   mypi --provider faux --extensions-dir DIR -p 'The branch is !{git branch --show-current} and I am !{whoami}'
--
-- Left out: nothing. (pi passes the prompt's images through; mypi's prompts are text.)

local TIMEOUT_MS = 30000

api.on("input", function(e, ctx)
  if not e.text:find("!{", 1, true) then return nil end
  local expansions = {}
  local result = e.text:gsub("!(%b{})", function(braced)
    local command = braced:sub(2, -2)
    local ok, r = pcall(api.exec, "bash", { "-c", command }, { timeout_ms = TIMEOUT_MS })
    if not ok then
      expansions[#expansions + 1] = { command = command, output = "", error = tostring(r) }
      return "[error: " .. tostring(r) .. "]"
    end
    local out = ((r.stdout ~= "" and r.stdout) or r.stderr or ""):match("^%s*(.-)%s*$")
    local err = nil
    if r.timed_out then err = "timed out"
    elseif r.code ~= 0 and r.stderr ~= "" then err = "exit code " .. tostring(r.code) end
    expansions[#expansions + 1] = { command = command, output = out, error = err }
    return out
  end)
  if #expansions == 0 then return nil end
  local lines = { ("Expanded %d inline command(s):"):format(#expansions) }
  for _, x in ipairs(expansions) do
    local preview = #x.output > 50 and (x.output:sub(1, 50) .. "...") or x.output
    lines[#lines + 1] = ('!{%s}%s -> "%s"'):format(x.command, x.error and (" (" .. x.error .. ")") or "", preview)
  end
  api.notify(table.concat(lines, "\n"))
  return { updated_input = result }
end)
