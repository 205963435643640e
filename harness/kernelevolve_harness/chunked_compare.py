"""One output against its reference where both live: torch tensors on their device (a GPU's output is never copied
to the host whole), a chunk at a time. The rule, the scan and the words are float_rule.py's (the judge's on the
host, compare.Expected, feeds the same tally); here each chunk's figures are computed on the device and cross to
the host in one transfer (counts, sums, the worst element), so a 6.4 GB output is checked with temporaries of one
chunk (CHUNK_ELEMENTS, 64 MiB of float32 at most in flight). Ints and bools: equal.
"""
from __future__ import annotations

import math
import sys
from typing import Any, Optional

from . import float_rule as F
from .float_rule import Tally, element_bounds

CHUNK_ELEMENTS = 1 << 24


def _widen(t: Any, x: Any) -> Any:
    """float32 arithmetic for float32/16 (as compare.Expected), float64 for float64; complex kept complex."""
    if x.dtype.is_complex:
        return x.to(t.complex128 if x.dtype == t.complex128 else t.complex64)
    return x.to(t.float64 if x.dtype == t.float64 else t.float32)


def _first(t: Any, mask: Any) -> int:
    """The index of the first True (the mask has one)."""
    return int(t.argmax(mask.to(t.uint8)).item())


def _mismatched(t: Any, c: Any, r: Any) -> Any:
    """Where the reference is NaN or Inf and the candidate is not the same (NaN for NaN, the same infinity)."""
    return ~t.isfinite(r) & ~((t.isnan(r) & t.isnan(c)) | (r == c))


def _add_chunk(t: Any, tally: Tally, start: int, c: Any, r: Any, scaled_rtol: float, scaled_atol: float,
               wide: bool) -> None:
    """One chunk's figures added to the tally, with one transfer from the device instead of one per figure: each
    transfer waits for the device, which the other evaluations' processes keep busy. The index of the first
    broken or mismatched element is found after, and only where there is one."""
    r_fin = t.isfinite(r)
    broken = r_fin & ~t.isfinite(c)
    mismatched = broken.new_zeros(()) if wide else _mismatched(t, c, r).sum()
    zero = r.new_zeros(())
    cf = t.where(r_fin, c, zero)  # compare only where the reference is finite
    rf = t.where(r_fin, r, zero)
    diff = t.abs(cf - rf)
    wide_diff = diff.to(t.float64)
    wide_ref = t.abs(rf).to(t.float64)
    excess = diff / (t.abs(rf) * scaled_rtol + scaled_atol)
    excess = t.where(t.isnan(excess), t.zeros_like(excess), excess)  # 0/0 (atol 0): a match, as in compare.py
    i = t.argmax(excess)
    figures = t.stack([broken.sum().to(t.float64), mismatched.to(t.float64), r_fin.sum().to(t.float64),
                       (wide_diff * wide_diff).sum(), (wide_ref * wide_ref).sum(),
                       (excess > 1.0).sum().to(t.float64), i.to(t.float64), excess[i].to(t.float64),
                       diff[i].to(t.float64), diff[t.argmax(diff)].to(t.float64)]).tolist()
    n_broken, n_mismatched, finite, squares, squares_r, bad, worst, worst_excess, worst_diff, max_diff = figures
    if n_broken:
        if tally.first_broken < 0:
            tally.first_broken = start + _first(t, broken)
        tally.broken += int(n_broken)
        tally.failed = True
        return
    if n_mismatched and tally.special < 0:
        tally.special = start + _first(t, _mismatched(t, c, r))
        tally.failed = True
    tally.finite += int(finite)
    if not finite:
        return
    tally.squares += squares
    tally.squares_r += squares_r
    tally.out += int(bad)
    tally.max_diff = max(tally.max_diff, max_diff)
    tally.worse(start + int(worst), worst_excess, worst_diff)
    if bad:
        tally.failed = True


def check(k: int, cand: Any, ref: Any, rtol: float, atol: float, chunk: int = CHUNK_ELEMENTS,
          wide: bool = False) -> Optional[str]:
    """None when output k (`cand`) matches `ref` (same shape and dtype: the caller checks those first), else what
    is wrong, in float_rule's words. wide=True: the robustness pass's inputs (the caller's atol is wide_atol's):
    where the reference is NaN or Inf nothing is compared."""
    t = sys.modules["torch"]
    shape = tuple(ref.shape)
    n = ref.numel()
    if n == 0:
        return None
    c_all, r_all = cand.reshape(-1), ref.reshape(-1)
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        differ, first = 0, -1
        for s in range(0, n, chunk):
            bad = c_all[s:s + chunk] != r_all[s:s + chunk]
            m = int(bad.sum().item())
            if m and first < 0:
                first = s + _first(t, bad)
            differ += m
        if differ:
            return F.exact_differs(k, c_all[first].item(), r_all[first].item(), F.where(first, shape), differ, n)
        return None
    scaled_rtol, scaled_atol = element_bounds(rtol, atol)

    def add(tally: Tally, start: int, decide: bool) -> None:
        c = _widen(t, c_all[start:start + chunk])
        r = _widen(t, r_all[start:start + chunk])
        _add_chunk(t, tally, start, c, r, scaled_rtol, scaled_atol, wide)

    tally = F.scan(n, chunk, add, decide=False)
    if not tally.finite and not tally.broken:
        return F.nothing_to_check(k, wide)
    return F.problem(k, tally, shape, math.sqrt(tally.squares_r), rtol, atol,
                     lambda flat: (c_all[flat].item(), r_all[flat].item()))


def wide_atol(ref: Any, rtol: float, atol: float) -> float:
    """The robustness pass's atol for this reference (float_rule.wide_floor), its figures summed on the device."""
    t = sys.modules["torch"]
    flat = ref.reshape(-1)
    squares, count = 0.0, 0
    for s in range(0, flat.numel(), CHUNK_ELEMENTS):
        part = flat[s:s + CHUNK_ELEMENTS]
        part = part.to(t.float64) if part.is_floating_point() else part.abs().to(t.float64)
        fin = t.isfinite(part)
        n, sq = t.stack([fin.sum().to(t.float64),  # in one transfer from the device
                         t.where(fin, part, t.zeros((), dtype=part.dtype, device=part.device)).square().sum()]).tolist()
        count += int(n)
        squares += float(sq)
    return F.wide_floor(rtol, atol, count, squares)
