#!/usr/bin/env bash
# CPU time the mypi process itself spends per streamed text delta: `mypi -p` against a fake
# OpenAI-compatible server (separate process) streaming N deltas of 21 characters each, for
# N in DELTAS (env, default "5000 20000 80000"), with no extension and with `message_update`
# handlers in Lua and in Rhai that do nothing (noop) or read the text so far (reads). Child
# CPU (user+sys, its own rusage via wait4), median of RUNS runs (env, default 5); µs/delta =
# (cpu(N) - cpu(200)) / (N - 200); "× none" is that over the same binary's figure with no
# extension; flat cost in reply length: the µs/delta of every N alike.
# Several binaries are measured side by side in one run, their runs interleaved (BIN=label
# names an arm; a bare path is labelled by its file name).
# Usage: benches/scripts/bench-streaming.sh [BIN...]   (default: builds target/release/mypi)
# PACE_US=n makes the server busy-wait n µs between chunks (default 0: as fast as it can).
# VARIANTS (env) picks the handlers, default "none lua-noop lua-reads rhai-noop rhai-reads".
set -euo pipefail
arms=()
for a in "$@"; do
  if [[ $a == *=* ]]; then arms+=("${a%%=*}=$(realpath "${a#*=}")"); else arms+=("$(basename "$a")=$(realpath "$a")"); fi
done
cd "$(dirname "$0")/../.."
if [[ ${#arms[@]} -eq 0 ]]; then
  cargo build --release --quiet
  arms=("mypi=${CARGO_TARGET_DIR:-$PWD/target}/release/mypi")
fi
work=$(mktemp -d)
srv=
trap '[[ -n $srv ]] && kill "$srv" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/cwd"
for v in lua-noop lua-reads rhai-noop rhai-reads; do mkdir -p "$work/$v/ext"; done
echo 'api.on("message_update", function(e) end)' >"$work/lua-noop/ext/noop.lua"
echo 'api.on("message_update", function(e) local n = #e.text end)' >"$work/lua-reads/ext/reads.lua"
echo 'api.on("message_update", |e| {});' >"$work/rhai-noop/ext/noop.rhai"
echo 'api.on("message_update", |e| { let n = e.text.len(); });' >"$work/rhai-reads/ext/reads.rhai"
cat >"$work/server.py" <<'PY'
import json, os, socket, sys, time
work, pace = sys.argv[1], int(os.environ.get("PACE_US", "0")) / 1e6
def chunk(delta, finish):
    body = {"id": "x", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"
head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        b"Connection: close\r\n\r\n")
s = socket.create_server(("127.0.0.1", 0))
with open(f"{work}/port.tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(f"{work}/port.tmp", f"{work}/port")
while True:
    c, _ = s.accept()
    try:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        while b"\r\n\r\n" not in buf and (d := c.recv(65536)):
            buf += d
        hdr, _, body = buf.partition(b"\r\n\r\n")
        lines = hdr.decode("latin1").split("\r\n")
        length = next((int(l.split(":", 1)[1]) for l in lines[1:]
                       if l.lower().startswith("content-length:")), 0)
        while len(body) < length and (d := c.recv(65536)):
            body += d
        if len(lines[0].split()) < 2 or not lines[0].split()[1].endswith("/chat/completions"):
            c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            continue
        n = int(open(f"{work}/n").read())
        chunks = [chunk({"content": f"w{i:019d} "}, None) for i in range(n)]  # 21 characters
        c.sendall(head)
        for ch in chunks:  # one send per chunk, TCP_NODELAY: one segment each unless backed up
            c.sendall(ch)
            if pace:
                t = time.perf_counter() + pace
                while time.perf_counter() < t: pass
        c.sendall(chunk({}, "stop") + b"data: [DONE]\n\n")
    except OSError:
        pass
    finally:
        c.close()
PY
python3 "$work/server.py" "$work" &
srv=$!
for _ in $(seq 100); do [[ -f $work/port ]] && break; sleep 0.05; done
[[ -f $work/port ]] || { echo "fake server did not start" >&2; exit 1; }
python3 - "$work" "${RUNS:-5}" "${DELTAS:-5000 20000 80000}" \
  "${VARIANTS:-none lua-noop lua-reads rhai-noop rhai-reads}" "${arms[@]}" <<'PY'
import os, signal, statistics, sys, threading, time
work, RUNS, SIZES, VARIANTS = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
ARMS = [a.split("=", 1) for a in sys.argv[5:]]
SIZES = [int(n) for n in SIZES]
SMALL, TIMEOUT = 200, 120
port = open(f"{work}/port").read().strip()
env = dict(os.environ, OPENAI_API_KEY="x", HOME=f"{work}/home")
os.chdir(f"{work}/cwd")
W = os.O_WRONLY | os.O_CREAT | os.O_TRUNC

def run(bin, n, ext):
    """One `mypi -p`: child cpu seconds."""
    with open(f"{work}/n", "w") as f:
        f.write(str(n))
    args = [bin, "-p", "hi", "--provider", "openai", "--base-url", f"http://127.0.0.1:{port}/v1",
            "--model", "m", "--no-session"]
    args += ["--extensions-dir", f"{work}/{ext}/ext"] if ext != "none" else ["--no-extensions"]
    t0 = time.perf_counter()
    pid = os.posix_spawn(bin, args, env, file_actions=[
        (os.POSIX_SPAWN_OPEN, 1, f"{work}/out", W, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, f"{work}/err", W, 0o644)])
    timer = threading.Timer(TIMEOUT, os.kill, (pid, signal.SIGKILL))
    timer.start()
    _, status, ru = os.wait4(pid, 0)
    timer.cancel()
    code = os.waitstatus_to_exitcode(status)
    err = open(f"{work}/err").read()[-2000:]
    if code != 0:
        sys.exit(f"{bin} {ext} with {n} deltas: exit code {code} after "
                 f"{time.perf_counter() - t0:.1f} s\n{err}")
    size = os.path.getsize(f"{work}/out")
    if size not in (21 * n, 21 * n + 1):
        sys.exit(f"{bin} {ext} with {n} deltas: stdout is {size} bytes, expected {21 * n}(+1)\n{err}")
    return ru.ru_utime + ru.ru_stime

cpu = {}  # (arm, variant, n) -> [seconds]
for label, bin in ARMS:
    for v in VARIANTS:
        run(bin, SMALL, v)  # warm-up
for _ in range(RUNS):  # rounds: every arm, variant and size once per round
    for label, bin in ARMS:
        for v in VARIANTS:
            for n in [SMALL] + SIZES:
                cpu.setdefault((label, v, n), []).append(run(bin, n, v))

med = {k: statistics.median(x) for k, x in cpu.items()}
per = lambda a, v, n: (med[(a, v, n)] - med[(a, v, SMALL)]) / (n - SMALL) * 1e6
print(f"mypi -p streaming N deltas of 21 chars from a fake OpenAI server, PACE_US={os.environ.get('PACE_US', '0')}")
print(f"child CPU (user+sys of mypi only), median of {RUNS} interleaved runs; "
      f"µs/delta = (cpu(N) - cpu({SMALL})) / (N - {SMALL}); × none: over the same arm's none")
cols = "".join(f"{f'N={n} µs':>12}{'× none':>8}" for n in SIZES)
print(f"{'arm':<14} {'variant':<11}{cols} {'start ms':>9}")
for label, _ in ARMS:
    for v in VARIANTS:
        row = ""
        for n in SIZES:
            ratio = per(label, v, n) / per(label, "none", n) if "none" in VARIANTS else float("nan")
            row += f"{per(label, v, n):>12.2f}{ratio:>8.2f}"
        print(f"{label:<14} {v:<11}{row} {med[(label, v, SMALL)] * 1e3:>9.1f}")
PY
