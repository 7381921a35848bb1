-- Port of pi's examples/extensions/truncated-tool.ts.
--
-- An `rg` tool that searches file contents with ripgrep (`rg --line-number --color=never`,
-- falling back to `grep -rnE` when rg is not installed) and cuts its output properly: at most
-- 2000 lines or 50 KB, keeping the start, with a note telling the model how much was left
-- out and the temp file holding the full output. The details keep the pattern, the number
-- of matches and the cut; a renderer shows `rg "PATTERN" in PATH` and `N matches`.
--
-- Try it (s.jsonl: {"tool_calls": [{"name": "rg", "arguments": {"pattern": "TODO", "path": "src"}}]}
--                  {"text": "found them"}):
--   printf 'search\n' | mypi --provider faux --faux-script s.jsonl --extensions-dir DIR
--
-- Left out: nothing of substance. pi uses its truncateHead/formatSize helpers; mypi has no
-- such library, so the cut is written here. (mypi also cuts every tool result past 50 KiB in
-- the middle, but a tool that cuts its own output can say where the rest is.)

local schema = require("schema")

local MAX_LINES, MAX_BYTES = 2000, 50 * 1024

local function size(n)
  if n < 1024 then return n .. "B" end
  if n < 1024 * 1024 then return ("%.1fKB"):format(n / 1024) end
  return ("%.1fMB"):format(n / 1024 / 1024)
end

local function truncate_head(text)
  local out, lines, bytes, total = {}, 0, 0, 0
  for line in (text .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do
    total = total + 1
    if lines < MAX_LINES and bytes + #line + 1 <= MAX_BYTES then
      out[#out + 1] = line
      lines, bytes = lines + 1, bytes + #line + 1
    end
  end
  return table.concat(out, "\n"), { truncated = lines < total, output_lines = lines, total_lines = total,
    output_bytes = bytes, total_bytes = #text }
end

local function have_rg()
  local ok, r = pcall(api.exec, "rg", { "--version" }, { timeout_ms = 2000 })
  return ok and r.code == 0
end

api.tool{
  name = "rg",
  description = ("Search file contents using ripgrep. Output is truncated to %d lines or %s (whichever is hit first). If truncated, full output is saved to a temp file."):format(MAX_LINES, size(MAX_BYTES)),
  parameters = schema.object{
    pattern = schema.string("Search pattern (regex)"),
    path = schema.string("Directory to search (default: current directory)"):optional(),
    glob = schema.string("File glob pattern, e.g. '*.ts'"):optional(),
  },
  timeout_ms = 3000,
  execute = function(args, ctx)
    local cmd, argv
    if have_rg() then
      cmd, argv = "rg", { "--line-number", "--color=never" }
      if args.glob then argv[#argv + 1] = "--glob"; argv[#argv + 1] = args.glob end
    else
      cmd, argv = "grep", { "-rnE" }
      if args.glob then argv[#argv + 1] = "--include=" .. args.glob end
    end
    argv[#argv + 1] = "--"
    argv[#argv + 1] = args.pattern
    argv[#argv + 1] = args.path or "."
    local r = api.exec(cmd, argv, { timeout_ms = 60000 })
    local details = { pattern = args.pattern, path = args.path, glob = args.glob, match_count = 0 }
    if r.code == 1 or (r.code == 0 and r.stdout:match("^%s*$")) then
      return { content = "No matches found", details = details }
    end
    if r.code ~= 0 then error(cmd .. " failed: " .. (r.stderr ~= "" and r.stderr or ("exit " .. tostring(r.code)))) end

    local n = 0
    for line in r.stdout:gmatch("[^\n]+") do if line:find("%S") then n = n + 1 end end
    details.match_count = n
    local text, t = truncate_head(r.stdout)
    if t.truncated then
      local file = os.tmpname()
      local f = assert(io.open(file, "w")); f:write(r.stdout); f:close()
      details.truncation, details.full_output_path = t, file
      text = text .. ("\n\n[Output truncated: showing %d of %d lines (%s of %s). %d lines (%s) omitted. Full output saved to: %s]")
        :format(t.output_lines, t.total_lines, size(t.output_bytes), size(t.total_bytes),
          t.total_lines - t.output_lines, size(t.total_bytes - t.output_bytes), file)
    end
    return { content = text, details = details }
  end,
}

local ACCENT, DIM, GREEN, YELLOW, RESET = "\27[36m", "\27[2m", "\27[32m", "\27[33m", "\27[0m"

api.renderer("rg", {
  call = function(args)
    local s = 'rg ' .. ACCENT .. '"' .. tostring(args.pattern) .. '"' .. RESET
    if args.path then s = s .. DIM .. " in " .. args.path .. RESET end
    if args.glob then s = s .. DIM .. " --glob " .. args.glob .. RESET end
    return s
  end,
  result = function(_, d)
    if not d then return nil end
    if d.match_count == 0 then return "  " .. DIM .. "No matches" .. RESET end
    local s = "  " .. GREEN .. d.match_count .. " matches" .. RESET
    if d.truncation then s = s .. YELLOW .. " (truncated, full output in " .. d.full_output_path .. ")" .. RESET end
    return s
  end,
})
