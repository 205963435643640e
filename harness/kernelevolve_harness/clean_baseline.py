"""The baseline's time in the candidate's process, set beside its time in the clean reference process.

The paired ratios time the baseline in the candidate's worker: both kernels in the same buffers, the same
process, the same device state, which is what makes a ratio of a few percent measurable. The price is that the
baseline runs in a process the candidate has been in. tamper.py proves the process unchanged where it can be
read (every library callable, sys.modules, the environment, the libraries' switches, their code pages); what it
cannot read is a library's private data written through a pointer or a C call it does not watch (glibc's malloc
settings through mallopt, a thread pool's size, a flag inside a shared object), which can slow the baseline
without changing any of those.

So after the timed passes each shape's baseline is clocked (`clock`) in both processes, the same way, in blocks
taken in turn (the worker, the clean process, the clean process, the worker), each under the device lock, on
inputs of a draw no check uses: on the CPU, samples of `batch` calls (the rounds' batch) on as many buffer sets,
refilled before each sample, results held until the sample ends (CpuTimer, as the rounds); on a GPU, one call per
sample after the cache flush (EventTimer). Each side's figure is its fastest sample: what other processes do only
ever adds time, and blocks taken in turn meet the same load (a busy sibling core slowed one process's samples
1.6x for a whole reading when the clean process was clocked apart, after the rounds), while a slowdown the
candidate made is in every sample of its process. A shape read slower in the worker than the two processes' noise
(LIMIT) is clocked again, up to READINGS readings over all the samples so far; slower every time, the verdict is
`incorrect`: the ratio it would report is not the one the user measures. Each shape's figures go into every
verdict (`timing.clean_baseline`).

The worker's blocks run after the candidate's last call, in the state its calls left (an honest RMSNorm whose
kernel set mallopt at each call made every numpy temporary of the baseline a fresh mapping: 17-30x slower). On a
GPU a kernel of a few microseconds is clocked by events on both sides, so the comparison holds there too.
"""
from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Optional

from .memory_plan import LARGE_SET

# a block's samples take about this long, at least and at most this many (keyed by GPU or not): a block holds the
# device lock, so on a GPU it is kept to a few milliseconds (each sample starts
# with the cache flush), or the judge's rate would pay for it (a quarter of a second a shape took the softmax
# search on an H100 from 224.8 candidates a minute to 60.4)
SAMPLE_S = {True: 0.004, False: 0.02}
MIN_SAMPLES = {True: 3, False: 4}
MAX_SAMPLES = 300  # ... at least and at most this many
MAX_GPU_SETS = 4  # buffer sets a GPU clock turns through
# the worker's baseline may read this much slower than the clean one's before the candidate is held to blame.
# Two processes timing the same kernel differ by a few percent on a GPU; on a shared two-core CPU beside other
# test lanes, honest baselines read up to 1.62x and 1.82x slow in the worker over whole readings (a busy sibling
# core), so the CPU's limit is 2: a candidate could slow a CPU baseline by less than that unseen.
LIMIT = {True: 1.25, False: 2.0}
READINGS = 3  # a shape read too slow is clocked again, until this many readings, each's blocks LONGER times the last's
LONGER = 4.0
LIMIT_ENV = "KERNELEVOLVE_CLEAN_BASELINE_LIMIT"  # the judge's own setting (a machine noisier than these), never a candidate's


def limit(gpu: bool) -> float:
    return float(os.environ.get(LIMIT_ENV) or LIMIT[gpu])

_perf_counter = time.perf_counter


def clock(w: Any, shape: int, seed: int, batch: int, longer: float = 1.0) -> List[float]:
    """The baseline's samples (ms per call) on shape i, inputs of `seed`, in this process (the worker's or the
    reference's), timed as the worker's rounds time it (see above): `batch` calls a sample on the CPU. `longer`:
    the block's time, in SAMPLE_S (a reading after one that read slow takes longer blocks)."""
    from . import arrays as A
    gpu = bool(w.backend.gpu)
    launch, kb = w.spec.launch, w.kb
    pool = w.make_inputs(shape, seed, 1.0)
    set_bytes = sum(A.nbytes(leaf) for a in pool for leaf in A.leaves(a))
    # a GPU turns through a few sets, one where a set is large (the worker's rounds took the device's room)
    n = (1 if set_bytes >= LARGE_SET else max(1, min(int(batch), MAX_GPU_SETS))) if gpu else max(1, int(batch))
    sets = [w.make_inputs(shape, seed, 1.0) for _ in range(n)]  # the pool stays as drawn: the sets' source
    outputs = set(getattr(w, "outputs", []) or [])

    def refill(args: List[Any]) -> None:
        for j, a in enumerate(pool):
            args[j] = A.fill(args[j], a, (lambda d, _a: A.poison(d)) if j in outputs else A.copy_into)

    if gpu:
        import torch
        from .timers import CacheFlush, EventTimer
        flush = getattr(w, "flush_buffer", None) or CacheFlush(torch)
        w.flush_buffer = flush
        timer: Any = EventTimer(torch, launch, flush)
    else:
        from .timers import CpuTimer
        timer = CpuTimer(launch)  # keeps freed memory, as the worker's does
    samples: List[float] = []
    k = 0
    for warm in range(2):  # untimed samples first: the memory their results take is had before
        for args in sets:
            refill(args)
        timer.finish([timer.start("baseline", kb, [sets[warm % n]] if gpu else sets)])
    started = _perf_counter()
    while len(samples) < MIN_SAMPLES[gpu] or (len(samples) < MAX_SAMPLES
                                             and _perf_counter() - started < SAMPLE_S[gpu] * longer):
        if gpu:
            args = sets[k % n]
            refill(args)
            done = timer.finish([timer.start("baseline", kb, [args])])
        else:
            for args in sets:
                refill(args)
            done = timer.finish([timer.start("baseline", kb, sets)])
        samples += [d.ms for d in done if not d.set_aside]
        del done
        k += 1
        if k > 4 * MAX_SAMPLES:
            break
    return samples


def judged(worker_ms: float, clean: List[float], gpu: bool, shape: Any, timer: str) -> Dict[str, Any]:
    """One shape's figures: the baseline's fastest sample in the worker and in the clean process, their ratio,
    and the limit it is held to."""
    c = min(clean)
    return {"shape": shape, "worker_ms": round(worker_ms, 6), "clean_ms": round(c, 6),
            "ratio": round(worker_ms / c, 4) if c > 0 else 1.0, "limit": limit(gpu), "samples": len(clean),
            "timer": timer}


def not_measured(shape: Any, why: str) -> Dict[str, Any]:
    """A shape whose clean clock failed (the reference process could not make room for it, say): said, and no
    verdict taken from it."""
    return {"shape": shape, "not_measured": why[:300]}


def too_slow(row: Dict[str, Any]) -> bool:
    return "ratio" in row and row["ratio"] > row["limit"]


def verdict_reason(rows: List[Dict[str, Any]]) -> Optional[str]:
    """The reason an evaluation is incorrect (None: every shape's baseline ran as fast in the worker as in the
    clean process, within the limit)."""
    slow = [r for r in rows if too_slow(r)]
    if not slow:
        return None
    r = max(slow, key=lambda r: r["ratio"])
    twice = (f", after {', '.join(f'{x:.2f}x' for x in r['readings'])} in the readings before (clocked again, the "
             f"fastest samples of all)" if r.get("readings") else "")
    return (f"The baseline ran {r['ratio']:.2f}x slower in the candidate's process than in a clean process on "
            f"shape {r['shape']} ({r['worker_ms']:.4g} ms against {r['clean_ms']:.4g} ms a call{twice}; at most "
            f"{r['limit']:.2f}x is the two processes' noise): something the candidate did at import or in its "
            f"calls slowed the baseline, so the ratio is not one the user would measure. Leave the libraries and "
            f"their settings as they are and compute in the kernel instead.")
