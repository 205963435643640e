"""What makes the kernel that runs second in a timed round slower, and whether the baseline and the candidate differ
by their role alone: the softmax example's rounds as the harness times them (shape_timing.py: a refill, the L2
flush and the cover, CUDA events around one call; the harness's own EventTimer), varied one thing at a time.

Each variant runs ROUNDS rounds of two samples on four buffer sets and prints the median time of the sample that
ran first and of the one that ran second (microseconds), and, where two kernels take part, each one's medians by
position and the ratio of the two orders balanced (ratios.pass_estimates):

    current      the harness's rounds: A and B (two loads of the same source) in the same buffer set, orders
                 alternating (shape_timing.round_order), the flush a 256 MiB copy (timers.L2Flush)
    flush-memset the flush a 256 MiB memset (zero_), as until 2026-12-03
    same-kernel  A in both positions: the position alone
    other-set    the second sample in the next buffer set, not the one the first just used
    no-refill    the inputs refilled once a round, before the first sample only
    flush-rw     the flush reads and writes its 256 MiB (add_) instead of writing zeros
    flush-1g     a 1 GiB flush
    no-flush     no flush (the cover alone)
    sync-each    the device waited for after every sample (no sample queued behind another)
    warm-each    an untimed call of the same kernel before each sample's refill (measured in the harness and not kept)
    swapped      as current, the two loads' roles swapped (A is the load that was B): does the slower one follow
                 the load or the role?
    flush-alt    the flush a memset and a read and write in turn, sample by sample

    python3 scripts/gpu/order_effect.py [ROWSxCOLS ...]     (default 2048x4097 4096x1024; needs a GPU)
"""
from __future__ import annotations

import importlib.util
import os
import random
import statistics
import sys
from typing import Any, Callable, Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))
from kernelevolve_harness.ratios import median, pass_estimates  # noqa: E402
from kernelevolve_harness.shape_timing import round_order  # noqa: E402
from kernelevolve_harness.timers import FLUSH_BYTES, EventTimer, L2Flush, calibrate_sleep  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "160"))
GROUP = 8  # rounds queued before the device is waited for, as the harness does
SETS = 4
SOURCE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "triton", "softmax", "softmax.py")


def load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, SOURCE)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Flush:
    """The timer's flush buffer, with the write it does chosen by the variant."""

    def __init__(self, torch: Any, nbytes: int, how: str) -> None:
        self.buf = torch.empty(nbytes, dtype=torch.uint8, device="cuda") if how != "none" else None
        self.src = torch.zeros(nbytes, dtype=torch.uint8, device="cuda") if how == "copy" else None
        self.how = how
        self.calls = 0

    def __call__(self) -> None:
        if self.buf is None:
            return
        self.calls += 1
        if self.how == "rw" or (self.how == "alt" and self.calls % 2):
            self.buf.add_(1)
        elif self.how == "copy":
            self.buf.copy_(self.src)
        else:
            self.buf.zero_()


def run(torch: Any, rows: int, cols: int, variant: str, kernels: Dict[str, Any]) -> Dict[Tuple[str, int], List[float]]:
    """(kernel name, position 0 or 1) -> the samples' times in us."""
    pool = [torch.randn(rows, cols, device="cuda") * 4 for _ in range(3)]
    sets = [(torch.empty(rows, cols, device="cuda"), torch.empty(rows, cols, device="cuda")) for _ in range(SETS)]
    flush = Flush(torch, 1 << 30 if variant == "flush-1g" else FLUSH_BYTES,
                  {"flush-rw": "rw", "no-flush": "none", "flush-memset": "zero", "flush-alt": "alt"}.get(variant, "copy"))
    timer = EventTimer(torch, lambda k, x, y: k.softmax(x, y), flush)
    timer.cover_ms = 0.05  # the device sleeps 50 us (less the flush) before each sample's timing starts
    rng = random.Random(1)

    def refill(xy: Tuple[Any, Any]) -> None:
        xy[0].copy_(pool[rng.randrange(3)]).mul_(rng.uniform(0.5, 2.0))
        xy[1].fill_(float("nan"))

    names = list(kernels)
    for k in kernels.values():  # compiled and warm
        for xy in sets:
            refill(xy)
            k.softmax(*xy)
    torch.cuda.synchronize()
    out: Dict[Tuple[str, int], List[float]] = {}
    queued: List[Tuple[str, int, Any]] = []
    for t in range(ROUNDS):
        first = round_order(t, SETS)
        order = names if first == 0 else names[::-1]
        for pos, name in enumerate(order):
            xy = sets[(t + (pos if variant == "other-set" else 0)) % SETS]
            if variant == "warm-each":
                kernels[name].softmax(*xy)
            if variant != "no-refill" or pos == 0:
                refill(xy)
            queued.append((name, pos, timer.start(name, kernels[name], [list(xy)])))
            if variant == "sync-each":
                torch.cuda.synchronize()
        if (t + 1) % GROUP == 0 or t == ROUNDS - 1:
            done = timer.finish([q for _, _, q in queued])
            for (name, pos, _), sample in zip(queued, done):
                if not sample.set_aside:
                    out.setdefault((name, pos), []).append(sample.ms * 1000.0)
            queued = []
    return out


def main() -> None:
    import torch
    shapes = [tuple(int(x) for x in a.split("x")) for a in sys.argv[1:]] or [(2048, 4097), (4096, 1024)]
    a, b = load("kernel_a"), load("kernel_b")
    calibrate_sleep(torch, L2Flush(torch))
    variants: List[Tuple[str, Callable[[], Dict[str, Any]]]] = [
        ("current", lambda: {"A": a, "B": b}), ("same-kernel", lambda: {"A": a, "A2": a}),
        ("other-set", lambda: {"A": a, "B": b}), ("no-refill", lambda: {"A": a, "B": b}),
        ("flush-rw", lambda: {"A": a, "B": b}), ("flush-1g", lambda: {"A": a, "B": b}),
        ("no-flush", lambda: {"A": a, "B": b}), ("sync-each", lambda: {"A": a, "B": b}),
        ("warm-each", lambda: {"A": a, "B": b}), ("swapped", lambda: {"A": b, "B": a}),
        ("flush-memset", lambda: {"A": a, "B": b}), ("flush-alt", lambda: {"A": a, "B": b})]
    print(f"{torch.cuda.get_device_name()}; {ROUNDS} rounds a variant, {SETS} buffer sets, groups of {GROUP} rounds")
    print("| shape | variant | first us | second us | second/first | A first, second | B first, second | A/B balanced |")
    print("|---|---|---:|---:|---:|---|---|---:|")
    for rows, cols in shapes:
        for name, kernels in variants:
            ks = kernels()
            got = run(torch, rows, cols, name, ks)
            first = statistics.median([x for (_, p), xs in got.items() if p == 0 for x in xs])
            second = statistics.median([x for (_, p), xs in got.items() if p == 1 for x in xs])
            per = []
            for k in ks:
                per.append(f"{median(got.get((k, 0), [0])):.1f}, {median(got.get((k, 1), [0])):.1f}")
            balanced = ""
            if name != "same-kernel":
                n = min(len(got[("A", 0)]), len(got[("B", 1)]), len(got[("A", 1)]), len(got[("B", 0)]))
                # A first: rounds of order 0; A's and B's samples by order, as a pass of the harness
                pa = got[("A", 0)][:n] + got[("A", 1)][:n]
                pb = got[("B", 1)][:n] + got[("B", 0)][:n]
                est = pass_estimates((pa, pb, [0] * 2 * n, [0] * n + [1] * n), median)
                balanced = f"{est[0] / est[1]:.3f}"
            print(f"| {rows}x{cols} | {name} | {first:.1f} | {second:.1f} | {second / first:.3f} | {per[0]} | "
                  f"{per[1]} | {balanced} |", flush=True)


if __name__ == "__main__":
    main()
