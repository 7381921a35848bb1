-- Port of pi's examples/extensions/interactive-shell.ts.
--
-- Handles interactive programs typed as `!cmd` / `!!cmd` at the prompt (the user_shell
-- event), which mypi's shell escape would otherwise run with stdin closed:
--   * `!vim FILE` (or nvim, vi, nano, emacs, micro, hx, ...) with one file: the file is
--     opened in your editor through ctx.ui.editor (it gets the terminal), saved back, and the
--     output says what changed;
--   * any other interactive command (less, htop, git rebase -i, psql, ssh, tmux, ...; or
--     anything typed as `!i CMD`) is refused with a hint to run it in another terminal,
--     instead of hanging on a closed stdin.
-- INTERACTIVE_COMMANDS (comma-separated) adds commands, INTERACTIVE_EXCLUDE removes some.
--
-- Try it:
--   printf '!!vim notes.txt\n' | VISUAL="sed -i s/old/new/" mypi --provider faux --extensions-dir DIR
--   mypi --provider faux --extensions-dir DIR -p '!htop'      # refused
--
-- Left out (not portable): running the program itself with the full terminal. pi stops its
-- TUI and spawns the command with stdio inherited; a mypi script has no way to give a
-- program the terminal (api.exec runs without stdin and captures the output), except for the
-- one program ctx.ui.editor starts. So the editor used is $VISUAL / $EDITOR, not the one
-- typed, and everything else is refused rather than run.

local json = require("json")
local fs = require("fs")

local DEFAULTS = {
  "vim", "nvim", "vi", "nano", "emacs", "pico", "micro", "helix", "hx", "kak",
  "less", "more", "most",
  "git commit", "git rebase", "git merge", "git cherry-pick", "git revert", "git add -p",
  "git add --patch", "git add -i", "git add --interactive", "git stash -p", "git stash --patch",
  "git reset -p", "git reset --patch", "git checkout -p", "git checkout --patch", "git difftool",
  "git mergetool",
  "htop", "top", "btop", "glances", "ranger", "nnn", "lf", "mc", "vifm", "tig", "lazygit", "gitui",
  "fzf", "sk", "ssh", "telnet", "mosh", "psql", "mysql", "sqlite3", "mongosh", "redis-cli",
  "kubectl edit", "kubectl exec -it", "docker exec -it", "docker run -it", "tmux", "screen", "ncdu",
}
local EDITORS = { vim = true, nvim = true, vi = true, nano = true, emacs = true, pico = true,
  micro = true, helix = true, hx = true, kak = true }

local function split_env(name)
  local out = {}
  for item in (os.getenv(name) or ""):gmatch("[^,]+") do
    item = item:match("^%s*(.-)%s*$")
    if item ~= "" then out[#out + 1] = item end
  end
  return out
end

local function commands()
  local excluded = {}
  for _, c in ipairs(split_env("INTERACTIVE_EXCLUDE")) do excluded[c:lower()] = true end
  local list = {}
  for _, src in ipairs{ DEFAULTS, split_env("INTERACTIVE_COMMANDS") } do
    for _, c in ipairs(src) do
      if not excluded[c:lower()] then list[#list + 1] = c:lower() end
    end
  end
  return list
end

local function starts_with_cmd(s, cmd)
  return s == cmd or s:sub(1, #cmd + 1) == cmd .. " " or s:sub(1, #cmd + 1) == cmd .. "\t"
end

local function is_interactive(command)
  local s = command:lower():match("^%s*(.-)%s*$")
  local after_pipe = s:match("|%s*([^|]*)$")
  for _, cmd in ipairs(commands()) do
    if starts_with_cmd(s, cmd) or (after_pipe and starts_with_cmd(after_pipe, cmd)) then return true end
  end
  return false
end

local function edit_file(file, ctx)
  local before = fs.exists(file) and fs.read(file) or ""
  local after = ctx.ui.editor(before)
  if after == nil then return "(the editor failed; " .. file .. " was not changed)" end
  if after == before then return "(" .. file .. " unchanged)" end
  fs.write(file, after)
  local n = select(2, after:gsub("\n", "")) + ((after ~= "" and after:sub(-1) ~= "\n") and 1 or 0)
  return ("(edited %s: %d lines, %d bytes)"):format(file, n, #after)
end

api.on("user_shell", function(e, ctx)
  local command, forced = e.command, false
  if command:match("^i[ \t]") then
    forced, command = true, command:sub(3):match("^%s*(.-)%s*$")
  end
  if not forced and not is_interactive(command) then return nil end

  local prog, file = command:match("^%s*(%S+)%s+([^%s|;&<>]+)%s*$")
  if prog and EDITORS[prog:lower()] and ctx.mode == "repl" then
    return { updated_output = edit_file(file, ctx) }
  end
  if ctx.mode ~= "repl" then
    return { block = true, reason = "(interactive commands require the REPL)" }
  end
  return { block = true, reason = "`" .. command .. "` is interactive and mypi cannot give it the terminal; run it in another terminal" }
end)
