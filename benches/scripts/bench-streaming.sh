#!/usr/bin/env bash
# CPU time the mypi process itself spends per streamed text delta: `mypi -p` against a fake
# OpenAI-compatible server (separate process) streaming N deltas of 21 characters each, with no
# extension, a no-op `message_update` subscriber, and one that reads `#e.text`. Child CPU
# (user+sys, its own rusage via wait4) is measured at 200, N/4, 3N/4 and N deltas, median of
# RUNS runs (env, default 5); µs/delta = (cpu(N) - cpu(200)) / (N - 200), and the same over the
# first and the last quarter of the stream (flat cost: first ≈ last; O(n²): last ≈ 7 × first).
# Usage: benches/scripts/bench-streaming.sh [BIN] [DELTAS]   (default: builds target/release/mypi; 20000)
# PACE_US=n makes the server busy-wait n µs between chunks (default 0: as fast as it can).
set -euo pipefail
bin=${1:+$(realpath "$1")}
cd "$(dirname "$0")/../.."
if [[ -z $bin ]]; then cargo build --release --quiet; bin=$PWD/target/release/mypi; fi
deltas=${2:-20000}
work=$(mktemp -d)
srv=
trap '[[ -n $srv ]] && kill "$srv" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/cwd" "$work/noop/ext" "$work/reads/ext"
echo 'api.on("message_update", function(e) end)' >"$work/noop/ext/noop.lua"
echo 'api.on("message_update", function(e) local n = #e.text end)' >"$work/reads/ext/reads.lua"
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
python3 - "$bin" "$deltas" "$work" "${RUNS:-5}" <<'PY'
import os, signal, statistics, sys, threading, time
bin, N, work, RUNS = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
SMALL, TIMEOUT = 200, 60
port = open(f"{work}/port").read().strip()
env = dict(os.environ, OPENAI_API_KEY="x", HOME=f"{work}/home")
os.chdir(f"{work}/cwd")
W = os.O_WRONLY | os.O_CREAT | os.O_TRUNC

def run(n, ext):
    """One `mypi -p`: (child cpu s, wall s, context switches), or None on timeout."""
    with open(f"{work}/n", "w") as f:
        f.write(str(n))
    args = [bin, "-p", "hi", "--provider", "openai", "--base-url", f"http://127.0.0.1:{port}/v1",
            "--model", "m", "--no-session"]
    args += ["--extensions-dir", f"{work}/{ext}/ext"] if ext else ["--no-extensions"]
    t0 = time.perf_counter()
    pid = os.posix_spawn(bin, args, env, file_actions=[
        (os.POSIX_SPAWN_OPEN, 1, f"{work}/out", W, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, f"{work}/err", W, 0o644)])
    timer = threading.Timer(TIMEOUT, os.kill, (pid, signal.SIGKILL))
    timer.start()
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    timer.cancel()
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL and wall >= TIMEOUT:
        return None
    code = os.waitstatus_to_exitcode(status)
    err = open(f"{work}/err").read()[-2000:]
    if code != 0:
        sys.exit(f"{ext or 'none'} with {n} deltas: exit code {code}\n{err}")
    size = os.path.getsize(f"{work}/out")
    if size not in (21 * n, 21 * n + 1):
        sys.exit(f"{ext or 'none'} with {n} deltas: stdout is {size} bytes, expected {21 * n}(+1)\n{err}")
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_nvcsw + ru.ru_nivcsw

def measure(ext, n):
    """Medians per delta count, or None if a run timed out."""
    run(SMALL, ext)  # warm-up
    med = {}
    for c in (SMALL, n // 4, n - n // 4, n):
        rs = []
        for _ in range(RUNS):
            r = run(c, ext)
            if r is None:
                return None
            rs.append(r)
        med[c] = [statistics.median(x) for x in zip(*rs)]
    return med

print(f"mypi -p streaming {N} deltas of 21 chars from a fake OpenAI server ({bin})")
print(f"child CPU = user+sys of mypi only, median of {RUNS} runs; per delta = minus the {SMALL}-delta run")
print(f"{'variant':<8} {'deltas':>6} {'cpu ms':>9} {'wall ms':>9} {'µs/delta':>9} "
      f"{'1st ¼ µs':>9} {'last ¼ µs':>9} {'csw/delta':>9}")
for name, ext in (("none", None), ("noop", "noop"), ("reads", "reads")):
    n, med = N, measure(ext, N)
    if med is None and N > 5000:
        print(f"  ({name}: a {N}-delta run took over {TIMEOUT} s, retrying with 5000)")
        n, med = 5000, measure(ext, 5000)
    if med is None:
        print(f"{name:<8} {n:>6}  timed out (> {TIMEOUT} s)")
        continue
    q1, q3 = n // 4, n - n // 4
    per = lambda a, b, i=0: (med[b][i] - med[a][i]) / (b - a)
    print(f"{name:<8} {n:>6} {med[n][0] * 1e3:>9.1f} {med[n][1] * 1e3:>9.1f} "
          f"{per(SMALL, n) * 1e6:>9.2f} {per(SMALL, q1) * 1e6:>9.2f} {per(q3, n) * 1e6:>9.2f} "
          f"{per(SMALL, n, 2):>9.2f}")
    print(f"{'':<8} {SMALL:>6} {med[SMALL][0] * 1e3:>9.1f} {med[SMALL][1] * 1e3:>9.1f}   (start-up run)")
PY
