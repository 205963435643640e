"""What makes the kernel that runs second in a timed round slower, and whether the baseline and the candidate differ
by their role alone: the softmax example's rounds as the harness times them (shape_timing.py: a refill, the L2
flush and the cover, CUDA events around one call; the harness's own EventTimer), varied one thing at a time.

Each variant runs ROUNDS rounds of two samples on four buffer sets and prints the median time of the sample that
ran first and of the one that ran second (microseconds), and, where two kernels take part, each one's medians by
position and the ratio of the two orders balanced (ratios.pass_estimates):

    current      the harness's rounds: A and B (two loads of the same source) in the same buffer set, orders
                 alternating (shape_timing.round_order), the flush timers.CacheFlush (a 256 MiB copy, then the
                 instruction caches emptied by code_flush.py's kernel)
    no-code      the flush the 256 MiB copy alone, as until 2026-12-03 (the instruction caches left as they are)
    same-kernel  A in both positions: the position alone
    same-no-code A in both positions, the copy alone
    swapped      as current, the two loads' roles swapped (A is the load that was B)
    code-64k     the code flush 64 KiB of code instead of CODE_FLUSH_BYTES
    code-256k    the code flush 256 KiB (1 MiB: as cold as 256 KiB, and 81 s for the driver to compile)
    flush-memset the flush a 256 MiB memset (zero_), as until 2026-12-03, no code flush
    other-set    the second sample in the next buffer set, not the one the first just used
    no-refill    the inputs refilled once a round, before the first sample only
    no-flush     no flush (the cover alone)
    sync-each    the device waited for after every sample (no sample queued behind another)
    warm-each    an untimed call of the same kernel before each sample's refill (measured in the harness and not kept)

    python3 scripts/gpu/order_effect.py [ROWSxCOLS ...]     (default 2048x4097 4096x1024; needs a GPU)
    ORDER_VARIANTS=current,no-code,...  the variants to run (default: the first seven)

It also prints the code flush's load time and its own device time.
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
from kernelevolve_harness.code_flush import CODE_FLUSH_BYTES, code_flush  # noqa: E402
from kernelevolve_harness.timers import FLUSH_BYTES, CacheFlush, EventTimer, calibrate_sleep  # noqa: E402

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
    """The timer's flush, with what it does chosen by the variant: the L2's write (a copy, a memset, none) and
    the code flush's size (0: none)."""

    def __init__(self, torch: Any, how: str, code_bytes: int) -> None:
        self.buf = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda") if how != "none" else None
        self.src = torch.zeros(FLUSH_BYTES, dtype=torch.uint8, device="cuda") if how == "copy" else None
        self.code = code_flush(torch, code_bytes) if code_bytes else None
        if code_bytes and self.code is None:
            raise SystemExit("the code flush could not be loaded here")
        self.how = how

    def __call__(self) -> None:
        if self.how == "copy":
            self.buf.copy_(self.src)
        elif self.how == "zero":
            self.buf.zero_()
        if self.code is not None:
            self.code()


# variant -> (the L2 flush's write, the code flush's bytes)
FLUSHES = {"no-code": ("copy", 0), "same-no-code": ("copy", 0), "code-64k": ("copy", 64 << 10),
           "code-256k": ("copy", 256 << 10), "flush-memset": ("zero", 0), "no-flush": ("none", 0)}
TWO_LOADS = ["current", "no-code", "swapped", "code-64k", "code-256k", "flush-memset", "other-set", "no-refill",
             "no-flush", "sync-each", "warm-each"]


def run(torch: Any, rows: int, cols: int, variant: str, kernels: Dict[str, Any]) -> Dict[Tuple[str, int], List[float]]:
    """(kernel name, position 0 or 1) -> the samples' times in us."""
    pool = [torch.randn(rows, cols, device="cuda") * 4 for _ in range(3)]
    sets = [(torch.empty(rows, cols, device="cuda"), torch.empty(rows, cols, device="cuda")) for _ in range(SETS)]
    flush = Flush(torch, *FLUSHES.get(variant, ("copy", CODE_FLUSH_BYTES)))
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


def code_flush_cost(torch: Any) -> str:
    """The code flush's load time in this process and its own device time (median of 20, us), per size."""
    out = []
    for nbytes in sorted({64 << 10, CODE_FLUSH_BYTES, 256 << 10}):
        f = code_flush(torch, nbytes)
        if f is None:
            return "the code flush could not be loaded here"
        times = []
        for _ in range(20):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            f()
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1) * 1000.0)
        out.append(f"{nbytes >> 10} KiB: loaded in {f.load_ms:.0f} ms, runs {statistics.median(times):.1f} us")
    return "code flush " + "; ".join(out)


def main() -> None:
    import torch
    shapes = [tuple(int(x) for x in a.split("x")) for a in sys.argv[1:]] or [(2048, 4097), (4096, 1024)]
    a, b = load("kernel_a"), load("kernel_b")
    calibrate_sleep(torch, CacheFlush(torch))
    print(code_flush_cost(torch), flush=True)
    chosen = os.environ.get("ORDER_VARIANTS", "current,no-code,same-kernel,same-no-code,swapped,code-64k,code-256k")
    variants: List[Tuple[str, Callable[[], Dict[str, Any]]]] = []
    for name in chosen.split(","):
        if name.startswith("same-"):
            variants.append((name, lambda: {"A": a, "A2": a}))
        elif name == "swapped":
            variants.append((name, lambda: {"A": b, "B": a}))
        elif name in TWO_LOADS:
            variants.append((name, lambda: {"A": a, "B": b}))
        else:
            raise SystemExit(f"no variant {name}")
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
            if not name.startswith("same-"):
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
