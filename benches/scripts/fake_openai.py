"""A fake OpenAI-compatible Chat Completions server on 127.0.0.1, in a process of its own, for
the benches that time or profile `mypi -p` (bench-lean.py, scripts/order-startup.py): the first
request of a conversation gets one `read` call of notes.txt, a request that carries the tool's
result gets a one-line answer. HTTP/1.1 keep-alive, TCP_NODELAY, one SSE body per reply.
"""

import subprocess
import sys

SERVER = r'''
import json, socket, sys
s = socket.create_server(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
def reply(c, body):
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n\r\n" + body)
def chunk(delta, finish=None):
    b = {"id": "x", "object": "chat.completion.chunk",
         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(b).encode() + b"\n\n"
call = chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
              "function": {"name": "read", "arguments": "{\"path\": \"notes.txt\"}"}}]}, None)
while True:
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d:
                    raise EOFError
                buf += d
            head, _, rest = buf.partition(b"\r\n\r\n")
            n = next(int(l.split(b":")[1]) for l in head.split(b"\r\n")
                     if l.lower().startswith(b"content-length:"))
            while len(rest) < n:
                rest += c.recv(65536)
            body, buf = rest[:n], rest[n:]
            tool_result = b'"role":"tool"' in body.replace(b" ", b"")
            if tool_result:
                out = chunk({"content": "The file says hello."}) + chunk({}, "stop")
            else:
                out = call + chunk({}, "tool_calls")
            reply(c, out + b"data: [DONE]\n\n")
    except (EOFError, OSError, StopIteration):
        c.close()
'''


def start():
    """Starts the server; returns (its process, its port). Kill the process when done."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE)
    return proc, int(proc.stdout.readline())
