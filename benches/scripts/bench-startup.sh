#!/usr/bin/env bash
# Measures a whole `mypi -p` process with the offline faux model and one tool call (read),
# with the shipped extension (subagent) and without it (--no-builtin-extensions), no user
# extensions: median and worst wall time, and peak memory (max RSS), over N runs each.
# Usage: benches/scripts/bench-startup.sh [RUNS]   (builds the release binary first)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$0")/../.."
runs=${1:-50}
cargo build --release --quiet
bin=$PWD/target/release/mypi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'hello from a file\n' >"$work/notes.txt"
cat >"$work/replies.jsonl" <<'JSONL'
{"tool_calls":[{"name":"read","arguments":{"path":"notes.txt"}}]}
{"text":"The file says hello."}
JSONL
cd "$work"
out=$("$bin" -p "what does notes.txt say?" --provider faux --faux-script replies.jsonl)
[[ $out == *"The file says hello."* ]] || { echo "unexpected answer: $out" >&2; exit 1; }
python3 - "$bin" "$runs" "$here" <<'PY'
import os, resource, statistics, subprocess, sys, time
sys.path.insert(0, sys.argv[3])
import own_rusage  # the process's own peak RSS, not Python's (see own_rusage.c)
bin, runs = sys.argv[1], int(sys.argv[2])
def measure(extra, label):
  args = [bin, "-p", "what does notes.txt say?", "--provider", "faux", "--faux-script", "replies.jsonl"] + extra
  walls, rss = [], []
  for i in range(runs + 3):
      wall, _, maxrss, code = own_rusage.run(args, env=os.environ)
      if code != 0:
          sys.exit(f"run {i} failed with exit code {code}")
      if i >= 3:
          walls.append(wall)
          rss.append(maxrss / 1024)
  walls.sort()
  print(f"mypi -p (faux, one read tool call, {label}), {runs} runs")
  print(f"  wall ms: median {statistics.median(walls):.2f}, p90 {walls[int(len(walls)*0.9)-1]:.2f}, max {walls[-1]:.2f}")
  print(f"  peak RSS MiB: median {statistics.median(rss):.1f}, max {max(rss):.1f}")
measure([], "with the shipped subagent extension")
measure(["--no-builtin-extensions"], "no extensions at all")
PY
