#!/usr/bin/env python3
"""A Streamable HTTP MCP server behind OAuth, with its own authorization server, for mypi's
OAuth tests.

    oauth_server.py MODE LOG

Listens on 127.0.0.1 (a free port) and prints `PORT <n>` once ready. Appends one line per
event to LOG: `mcp <method> <token or ->`, `token <grant type>`, `register`, `authorize`.

The MCP endpoint is /mcp; without a valid bearer token it answers 401 with
`WWW-Authenticate: Bearer resource_metadata=...`. The authorization server is the same
origin: metadata at /.well-known/oauth-authorization-server, /register, /authorize (which
approves at once: 302 to the redirect URI with a code and the state), /token (the first
access token lives 1 second and comes with a refresh token; a refresh gives one that lives
an hour).

MODE:
  ok         as above
  malformed  the authorization server's metadata is not JSON
  state      /authorize answers with another state than the one it was sent
  hang       /token never answers
  revoke     the first access token lives an hour, but the MCP endpoint refuses it (401):
             only a refresh on that 401 gets in
  scope      tools/call answers 403 insufficient_scope (scope "write") unless the token was
             granted "write"
"""

import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
LOG = sys.argv[2]
LOCK = threading.Lock()
TOKENS = set()
SCOPES = {"last": "", "write": set()}
ACCESS = ["at-first-SECRET-ACCESS-1", "at-refreshed-SECRET-ACCESS-2"]
REFRESH = "rt-SECRET-REFRESH"


def log(line):
    with LOCK, open(LOG, "a") as f:
        f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def send(self, status, body=None, headers=()):
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n).decode() if n else ""

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        base = self.base()
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            return self.send(200, {"resource": base + "/mcp", "authorization_servers": [base]})
        if url.path == "/.well-known/oauth-authorization-server":
            if MODE == "malformed":
                return self.send(200, b"<html>this is not metadata")
            return self.send(200, {
                "issuer": base,
                "authorization_endpoint": base + "/authorize",
                "token_endpoint": base + "/token",
                "registration_endpoint": base + "/register",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            })
        if url.path == "/authorize":
            q = dict(urllib.parse.parse_qsl(url.query))
            log("authorize " + q.get("scope", "-"))
            SCOPES["last"] = q.get("scope", "")
            state = "not-the-state" if MODE == "state" else q.get("state", "")
            to = q["redirect_uri"] + "?" + urllib.parse.urlencode({"code": "the-code", "state": state})
            return self.send(302, None, [("Location", to)])
        return self.send(404, {"error": "not found"})

    def do_POST(self):
        url = urllib.parse.urlparse(self.path)
        text = self.body()
        if url.path == "/register":
            log("register")
            return self.send(201, {"client_id": "client-1", "redirect_uris": json.loads(text)["redirect_uris"]})
        if url.path == "/token":
            form = dict(urllib.parse.parse_qsl(text))
            grant = form.get("grant_type", "")
            log("token " + grant)
            if MODE == "hang":
                time.sleep(3600)
            if grant == "authorization_code":
                token, life = ACCESS[0], (3600 if MODE == "revoke" else 1)
            elif grant == "refresh_token" and form.get("refresh_token") == REFRESH:
                token, life = ACCESS[1], 3600
            else:
                return self.send(400, {"error": "invalid_grant"})
            TOKENS.add(token)
            if "write" in SCOPES["last"].split():
                SCOPES["write"].add(token)
            return self.send(200, {"access_token": token, "token_type": "Bearer",
                                   "expires_in": life, "refresh_token": REFRESH})
        if url.path == "/mcp":
            return self.mcp(text)
        return self.send(404, {"error": "not found"})

    def mcp(self, text):
        auth = self.headers.get("Authorization") or ""
        token = auth[7:] if auth.startswith("Bearer ") else ""
        msg = json.loads(text) if text else {}
        method = msg.get("method", "-")
        log("mcp %s %s" % (method, token or "-"))
        if MODE == "revoke" and token == ACCESS[0]:
            TOKENS.discard(token)
        if token not in TOKENS:
            meta = self.base() + "/.well-known/oauth-protected-resource/mcp"
            return self.send(401, {"error": "invalid_token"},
                             [("WWW-Authenticate", 'Bearer resource_metadata="%s"' % meta)])
        if "id" not in msg:
            return self.send(202)
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "oauth-fake", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call" and MODE == "scope" and token not in SCOPES["write"]:
            challenge = 'Bearer error="insufficient_scope", scope="write"'
            return self.send(403, {"error": "insufficient_scope"}, [("WWW-Authenticate", challenge)])
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "echoed"}]}
        else:
            return self.send(200, {"jsonrpc": "2.0", "id": msg["id"],
                                   "error": {"code": -32601, "message": "no such method"}})
        return self.send(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()
