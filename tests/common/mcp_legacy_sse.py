#!/usr/bin/env python3
"""A small MCP server on the legacy HTTP+SSE transport (2024-11-05) for mypi's tests.

    mcp_legacy_sse.py MODE LOG

Listens on 127.0.0.1 (a free port) and prints `PORT <n>` once ready. `GET /sse` opens the
event stream: its first event (`endpoint`) names where to POST messages
(`/messages?sessionId=N`), and each answer is sent on the stream as a `message` event (the
POST itself is answered 202). Every request is appended to LOG as
`<HTTP verb> <path> <JSON-RPC method or -> <X-Key header or ->`.

MODE:
  normal    as above
  foreign   the endpoint event names another origin (http://localhost:PORT/...)
Tools: echo {text}; job {} (needs MCP tasks: "execution": {"taskSupport": "required"}).
"""

import json
import queue
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
LOG = sys.argv[2]
LOCK = threading.Lock()
SESSIONS = {}
PORT = [0]

TOOLS = [
    {"name": "echo", "description": "Answers its text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "job", "description": "Runs as a task.", "inputSchema": {"type": "object"},
     "execution": {"taskSupport": "required"}},
]


def log(verb, path, method, key):
    with LOCK, open(LOG, "a") as f:
        f.write("%s %s %s %s\n" % (verb, path, method, key or "-"))


def result_of(msg):
    method = msg.get("method")
    if method == "initialize":
        return {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy-sse-fake", "version": "1.0.0"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "ping":
        return {}
    if method == "tools/call":
        args = msg.get("params", {}).get("arguments") or {}
        return {"content": [{"type": "text", "text": "legacy: %s" % args.get("text", "")}]}
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        log("GET", self.path, "-", self.headers.get("X-Key"))
        if not self.path.startswith("/sse"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with LOCK:
            sid = str(len(SESSIONS) + 1)
            q = SESSIONS[sid] = queue.Queue()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        host = "localhost" if MODE == "foreign" else "127.0.0.1"
        self.write(": keep-alive\n\n")
        self.event("endpoint", "http://%s:%d/messages?sessionId=%s" % (host, PORT[0], sid))
        while True:
            item = q.get()
            if item is None:
                return
            try:
                self.event("message", json.dumps(item))
            except OSError:
                return

    def write(self, text):
        self.wfile.write(text.encode())
        self.wfile.flush()

    def event(self, name, data):
        self.write("event: %s\ndata: %s\n\n" % (name, data))

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        msg = json.loads(self.rfile.read(length) or b"{}")
        log("POST", self.path.split("?")[0], msg.get("method", "response"),
            self.headers.get("X-Key"))
        sid = self.path.split("sessionId=")[-1]
        q = SESSIONS.get(sid)
        if q is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(202)
        self.send_header("Content-Length", "8")
        self.end_headers()
        self.wfile.write(b"Accepted")
        if "id" in msg and "method" in msg:
            result = result_of(msg)
            if result is None:
                err = {"code": -32601, "message": "no method " + msg["method"]}
                q.put({"jsonrpc": "2.0", "id": msg["id"], "error": err})
            else:
                q.put({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    PORT[0] = server.server_address[1]
    print("PORT %d" % PORT[0], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
