"""What ends an evaluation: the statuses a verdict can have, the verdict as the harness prints it, the exception
that carries one, and how a shape is named in a verdict's sentences. Shared by the judge and the modules it calls
(robustness.py, kernelbench_timing.py), which must not import the judge back, and by job_runner.py."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

# Every status a verdict can have (the TS side's VERDICT_STATUSES, src/contract/verdict.ts; test_verdict_contract.py
# checks the two agree). narrow_inputs: right on the spec's inputs, wrong on wider ones (robustness.py).
STATUSES = ("ok", "static_rejected", "compile_error", "runtime_error", "incorrect", "narrow_inputs", "timeout")


@dataclass
class VerdictRecord:
    """One evaluation's verdict as `evaluate --json` prints it: src/contract/verdict.ts's `Verdict`, field by field
    (tests/test_verdict_contract.py holds the two together). Every verdict the harness prints is built as one of
    these and printed through to_json(). None means absent; an empty dict or string is printed as it is.
    Fields are in the order they are printed."""

    status: str
    reason: str  # one human sentence
    speedup: Optional[float] = None  # geometric mean of the shapes' paired ratios (ok only)
    speedup_interval: Optional[List[float]] = None  # its 95% interval, [lo, hi]
    shapes: Optional[List[Dict[str, Any]]] = None  # per shape: shape, baseline_ms, candidate_ms, speedup, interval...
    compile: Optional[Dict[str, Any]] = None
    timing: Optional[Dict[str, Any]] = None  # how it was timed: method, estimator, lock, clean_baseline...
    kernelbench: Optional[Dict[str, Any]] = None  # KernelBench's own eager timing (kernelbench_timing.annotate)
    notes: Optional[List[str]] = None  # sentences that do not change the status
    profile: Optional[Dict[str, Any]] = None
    stages: Optional[Dict[str, float]] = None  # seconds per stage (where the evaluation's time went), total_s
    workers: Optional[Dict[str, str]] = None  # how each worker was started: shared, warm, cold (why)
    log: Optional[str] = None  # compiler / runtime text, truncated
    host: Optional[str] = None  # filled in by the host that ran the evaluation (src/remote/), never here
    wall_ms: Optional[float] = None  # likewise

    def __post_init__(self) -> None:
        assert self.status in STATUSES, self.status

    def to_json(self) -> Dict[str, Any]:
        """The verdict as printed: its fields in order, those that are None left out."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}


class Verdict(Exception):
    """Raised to end an evaluation with a verdict other than ok."""

    def __init__(self, status: str, reason: str, log: str = "") -> None:
        assert status in STATUSES, status
        super().__init__(reason)
        self.status, self.reason, self.log = status, reason, log


def shape_text(shape: Dict[str, Any]) -> str:
    """A shape as its verdict's sentences name it: {rows=4096, cols=1024}."""
    return "{" + ", ".join(f"{k}={v}" for k, v in shape.items()) + "}"


def alias_verdict(where: str, alias: str) -> Verdict:
    """An output in memory it may not share (_worker.Worker.alias)."""
    return Verdict("incorrect", f"On {where}, the candidate {alias}: every call must return plain arrays in memory "
                                f"of their own (declare an argument in INPLACE where the operation writes it, or in "
                                f"OUTPUTS where the caller passes the output buffer).")
