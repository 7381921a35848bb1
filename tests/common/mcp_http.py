#!/usr/bin/env python3
"""A small Streamable HTTP MCP server for mypi's fault tests.

    mcp_http.py MODE LOG

Listens on 127.0.0.1 (a free port) and prints `PORT <n>` on stdout once ready. Every
request is appended to LOG as `<unix time> <HTTP verb> <session id or -> <JSON-RPC method>`.

MODE:
  fail500   every POST answers HTTP 500 (a server that is down behind its proxy)
  expire    a normal server, except that the first `tools/call` of the first session
            answers HTTP 404 (the session expired): the client must initialise again
            and send the call once more
  call500   a normal server whose `tools/call` answers HTTP 500 (the call must not be
            sent again)
  tasks     a normal server with two more tools: `job` (`"execution": {"taskSupport":
            "required"}`) and `maybe` (`"optional"`)
  tasks_sse `tasks`, every answer sent as an event stream (as TypeScript-SDK servers do)
Tools: echo {text}.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
LOG = sys.argv[2]
LOCK = threading.Lock()
STATE = {"sessions": 0, "expired": False}

TOOLS = [
    {
        "name": "echo",
        "description": "Answers its text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
]


TASK_TOOLS = [
    {"name": "job", "description": "Runs as a task.", "inputSchema": {"type": "object"},
     "execution": {"taskSupport": "required"}},
    {"name": "maybe", "description": "May run as a task.", "inputSchema": {"type": "object"},
     "execution": {"taskSupport": "optional"}},
]
if MODE.startswith("tasks"):
    TOOLS = TOOLS + TASK_TOOLS


def log(verb, session, method):
    with LOCK, open(LOG, "a") as f:
        f.write("%.3f %s %s %s\n" % (time.time(), verb, session or "-", method))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=None):
        data = b"" if body is None else json.dumps(body).encode()
        kind = None if body is None else "application/json"
        self.send(status, data, kind, headers)

    def send(self, status, data, kind, headers):
        self.send_response(status)
        if kind is not None:
            self.send_header("Content-Type", kind)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log("GET", self.headers.get("Mcp-Session-Id"), "-")
        self.reply(405)

    def do_DELETE(self):
        log("DELETE", self.headers.get("Mcp-Session-Id"), "-")
        self.reply(200)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        msg = json.loads(self.rfile.read(length) or b"{}")
        session = self.headers.get("Mcp-Session-Id")
        method = msg.get("method", "response")
        log("POST", session, method)
        if MODE == "fail500":
            return self.reply(500, {"oops": "down"})
        if "id" not in msg:
            return self.reply(202)
        if method == "initialize":
            with LOCK:
                STATE["sessions"] += 1
                sid = "s%d" % STATE["sessions"]
            version = msg.get("params", {}).get("protocolVersion", "2025-11-25")
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mcp-http-fake", "version": "1.0.0"},
            }
            return self.answer(msg, result, {"Mcp-Session-Id": sid})
        if method == "tools/list":
            return self.answer(msg, {"tools": TOOLS})
        if method == "ping":
            return self.answer(msg, {})
        if method == "tools/call":
            if MODE == "call500":
                return self.reply(500, {"oops": "down"})
            with LOCK:
                expire = MODE == "expire" and session == "s1" and not STATE["expired"]
                STATE["expired"] = STATE["expired"] or expire
            if expire:
                return self.reply(404)
            args = msg.get("params", {}).get("arguments") or {}
            text = "%s (session %s)" % (args.get("text", ""), session)
            return self.answer(msg, {"content": [{"type": "text", "text": text}]})
        err = {"code": -32601, "message": "no method " + method}
        self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "error": err})

    def answer(self, msg, result, headers=None):
        body = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        if MODE != "tasks_sse":
            return self.reply(200, body, headers)
        data = ("event: message\ndata: %s\n\n" % json.dumps(body)).encode()
        self.send(200, data, "text/event-stream", headers)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
