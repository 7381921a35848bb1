-- Port of pi's examples/extensions/built-in-tool-renderer.ts.
--
-- Compact REPL lines for the built-in tools, their behaviour unchanged (api.renderer only
-- changes what is printed; nothing is re-registered):
--   read  — `read PATH (offset=…, limit=…)`, then `N lines` (and `(cut)` when the built-in
--           cut the output);
--   bash  — `$ COMMAND` (cut to 80 characters, with `(timeout: N ms)`), then `done (N lines)`
--           or `exit N (N lines)`;
--   edit  — `edit PATH (-R / +A lines)` from the call's old and new text, then `Applied
--           replaced N occurrence(s) at line L`;
--   write — `write PATH (N lines)`, then `Written`.
-- Error results are always shown mypi's default way.
--
-- Try it (s.jsonl: {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}},
--                                  {"name": "read", "arguments": {"path": "README.md"}}]}
--                  {"text": "done"}):
--   printf 'go\n' | mypi --provider faux --faux-script s.jsonl --extensions-dir DIR
--
-- Left out: pi's expanded view (Ctrl+O toggles the full output under the compact line); a
-- mypi renderer has one form. The built-ins give no `details` (pi reads the truncation and
-- the edit's diff from them), so the read line looks for the built-in's "[showing lines"
-- note, and the edit's line counts go on the call line, from its arguments (a result
-- renderer gets the result's text and details, not the call's arguments).

local GREEN, RED, YELLOW, DIM, ACCENT, RESET = "\27[32m", "\27[31m", "\27[33m", "\27[2m", "\27[36m", "\27[0m"

local function count_lines(s)
  if s == nil or s == "" then return 0 end
  local _, n = s:gsub("\n", "")
  return s:sub(-1) == "\n" and n or n + 1
end

api.renderer("read", {
  call = function(args)
    local s = "read " .. ACCENT .. tostring(args.path) .. RESET
    local parts = {}
    if args.offset then parts[#parts + 1] = "offset=" .. args.offset end
    if args.limit then parts[#parts + 1] = "limit=" .. args.limit end
    if #parts > 0 then s = s .. DIM .. " (" .. table.concat(parts, ", ") .. ")" .. RESET end
    return s
  end,
  result = function(text)
    local s = GREEN .. count_lines(text) .. " lines" .. RESET
    local shown = text:match("%[showing lines ([^%]]-);")
    if shown then s = s .. YELLOW .. " (cut: lines " .. shown .. ")" .. RESET end
    return "  " .. s
  end,
})

api.renderer("bash", {
  call = function(args)
    local cmd = tostring(args.command)
    if #cmd > 80 then cmd = cmd:sub(1, 77) .. "..." end
    local s = "$ " .. ACCENT .. cmd .. RESET
    if args.timeout_ms then s = s .. DIM .. (" (timeout: %d ms)"):format(args.timeout_ms) .. RESET end
    return s
  end,
  result = function(text)
    local code = tonumber(text:match("exit code: (%-?%d+)%s*$"))
    local n = 0
    for line in text:gmatch("[^\n]+") do
      if line:find("%S") and not line:match("^exit code: %-?%d+$") then n = n + 1 end
    end
    local head = (code == 0 or code == nil) and (GREEN .. "done" .. RESET) or (RED .. "exit " .. code .. RESET)
    return "  " .. head .. DIM .. (" (%d lines)"):format(n) .. RESET
  end,
})

api.renderer("edit", {
  call = function(args)
    return "edit " .. ACCENT .. tostring(args.path) .. RESET .. DIM
      .. (" (-%d / +%d lines)"):format(count_lines(args.old_text), count_lines(args.new_text)) .. RESET
  end,
  result = function(text)
    -- the built-in answers "edited PATH: replaced N occurrence(s) at line L" and the region
    return "  " .. GREEN .. "Applied" .. RESET .. DIM .. " " .. (text:match("(replaced[^\n]*)") or "") .. RESET
  end,
})

api.renderer("write", {
  call = function(args)
    return "write " .. ACCENT .. tostring(args.path) .. RESET .. DIM .. (" (%d lines)"):format(count_lines(args.content)) .. RESET
  end,
  result = function() return "  " .. GREEN .. "Written" .. RESET end,
})
