"""Output comparison, run by the judge on arrays received from the worker (the candidate never runs here): the rule
of float_rule.py, applied on the host by Expected, one chunk at a time (float_rule.scan). Deciding (stopping at the
first chunk that fails) and describing a failure (every chunk, for the message) run the same float operations per
element. Ints and bools: exact.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import float_rule as F
from .float_rule import FLOAT_KINDS, Tally, element_bounds
from .tolerances import DTYPE_TOLERANCE, FALLBACK_TOLERANCE, tolerance  # noqa: F401  (the rule's table)

CHUNK_BYTES = 1 << 18  # per temporary of a check: its passes run over data still in the core's cache


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equal (shape, dtype and every byte; NaN payloads and signed zeros included), compared as the
    widest words that divide the size: without copying either array (tobytes() copied both, ten times slower
    on a 32 MiB output)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    x, y = np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1)
    n = x.nbytes
    word = next(w for w in (np.uint64, np.uint32, np.uint16, np.uint8) if n % np.dtype(w).itemsize == 0)
    return bool(np.array_equal(x.view(np.uint8).view(word), y.view(np.uint8).view(word)))


class Expected:
    """A reference output with what every comparison against it needs, computed once: one reference is checked
    against many calls (the correctness calls, the timed calls), and on large outputs the judge's own arithmetic
    is what an evaluation waited for.

    wide=True: the robustness pass (wide_inputs.py), on inputs the judge made wider than the problem's: the atol is
    float_rule.wide_floor's, and where the reference itself is NaN or Inf (an input outside the op's domain, such as
    the log of a negative number) nothing is compared."""

    def __init__(self, ref: np.ndarray, ref_dtype: str, spec_tol: Dict[str, Any], wide: bool = False) -> None:
        self.ref, self.dtype, self.tol, self.wide = ref, ref_dtype, spec_tol, wide
        self.rtol, self.atol = tolerance(ref_dtype, spec_tol)
        self.float = ref.size > 0 and ref.dtype.kind in FLOAT_KINDS
        if not self.float:
            return
        if ref.dtype.kind == "c":
            self.work = np.dtype(np.complex128 if ref.dtype.itemsize > 8 else np.complex64)
            self.real = np.dtype(np.float64 if ref.dtype.itemsize > 8 else np.float32)
        else:  # float32 arithmetic suffices for checking float32/16 outputs (and halves the time on large arrays)
            self.work = self.real = np.dtype(np.float64 if ref.dtype.itemsize > 4 else np.float32)
        self.r = ref.reshape(-1)
        self.finite, squares, self.all_finite = self._finite_squares()
        self.norm_r = math.sqrt(squares)
        if wide:
            self.atol = F.wide_floor(self.rtol, self.atol, self.finite, squares)
        self.scaled_rtol, self.scaled_atol = element_bounds(self.rtol, self.atol)

    def _finite_squares(self) -> Tuple[int, float, bool]:
        """(finite elements, the sum of their squares, every element finite): one pass in chunks."""
        step = self._step()
        squares, count = 0.0, 0
        finite = np.empty(min(step, self.r.size), bool)
        for start in range(0, self.r.size, step):
            part = self.r[start:start + step]
            mask = np.isfinite(part, out=finite[:part.size])
            if bool(mask.all()):
                count += part.size
            else:
                part = part[mask]
                count += part.size
            part = part.astype(self.work, copy=False)
            if part.dtype.kind == "f":
                squares += float(np.einsum("i,i->", part, part, dtype=np.float64))
            else:
                squares += float(np.sum(np.square(np.abs(part)), dtype=np.float64))
        return count, squares, count == self.r.size

    def _step(self) -> int:
        return max(1, CHUNK_BYTES // self.work.itemsize)

    def check(self, k: int, cand: np.ndarray, cand_dtype: str) -> Optional[str]:
        """None when output k matches; otherwise what is wrong, in words."""
        if cand_dtype != self.dtype:
            return F.dtype_differs(k, cand_dtype, self.dtype)
        if cand.shape != self.ref.shape:
            return F.shape_differs(k, cand.shape, self.ref.shape)
        if self.ref.size == 0:
            return None
        if not self.float:
            return self._exact(k, cand)
        if not self.finite:
            return F.nothing_to_check(k, self.wide)
        c = cand.reshape(-1)
        if F.passes(self._scan(c, decide=True), self.norm_r, self.rtol):
            return None
        return F.problem(k, self._scan(c, decide=False), self.ref.shape, self.norm_r, self.rtol, self.atol,
                         lambda flat: (c[flat], self.r[flat]))

    def _exact(self, k: int, cand: np.ndarray) -> Optional[str]:
        bad = cand != self.ref
        if bad.any():
            flat = int(np.argmax(bad))
            idx = np.unravel_index(flat, self.ref.shape)
            return F.exact_differs(k, cand[idx].item(), self.ref[idx].item(), F.where(flat, self.ref.shape),
                                   int(bad.sum()), self.ref.size)
        return None

    def _scan(self, c: np.ndarray, decide: bool) -> Tally:
        """float_rule.scan over the flat candidate c, with nothing of the output's size allocated."""
        step = self._step()
        n = self.r.size
        diff = np.empty(min(step, n), self.real)
        allowed = np.empty_like(diff)
        ok = np.empty(diff.size, bool)
        convert = self.work != self.r.dtype  # float16 (and bfloat16 sent as float32 is not): checked in float32

        def chunk(t: Tally, start: int, decide: bool) -> None:
            """One chunk: a NaN or Inf in the candidate fails `diff <= allowed` (NaN compares false, Inf exceeds
            any bound)."""
            r, cc = self.r[start:start + step], c[start:start + step]
            index = None  # the chunk's positions of the compared elements (None: all of them)
            if not self.all_finite:
                mask = np.isfinite(r)
                if not bool(mask.all()):
                    if not self.wide:
                        self._special(t, r, cc, mask, start)
                    index = np.flatnonzero(mask)
                    r, cc = r[index], cc[index]
            m = r.size
            d, a = diff[:m], allowed[:m]
            if convert:
                r, cc = r.astype(self.work), cc.astype(self.work)
            if self.work.kind == "c":
                np.abs(cc - r, out=d)
            else:
                np.subtract(cc, r, out=d)
                np.abs(d, out=d)
            np.abs(r, out=a)
            a *= self.scaled_rtol
            a += self.scaled_atol
            if bool(np.less_equal(d, a, out=ok[:m]).all()):
                t.squares += float(np.einsum("i,i->", d, d, dtype=np.float64))  # one pass, no temporaries
                if not decide and m:
                    self._worst(t, d, a, start, index)
                return
            t.failed = True
            if not decide:
                self._tally(t, d, a, start, index)

        return F.scan(n, step, chunk, decide)

    @staticmethod
    def _special(t: Tally, r: np.ndarray, cc: np.ndarray, finite: np.ndarray, start: int) -> None:
        """Where the reference is NaN or Inf the candidate must be the same (NaN for NaN, the same infinity)."""
        if t.special >= 0:
            return
        same = (np.isnan(r) & np.isnan(cc)) | (r == cc)
        bad = ~finite & ~same
        if bool(bad.any()):
            t.special = start + int(np.argmax(bad))
            t.failed = True

    def _tally(self, t: Tally, d: np.ndarray, a: np.ndarray, start: int, index: Optional[np.ndarray]) -> None:
        finite = np.isfinite(d)
        if not bool(finite.all()):
            t.broken += int((~finite).sum())
            if t.first_broken < 0:
                j = int(np.argmax(~finite))
                t.first_broken = start + (int(index[j]) if index is not None else j)
            keep = np.flatnonzero(finite)
            d, a = d[keep], a[keep]
            index = keep if index is None else index[keep]
        if not d.size:
            return
        t.squares += float(np.einsum("i,i->", d, d, dtype=np.float64))
        t.out += int((d > a).sum())
        self._worst(t, d, a, start, index)

    @staticmethod
    def _worst(t: Tally, d: np.ndarray, a: np.ndarray, start: int, index: Optional[np.ndarray]) -> None:
        with np.errstate(divide="ignore", invalid="ignore"):
            excess = d / a  # a zero allowance (TOLERANCE atol 0): inf where d > 0, NaN where d == 0
        excess[np.isnan(excess)] = 0.0
        j = int(np.argmax(excess))
        t.worse(start + (int(index[j]) if index is not None else j), float(excess[j]), float(d[j]))
        t.max_diff = max(t.max_diff, float(d.max()))
