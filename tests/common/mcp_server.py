#!/usr/bin/env python3
"""A small, well-behaved MCP server (protocol 2025-11-25, stdio) for mypi's tests.

Tools: echo {text}, add {a, b}, fail {} (an isError result), look {} (annotated read-only),
wait {ms}, pic {} (a text block and a 1x1 PNG), drop_look {} (withdraws `look`, says so
with notifications/tools/list_changed, and answers the client's re-list 0.3 s after its own
reply)
and add_twins {quiet?} (adds `tw-in` and `tw_in`, whose agent names collide, the same way;
with quiet set, without a word).
Resources: mem://note (text); a template mem://item/{id}; unlisted, mem://img (a 1x1 PNG
blob) and mem://bin (an application/octet-stream blob). Prompts: greet {name, style?}.
Every request it receives is appended as one JSON line to $MCP_LOG when that is set; with
$MCP_LISTS_AT_ONCE set, it answers the first lists only once all four kinds were asked for.
"""

import json
import os
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
       "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

TOOLS = [
    {"name": "echo", "description": "Echo the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "add", "description": "Add two numbers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                      "b": {"type": "number"}},
                     "required": ["a", "b"]}},
    {"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}},
    {"name": "look", "description": "Looks, changes nothing.",
     "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True, "destructiveHint": False}},
    {"name": "wait", "description": "Waits ms milliseconds.",
     "inputSchema": {"type": "object", "properties": {"ms": {"type": "number"}}}},
    {"name": "pic", "description": "Returns a picture.", "inputSchema": {"type": "object"}},
    {"name": "drop_look", "description": "Withdraws the look tool.",
     "inputSchema": {"type": "object"}},
    {"name": "add_twins", "description": "Adds the tw-in and tw_in tools.",
     "inputSchema": {"type": "object"}},
]


def text(t, error=False):
    out = {"content": [{"type": "text", "text": t}]}
    if error:
        out["isError"] = True
    return out


def call(name, args):
    if name == "echo":
        return text("echo: " + str(args.get("text", "")))
    if name == "add":
        return text(str(args.get("a", 0) + args.get("b", 0)))
    if name == "fail":
        return text("it failed on purpose", error=True)
    if name == "look":
        return text("nothing changed")
    if name == "wait":
        time.sleep(args.get("ms", 0) / 1000.0)
        return text("waited")
    if name == "pic":
        return {"content": [{"type": "text", "text": "a dot"},
                            {"type": "image", "mimeType": "image/png", "data": PNG}]}
    if name in ("tw-in", "tw_in"):
        return text("twin " + name)
    if name == "drop_look":
        TOOLS[:] = [t for t in TOOLS if t["name"] != "look"]
        tools_changed()
        return text("look is gone")
    if name == "add_twins":
        TOOLS.extend({"name": n, "description": "A twin.", "inputSchema": {"type": "object"}}
                     for n in ("tw-in", "tw_in"))
        if not args.get("quiet"):
            tools_changed()
        return text("twins added")
    return None


SLOW_RELIST = [False]


def tools_changed():
    """Says the tool list changed; the call's answer follows at once and the client's re-list
    is answered only after a pause (a client that does not wait for it acts on the old
    list)."""
    send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    SLOW_RELIST[0] = True


def answer(req):
    method, params = req.get("method"), req.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": True}, "resources": {},
                                 "prompts": {}},
                "serverInfo": {"name": "test-server", "version": "1.0"}}
    if method == "tools/list":
        if SLOW_RELIST[0]:
            SLOW_RELIST[0] = False
            time.sleep(0.3)
        return {"tools": TOOLS}
    if method == "tools/call":
        r = call(params.get("name"), params.get("arguments") or {})
        if r is None:
            raise KeyError("unknown tool " + str(params.get("name")))
        return r
    if method == "resources/list":
        return {"resources": [{"uri": "mem://note", "name": "note", "mimeType": "text/plain"}]}
    if method == "resources/templates/list":
        return {"resourceTemplates": [{"uriTemplate": "mem://item/{id}", "name": "item"}]}
    if method == "resources/read":
        uri = params.get("uri")
        if uri == "mem://note" or str(uri).startswith("mem://item/"):
            return {"contents": [{"uri": uri, "mimeType": "text/plain",
                                  "text": "the note of " + uri}]}
        if uri == "mem://img":
            return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}
        if uri == "mem://bin":
            return {"contents": [{"uri": uri, "mimeType": "application/octet-stream",
                                  "blob": "AAEC"}]}
        raise KeyError("no resource " + str(uri))
    if method == "prompts/list":
        return {"prompts": [{"name": "greet", "description": "Greet someone.",
                             "arguments": [{"name": "name", "required": True},
                                           {"name": "style"}]}]}
    if method == "prompts/get":
        a = params.get("arguments") or {}
        style = a.get("style", "warmly")
        return {"messages": [{"role": "user", "content": {
            "type": "text", "text": "Greet " + a.get("name", "?") + " " + style + "."}}]}
    if method == "ping":
        return {}
    raise LookupError(method)


def requests():
    """The requests read from stdin, each logged to $MCP_LOG when that is set."""
    log = os.environ.get("MCP_LOG")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        if log:
            with open(log, "a") as f:
                f.write(json.dumps(req) + "\n")
        yield req


REQUESTS = requests()


def serve(req):
    if "id" not in req or "method" not in req:
        return
    try:
        reply = {"jsonrpc": "2.0", "id": req["id"], "result": answer(req)}
    except LookupError as e:
        reply = {"jsonrpc": "2.0", "id": req["id"],
                 "error": {"code": -32601, "message": "method not found: " + str(e)}}
    except KeyError as e:
        reply = {"jsonrpc": "2.0", "id": req["id"],
                 "error": {"code": -32602, "message": str(e).strip("'\"")}}
    send(reply)


LISTS = {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}


def main():
    # With $MCP_LISTS_AT_ONCE set, the first list requests are answered only once all four
    # kinds have come: a client that waits for one list before asking the next never starts.
    held = [] if os.environ.get("MCP_LISTS_AT_ONCE") else None
    for req in REQUESTS:
        if held is not None and req.get("method") in LISTS:
            held.append(req)
            if {r["method"] for r in held} == LISTS:
                for r in held:
                    serve(r)
                held = None
            continue
        serve(req)


if __name__ == "__main__":
    main()
