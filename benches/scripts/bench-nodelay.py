#!/usr/bin/env python3
"""Wall time of `mypi -p` whose model asks for 20 `read` calls, one per turn, against a fake
OpenAI-compatible streaming server on 127.0.0.1 in its two modes: with `TCP_NODELAY` on its
sockets and without (Nagle on, as llama.cpp's server and most small Python servers run). The
server is Python's `http.server` on HTTP/1.1 keep-alive, so mypi reuses one connection for
all 21 turns, and it writes each SSE event as its own HTTP chunk (one `send` each), as
streaming servers do. Without `TCP_NODELAY` a write that follows an unacknowledged one waits
for the client's ACK, which Linux delays (up to 40 ms) on a connection that sends requests
right after reading replies. Alternating rounds, median of each arm and their ratio.

    cargo build --release && python3 benches/scripts/bench-nodelay.py [BIN] [ROUNDS]
"""

import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TURNS = 20


def event(delta, finish=None):
    body = {"id": "x", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


def reply(done_calls):
    """The events of one reply: a `read` call until TURNS were made, then a text answer."""
    if done_calls >= TURNS:
        return [event({"role": "assistant", "content": ""}), event({"content": "done"}),
                event({}, "stop"), b"data: [DONE]\n\n"]
    call = {"index": 0, "id": f"call_{done_calls}", "type": "function",
            "function": {"name": "read", "arguments": ""}}
    args = {"index": 0, "function": {"arguments": json.dumps({"path": "f.txt"})}}
    return [event({"role": "assistant", "content": None, "tool_calls": [call]}),
            event({"tool_calls": [args]}), event({}, "tool_calls"), b"data: [DONE]\n\n"]


def handler(nodelay):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = nodelay

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            done = sum(1 for m in body["messages"] if m.get("role") == "tool")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for ev in reply(done):  # one write per event, as streaming servers do
                self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, *args):
            pass

    return Handler


def serve(nodelay):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler(nodelay))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    mypi = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else \
        os.path.join(target, "release", "mypi")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    ports = {"nodelay": serve(True), "nagle": serve(False)}
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "f.txt"), "w") as f:
            f.write("hello\n")
        env = dict(os.environ, HOME=d, OPENAI_API_KEY="x")

        def run(arm):
            cmd = [mypi, "--provider", "openai", "--model", "m", "--base-url",
                   f"http://127.0.0.1:{ports[arm]}/v1", "--no-session", "--no-extensions",
                   "-p", "go"]
            t = time.monotonic()
            out = subprocess.run(cmd, capture_output=True, env=env, cwd=d)
            wall = time.monotonic() - t
            if out.stdout.strip() != b"done":
                sys.exit(f"mypi failed ({arm}): {out.stdout!r} {out.stderr!r}")
            return wall

        times = {"nodelay": [], "nagle": []}
        run("nodelay")  # warm the page cache
        for _ in range(rounds):
            for arm in times:
                times[arm].append(run(arm))
    med = {arm: statistics.median(t) for arm, t in times.items()}
    for arm, t in times.items():
        print(f"{arm:8} median {med[arm] * 1000:8.1f} ms  "
              f"(min {min(t) * 1000:.1f}, max {max(t) * 1000:.1f}; {TURNS} tool turns + 1)")
    print(f"nagle / nodelay: {med['nagle'] / med['nodelay']:.2f}x")


if __name__ == "__main__":
    main()
