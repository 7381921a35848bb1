#!/usr/bin/env bash
# Start-up with many extensions: `mypi -p` (faux model, no tool call) in a project with
# N Lua and N Rhai trivial extensions (each: one tool, one command, one handler), against the
# same project with none. Prints median wall time and peak memory, and memory per extension.
# Usage: benches/scripts/bench-extensions.sh [N] [RUNS]   (default 100 each, 20 runs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$0")/../.."
n=${1:-100}
runs=${2:-20}
cargo build --release --quiet
bin=$PWD/target/release/mypi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/none" "$work/lua/.agents/extensions" "$work/both/.agents/extensions"
for i in $(seq 1 "$n"); do
  cat >"$work/both/.agents/extensions/l$i.lua" <<LUA
api.tool{name = "t_lua_$i", description = "tool $i", parameters = {type = "object", properties = {}},
  execute = function(args) return "ok $i" end}
api.command("c_lua_$i", function(args) return "cmd $i" end, "command $i")
api.on("tool_call", function(e) return nil end)
LUA
  cp "$work/both/.agents/extensions/l$i.lua" "$work/lua/.agents/extensions/l$i.lua"
  cat >"$work/both/.agents/extensions/r$i.rhai" <<RHAI
api.tool(#{name: "t_rhai_$i", description: "tool $i", parameters: #{type: "object", properties: #{}},
  execute: |args| "ok $i"});
api.command("c_rhai_$i", |args| "cmd $i", "command $i");
api.on("tool_call", |e| ());
RHAI
done
check=$(cd "$work/both" && HOME=$work "$bin" -p "/extensions" --provider faux)
loaded=$(grep -c "handler" <<<"$check" || true)
[[ $loaded -eq $((2 * n)) ]] || { echo "expected $((2 * n)) extensions, /extensions shows $loaded:" >&2; echo "$check" | head >&2; exit 1; }
python3 - "$bin" "$runs" "$work" "$n" "$here" <<'PY'
import os, statistics, sys, time
sys.path.insert(0, sys.argv[5])
import own_rusage  # the process's own peak RSS, not Python's (see own_rusage.c)
bin, runs, work, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
env = dict(os.environ, HOME=work)
def measure(folder):
    walls, rss = [], []
    for i in range(runs + 2):
        wall, _, maxrss, code = own_rusage.run(
            [bin, "-p", "hello", "--provider", "faux", "--no-session"],
            cwd=os.path.join(work, folder), env=env)
        if code != 0:
            sys.exit(f"{folder}: run failed with exit code {code}")
        if i >= 2:
            walls.append(wall); rss.append(maxrss / 1024)
    return statistics.median(walls), max(walls), statistics.median(rss)
base = measure("none")
lua = measure("lua")
both = measure("both")
print(f"mypi -p start-up, {runs} runs each (median / max wall ms, median peak RSS MiB)")
print(f"  no extensions:                  {base[0]:7.2f} / {base[1]:7.2f}   {base[2]:6.1f}")
print(f"  {n} Lua:                         {lua[0]:7.2f} / {lua[1]:7.2f}   {lua[2]:6.1f}")
print(f"  {n} Lua + {n} Rhai:              {both[0]:7.2f} / {both[1]:7.2f}   {both[2]:6.1f}")
print(f"  memory per Lua extension: {(lua[2]-base[2])*1024/n:.0f} KiB (peak RSS difference / {n})")
PY
