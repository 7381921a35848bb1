"""A process's own wall time, CPU and peak RSS, for the benches in this folder.

`run(args, cwd, env)` runs `args` through `own_rusage.c` (compiled once with the system's C
compiler into ~/.cache/mypi-bench) and returns (wall ms, CPU ms, peak RSS KiB, exit code).
Measured from Python directly, a child's peak RSS includes the ~14 MiB it shared with Python
before its exec (Linux keeps an exec'd image's high-water mark), which hides what mypi
itself uses; see own_rusage.c.
"""

import hashlib
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "own_rusage.c")


def launcher():
    """The compiled launcher (built when missing or when its source changed)."""
    with open(SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    cache = os.path.join(os.path.expanduser("~"), ".cache", "mypi-bench")
    exe = os.path.join(cache, f"own_rusage-{digest}")
    if not os.path.exists(exe):
        os.makedirs(cache, exist_ok=True)
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-O2", "-o", exe + ".tmp", SOURCE], check=True)
        os.replace(exe + ".tmp", exe)
    return exe


_EXE = None


def run(args, cwd=None, env=None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
    """(wall ms, CPU ms, peak RSS KiB, exit code) of `args`, its own."""
    global _EXE
    if _EXE is None:
        _EXE = launcher()
    r, w = os.pipe()
    try:
        p = subprocess.Popen([_EXE, str(w)] + list(args), cwd=cwd, env=env, stdout=stdout,
                             stderr=stderr, stdin=subprocess.DEVNULL, pass_fds=(w,))
    finally:
        os.close(w)
    with os.fdopen(r) as f:
        line = f.read()
    p.wait()
    if not line:
        raise RuntimeError(f"own_rusage failed for {args[0]}")
    wall, cpu, rss, code = (int(x) for x in line.split())
    return wall / 1000, cpu / 1000, rss, code
