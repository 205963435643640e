"""KernelBench's own timing of a problem's two models, reported beside the harness's ratio (docs/kernelbench.md).

KernelBench (src/kernelbench/timing.py `time_execution_with_cuda_event`, with the trial count of
scripts/eval_from_generations.py) times ModelNew and then Model eagerly on one set of inputs: 3 warm-up calls,
then num_trials + 1 calls (the first discarded), each after an L2 flush (a 256 MiB int64 fill) and between CUDA
events on the current stream, synchronized after each; its speedup is the ratio of the two means. The candidate
worker does the same here (a CPU problem: wall clock around each call, no flush; KernelBench runs none), and the
judge puts that ratio beside its own and says where the two disagree beyond the harness's interval: typically a
call whose time is mostly its host side (Python, launches), which eager events include and CUDA graphs leave out.

Reported, never judged: the fitness stays the harness's paired ratio, and these calls' outputs are not checked.
"""
from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Dict, List

from .verdicts import VerdictRecord, shape_text as _shape_text

WARMUP = 3
TRIALS = 100  # num_perf_trials of KernelBench's eval_from_generations.py
DISCARD_FIRST = 1
MIN_TRIALS = 10  # KernelBench's library default; the least taken when calls are long
BUDGET_S = 2.0  # per kernel and shape: past it, no more trials than MIN_TRIALS
FLUSH_INT64 = 32 * 1024 * 1024  # KernelBench's clear_l2_cache: torch.empty((32, 1024, 1024), int64).fill_(42)
# KernelBench's mean of eager calls has its own noise: a ratio within this much of the harness's interval agrees
AGREES_WITHIN = 0.03
# an eager call this much slower than the harness's timing of it: its host side dominates
HOST_SIDE = 1.5

_perf_counter = time.perf_counter


def request(backend_name: str) -> Dict[str, Any]:
    """What the judge asks of the worker after timing (an empty dict: nothing; only KernelBench problems)."""
    if not backend_name.startswith("model-") or os.environ.get("KERNELEVOLVE_KERNELBENCH_TIMING", "1") == "0":
        return {}
    try:
        trials = max(1, int(os.environ.get("KERNELEVOLVE_KERNELBENCH_TRIALS", TRIALS)))
    except ValueError:
        trials = TRIALS
    return {"kernelbench": {"trials": trials, "budget_s": BUDGET_S}}


# --- worker side ---------------------------------------------------------------------------------------------
def time_calls(call: Callable[[], Any], gpu: bool, trials: int, budget_s: float) -> List[float]:
    """Milliseconds of each kept trial, as KernelBench's cuda_event timer takes them (wall clock on a CPU)."""
    torch: Any = None
    flush: Any = None
    if gpu:
        import torch
        flush = torch.empty(FLUSH_INT64, dtype=torch.int64, device="cuda")
    for _ in range(WARMUP):
        call()
        if gpu:
            torch.cuda.synchronize()
    if gpu:
        torch.cuda.empty_cache()
    times: List[float] = []
    t_start = _perf_counter()
    for trial in range(trials + DISCARD_FIRST):
        if gpu:
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            flush.fill_(42)
            start.record()
            call()
            end.record()
            torch.cuda.synchronize()
            ms = float(start.elapsed_time(end))
        else:
            t0 = _perf_counter()
            call()
            ms = (_perf_counter() - t0) * 1000.0
        if trial >= DISCARD_FIRST:
            times.append(ms)
        if len(times) >= MIN_TRIALS and _perf_counter() - t_start > budget_s:
            break
    return times


def measure(worker: Any, asked: Dict[str, Any]) -> Dict[str, Any]:
    """Each shape's KernelBench timing in the candidate worker (`worker`: the CandidateWorker, its kernels
    loaded), for the final message: {"kernelbench": [{"candidate_ms", "baseline_ms", "trials"} or {"error"}]}."""
    rows: List[Dict[str, Any]] = []
    launch = worker.spec.launch
    for i in range(len(worker.shapes)):
        try:
            args = worker.make_inputs(i, int(asked.get("seed", 42)), 1.0)
            cand = time_calls(lambda: launch(worker.kc, *args), worker.backend.gpu, asked["trials"], asked["budget_s"])
            base = time_calls(lambda: launch(worker.kb, *args), worker.backend.gpu, asked["trials"], asked["budget_s"])
            rows.append({"candidate_ms": sum(cand) / len(cand), "baseline_ms": sum(base) / len(base),
                         "trials": min(len(cand), len(base))})
        except Exception as e:  # reported beside the verdict, never instead of it
            rows.append({"error": f"{type(e).__name__}: {e}"[:300]})
        finally:
            args = None
    return {"kernelbench": rows}


# --- judge side ----------------------------------------------------------------------------------------------
def _geomean(xs: List[float]) -> float:
    return math.exp(sum(math.log(max(x, 1e-300)) for x in xs) / len(xs))


def annotate(verdict: VerdictRecord, measured: Any, gpu: bool) -> None:
    """Adds KernelBench's ratio beside the harness's: `kernelbench` on the verdict (overall: geometric means over
    shapes) and on each shape, and a note (and a clause of the reason) where the two disagree."""
    rows = verdict.shapes or []
    if not isinstance(measured, list) or len(measured) != len(rows):
        return
    errors = [m["error"] for m in measured if isinstance(m, dict) and "error" in m]
    if errors:
        verdict.notes = (verdict.notes or []) + [f"KernelBench's timing could not be taken: {errors[0]}"]
        return
    notes: List[str] = []
    for row, m in zip(rows, measured):
        b, c = float(m["baseline_ms"]), float(m["candidate_ms"])
        kb = b / c if c > 0 else float("inf")
        row["kernelbench"] = {"speedup": kb, "baseline_ms": b, "candidate_ms": c, "trials": int(m["trials"])}
        lo, hi = (row.get("interval") or [row["speedup"], row["speedup"]])[:2]
        if lo * (1 - AGREES_WITHIN) <= kb <= hi * (1 + AGREES_WITHIN):
            continue
        ours = f"{row['speedup']:.2f}x ({lo:.2f}-{hi:.2f})"
        if c > HOST_SIDE * row["candidate_ms"] or b > HOST_SIDE * row["baseline_ms"]:
            why = (f"its eager calls take {c:.4g} ms (candidate) and {b:.4g} ms (baseline) where this harness measures "
                   f"{row['candidate_ms']:.4g} ms and {row['baseline_ms']:.4g} ms: the host side of a call (Python, "
                   f"launches) dominates it eagerly" + (", and CUDA graphs leave it out here" if gpu else ""))
        else:
            why = ("KernelBench takes the mean of eager calls on one set of inputs; this harness the "
                   "median of interleaved rounds over several")
        notes.append(f"On shape {_shape_text(row['shape'])} KernelBench's eager timing reads {kb:.2f}x where this "
                     f"harness reads {ours}: {why}.")
    speedup = _geomean([r["kernelbench"]["speedup"] for r in rows])
    verdict.kernelbench = {
        "speedup": speedup,
        "baseline_ms": _geomean([r["kernelbench"]["baseline_ms"] for r in rows]),
        "candidate_ms": _geomean([r["kernelbench"]["candidate_ms"] for r in rows]),
        "method": "cuda_event" if gpu else "host_time",
        "trials": min(r["kernelbench"]["trials"] for r in rows), "warmup": WARMUP,
        "l2_flush": "256 MiB write before each call" if gpu else "none (a CPU problem)",
    }
    if notes:
        verdict.notes = (verdict.notes or []) + notes
        verdict.reason = (f"{verdict.reason} KernelBench's eager timing reads {speedup:.2f}x, apart from this "
                          f"harness's on {len(notes)} of {len(rows)} shape(s) (see notes).")
