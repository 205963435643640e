"""The tolerance the judge applies to a float output: per dtype, or the spec's TOLERANCE (compare.py applies it;
describe-spec tells the engine, whose prompts quote it). No numpy here: describe-spec runs on the editor's machine,
which may have none."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

# (rtol, atol) per dtype when the spec gives none. float32 is KernelBench's (and torchbench's) pair.
DTYPE_TOLERANCE = {"float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2), "float32": (1e-4, 1e-4),
                   "float64": (1e-9, 1e-9), "complex64": (1e-4, 1e-4), "complex128": (1e-9, 1e-9)}
FALLBACK_TOLERANCE = (1e-4, 1e-4)
# KernelBench's get_tolerance_for_precision (src/kernelbench/eval.py at 423217d): torch.allclose with
# atol = rtol = 1e-4 for float32 and 1e-2 for float16 and bfloat16. A KernelBench problem's TOLERANCE by default.
KERNELBENCH_TOLERANCE: Dict[str, Any] = {"float32": {"rtol": 1e-4, "atol": 1e-4},
                                         "float16": {"rtol": 1e-2, "atol": 1e-2},
                                         "bfloat16": {"rtol": 1e-2, "atol": 1e-2}}


def tolerance(dtype: str, spec_tol: Dict[str, Any]) -> Tuple[float, float]:
    """(rtol, atol) for outputs of this dtype: the spec's entry for the dtype (TOLERANCE = {"float16": {...}}),
    else its plain rtol/atol, else the dtype's default; each of the two looked up on its own."""
    own = spec_tol.get(dtype)
    own = own if isinstance(own, dict) else {}
    rtol, atol = DTYPE_TOLERANCE.get(dtype, FALLBACK_TOLERANCE)
    return (float(own.get("rtol", spec_tol.get("rtol", rtol))), float(own.get("atol", spec_tol.get("atol", atol))))


def judged_tolerance(spec_tol: Optional[Dict[str, Any]]) -> Dict[str, Dict[str, float]]:
    """The (rtol, atol) this judge applies to each float dtype under a spec's TOLERANCE: what describe-spec tells
    the engine, so the LLM is told the judge's own rule, never a copy of it."""
    return {dtype: dict(zip(("rtol", "atol"), tolerance(dtype, spec_tol or {})))
            for dtype in ("float16", "bfloat16", "float32", "float64")}
