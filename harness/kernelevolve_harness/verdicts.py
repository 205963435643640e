"""What ends an evaluation: the statuses a verdict can have, the exception that carries one, and how a shape is
named in a verdict's sentences. Shared by the judge and the modules it calls (robustness.py,
kernelbench_timing.py), which must not import the judge back."""
from __future__ import annotations

from typing import Any, Dict

# Every status a verdict can have (the TS side's VERDICT_STATUSES, src/contract/verdict.ts; test_robustness.py
# checks the two agree). narrow_inputs: right on the spec's inputs, wrong on wider ones (robustness.py).
STATUSES = ("ok", "static_rejected", "compile_error", "runtime_error", "incorrect", "narrow_inputs", "timeout")


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
