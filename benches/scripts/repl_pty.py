"""The interactive `mypi` on a pseudo-terminal, for the long-running benches (bench-idle.py,
bench-prompts.py): a project with 20 extensions (14 Lua, 6 Rhai: tools, commands, handlers,
no timer) and 3 stdio MCP servers (tests/common/mcp_fake.py), a reader thread keeping all it
prints, and the mypi process's own CPU ticks and resident memory from /proc."""

import fcntl
import json
import os
import struct
import subprocess
import sys
import termios
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LUA = """api.tool{{name = "t_lua_{i}", description = "tool {i}",
  parameters = {{type = "object", properties = {{}}}}, execute = function(args) return "ok" end}}
api.command("c_lua_{i}", function(args) return "cmd {i}" end, "command {i}")
api.on("tool_call", function(e) return nil end)
api.on("{event}", function(e) end)
"""
RHAI = """api.tool(#{{name: "t_rhai_{i}", description: "tool {i}",
  parameters: #{{type: "object", properties: #{{}}}}, execute: |args| "ok"}});
api.command("c_rhai_{i}", |args| "cmd {i}", "command {i}");
api.on("tool_call", |e| ());
api.on("{event}", |e| ());
"""
EVENTS = ["message_update", "turn_end", "agent_end", "before_agent_start", "input"]


def binary(argv):
    """The mypi to measure: argv[1], else the release build under $CARGO_TARGET_DIR."""
    if len(argv) > 1 and argv[1]:
        return os.path.abspath(argv[1])
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "mypi")


def project(d, replies=None):
    """Writes the 20 extensions and the MCP config into `d`; returns mypi's arguments."""
    ext = os.path.join(d, "work", ".agents", "extensions")
    os.makedirs(ext)
    os.makedirs(os.path.join(d, "home"))
    for i in range(20):
        kind, text = ("rhai", RHAI) if i % 10 >= 7 else ("lua", LUA)
        with open(os.path.join(ext, f"e{i}.{kind}"), "w") as f:
            f.write(text.format(i=i, event=EVENTS[i % len(EVENTS)]))
    fake = os.path.join(ROOT, "tests", "common", "mcp_fake.py")
    servers = {f"s{i}": {"command": sys.executable, "args": [fake, "normal"]} for i in range(3)}
    config = os.path.join(d, "mcp.json")
    with open(config, "w") as f:
        json.dump({"mcpServers": servers}, f)
    args = ["--provider", "faux", "--no-session", "--mcp-config", config]
    if replies is not None:
        args += ["--faux-script", replies]
    return args


class Repl:
    """`mypi ARGS` on a 120×40 pty in `d/work`; everything it prints is kept in `out`."""

    def __init__(self, mypi, args, d):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        home = os.path.join(d, "home")
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=f"{home}/.config",
                   XDG_DATA_HOME=f"{home}/.local/share", XDG_STATE_HOME=f"{home}/.local/state",
                   NO_COLOR="1", TERM="xterm-256color")
        self.proc = subprocess.Popen([mypi] + args, stdin=slave, stdout=slave, stderr=slave,
                                     cwd=os.path.join(d, "work"), env=env, start_new_session=True,
                                     preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.close(slave)
        self.master = master
        self.out = bytearray()
        self.lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def start(self):
        """Trusts the project's extensions and servers; returns the offset after the first
        prompt."""
        self.type_after("[y/N]", "y\r")
        return self.wait_for("> ")

    def type_after(self, text, keys):
        self.wait_for(text)
        self.type(keys)

    def _read(self):
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            with self.lock:
                if not data:
                    self.out += b"\0<eof>"
                    self.lock.notify_all()
                    return
                self.out += data
                self.lock.notify_all()

    def wait_for(self, text, start=0, timeout=30.0):
        """Waits until `text` is printed at or after offset `start`; returns the offset after
        it."""
        needle, end = text.encode(), time.monotonic() + timeout
        with self.lock:
            while True:
                at = self.out.find(needle, start)
                if at >= 0:
                    return at + len(needle)
                left = end - time.monotonic()
                if left <= 0 or self.out.endswith(b"\0<eof>"):
                    tail = bytes(self.out[-2000:]).decode(errors="replace")
                    sys.exit(f"mypi did not print {text!r}; its last output:\n{tail}")
                self.lock.wait(left)

    def type(self, text):
        os.write(self.master, text.encode())

    def ticks(self):
        """utime + stime of the mypi process (all its threads), in clock ticks."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def status(self, key):
        """A field of /proc/PID/status in KiB (VmRSS, VmHWM...)."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        raise KeyError(key)

    def close(self, timeout=10):
        """/quit, then a kill if mypi has not exited within `timeout` seconds."""
        self.type("/quit\r")
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
