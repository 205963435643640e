"""The correctness rule, stated once (docs/harness.md, "The correctness rule"), and the one chunked scan that applies
it: the judge's on numpy arrays (compare.Expected) and the reference process's on torch tensors where a GPU's
outputs are (chunked_compare.py) feed the same tally, chunk by chunk, and this module decides and words the answer.

Floats: NaN/Inf where the reference is finite fail, NaN/Inf in the reference must be matched; then every element
(1 + rtol) * |c - r| <= atol + rtol * |r| AND the norm-relative error ||c - r|| / ||r|| <= rtol (||c - r|| when
||r|| is 0). The atol comes from the dtype (tolerances.DTYPE_TOLERANCE) or the spec's TOLERANCE, never from the
reference's magnitude: an absolute floor that grew with the outputs (it was rtol x RMS(reference)) let an exclusive
scan pass for cumsum on long rows. The factor (1 + rtol) makes what passes here also pass torch.allclose(r, c,
atol, rtol) in either argument order (KernelBench's rule, rtol x |c|): |c| >= |r| - |c - r|.
On the robustness pass's wide inputs (wide_inputs.py) the atol is at least rtol x the RMS of the reference's finite
elements (wide_floor), and elements where the reference is NaN or Inf are not compared.
Ints and bools: exact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

FLOAT_KINDS = "fc"


def element_bounds(rtol: float, atol: float) -> Tuple[float, float]:
    """The element rule (1 + rtol)|c - r| <= atol + rtol|r| as |c - r| <= atol' + rtol'|r|: (rtol', atol')."""
    return rtol / (1 + rtol), atol / (1 + rtol)


def wide_floor(rtol: float, atol: float, finite: int, squares: float) -> float:
    """The robustness pass's atol: at least rtol x the RMS of the reference's finite elements (`finite` of them,
    their squares summing to `squares`). Signed inputs create cancellation a legitimate reordering of sums cannot
    match to a fixed floor."""
    return max(atol, rtol * math.sqrt(squares) / math.sqrt(finite)) if finite else atol


def where(flat: int, shape: Sequence[int]) -> str:
    """The index of flat element `flat` of an array of this shape, as the messages write it: (i, j) or [i]."""
    index = np.unravel_index(flat, tuple(shape))
    return "(" + ", ".join(str(int(i)) for i in index) + ")" if len(index) != 1 else f"[{int(index[0])}]"


# --- the sentences (one per failure) ------------------------------------------------------------------------------
def dtype_differs(k: int, got: str, expected: str) -> str:
    return f"output {k} has dtype {got}, expected {expected}"


def shape_differs(k: int, got: Sequence[int], expected: Sequence[int]) -> str:
    return f"output {k} has shape {tuple(got)}, expected {tuple(expected)}"


def exact_differs(k: int, cand: Any, ref: Any, at: str, differ: int, size: int) -> str:
    """cand and ref as Python values: numpy 2 writes a scalar's repr as np.int32(-1)."""
    return f"output {k} is {cand!r} instead of {ref!r} at index {at} ({differ} of {size} elements differ)"


def nothing_to_check(k: int, wide: bool) -> Optional[str]:
    """A reference NaN or Inf everywhere: on wide inputs nothing is compared; otherwise the spec is to fix."""
    if wide:
        return None
    return (f"the reference for output {k} is NaN or Inf everywhere, so nothing can be checked; if the kernel reads "
            f"that argument, list it in INPLACE rather than OUTPUTS (OUTPUTS are poisoned before each call)")


@dataclass
class Tally:
    """What a scan found over the elements where the reference is finite (flat indices; -1: none)."""
    squares: float = 0.0  # sum of squared errors where the reference is finite
    squares_r: float = 0.0  # sum of the reference's squares there (where the scan measures it: chunked_compare)
    finite: int = 0  # the reference's finite elements (where the scan counts them: chunked_compare)
    out: int = 0  # elements out of tolerance (finite candidate, finite reference)
    worst: int = -1  # the element whose error is the largest part of its allowance
    worst_excess: float = -1.0
    worst_diff: float = 0.0
    max_diff: float = 0.0
    broken: int = 0  # NaN or Inf where the reference is finite
    first_broken: int = -1
    special: int = -1  # first element where the reference is NaN/Inf and the candidate is not the same
    failed: bool = False  # an element fails (a deciding scan stops here)

    def worse(self, index: int, excess: float, diff: float) -> None:
        """A chunk's worst element, kept where it is worse than the worst so far."""
        if excess > self.worst_excess:
            self.worst, self.worst_excess, self.worst_diff = index, excess, diff


Chunk = Callable[[Tally, int, bool], None]  # (tally, start, decide): adds one chunk's figures to the tally


def scan(size: int, step: int, chunk: Chunk, decide: bool) -> Tally:
    """The rule over `size` elements, `step` at a time: chunk(tally, start, decide) adds each chunk's figures.
    decide=True stops at the first chunk with a failing element (the norm is checked after); otherwise every chunk
    is tallied for the message."""
    t = Tally()
    for start in range(0, size, step):
        chunk(t, start, decide)
        if decide and t.failed:
            return t
    if t.special >= 0:
        t.failed = True
    return t


def norm_rel(t: Tally, norm_r: float) -> float:
    norm = math.sqrt(t.squares)
    return norm / norm_r if norm_r > 0 else norm


def passes(t: Tally, norm_r: float, rtol: float) -> bool:
    return not t.failed and norm_rel(t, norm_r) <= rtol


def problem(k: int, t: Tally, shape: Sequence[int], norm_r: float, rtol: float, atol: float,
            value_at: Callable[[int], Tuple[Any, Any]]) -> Optional[str]:
    """None when the tally passes; otherwise what is wrong, in words. value_at(flat): (candidate, reference) there."""
    if passes(t, norm_r, rtol):
        return None
    size = int(np.prod(tuple(shape))) if len(shape) else 1
    if t.broken:
        cv, rv = value_at(t.first_broken)
        return (f"output {k} has {cv} at index {where(t.first_broken, shape)} where the reference is {rv:.6g} "
                f"({t.broken} of {size} elements are NaN or Inf; an output element was not written, or overflowed)")
    if t.special >= 0:
        cv, rv = value_at(t.special)
        return f"output {k} is {cv} at index {where(t.special, shape)} where the reference is {rv}"
    worst = max(t.worst, 0)
    cv, rv = value_at(worst)
    return (f"output {k} is {cv:.6g} instead of {rv:.6g} at index {where(worst, shape)} (error {t.worst_diff:.3g} "
            f"there, max error {t.max_diff:.3g}, {t.out} of {size} elements out of tolerance, norm-relative error "
            f"{norm_rel(t, norm_r):.3g}; rtol={rtol:g}, atol={atol:.3g})")
