"""What one timed round of the softmax example costs on the device and on the host, alone and beside other
processes' GPU work: the parts of an EventTimer sample (refill, events, flush, cover, launch) on the host, a
round's wall time as the timed rounds queue them (groups of 8 rounds, one wait a group), and the device's own
time per sample. Answers whether a pass's rounds are bound by the host, by the device, or by the device's time
slices going to other processes.

    python3 scripts/gpu/round_cost.py [LOADS ...]      (default 0 4 11: how many other processes keep the GPU busy)
"""
from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

LOAD = """
import random, time, torch
x = torch.randn(4096, 1024, device="cuda")
torch.cuda.synchronize()
print("ready", flush=True)
while True:  # bursts of work like an evaluation's checked calls, then a pause like its host work
    for _ in range(random.randint(2, 12)):
        torch.softmax(x.double(), dim=1)
    torch.cuda.synchronize()
    time.sleep(random.uniform(0.0, 0.004))
"""

SHAPES = [(4096, 1024), (2048, 4097), (8192, 511)]
GROUP = 8  # memory_plan.GROUP_ROUNDS


def main() -> None:
    import torch
    from kernelevolve_harness.timers import CacheFlush, EventTimer
    root = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "triton", "softmax", "softmax.py")
    spec = importlib.util.spec_from_file_location("softmax_example", root)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    flush = CacheFlush(torch)
    loads = [int(a) for a in sys.argv[1:]] or [0, 4, 11]
    for load in loads:
        procs = [subprocess.Popen([sys.executable, "-c", LOAD], stdout=subprocess.PIPE, text=True) for _ in range(load)]
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        try:
            for rows, cols in SHAPES:
                one(torch, mod, flush, EventTimer, rows, cols, load)
        finally:
            for p in procs:
                p.kill()
                p.wait()


def one(torch, mod, flush, EventTimer, rows, cols, load) -> None:
    x = torch.randn(rows, cols, device="cuda")
    y = torch.empty_like(x)
    pool = x.clone()
    launch = lambda k, a, b: k.softmax(a, b)  # noqa: E731 (the spec's launch)
    for _ in range(3):
        launch(mod, x, y)
    torch.cuda.synchronize()
    n = 200
    parts = {}

    def host(name, fn):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        parts[name] = (time.perf_counter() - t) / n * 1e6
        torch.cuda.synchronize()

    def refill():
        y.fill_(float("nan"))
        x.copy_(pool)
        x.mul_(1.3)

    def events():
        for _ in range(3):
            torch.cuda.Event(enable_timing=True).record()

    host("refill", refill)
    host("3 events", events)
    host("flush", flush)
    host("sleep", lambda: torch.cuda._sleep(1000))
    host("launch", lambda: launch(mod, x, y))
    # the rounds as shape_timing queues them: ABBA pairs, a group of GROUP rounds, one wait a group
    timer = EventTimer(torch, launch, flush)
    walls, dev, aside, ms = [], [], 0, []
    t_all = time.perf_counter()
    for g in range(25):
        t = time.perf_counter()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        queued = []
        for r in range(GROUP):
            for _ in range(2):
                refill()
                queued.append(timer.start("k", mod, [[x, y]]))
        e1.record()
        done = timer.finish(queued)
        walls.append((time.perf_counter() - t) / GROUP * 1e3)
        aside += sum(1 for s in done if s.set_aside)
        dev.append(e0.elapsed_time(e1) / GROUP)  # the group's device time (head cover included), per round
        ms += [s.ms for s in done if not s.set_aside]
    total = time.perf_counter() - t_all
    print(f"load {load:2d} {rows}x{cols}: host us a call: " + ", ".join(f"{k} {v:.0f}" for k, v in parts.items())
          + f"; a round {statistics.median(walls):.3f} ms wall (median of groups; {total / (25 * GROUP) * 1e3:.3f} "
          f"ms with the waits), the device {statistics.median(dev):.3f} ms (the group's, per round), kernel "
          f"{statistics.median(ms) * 1e3:.1f} us, cover {timer.cover_ms:.3f} ms a sample, set aside {aside}/{25 * GROUP * 2}",
          flush=True)


if __name__ == "__main__":
    main()
