"""How long a CUDA context takes to make when several processes make theirs at once (each candidate's worker
makes one): N processes import torch, wait for a common start, then make their context; each says how long that
took. If the driver makes them one after another, N at once take about N times one. Each child makes the device's
primary context through the driver first (cuInit, cuDevicePrimaryCtxRetain: the driver's share), then torch's first
allocation on it (torch's share: its CUDA state, the allocator); the two are reported apart. Environment variables
(e.g. CUDA_DEVICE_MAX_CONNECTIONS) pass to the children.

    python3 scripts/gpu/context_rate.py [N ...]      (default 1 4 8 16)
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time

CHILD = """
import ctypes, sys, time, torch
cuda = ctypes.CDLL("libcuda.so.1")
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()
t = time.monotonic()
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
d = time.monotonic() - t
torch.empty(1, device="cuda"); torch.cuda.synchronize()
sys.stdout.write(f"{time.monotonic() - t:.4f} {d:.4f}\\n"); sys.stdout.flush()
"""

# Beside the contexts: a process that syncs after each small kernel, and says how many it got through a second
# before the others start and while they make their contexts (whether making one holds up others' work).
VICTIM = """
import sys, time, torch
x = torch.zeros(1 << 20, device="cuda"); torch.cuda.synchronize()
def rate(seconds):
    n, t = 0, time.monotonic()
    while time.monotonic() - t < seconds:
        x.add_(1); torch.cuda.synchronize(); n += 1
    return n / (time.monotonic() - t)
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()
idle = rate(0.5)
sys.stdout.write("go\\n"); sys.stdout.flush()
busy = rate(float(sys.argv[1]))
sys.stdout.write(f"{idle:.0f} {busy:.0f}\\n"); sys.stdout.flush()
"""


def once(n: int) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(n)]
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(0.3 + 0.15 * n)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    for p in procs + [victim]:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    assert victim.stdin is not None and victim.stdout is not None
    victim.stdin.write("go\n")
    victim.stdin.flush()
    assert victim.stdout.readline().strip() == "go"
    t = time.monotonic()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    lines = [p.stdout.readline().split() for p in procs if p.stdout is not None]
    took, driver = [float(a) for a, _ in lines], [float(b) for _, b in lines]
    wall = time.monotonic() - t
    idle, busy = victim.stdout.readline().split()
    for p in procs + [victim]:
        p.wait()
    print(f"{n:3d} at once: each {statistics.median(took):.3f} s (median; the driver's context "
          f"{statistics.median(driver):.3f}), {max(took):.3f} s (slowest); all done in {wall:.3f} s: "
          f"{n / wall:.1f} contexts a second")
    print(f"     beside them, a process's small kernels (each synced): {idle} a second before, {busy} while they "
          f"made their contexts")


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [1, 4, 8, 16]:
        once(n)
