"""One output against its reference, a chunk at a time, where both arrays live: torch tensors on their device
(a GPU's output is never copied to the host whole) or numpy arrays. The rule is compare.py's for floats, with the
tolerance given as (rtol, atol), so it follows whatever rule the judge settles on:

- an element that is NaN or Inf where the reference is finite fails;
- where the reference is NaN or Inf, the output must be the same (NaN for NaN);
- over the finite elements, element-wise (1 + rtol) * |c - r| <= atol + rtol * |r| (compare.element_bounds), and
  the norm-relative error
  ||c - r|| / ||r|| <= rtol (||c - r|| when ||r|| is 0), as an extra condition.

Ints and bools: equal. Only a few numbers cross to the host per chunk (counts, sums, the worst element), so a
6.4 GB output is checked with temporaries of one chunk (CHUNK_ELEMENTS, 64 MiB of float32 at most in flight).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from .compare import element_bounds

CHUNK_ELEMENTS = 1 << 24


def _is_torch(x: Any) -> bool:
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


class _Ops:
    """The handful of array operations the check needs, for numpy or torch."""

    def __init__(self, x: Any) -> None:
        self.torch = sys.modules["torch"] if _is_torch(x) else None

    def flat(self, x: Any) -> Any:
        return x.reshape(-1) if self.torch is not None else np.ascontiguousarray(x).reshape(-1)

    def is_float(self, x: Any) -> bool:
        if self.torch is not None:
            return bool(x.dtype.is_floating_point or x.dtype.is_complex)
        return x.dtype.kind in "fc"

    def is_complex(self, x: Any) -> bool:
        return bool(x.dtype.is_complex) if self.torch is not None else x.dtype.kind == "c"

    def widen(self, x: Any) -> Any:
        """float32 arithmetic for float32/16 (as compare.py), float64 for float64; complex kept complex."""
        t = self.torch
        if t is not None:
            if x.dtype.is_complex:
                return x.to(t.complex128 if x.dtype == t.complex128 else t.complex64)
            return x.to(t.float64 if x.dtype == t.float64 else t.float32)
        if x.dtype.kind == "c":
            return x.astype(np.complex128 if x.dtype.itemsize > 8 else np.complex64, copy=False)
        return x.astype(np.float64 if x.dtype.itemsize > 4 else np.float32, copy=False)

    def isfinite(self, x: Any) -> Any:
        return self.torch.isfinite(x) if self.torch is not None else np.isfinite(x)

    def isnan(self, x: Any) -> Any:
        return self.torch.isnan(x) if self.torch is not None else np.isnan(x)

    def abs(self, x: Any) -> Any:
        return self.torch.abs(x) if self.torch is not None else np.abs(x)

    def excess(self, diff: Any, allowed: Any) -> Any:
        """Each element's error over its allowance. Where both are 0 (a spec's atol 0, a reference of 0 matched
        exactly) that is 0/0: a match, as compare.py counts it; left NaN, argmax found it first and the chunk's
        worst element went unseen (an output 2.5 allowances off passed). A zero allowance with an error: inf."""
        if self.torch is not None:
            e = diff / allowed
            return self.torch.where(self.torch.isnan(e), self.torch.zeros_like(e), e)
        with np.errstate(invalid="ignore", divide="ignore"):
            e = diff / allowed
        return np.where(np.isnan(e), e.dtype.type(0), e)

    def count(self, mask: Any) -> int:
        return int(mask.sum().item()) if self.torch is not None else int(np.count_nonzero(mask))

    def first(self, mask: Any) -> int:
        """The index of the first True (the mask has one)."""
        if self.torch is not None:
            return int(self.torch.argmax(mask.to(self.torch.uint8)).item())
        return int(np.argmax(mask))

    def sum_squares(self, x: Any) -> float:
        if self.torch is not None:
            x = x.to(self.torch.float64)
            return float((x * x).sum().item())
        return float(np.sum(np.square(x, dtype=np.float64)))

    def argmax(self, x: Any) -> Tuple[int, float]:
        if self.torch is not None:
            i = int(self.torch.argmax(x).item())
            return i, float(x[i].item())
        i = int(np.argmax(x))
        return i, float(x[i])

    def value(self, x: Any, i: int) -> Any:
        return x[i].item()  # a Python value (numpy 2 writes a scalar's repr as np.int32(-1))


@dataclass
class _Chunk:
    broken: int
    mismatched: int
    finite: int
    squares_d: float
    squares_r: float
    bad: int
    worst: int
    worst_excess: float
    worst_diff: float
    max_diff: float


def _device_chunk(t: Any, c: Any, r: Any, scaled_rtol: float, scaled_atol: float, wide: bool) -> _Chunk:
    """One chunk's figures, as check's loop computes them for numpy, with one transfer from the device instead of
    one per figure: each transfer waits for the device, which the other evaluations' processes keep busy. The
    index of the first broken or mismatched element is found after, and only where there is one."""
    r_fin = t.isfinite(r)
    broken = r_fin & ~t.isfinite(c)
    if wide:
        mismatched = broken.new_zeros(())
    else:
        mismatched = (~r_fin & ~((t.isnan(r) & t.isnan(c)) | (r == c))).sum()
    zero = r.new_zeros(())
    c = t.where(r_fin, c, zero)  # compare only where the reference is finite
    r = t.where(r_fin, r, zero)
    diff = t.abs(c - r)
    wide_diff = diff.to(t.float64)
    wide_ref = t.abs(r).to(t.float64)
    excess = diff / (t.abs(r) * scaled_rtol + scaled_atol)
    excess = t.where(t.isnan(excess), t.zeros_like(excess), excess)  # 0/0 (atol 0): a match, as in compare.py
    i = t.argmax(excess)
    figures = t.stack([broken.sum().to(t.float64), mismatched.to(t.float64), r_fin.sum().to(t.float64),
                       (wide_diff * wide_diff).sum(), (wide_ref * wide_ref).sum(),
                       (excess > 1.0).sum().to(t.float64), i.to(t.float64), excess[i].to(t.float64),
                       diff[i].to(t.float64), diff[t.argmax(diff)].to(t.float64)]).tolist()
    b, m, fin, sd, sr, bad, worst, e, d, dmax = figures
    return _Chunk(int(b), int(m), int(fin), sd, sr, int(bad), int(worst), e, d, dmax)


@dataclass
class Found:
    """What a check found: `problem` is None when the output matches, else the sentence compare.py would say."""
    problem: Optional[str]
    norm_rel: float = 0.0
    max_excess: float = 0.0


def _where(index: Tuple[int, ...]) -> str:
    return "(" + ", ".join(str(int(i)) for i in index) + ")" if len(index) != 1 else f"[{int(index[0])}]"


def check(k: int, cand: Any, ref: Any, rtol: float, atol: float, chunk: int = CHUNK_ELEMENTS,
          wide: bool = False) -> Found:
    """Output k (`cand`) against `ref` (same shape and dtype: the caller checks those first), chunk by chunk.
    wide=True: the robustness pass's inputs (compare.Expected with wide=True): where the reference is NaN or Inf
    nothing is compared (the caller raises atol to rtol x the reference's RMS)."""
    ops = _Ops(ref)
    shape = tuple(ref.shape)
    n = int(np.prod(shape)) if shape else 1
    if n == 0:
        return Found(None)
    c_all, r_all = ops.flat(cand), ops.flat(ref)

    def index(flat: int) -> str:
        return _where(tuple(int(i) for i in np.unravel_index(flat, shape)))

    if not ops.is_float(ref):
        bad_count, first_bad = 0, -1
        for s in range(0, n, chunk):
            bad = c_all[s:s + chunk] != r_all[s:s + chunk]
            m = ops.count(bad)
            if m and first_bad < 0:
                first_bad = s + ops.first(bad)
            bad_count += m
        if bad_count:
            return Found(f"output {k} is {ops.value(c_all, first_bad)!r} instead of {ops.value(r_all, first_bad)!r} "
                         f"at index {index(first_bad)} ({bad_count} of {n} elements differ)")
        return Found(None)

    scaled_rtol, scaled_atol = element_bounds(rtol, atol)
    broken_count, first_broken = 0, -1
    special_mismatch = -1
    finite_count = 0
    squares_r = squares_d = 0.0
    worst, worst_excess, worst_diff, max_diff, n_bad = -1, -1.0, 0.0, 0.0, 0
    for s in range(0, n, chunk):
        c = ops.widen(c_all[s:s + chunk])
        r = ops.widen(r_all[s:s + chunk])
        if ops.torch is not None:  # the same figures, in one transfer from the device (_device_chunk)
            got = _device_chunk(ops.torch, c, r, scaled_rtol, scaled_atol, wide)
            if got.broken:
                if first_broken < 0:
                    first_broken = s + ops.first(ops.isfinite(r) & ~ops.isfinite(c))
                broken_count += got.broken
                continue
            if got.mismatched and special_mismatch < 0:
                special_mismatch = s + ops.first(~ops.isfinite(r) & ~((ops.isnan(r) & ops.isnan(c)) | (r == c)))
            finite_count += got.finite
            if got.finite == 0:
                continue
            squares_d += got.squares_d
            squares_r += got.squares_r
            n_bad += got.bad
            max_diff = max(max_diff, got.max_diff)
            if got.worst_excess > worst_excess:
                worst, worst_excess, worst_diff = s + got.worst, got.worst_excess, got.worst_diff
            continue
        r_fin = ops.isfinite(r)
        c_fin = ops.isfinite(c)
        broken = r_fin & ~c_fin
        m = ops.count(broken)
        if m:
            if first_broken < 0:
                first_broken = s + ops.first(broken)
            broken_count += m
            continue
        special = ~r_fin
        if not wide and special_mismatch < 0 and ops.count(special):
            mismatch = special & ~((ops.isnan(r) & ops.isnan(c)) | (r == c))
            if ops.count(mismatch):
                special_mismatch = s + ops.first(mismatch)
        fin = ops.count(r_fin)
        finite_count += fin
        if fin == 0:
            continue
        if fin < r.shape[0]:  # compare only where the reference is finite
            zero = r.new_zeros(()) if ops.torch is not None else r.dtype.type(0)
            c = ops.torch.where(r_fin, c, zero) if ops.torch is not None else np.where(r_fin, c, zero)
            r = ops.torch.where(r_fin, r, zero) if ops.torch is not None else np.where(r_fin, r, zero)
        diff = ops.abs(c - r)
        squares_d += ops.sum_squares(diff)
        squares_r += ops.sum_squares(ops.abs(r))
        allowed = ops.abs(r) * scaled_rtol + scaled_atol
        excess = ops.excess(diff, allowed)
        n_bad += ops.count(excess > 1.0)
        i, e = ops.argmax(excess)
        d_max = ops.argmax(diff)[1]
        max_diff = max(max_diff, d_max)
        if e > worst_excess:
            worst, worst_excess, worst_diff = s + i, e, float(ops.value(diff, i))
    if broken_count:
        return Found(f"output {k} has {ops.value(c_all, first_broken)} at index {index(first_broken)} where the "
                     f"reference is {ops.value(r_all, first_broken):.6g} ({broken_count} of {n} elements are "
                     f"NaN or Inf; an output element was not written, or overflowed)")
    if special_mismatch >= 0:
        return Found(f"output {k} is {ops.value(c_all, special_mismatch)} at index {index(special_mismatch)} where "
                     f"the reference is {ops.value(r_all, special_mismatch)}")
    if finite_count == 0:
        if wide:
            return Found(None)  # the reference is NaN/Inf everywhere on these inputs: nothing to check
        return Found(f"the reference for output {k} is NaN or Inf everywhere, so nothing can be checked; if the "
                     f"kernel reads that argument, list it in INPLACE rather than OUTPUTS (OUTPUTS are poisoned before "
                     f"each call)")
    norm_r, norm_d = math.sqrt(squares_r), math.sqrt(squares_d)
    norm_rel = norm_d / norm_r if norm_r > 0 else norm_d
    if norm_rel > rtol or worst_excess > 1.0:
        return Found(f"output {k} is {ops.value(c_all, worst):.6g} instead of "
                     f"{ops.value(r_all, worst):.6g} at index {index(worst)} (error {worst_diff:.3g} there, "
                     f"max error {max_diff:.3g}, {n_bad} of {n} elements out of tolerance, norm-relative error "
                     f"{norm_rel:.3g}; rtol={rtol:g}, atol={atol:.3g})", norm_rel, worst_excess)
    return Found(None, norm_rel, worst_excess)
