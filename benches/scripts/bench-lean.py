#!/usr/bin/env python3
"""Size, start-up and memory of whole `mypi` processes, side by side for several builds.

Usage: benches/scripts/bench-lean.py [--rounds N] [--ext-runs K] ARM [ARM...]
where an ARM is a binary, or a binary and environment variables for its runs:
`target/release/mypi,MYPI_SOMETHING=1` (an experiment behind a variable, in one build)
(for example the release build of HEAD next to one of an older commit:
`git worktree add /tmp/old f5eb314 && CARGO_TARGET_DIR=/tmp/old-target cargo build --release
--manifest-path /tmp/old/Cargo.toml`, then `bench-lean.py target/release/mypi
/tmp/old-target/release/mypi`).

Each measure runs the arms alternately, round after round, so that a busy machine slows them
alike; medians across rounds. Each binary is dropped from the page cache first, so that all
arms read their code the same way. Memory is the mypi process's own (its rusage as a child of a
small C launcher, own_rusage.py, or /proc/PID/status while it runs), never a parent's.

- size: the binary's bytes on disk.
- start-up: `mypi -p hello` with the offline faux model, no session, no extension: wall ms.
- print task: `mypi -p` against a fake OpenAI-compatible server on 127.0.0.1 (a separate
  process) whose model makes one `read` call and then answers: wall ms, CPU ms (user+sys of
  mypi) and peak RSS.
- idle REPL: the REPL on a pseudo-terminal, with the faux model, after its prompt shows and
  a second of quiet: VmRSS.
- 100 Lua extensions: peak RSS of the start-up run in a project with 100 trivial Lua
  extensions minus that with none, per extension; and its wall time. Also the same past the
  first extension (100 against 1, per each of the other 99): what the first one brings
  along once (the engine's code, the JSON Schema meta-schema the first `api.tool` check
  compiles) is not what each adds. Its CPU ms too (user+sys of mypi, all its threads). That
  start runs K times a round (`--ext-runs`, 3): one start's time swings by +-1.5 ms here.
"""

import argparse
import json
import os
import pty
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_openai  # noqa: E402
import own_rusage  # noqa: E402


LUA_EXT = '''api.tool{{name = "t_lua_{i}", description = "tool {i}",
  parameters = {{type = "object", properties = {{}}}}, execute = function(args) return "ok" end}}
api.command("c_lua_{i}", function(args) return "cmd" end, "command {i}")
api.on("tool_call", function(e) return nil end)
'''


def run_once(args, cwd, env):
    """(wall ms, cpu ms, peak RSS KiB) of one process, its own (see own_rusage.py); it must
    exit 0."""
    wall, cpu, rss, code = own_rusage.run(args, cwd, env)
    if code != 0:
        sys.exit(f"{args} failed with exit code {code}")
    return wall, cpu, rss


def evict(binary):
    """Drops `binary`'s pages from the page cache, so every arm's code comes in by the same
    readahead: a file just written (a fresh build, a copy) sits in the cache in other folio
    sizes and its runs map more of it."""
    fd = os.open(binary, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def idle_rss(binary, cwd, env):
    """VmRSS KiB of a REPL on a pseudo-terminal, a second after its prompt shows."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(binary, [binary, "--provider", "faux", "--no-session", "--no-extensions"], env)
    seen = b""
    deadline = time.time() + 20
    try:
        while time.time() < deadline and b"> " not in seen[-400:] and b"\xe2\x9d\xaf" not in seen:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
        end = time.time() + 1.0
        while time.time() < end:  # keep draining so the REPL never blocks on its output
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                os.read(fd, 65536)
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    # One start of 100 extensions swings by +-1.5 ms on two cores: several per round.
    ap.add_argument("--ext-runs", type=int, default=3)
    ap.add_argument("arms", nargs="+")
    a = ap.parse_args()
    bins = a.arms  # each arm's label: as given
    path = {b: os.path.realpath(b.split(",")[0]) for b in bins}
    extra = {b: dict(kv.split("=", 1) for kv in b.split(",")[1:]) for b in bins}
    work = tempfile.mkdtemp()
    home, plain, exts, one = (os.path.join(work, d) for d in ("home", "plain", "exts", "one"))
    os.makedirs(home)
    os.makedirs(plain)
    os.makedirs(os.path.join(exts, ".agents", "extensions"))
    os.makedirs(os.path.join(one, ".agents", "extensions"))
    with open(os.path.join(one, ".agents", "extensions", "l0.lua"), "w") as f:
        f.write(LUA_EXT.format(i=0))
    with open(os.path.join(plain, "notes.txt"), "w") as f:
        f.write("hello from a file\n")
    for i in range(100):
        with open(os.path.join(exts, ".agents", "extensions", f"l{i}.lua"), "w") as f:
            f.write(LUA_EXT.format(i=i))
    env = dict(os.environ, HOME=home, OPENAI_API_KEY="x", TERM="xterm-256color")
    for k in ("ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "MYPI_MODEL"):
        env.pop(k, None)
    srv, port = fake_openai.start()
    try:
        # The 100 extensions load only in a trusted folder.
        for b in bins:
            evict(path[b])
            for d in (exts, one):
                subprocess.run([path[b], "trust", d], env=env, capture_output=True)
        results = {b: {} for b in bins}

        def add(b, key, value):
            results[b].setdefault(key, []).append(value)

        faux = ["-p", "hello", "--provider", "faux", "--no-session"]
        task = ["-p", "what does notes.txt say?", "--provider", "openai", "--base-url",
                f"http://127.0.0.1:{port}/v1", "--model", "m", "--no-session", "--no-extensions"]
        for r in range(a.rounds + 1):
            for b in (bins if r % 2 else bins[::-1]):
                e, x = dict(env, **extra[b]), path[b]
                start = run_once([x] + faux + ["--no-extensions"], plain, e)
                pt = run_once([x] + task, plain, e)
                ext = [run_once([x] + faux, exts, e) for _ in range(a.ext_runs)]
                first = run_once([x] + faux, one, e)
                base = run_once([x] + faux, plain, e)
                idle = idle_rss(x, plain, e)
                if r == 0:
                    continue  # warm-up
                add(b, "start", start[0])
                add(b, "task_wall", pt[0])
                add(b, "task_cpu", pt[1])
                add(b, "task_rss", pt[2] / 1024)
                for run in ext:
                    add(b, "ext_wall", run[0])
                    add(b, "ext_cpu", run[1])
                    add(b, "per_ext", (run[2] - base[2]) / 100)
                    add(b, "per_ext_after_first", (run[2] - first[2]) / 99)
                add(b, "idle", idle / 1024)
        rows = [("binary size MB", lambda b: os.path.getsize(path[b]) / 1e6),
                ("start-up wall ms", lambda b: statistics.median(results[b]["start"])),
                ("print task wall ms", lambda b: statistics.median(results[b]["task_wall"])),
                ("print task CPU ms", lambda b: statistics.median(results[b]["task_cpu"])),
                ("print task peak RSS MiB", lambda b: statistics.median(results[b]["task_rss"])),
                ("idle REPL RSS MiB", lambda b: statistics.median(results[b]["idle"])),
                ("100 Lua ext. wall ms", lambda b: statistics.median(results[b]["ext_wall"])),
                ("100 Lua ext. CPU ms", lambda b: statistics.median(results[b]["ext_cpu"])),
                ("per Lua extension KiB", lambda b: statistics.median(results[b]["per_ext"])),
                ("  past the first KiB",
                 lambda b: statistics.median(results[b]["per_ext_after_first"]))]
        print(f"{a.rounds} rounds, arms alternating; medians")
        for i, b in enumerate(bins):
            print(f"  arm {i}: {b}")
        head = "".join(f"{'arm ' + str(i):>12}" for i in range(len(bins)))
        ratio = "".join(f"{'arm' + str(i) + '/arm0':>12}" for i in range(1, len(bins)))
        print(f"{'measure':<26}{head}{ratio}")
        for name, f in rows:
            vals = [f(b) for b in bins]
            cells = "".join(f"{v:12.2f}" for v in vals)
            rel = "".join(f"{v / vals[0]:12.2f}" if vals[0] else f"{'-':>12}" for v in vals[1:])
            print(f"{name:<26}{cells}{rel}")
        print(json.dumps({b: {k: statistics.median(v) for k, v in results[b].items()}
                          for b in bins}), file=sys.stderr)
    finally:
        srv.kill()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
