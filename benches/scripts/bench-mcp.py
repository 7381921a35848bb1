#!/usr/bin/env python3
"""Whole-process time of `mypi -p` whose model (the faux one) makes one call to
server-everything's `echo` over stdio, next to two floors under it, interleaved so machine
load hits all three: node starting server-everything and exiting on the end of its input, and
this script as a bare client doing the same exchange as mypi (initialize, the lists, the call)
and ending the server the way mypi does once it knows server-everything does not exit on
the end of its input (stdin closed, then SIGTERM at once; the first mypi run learns that).

    cargo build --release && MYPI_TEST_EVERYTHING=.../dist/index.js python3 benches/scripts/bench-mcp.py
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROUNDS = 12


def bare_client(index):
    """The exchange mypi has with the server, from a client that does nothing else."""
    p = subprocess.Popen(["node", index, "stdio"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def ask(msg_id, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,
                                   "params": params}) + "\n").encode())
        p.stdin.flush()
        while True:
            reply = json.loads(p.stdout.readline())
            if reply.get("id") == msg_id:
                return reply

    ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for n, method in enumerate(["tools/list", "prompts/list", "resources/list",
                                "resources/templates/list"], 1):
        ask(n, method, {})
    reply = ask(9, "tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    assert "result" in reply, reply
    p.stdin.close()
    p.send_signal(signal.SIGTERM)
    p.wait()


def main():
    index = os.environ.get("MYPI_TEST_EVERYTHING", "")
    if not os.path.isfile(index):
        print("mcp_print skipped: set MYPI_TEST_EVERYTHING to server-everything's dist/index.js")
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mypi = os.path.join(root, "target", "release", "mypi")
    with tempfile.TemporaryDirectory() as d:
        config = os.path.join(d, "mcp.json")
        with open(config, "w") as f:
            json.dump({"mcpServers": {"everything": {"command": "node",
                                                     "args": [index, "stdio"]}}}, f)
        replies = os.path.join(d, "replies.jsonl")
        with open(replies, "w") as f:
            f.write(json.dumps({"tool_calls": [{"name": "mcp__everything__echo",
                                                "arguments": {"message": "hi"}}]}) + "\n")
            f.write(json.dumps({"text": "done"}) + "\n")
        env = dict(os.environ, HOME=d)
        cmd = [mypi, "--mcp-config", config, "--provider", "faux", "--faux-script", replies,
               "--no-session", "--no-extensions", "-p", "go"]
        whole, node, bare = [], [], []
        for _ in range(ROUNDS):
            t = time.monotonic()
            out = subprocess.run(cmd, capture_output=True, env=env, cwd=d)
            whole.append(time.monotonic() - t)
            if out.stdout.strip() != b"done":
                sys.exit("mypi failed: %r" % out.stderr)
            t = time.monotonic()
            subprocess.run(["node", index, "stdio"], stdin=subprocess.DEVNULL,
                           capture_output=True)
            node.append(time.monotonic() - t)
            t = time.monotonic()
            bare_client(index)
            bare.append(time.monotonic() - t)
    print("mypi -p with one echo call over stdio: median %.3f s (min %.3f)"
          % (statistics.median(whole), min(whole)))
    print("node starting server-everything and exiting: median %.3f s (min %.3f)"
          % (statistics.median(node), min(node)))
    print("a bare client in this script doing the same exchange: median %.3f s (min %.3f)"
          % (statistics.median(bare), min(bare)))


if __name__ == "__main__":
    main()
