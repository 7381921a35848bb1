#!/usr/bin/env python3
"""Whole-process time of `mypi -p` whose model (the faux one) makes one call to
server-everything's `echo` over stdio, next to the time node takes to start server-everything
and exit on the end of its input (the floor under it), interleaved so machine load hits both.

    cargo build --release && MYPI_TEST_EVERYTHING=.../dist/index.js python3 benches/scripts/bench-mcp.py
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROUNDS = 12


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
        whole, node = [], []
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
    print("mypi -p with one echo call over stdio: median %.3f s (min %.3f)"
          % (statistics.median(whole), min(whole)))
    print("node starting server-everything and exiting: median %.3f s (min %.3f)"
          % (statistics.median(node), min(node)))


if __name__ == "__main__":
    main()
