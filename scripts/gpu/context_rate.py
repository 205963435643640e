"""How long a CUDA context takes to make when several processes make theirs at once (each candidate's worker
makes one): N processes import torch, wait for a common start, then make their context; each says how long that
took. If the driver makes them one after another, N at once take about N times one.

    python3 scripts/gpu/context_rate.py [N ...]      (default 1 4 8 16)
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time

CHILD = """
import sys, time, torch
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()
t = time.monotonic()
torch.empty(1, device="cuda"); torch.cuda.synchronize()
sys.stdout.write(f"{time.monotonic() - t:.4f}\\n"); sys.stdout.flush()
"""


def once(n: int) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(n)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    t = time.monotonic()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    took = [float(p.stdout.readline()) for p in procs if p.stdout is not None]
    wall = time.monotonic() - t
    for p in procs:
        p.wait()
    print(f"{n:3d} at once: each {statistics.median(took):.3f} s (median), {max(took):.3f} s (slowest); all done in "
          f"{wall:.3f} s: {n / wall:.1f} contexts a second")


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [1, 4, 8, 16]:
        once(n)
