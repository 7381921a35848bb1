#!/usr/bin/env python3
"""A small, deliberately misbehaving MCP server for mypi's fault tests.

Newline-delimited JSON-RPC on stdin/stdout, protocol 2025-11-25: initialize,
notifications/initialized, tools/list, tools/call, ping. Usage:

    mcp_fake.py MODE [LOG]

MODE picks the misbehaviour of the whole server:
  normal       answers everything
  exit_start   writes a line to stderr and exits (status 3) before reading anything
  garbage      writes a line that is not JSON to stdout before each answer
  slow_start   sleeps 30 s before reading anything
  stubborn     a normal server that does not exit when its stdin closes; on SIGTERM it
               logs `{"eof_to_term_ms": N}` (when its stdin had closed: how long before)
               and `<terminated>`, and exits
  deaf         like stubborn, but it ignores SIGTERM too
  slow_exit    exits 200 ms after its stdin closes (logging `<exiting>`); on SIGTERM it
               logs `<terminated>` and exits
Whatever the mode, the tools misbehave on request:
  echo {text}      answers the text
  add {a, b}       answers a + b
  hang {}          never answers (the call is left pending)
  die {}           writes to stderr and exits in the middle of the call
  big {mib}        answers a text of MIB mebibytes
  flood {mib}      writes MIB mebibytes to stderr, then answers "flooded"
  slow {steps, every, apart}  sends a progress notification (for the request's
                   progressToken) every EVERY seconds, STEPS times, then answers "slept";
                   with APART true on a thread of its own, so several such calls overlap
  rush {steps}     sends STEPS progress notifications and its answer "rushed" in one write
                   (the last progress comes just before the answer)
  elicit {message, schema, delay}  asks the client (elicitation/create with MESSAGE and
                   SCHEMA, an object or JSON text: its properties keep their order) DELAY
                   seconds after the call came (default 0), waits for the answer and answers
                   it as JSON text
  fail {message}   answers a JSON-RPC error with MESSAGE
  churn {}         says its tool list changed, answers "churned", and from then on never
                   answers tools/list
With $FAKE_VERSION set, initialize is answered with that protocol version (otherwise the
client's), and with $FAKE_INSTRUCTIONS set, with those instructions; $FAKE_TOOLS (a JSON
list) adds tools to the list (calling them answers "no tool"), and $FAKE_MANY=N adds N tools
of about 640 bytes each (`VERB_NOUN_I`, answering "no tool"), like a big real server.
Every line received is appended to LOG (when given), so a test can see what arrived
(a `notifications/cancelled`, how many `tools/call`), and `<stdin closed>` when
stdin ends (then the server exits, logging `<exiting>`).
"""

import json
import os
import signal
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
LOG = sys.argv[2] if len(sys.argv) > 2 else None

TOOLS = [
    {
        "name": "echo",
        "description": "Answers its text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "add",
        "description": "Adds two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        },
    },
    {"name": "hang", "description": "Never answers.", "inputSchema": {"type": "object"}},
    {"name": "die", "description": "Exits mid-call.", "inputSchema": {"type": "object"}},
    {
        "name": "big",
        "description": "Answers MIB mebibytes of text.",
        "inputSchema": {"type": "object", "properties": {"mib": {"type": "number"}}},
    },
    {"name": "slow", "description": "Takes its time, saying so.",
     "inputSchema": {"type": "object"}},
    {"name": "churn", "description": "Changes nothing, says otherwise.",
     "inputSchema": {"type": "object"}},
    {"name": "rush", "description": "Reports progress and answers at once.",
     "inputSchema": {"type": "object"}},
    {"name": "elicit", "description": "Asks the user.", "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "Answers an error.", "inputSchema": {"type": "object"}},
    {
        "name": "flood",
        "description": "Floods stderr, then answers.",
        "inputSchema": {"type": "object", "properties": {"mib": {"type": "number"}}},
    },
]


TOOLS.extend(json.loads(os.environ.get("FAKE_TOOLS", "[]")))


def many(n):
    verbs = ["create", "list", "get", "update", "delete", "search", "merge", "archive"]
    nouns = ["issue", "branch", "commit", "label", "milestone", "comment", "release",
             "webhook", "deployment", "project", "team", "secret", "workflow"]
    for i in range(n):
        verb, noun = verbs[i % len(verbs)], nouns[(i // len(verbs)) % len(nouns)]
        TOOLS.append({
            "name": "%s_%s_%d" % (verb, noun, i),
            "description": ("%s a %s of the fake service (number %d). " % (verb.capitalize(), noun, i))
            + "It takes the owner and the repository, and answers what the service said, "
            "as JSON, with the fields the service sends back for one %s. Needs a token with access." % noun,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "owner": {"type": "string", "description": "The account that owns it."},
                    "repo": {"type": "string", "description": "The repository's name."},
                    "id": {"type": "integer", "description": "The %s's number." % noun},
                    "body": {"type": "string", "description": "Text for the %s, in Markdown." % noun},
                },
                "required": ["owner", "repo"],
            },
        })


many(int(os.environ.get("FAKE_MANY", "0")))

DEAF_LISTS = [False]
EOF_AT = [None]


def log(line):
    if LOG:
        with open(LOG, "a") as f:
            f.write(line.rstrip("\n") + "\n")


WRITING = threading.Lock()


def send(msg):
    with WRITING:
        if MODE == "garbage":
            sys.stdout.write("this line is not JSON at all {\n")
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def text(t):
    return {"content": [{"type": "text", "text": t}], "isError": False}


def flood(mib):
    chunk = ("x" * 1023 + "\n").encode() * 1024
    for _ in range(int(mib)):
        sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.write(b"fake: the flood is over\n")
    sys.stderr.flush()


def call(msg_id, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "add":
        return text(str(args.get("a", 0) + args.get("b", 0)))
    if name == "hang":
        return None
    if name == "die":
        sys.stderr.write("fake: dying in the middle of a call\n")
        sys.stderr.flush()
        os._exit(1)
    if name == "big":
        size = int(float(args.get("mib", 20)) * 1024 * 1024)
        return text("B" * size)
    if name == "slow" and args.get("apart"):
        rest = dict(args, apart=False)
        sub = dict(params, arguments=rest)

        def apart():
            send({"jsonrpc": "2.0", "id": msg_id, "result": call(msg_id, sub)})

        threading.Thread(target=apart, daemon=True).start()
        return None
    if name == "slow":
        token = (params.get("_meta") or {}).get("progressToken")
        steps = int(args.get("steps", 3))
        for i in range(steps):
            time.sleep(float(args.get("every", 0.5)))
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": i + 1, "total": steps}})
        return text("slept")
    if name == "rush":
        token = (params.get("_meta") or {}).get("progressToken")
        steps = int(args.get("steps", 5))
        lines = [{"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": i + 1, "total": steps}}
                 for i in range(steps)]
        lines.append({"jsonrpc": "2.0", "id": msg_id, "result": text("rushed")})
        sys.stdout.write("".join(json.dumps(m) + "\n" for m in lines))
        sys.stdout.flush()
        return None
    if name == "elicit":
        schema = args.get("schema", {"type": "object", "properties": {}})
        if isinstance(schema, str):
            schema = json.loads(schema)
        ask = {"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
               "params": {"message": args.get("message", "Tell me."),
                          "requestedSchema": schema}}
        time.sleep(float(args.get("delay", 0)))
        send(ask)
        for line in iter(sys.stdin.readline, ""):
            log(line)
            reply = json.loads(line)
            if reply.get("id") == "ask-1" and "method" not in reply:
                return text(json.dumps(reply.get("result", reply.get("error"))))
        return None
    if name == "fail":
        return {"error": {"code": -32000, "message": str(args.get("message", "failed"))}}
    if name == "churn":
        DEAF_LISTS[0] = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("churned")
    if name == "flood":
        flood(float(args.get("mib", 200)))
        return text("flooded")
    return {"content": [{"type": "text", "text": "no tool " + str(name)}], "isError": True}


def answer(msg):
    method = msg.get("method")
    msg_id = msg.get("id")
    if msg_id is None:
        return None
    if method == "initialize":
        version = os.environ.get("FAKE_VERSION") or msg.get("params", {}).get(
            "protocolVersion", "2025-11-25")
        answer = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "mcp-fake", "version": "1.0.0"},
        }
        if os.environ.get("FAKE_INSTRUCTIONS"):
            answer["instructions"] = os.environ["FAKE_INSTRUCTIONS"]
        return answer
    if method == "tools/list":
        return None if DEAF_LISTS[0] else {"tools": TOOLS}
    if method == "ping":
        return {}
    if method == "tools/call":
        return call(msg_id, msg.get("params") or {})
    return {"error": {"code": -32601, "message": "no method " + str(method)}}


def terminated(_signum, _frame):
    if EOF_AT[0] is not None:
        log(json.dumps({"eof_to_term_ms": (time.monotonic() - EOF_AT[0]) * 1000}))
    log("<terminated>")
    sys.exit(0)


def main():
    if MODE in ("stubborn", "slow_exit"):
        signal.signal(signal.SIGTERM, terminated)
    if MODE == "deaf":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "exit_start":
        sys.stderr.write("fake: exiting at start on purpose\n")
        sys.stderr.flush()
        sys.exit(3)
    if MODE == "slow_start":
        time.sleep(30)
    for line in sys.stdin:
        log(line)
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        result = answer(msg)
        if result is None:
            continue
        if "error" in result and "content" not in result and len(result) == 1:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": result["error"]})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
    EOF_AT[0] = time.monotonic()
    log("<stdin closed>")
    if MODE in ("stubborn", "deaf"):
        time.sleep(1000)
    if MODE == "slow_exit":
        time.sleep(0.2)
    log("<exiting>")


if __name__ == "__main__":
    main()
