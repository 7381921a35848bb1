#!/usr/bin/env python3
"""Memory of one interactive mypi over many prompts: the REPL on a pseudo-terminal (faux model,
the project of bench-idle.py: 20 extensions, 3 stdio MCP servers), driven through PROMPTS
prompts (default 1,000), each answered by a one-line reply from a faux script. Prints the
resident memory (VmRSS) of the mypi process every 100 prompts, how much prompt PROMPTS has
over prompt 100 (goal: within 10 %) and what each prompt added in between.

    cargo build --release && python3 benches/scripts/bench-prompts.py [BIN] [PROMPTS]
"""

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import repl_pty  # noqa: E402


def main():
    mypi = repl_pty.binary(sys.argv)
    prompts = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    with tempfile.TemporaryDirectory() as d:
        replies = os.path.join(d, "replies.jsonl")
        with open(replies, "w") as f:
            for n in range(1, prompts + 1):
                f.write(json.dumps({"text": f"reply {n} is here."}) + "\n")
        repl = repl_pty.Repl(mypi, repl_pty.project(d, replies), d)
        at = repl.start()
        rss, t0 = {}, time.monotonic()
        for n in range(1, prompts + 1):
            repl.type(f"prompt number {n}\r")
            at = repl.wait_for("> ", repl.wait_for(f"reply {n} is here.", at))
            if n % 100 == 0 or n == 10:
                rss[n] = repl.status("VmRSS")
                print(f"prompt {n:5}: VmRSS {rss[n] / 1024:7.2f} MiB  "
                      f"({time.monotonic() - t0:.1f} s)", flush=True)
            if n % 50 == 0:  # keep the reader's buffer short
                with repl.lock:
                    del repl.out[:at]
                at = 0
        hwm = repl.status("VmHWM")
        repl.close()
    first, last = rss[100], rss[prompts - prompts % 100]
    print(f"prompt {prompts} / prompt 100: {last / first:.3f} "
          f"({(last - first) * 1024 / max(1, prompts - 100):.0f} bytes per prompt); "
          f"peak {hwm / 1024:.2f} MiB")


if __name__ == "__main__":
    main()
