"""How one sample of a kernel is timed: one timer per strategy, behind one narrow interface.

    sample = timer.start(name, k, sets)     # queues (or takes) one sample: the calls on these buffer sets
    samples = timer.finish([...])           # waits for the queued ones: Sample(ms per call, results, set_aside)

- CpuTimer: perf_counter around n calls on n buffer sets.
- EventTimer (GPU, "cuda-events"): a cache flush (CacheFlush: the L2 and the instruction caches) and a device-side
  sleep (the cover), then CUDA events around one call; a sample whose launch may still have been queued when its
  timing began comes back set aside.
- GraphTimer (GPU, "cuda-graph", kernels under ~10 us): a CUDA graph of n (refill, call) minus a graph of the same
  refills alone, per call.

The calibration (which strategy, how many calls per sample) is in gpu_call_ms / graph_call_ms, used by the
shape's setup before the timing lock is taken.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import arrays as A
from .code_flush import code_flush

_perf_counter = time.perf_counter  # captured before any kernel code is loaded (the worker imports this first)

COVER_MARGIN_MS = 0.01  # the device's pickup of a queued launch, with room to spare
MAX_COVER_MS = 4.0
GRAPH_BELOW_MS = 0.01  # kernels faster than this (GPU time of one call) are timed as CUDA graphs
GRAPH_KERNEL_MS = 0.1  # a graph holds about this much kernel time
GRAPH_COVER_MS = 0.05  # device-side sleep before a graph's timing starts: longer than the host takes to launch it
# The first replays queued after a wait get the cover; the later ones start behind the earlier ones' work (each
# replay 0.1 ms and more of device time, its launch a few microseconds of the host's): the cover would only
# lengthen the timed section (a quarter of a softmax pass's device time on an H200).
COVERED_REPLAYS = 4
FLUSH_BYTES = 256 << 20  # larger than any GPU's L2
_SLEEP: Optional[Tuple[float, float]] = None  # (device sleep cycles per ms, the L2 flush's ms), measured once

Launch = Callable[..., Any]


@dataclass
class Sample:
    ms: float  # time per call
    results: List[Any]  # what each call returned, one per buffer set
    set_aside: bool = False  # not to be counted (the round is taken again); its outputs are still checked


@dataclass
class QueuedSample:
    """An EventTimer sample on the stream: the cover's start, the timing's start and end, and the launch's host
    time from the cover's start."""
    cover_start: Any
    start: Any
    end: Any
    host_ms: float
    results: List[Any] = field(default_factory=list)


@dataclass
class QueuedGraphs:
    """A GraphTimer sample on the stream: each replay's (start, end) events, in the order g0, g1, g0, g1."""
    events: List[Tuple[Any, Any]]
    calls: int
    results: List[Any]


# mallopt's parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD_MAX = 32 << 20  # glibc's ceiling on 64-bit systems
_steady = False


def keep_freed_memory() -> None:
    """Has glibc's malloc keep the memory a call frees, for the next call to reuse, instead of handing it back to
    the system (heap trimming, and arrays of 128 KiB and more mapped and unmapped one by one).

    A CPU kernel whose host code allocates its outputs (numpy's temporaries, np.empty_like) otherwise pays page
    faults or not depending on what ran before it: which kernel's results are still held, where the heap's top
    lies. Judged against itself, a numpy softmax read 0.38x with the kernel that ran second in a round paying
    them alone. A program that calls a kernel in a loop reaches the state this sets at once: its frees are
    reused by its next call. Both kernels are timed in it; a kernel that takes more memory than the process has
    held before still pays for it. Once per process; a no-op where glibc's mallopt is not to be had."""
    global _steady
    if _steady:
        return
    _steady = True
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)
        libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30)
    except (OSError, AttributeError):
        pass


class CpuTimer:
    kind = "cpu-perf_counter"

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        keep_freed_memory()

    def single(self, k: Any, args: List[Any]) -> float:
        t0 = _perf_counter()
        self.launch(k, *args)
        return (_perf_counter() - t0) * 1000.0

    @staticmethod
    def batch_size(ms: float, cap: int) -> int:
        return max(1, min(cap, int(math.ceil(1.0 / max(ms, 1e-6)))))  # each sample >= ~1 ms

    def start(self, name: str, k: Any, sets: Sequence[List[Any]]) -> Sample:
        launch = self.launch
        results: List[Any] = [None] * len(sets)
        n = len(sets)
        t0 = _perf_counter()
        for j in range(n):
            results[j] = launch(k, *sets[j])
        return Sample((_perf_counter() - t0) * 1000.0 / n, results)

    def finish(self, queued: List[Any]) -> List[Sample]:
        return list(queued)


class CacheFlush:
    """What runs before each event-timed sample to empty the device's caches: the L2, by a device-to-device copy of
    FLUSH_BYTES from one buffer into another, and the SMs' instruction caches, by a kernel of straight-line code
    (code_flush.py; None where it cannot be loaded).

    The L2 by a copy rather than a memset kernel (a 256 MiB `zero_()` until 2026-12-03): on an H200, after a
    memset a softmax whose rows unroll into a long program ran 49 us from one load of its module and 53 us from
    another load of the same source, whichever of the two was loaded second (so a kernel judged against itself read
    0.93-0.97 on that shape); after a copy, or no flush at all, both loads ran 49 us (scripts/gpu/order_effect.py;
    docs/benchmarks.md, "What the timing corrects"). In the harness that shape's candidate still ran 51-56 us
    after a call of itself where the baseline ran 49-50, and both 60 us after a call of the other: what stays of a
    kernel's code in the instruction caches depends on where it lies, so every sample now starts with them emptied
    (code_flush.py)."""

    def __init__(self, torch: Any) -> None:
        self.src = torch.zeros(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.dst = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.code = code_flush(torch)

    @property
    def code_bytes(self) -> int:
        """The instruction-cache flush's code size (0: none)."""
        return self.code.nbytes if self.code is not None else 0

    def __call__(self) -> None:
        self.dst.copy_(self.src)
        if self.code is not None:
            self.code()


def gpu_call_ms(torch: Any, flush: Callable[[], None], launch: Launch, k: Any, args: List[Any]) -> Tuple[float, Any]:
    """One eager call after an L2 flush, between CUDA events (warm-up and calibration): its ms and its result."""
    flush()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    result = launch(k, *args)
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1), result


def graph_call_ms(torch: Any, launch: Launch, k: Any, args: List[Any]) -> float:
    """The kernel's own GPU time (ten calls captured in a graph, so no launch overhead); inf if it cannot be
    captured. An eager event-timed call of a microsecond kernel reads ~40 us of Python launch instead."""
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            launch(k, *args)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(10):  # the graph's own launch (~10 us) spread over ten calls
                launch(k, *args)
        best = float("inf")
        for _ in range(3):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            g.replay()
            e1.record()
            torch.cuda.synchronize()
            best = min(best, e0.elapsed_time(e1) / 10)
        return best
    except Exception:
        torch.cuda.synchronize()
        return float("inf")


def graph_calls(gpu_ms: float, cap: int) -> int:
    """Calls per graph: about GRAPH_KERNEL_MS of kernel time (the graph's own launch cancels out in the
    subtraction, so more calls only cost time), at least 2."""
    return max(2, min(cap, 100, int(math.ceil(GRAPH_KERNEL_MS / max(gpu_ms, 1e-4)))))


def calibrate_sleep(torch: Any, flush: Any) -> Tuple[float, float]:
    """torch.cuda._sleep spins for a number of device clock cycles: its rate here, and the flush's length. A
    torch without it covers with the flush alone (the samples are still checked, and set aside as needed)."""
    global _SLEEP
    if _SLEEP is not None:
        return _SLEEP
    if not hasattr(torch.cuda, "_sleep"):
        _SLEEP = (0.0, 0.0)
        return _SLEEP
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    per_ms = 0.0
    flush_ms = float("inf")
    for _ in range(3):
        ev[0].record()
        flush()
        ev[1].record()
        torch.cuda._sleep(100_000)
        ev[2].record()
        torch.cuda.synchronize()
        flush_ms = min(flush_ms, ev[0].elapsed_time(ev[1]))
        per_ms = max(per_ms, 100_000 / max(ev[1].elapsed_time(ev[2]), 1e-6))  # the fastest clock: sleeps short
    _SLEEP = (per_ms, flush_ms)
    return _SLEEP


class EventTimer:
    """CUDA events around one call after a cache flush (CacheFlush: a 256 MiB copy and a code flush) and a cover.

    A launch through a Python wrapper (torch.autograd.Function, output allocation, checks) can take as long on
    the host as the kernel on the device; had the device run out of queued work before the launch was queued,
    the sample would time the host, and another process taking the core would slow one kernel's samples and not
    the other's. So the device is kept busy (the flush, then a device-side sleep: the cover) between a sample's
    first event and its timing start. Whether the cover sufficed is known for each sample (finish): the device
    reached the timing start no earlier than the host's clock at the first event plus the cover's measured
    length, so a launch that returned before then was queued in time; one that did not is set aside, and the
    cover grows for the next ones."""
    kind = "cuda-events"

    def __init__(self, torch: Any, launch: Launch, flush: Any) -> None:
        self.torch = torch
        self.launch = launch
        self.flush = flush
        self.cover_ms = 0.0
        self.host_ms: List[float] = []  # each launch's host time, from the first event to the launch's return

    def start(self, name: str, k: Any, sets: Sequence[List[Any]]) -> QueuedSample:
        torch = self.torch
        ec, e0, e1 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        t0 = _perf_counter()
        ec.record()  # reached by the device no earlier than t0
        self.flush()
        cycles = self.sleep_cycles()
        if cycles:
            torch.cuda._sleep(cycles)
        e0.record()
        result = self.launch(k, *sets[0])
        host_ms = (_perf_counter() - t0) * 1000.0
        e1.record()
        return QueuedSample(ec, e0, e1, host_ms, [result])

    def finish(self, queued: List[QueuedSample]) -> List[Sample]:
        self.torch.cuda.synchronize()
        out = []
        short = False
        for q in queued:
            late = q.host_ms + COVER_MARGIN_MS >= q.cover_start.elapsed_time(q.start)
            self.host_ms.append(q.host_ms)
            short = short or late
            out.append(Sample(q.start.elapsed_time(q.end), q.results, set_aside=late))
        if short:
            # most launches' host time, with room: a launch slowed by another process taking the core is set
            # aside, not chased with a cover as long as that one
            usual = sorted(self.host_ms)[(9 * len(self.host_ms)) // 10]
            self.cover_ms = min(MAX_COVER_MS, max(1.25 * self.cover_ms, 1.5 * usual + COVER_MARGIN_MS))
        return out

    def sleep_cycles(self) -> int:
        """Device clock cycles of sleep for the cover beyond the flush (0: the flush alone, or no sleep here)."""
        if self.cover_ms <= 0:
            return 0
        per_ms, flush_ms = calibrate_sleep(self.torch, self.flush)
        return int(max(0.0, self.cover_ms - flush_ms) * per_ms)


class GraphTimer:
    """Kernels under ~10 us: each kernel's sample is a CUDA graph of n x (refill, call) replayed alternately
    with a graph of the same n refills alone (no L2 flush, like triton's do_bench_cudagraph); per call =
    (with - without) / n. The refills inside the graphs keep every call's inputs fresh and its outputs
    poisoned. Both kernels refill from the same copies and subtract the same graph of refills: where those
    copies lie changes the refill's time (with copies of its own, a 7 us softmax judged against itself read
    0.954-0.978 on an H200; with shared copies, 0.994-1.001).

    Each replay's timing starts behind a device-side sleep (the cover, as EventTimer's), so the graph is launched
    before the device reaches the start event: otherwise the start event is reached at once on an idle device,
    and the time includes the host's launch of the graph, whose jitter (microseconds) does not cancel in the
    subtraction. With two calls a graph (a 32 MiB buffer set, 64 MiB a sample), the 7 us softmax's samples
    scattered so that 206 rounds did not give its ratio to 1% on an H200. Samples are queued a group of rounds
    at a time and read with one wait (finish); only the first replays after a wait need the cover
    (COVERED_REPLAYS), the others being queued behind them."""
    kind = "cuda-graph"

    def __init__(self, torch: Any, launch: Launch, outputs: Sequence[int], flush: Any = None) -> None:
        self.torch = torch
        self.launch = launch
        self.outputs = set(outputs)
        self.cover_cycles = 0
        self.queued = 0  # replays queued since the device was last waited for
        if flush is not None:
            per_ms, _ = calibrate_sleep(torch, flush)
            self.cover_cycles = int(GRAPH_COVER_MS * per_ms)
        self.graphs: Dict[str, Tuple[Any, List[Any]]] = {}  # kernel name -> (graph with the calls, its results)
        # The graph of refills alone and the copies both kernels' graphs refill from. The graphs read the copies'
        # memory on every replay but do not own it: they live as long as the graphs, or the allocator hands that
        # memory to the next tensor and the calls see someone else's inputs.
        self.refills: Optional[Tuple[Any, List[List[Any]]]] = None

    def capture(self, name: str, k: Any, sets: Sequence[List[Any]]) -> bool:
        """Captures kernel `name`'s graph on these buffer sets (refilled already: the first capture copies what
        they hold). False when it cannot be captured (a launch outside torch's capture stream)."""
        torch = self.torch
        launch = self.launch
        snapshots = self.refills[1] if self.refills else [[A.rebuild(a, A.clone) for a in args] for args in sets]
        outputs = self.outputs

        def refill_one(args: List[Any], snap: List[Any]) -> None:
            for j, a in enumerate(args):
                for leaf, kept in zip(A.leaves(a), A.leaves(snap[j])):
                    if j in outputs:
                        A.poison(leaf)
                    else:
                        leaf.copy_(kept)

        results: List[Any] = [None] * len(sets)

        def with_calls() -> None:
            for n, (args, snap) in enumerate(zip(sets, snapshots)):
                refill_one(args, snap)
                results[n] = launch(k, *args)

        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                with_calls()
            torch.cuda.current_stream().wait_stream(s)
            g1 = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g1):
                with_calls()
            if self.refills is None:
                g0 = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g0):
                    for args, snap in zip(sets, snapshots):
                        refill_one(args, snap)
                self.refills = (g0, snapshots)
            torch.cuda.synchronize()
        except Exception:
            torch.cuda.synchronize()
            return False
        self.graphs[name] = (g1, results)
        return True

    def start(self, name: str, k: Any, sets: Sequence[List[Any]]) -> QueuedGraphs:
        """Queues one sample: the four replays, each between events behind its cover. Nothing waits here: the
        rounds queue a group of samples and finish() waits once for all of them, so the device runs them back to
        back (one synchronization a replay left the device idle while the host caught up, most of a softmax's
        timed section on an H200)."""
        torch = self.torch
        g1, results = self.graphs[name]
        assert self.refills is not None
        g0 = self.refills[0]
        events = []
        for g in (g0, g1, g0, g1):  # g1 last, so the outputs left in the buffers are from real calls
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if self.cover_cycles and self.queued < COVERED_REPLAYS:
                torch.cuda._sleep(self.cover_cycles)
            e0.record()
            g.replay()
            e1.record()
            events.append((e0, e1))
            self.queued += 1
        return QueuedGraphs(events, len(sets), results)

    def finish(self, queued: List[QueuedGraphs]) -> List[Sample]:
        self.torch.cuda.synchronize()
        self.queued = 0
        out = []
        for q in queued:
            times = [e0.elapsed_time(e1) for e0, e1 in q.events]
            without = min(times[0], times[2])
            with_ms = min(times[1], times[3])
            out.append(Sample(max(with_ms - without, 1e-6) / q.calls, q.results))
        return out
