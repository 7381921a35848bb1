#!/usr/bin/env python3
"""Writes link/startup-order.txt: the functions mypi runs while it starts and answers, in the
order they first run, which build.rs hands to the linker (`--symbol-ordering-file`) for release
builds, so that they sit side by side at the front of the binary's code.

Why: the kernel maps a program's code into memory a whole page-cache folio (up to a few hundred
KiB) at a time. Spread over 27 MB of code, the few thousand functions a run needs touch
hundreds of folios and make ~11 MiB of the process's memory; placed together they touch a
few (benches/scripts/bench-lean.py measures it: `mypi -p` and the idle REPL each ~6 MiB less).

The names come from running a release build (with its symbols) under valgrind's callgrind
through what users do first: a print run with the offline model (with and without the shipped
extension, with a tool call), a print run against a fake OpenAI-compatible server on
127.0.0.1 with a tool call, a project with Lua extensions, one with Rhai extensions (apart,
so that a project with one engine maps only its code), an MCP server over stdio with a tool
call, the REPL on a pseudo-terminal with one prompt, and last a REPL session of 200 prompts
with 20 extensions and 3 MCP servers (so that what runs only as a session goes on comes next,
not anywhere). Names the build no longer has are skipped by the linker, so a stale list only
costs memory; regenerate it after large changes (and after a Rust or dependency update):

    scripts/order-startup.py            # builds target/release/mypi with its symbols
                                        # (MYPI_KEEP_SYMBOLS=1, see build.rs), then runs
    scripts/order-startup.py --check    # the same build; how many listed names it still has
"""

import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benches", "scripts"))
import fake_openai  # noqa: E402
import repl_pty  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "link", "startup-order.txt")
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
BIN = os.path.join(TARGET, "release", "mypi")


def build():
    env = dict(os.environ, MYPI_KEEP_SYMBOLS="1")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, env=env, check=True)


def symbols(binary):
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                         check=True).stdout
    return {p[2] for p in (l.split() for l in out.splitlines()) if len(p) == 3 and p[1] in "tT"}


def functions_run(profile):
    """Mangled names of the functions a callgrind profile ran, in the order first listed."""
    names, seen = {}, []
    with open(profile) as f:
        for line in f:
            m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                n = names.get(m.group(1))
                if n:
                    seen.append(n)
    return seen


def project(work):
    """Folders: a plain one, one with Lua extensions, one with Rhai extensions, one with an
    MCP server."""
    plain, lua, rhai, mcp = (os.path.join(work, d) for d in ("plain", "lua", "rhai", "mcp"))
    for d in (plain, lua, rhai, mcp):
        os.makedirs(d)
        with open(os.path.join(d, "notes.txt"), "w") as f:
            f.write("hello\n")
    for d in (lua, rhai):
        os.makedirs(os.path.join(d, ".agents", "extensions"))
    for i in range(3):
        ext = os.path.join(lua, ".agents", "extensions")
        with open(os.path.join(ext, f"l{i}.lua"), "w") as f:
            f.write(f'api.tool{{name = "t{i}", description = "t", parameters = {{type = "object",'
                    f' properties = {{}}}}, execute = function(a) return "ok" end}}\n'
                    f'api.on("tool_call", function(e) return nil end)\n'
                    f'api.on("message_update", function(e) end)\n')
        ext = os.path.join(rhai, ".agents", "extensions")
        with open(os.path.join(ext, f"r{i}.rhai"), "w") as f:
            f.write(f'api.on("tool_call", |e| ());\napi.command("c{i}", |a| "x", "c");\n')
    server = os.path.join(ROOT, "tests", "common", "mcp_fake.py")
    with open(os.path.join(mcp, ".mcp.json"), "w") as f:
        f.write('{"mcpServers": {"fake": {"command": "%s", "args": ["%s"]}}}'
                % (sys.executable, server))
    with open(os.path.join(mcp, "replies.jsonl"), "w") as f:
        f.write('{"tool_calls":[{"name":"mcp__fake__echo","arguments":{"text":"hi"}}]}\n'
                '{"text":"done"}\n')
    with open(os.path.join(plain, "replies.jsonl"), "w") as f:
        f.write('{"tool_calls":[{"name":"read","arguments":{"path":"notes.txt"}}]}\n'
                '{"text":"done"}\n')
    return plain, lua, rhai, mcp


def repl(vg, cwd, env):
    """The REPL on a pseudo-terminal: one prompt, then /quit."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execvpe(vg[0], vg + ["--provider", "faux"], env)
    seen, sent, end = b"", False, time.time() + 60
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
        if not sent and b"faux" in seen and time.time() > end - 50:
            os.write(fd, b"hello there\r")
            sent = True
        elif sent and seen.count(b"hello there") >= 2:
            os.write(fd, b"/quit\r")
            sent = None
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def long_session(vg, d, prompts=200):
    """The REPL through a session of `prompts` prompts in bench-prompts.py's project (20 Lua
    and Rhai extensions, 3 MCP servers). What first runs once a session is under way (the VMs'
    collections, a growing conversation's code) then comes after the start-up functions
    instead of lying anywhere in the binary, where each function brought a folio of code in
    as a session went on."""
    replies = os.path.join(d, "replies.jsonl")
    with open(replies, "w") as f:
        for n in range(1, prompts + 1):
            f.write(json.dumps({"text": f"reply {n} is here."}) + "\n")
    session = repl_pty.Repl(vg[0], vg[1:] + repl_pty.project(d, replies), d)
    at = session.start()
    for n in range(1, prompts + 1):
        session.type(f"prompt number {n}\r")
        at = session.wait_for("> ", session.wait_for(f"reply {n} is here.", at))
    # Under valgrind the exit (callgrind writing its profile) takes a while.
    session.close(timeout=300)


def main():
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        return
    check = "--check" in sys.argv
    build()
    have = symbols(BIN)
    if check:
        listed = [l.strip() for l in open(OUT) if l.strip()]
        kept = sum(1 for n in listed if n in have)
        print(f"{kept} of {len(listed)} listed functions are in {BIN}")
        return
    if not shutil.which("valgrind"):
        sys.exit("valgrind is needed (apt-get install valgrind)")
    work, server = tempfile.mkdtemp(), None
    try:
        home = os.path.join(work, "home")
        os.makedirs(home)
        env = dict(os.environ, HOME=home, OPENAI_API_KEY="x", TERM="xterm-256color")
        plain, lua, rhai, mcp = project(work)
        server, port = fake_openai.start()
        for d in (lua, rhai, mcp):
            subprocess.run([BIN, "trust", d], env=env, capture_output=True)
        runs = [
            (plain, ["-p", "hello", "--provider", "faux", "--no-session", "--no-extensions"]),
            (plain, ["-p", "hello", "--provider", "faux"]),
            (plain, ["-p", "read it", "--provider", "faux", "--faux-script", "replies.jsonl"]),
            (plain, ["-p", "read it", "--provider", "openai", "--model", "m", "--base-url",
                     f"http://127.0.0.1:{port}/v1"]),
            # Lua before Rhai: a project with only one of them maps only its engine's code.
            (lua, ["-p", "hello", "--provider", "faux"]),
            (rhai, ["-p", "hello", "--provider", "faux"]),
            (mcp, ["-p", "echo", "--provider", "faux", "--faux-script", "replies.jsonl"]),
        ]
        order, listed = [], set()
        sessions = [(plain, None), (os.path.join(work, "long"), "long")]
        for i, (cwd, args) in enumerate(runs + sessions):
            out = os.path.join(work, f"cg.{i}")
            vg = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}",
                  BIN]
            if args == "long":
                os.makedirs(cwd)
                long_session(vg, cwd)
            elif args is None:
                repl(vg, cwd, env)
            else:
                subprocess.run(vg + args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=300)
            for n in functions_run(out):
                if n in have and n not in listed:
                    listed.add(n)
                    order.append(n)
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w") as f:
            f.write("\n".join(order) + "\n")
        print(f"{len(order)} functions written to {OUT}")
    finally:
        if server:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
