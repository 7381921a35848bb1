#!/usr/bin/env python3
"""Wall time from starting `mypi -p` to its first model request, with MCP servers (each a
copy of tests/common/mcp_fake.py over stdio), a fresh HOME each run, in two settings:
"never seen" (nothing cached) and "fast ones seen" (`mypi mcp list` ran first with every
server but `slow`, so their tools are cached, as after a user's first run):

  one        1 server
  20-slow-deferred   19 fast servers and `slow` (starts 2 s late, "exposure": "deferred"):
                     the prompt does not wait for it (a failing server never seen is given
                     the grace like a slow one: tests/suite/mcp_many.rs has one)
  20-slow-direct     the same with `slow` left to the budget: the prompt gives it the
                     1.5 s grace, then goes on without it
  20-slow-named      as 20-slow-direct, the prompt naming one fast server: it waits for that
                     one only
  20-idle-deferred   20 servers that never answer (`sleep 30`), deferred: what starting 20
                     servers costs mypi itself (next to `one`; the Python fakes above also
                     cost the machine 20 interpreters starting at once)

The model is a small OpenAI-compatible server in this script that notes when the first
request arrives and answers "done".

    cargo build --release && python3 benches/scripts/bench-mcp-many.py
    (MYPI_BIN=path/to/mypi to time another build)
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROUNDS = int(os.environ.get("ROUNDS", "5"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = os.path.join(ROOT, "tests", "common", "mcp_fake.py")
FIRST = {"at": None}

CHUNKS = [
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "done"},
                  "finish_reason": None}]},
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
     "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
]


class Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        if FIRST["at"] is None:
            FIRST["at"] = time.monotonic()
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = "".join("data: %s\n\n" % json.dumps(c) for c in CHUNKS) + "data: [DONE]\n\n"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def fast():
    return {"command": "python3", "args": [FAKE, "normal"], "exposure": "direct"}


def servers(kind):
    if kind == "one":
        return {"s01": fast()}
    if kind == "20-idle-deferred":
        idle = {"command": "sleep", "args": ["30"], "exposure": "deferred"}
        return {"s%02d" % i: idle for i in range(1, 21)}
    out = {"s%02d" % i: fast() for i in range(1, 20)}
    slow = {"command": "sh", "args": ["-c", "sleep 2; exec python3 '%s' normal" % FAKE]}
    if kind == "20-slow-deferred":
        slow["exposure"] = "deferred"
    out["slow"] = slow
    return out


def one_run(mypi, url, kind, seen):
    with tempfile.TemporaryDirectory() as d:
        config = os.path.join(d, "mcp.json")
        env = dict(os.environ, HOME=d, OPENAI_API_KEY="k")
        if seen:
            fast_ones = {k: v for k, v in servers(kind).items()
                         if k != "slow" and v["command"] == "python3"}
            with open(config, "w") as f:
                json.dump({"mcpServers": fast_ones}, f)
            subprocess.run([mypi, "mcp", "list", "--mcp-config", config],
                           capture_output=True, env=env, cwd=d, check=True)
        with open(config, "w") as f:
            json.dump({"mcpServers": servers(kind)}, f)
        prompt = "ask s01 to echo hi" if kind == "20-slow-named" else "go"
        cmd = [mypi, "--provider", "openai", "--base-url", url, "--model", "m",
               "--mcp-config", config, "--no-session", "--no-extensions", "-p", prompt]
        FIRST["at"] = None
        start = time.monotonic()
        out = subprocess.run(cmd, capture_output=True, env=env, cwd=d)
        if out.stdout.strip() != b"done" or FIRST["at"] is None:
            sys.exit("mypi failed (%s): %r" % (kind, out.stderr))
        return FIRST["at"] - start


def main():
    mypi = os.environ.get("MYPI_BIN", os.path.join(ROOT, "target", "release", "mypi"))
    if not os.path.isfile(mypi):
        sys.exit("build mypi first (cargo build --release), or set MYPI_BIN")
    model = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/v1" % model.server_address[1]
    kinds = ["one", "20-slow-deferred", "20-slow-direct", "20-slow-named", "20-idle-deferred"]
    runs = [(k, seen) for seen in (False, True) for k in kinds]
    times = {r: [] for r in runs}
    for _ in range(ROUNDS):
        for r in runs:  # interleaved, so machine load hits all alike
            times[r].append(one_run(mypi, url, *r))
    for (k, seen), t in times.items():
        print("%-16s %-15s first model request after: median %.3f s (min %.3f, max %.3f)"
              % (k, "fast ones seen" if seen else "never seen", statistics.median(t), min(t),
                 max(t)))


if __name__ == "__main__":
    main()
