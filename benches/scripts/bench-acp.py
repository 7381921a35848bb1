#!/usr/bin/env python3
"""`mypi acp` with the offline faux model, measured from outside as an editor sees it
(issue 36, point 7), with the shipped extension and with --no-extensions, side by side:

1. latency: the time from writing a `session/prompt` line to reading the first
   `session/update` for it, over PROMPTS prompts on one session (after WARMUP), median and
   p90; the faux model echoes the prompt, so its first update is the reply's first word;
2. memory: `mypi acp` idle with one session open (after one prompt, then IDLE_S seconds) next
   to `mypi -p` with the same faux model while its one reply streams (the same work done, the
   process still alive): VmRSS and VmHWM read from /proc/PID/status of the mypi process
   itself (spawned directly, no shell), its threads, and smaps_rollup's anonymous and
   file-backed parts; median of ROUNDS processes each.

    cargo build --release && python3 benches/scripts/bench-acp.py
    (the binary: $MYPI_BIN, else $CARGO_TARGET_DIR/release/mypi, else target/release/mypi)
"""

import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PROMPTS = 50
WARMUP = 5
ROUNDS = 5
IDLE_S = 1.0


def binary():
    if os.environ.get("MYPI_BIN"):
        return os.environ["MYPI_BIN"]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    return os.path.join(target, "release", "mypi")


class Acp:
    """A running `mypi acp`: requests written, messages read (with the time they arrived) by a
    thread of their own."""

    def __init__(self, cmd, cwd, env):
        self.p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self.messages = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.messages.put((time.perf_counter(), json.loads(line)))

    def send(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                           "params": params}) + "\n"
        sent = time.perf_counter()
        self.p.stdin.write(line.encode())
        return self.next_id, sent

    def until(self, msg_id):
        """The messages up to the answer to `msg_id` (with their arrival times), and it."""
        seen = []
        while True:
            at, m = self.messages.get(timeout=30)
            if m.get("id") == msg_id and "method" not in m:
                if "error" in m:
                    sys.exit(f"mypi answered with an error: {m}")
                return seen, (at, m)
            seen.append((at, m))

    def call(self, method, params):
        msg_id, _ = self.send(method, params)
        return self.until(msg_id)[1][1]["result"]

    def drain(self, wait=0.02):
        time.sleep(wait)
        while not self.messages.empty():
            self.messages.get_nowait()

    def open_session(self, cwd):
        self.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = self.call("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]
        self.drain(0.2)
        return session

    def prompt(self, session, text):
        """(ms to the first update, ms to the answer, the first update's kind)."""
        msg_id, sent = self.send("session/prompt", {
            "sessionId": session, "prompt": [{"type": "text", "text": text}]})
        seen, (answered, _) = self.until(msg_id)
        updates = [(at, m) for at, m in seen if m.get("method") == "session/update"]
        if not updates:
            sys.exit("a prompt was answered without a session/update")
        first_at, first = updates[0]
        kind = first["params"]["update"]["sessionUpdate"]
        return (first_at - sent) * 1000, (answered - sent) * 1000, kind

    def close(self):
        self.p.stdin.close()
        code = self.p.wait(timeout=10)
        if code != 0:
            sys.exit(f"mypi acp exited with {code}")


def status(pid):
    """VmRSS, VmHWM (MiB), threads, and smaps_rollup's anonymous and file-backed MiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()[0] if value.split() else ""
    rollup = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                rollup[key] = int(value.split()[0])
    mib = lambda kb: int(kb) / 1024
    return {"rss": mib(fields["VmRSS"]), "hwm": mib(fields["VmHWM"]),
            "threads": int(fields["Threads"]), "anon": mib(rollup.get("Anonymous", 0)),
            "file": mib(rollup.get("Rss", 0) - rollup.get("Anonymous", 0))}


def latency(mypi, work, env, extra, label):
    acp = Acp([mypi, "acp", "--provider", "faux"] + extra, work, env)
    session = acp.open_session(work)
    firsts, answers, kinds = [], [], set()
    for i in range(WARMUP + PROMPTS):
        first, answer, kind = acp.prompt(session, f"hello number {i} from the bench")
        acp.drain()
        if i >= WARMUP:
            firsts.append(first)
            answers.append(answer)
            kinds.add(kind)
    acp.close()
    firsts.sort()
    print(f"mypi acp, faux echo, {label}: {PROMPTS} prompts on one session")
    print(f"  session/prompt -> first session/update ms: median {statistics.median(firsts):.2f}, "
          f"p90 {firsts[int(len(firsts) * 0.9) - 1]:.2f}, max {firsts[-1]:.2f} "
          f"(first update: {', '.join(sorted(kinds))})")
    print(f"  session/prompt -> its answer ms: median {statistics.median(answers):.2f}")


def acp_idle(mypi, work, env, extra, replies):
    acp = Acp([mypi, "acp", "--provider", "faux", "--faux-script", replies] + extra, work, env)
    session = acp.open_session(work)
    acp.prompt(session, "hi")
    time.sleep(IDLE_S)
    seen = status(acp.p.pid)
    acp.close()
    return seen


def print_running(mypi, work, env, extra, replies):
    """`mypi -p` measured while its reply streams (the faux reply pauses between words)."""
    p = subprocess.Popen([mypi, "-p", "hi", "--provider", "faux", "--faux-script", replies]
                         + extra, cwd=work, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(IDLE_S)
    seen = status(p.pid)
    if p.wait(timeout=30) != 0:
        sys.exit("mypi -p failed")
    return seen


def memory(mypi, work, env, extra, label):
    fast = os.path.join(work, "fast.jsonl")
    slow = os.path.join(work, "slow.jsonl")
    with open(fast, "w") as f:
        f.write(json.dumps({"text": "one two three four"}) + "\n")
    with open(slow, "w") as f:
        f.write(json.dumps({"text": "one two three four", "delay_ms": 800}) + "\n")
    acp, printed = [], []
    for _ in range(ROUNDS):
        acp.append(acp_idle(mypi, work, env, extra, fast))
        printed.append(print_running(mypi, work, env, extra, slow))
    med = lambda xs, k: statistics.median(x[k] for x in xs)
    print(f"memory, {label}: median of {ROUNDS} processes each")
    for name, xs in (("mypi -p (reply streaming)", printed),
                     ("mypi acp (idle, one session)", acp)):
        print(f"  {name:30} VmRSS {med(xs, 'rss'):6.2f} MiB, VmHWM {med(xs, 'hwm'):6.2f} MiB, "
              f"anon {med(xs, 'anon'):6.2f}, file {med(xs, 'file'):6.2f}, "
              f"threads {med(xs, 'threads'):.0f}")
    print(f"  acp - print: VmRSS {med(acp, 'rss') - med(printed, 'rss'):+.2f} MiB, "
          f"VmHWM {med(acp, 'hwm') - med(printed, 'hwm'):+.2f} MiB")


def main():
    mypi = binary()
    if not os.access(mypi, os.X_OK):
        sys.exit(f"no mypi binary at {mypi}: cargo build --release first (or set MYPI_BIN)")
    with tempfile.TemporaryDirectory() as work:
        home = os.path.join(work, "home")
        os.makedirs(home)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MYPI_")}
        env["HOME"] = home
        for extra, label in (([], "with the shipped extension"),
                             (["--no-extensions"], "--no-extensions")):
            latency(mypi, work, env, extra, label)
        for extra, label in (([], "with the shipped extension"),
                             (["--no-extensions"], "--no-extensions")):
            memory(mypi, work, env, extra, label)


if __name__ == "__main__":
    main()
