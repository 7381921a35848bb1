#!/usr/bin/env python3
"""CPU of an idle interactive mypi: the REPL on a pseudo-terminal (faux model) in a project
with 20 extensions (14 Lua, 6 Rhai; tools, commands, handlers, no timer) and 3 stdio MCP
servers (tests/common/mcp_fake.py), the file watcher on. Once the prompt shows and one prompt
went through (so everything lazily started has started), it samples utime + stime of the
mypi process itself (all its threads, not the servers) every 10 s over SECONDS (default 60)
and prints the ticks used in each interval and in all (goal: 0), and the threads' names and
their own ticks, so whatever woke up shows by name.

    cargo build --release && python3 benches/scripts/bench-idle.py [BIN] [SECONDS]
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import repl_pty  # noqa: E402


def threads(pid):
    """{tid: (name, ticks, wake-ups)} of the process's threads (wake-ups: context switches,
    which count a wake-up too short to show in ticks)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                head, rest = f.read().rsplit(")", 1)
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                switches = sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
            fields = rest.split()
            out[tid] = (head.split("(", 1)[1], int(fields[11]) + int(fields[12]), switches)
        except OSError:
            pass
    return out


def wake_ups(threads):
    return sum(t[2] for t in threads.values())


def main():
    mypi = repl_pty.binary(sys.argv)
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    with tempfile.TemporaryDirectory() as d:
        repl = repl_pty.Repl(mypi, repl_pty.project(d), d)
        at = repl.start()
        repl.type("warm up\r")
        repl.wait_for("> ", repl.wait_for("warm up", repl.wait_for("warm up", at)))
        time.sleep(2)  # the reply's tail (status line, notices) settles
        start, before = repl.ticks(), threads(repl.proc.pid)
        last, last_wakes = start, wake_ups(before)
        print(f"idle REPL, {len(before)} threads; ticks ({os.sysconf('SC_CLK_TCK')}/s) used:")
        for n in range(0, seconds, 10):
            time.sleep(min(10, seconds - n))
            now, wakes = repl.ticks(), wake_ups(threads(repl.proc.pid))
            print(f"  {n:3}-{min(n + 10, seconds):3} s: {now - last} ticks, "
                  f"{wakes - last_wakes} wake-ups")
            last, last_wakes = now, wakes
        after = threads(repl.proc.pid)
        wakes = wake_ups(after) - wake_ups(before)
        print(f"total over {seconds} s: {last - start} ticks, {wakes} wake-ups")
        for tid, (name, ticks, switches) in sorted(after.items()):
            old = before.get(tid, (name, 0, 0))
            if ticks - old[1] or switches - old[2]:
                print(f"  thread {name} ({tid}): {ticks - old[1]} ticks, "
                      f"{switches - old[2]} wake-ups")
        repl.close()


if __name__ == "__main__":
    main()
