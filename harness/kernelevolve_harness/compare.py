"""Output comparison, run by the judge on arrays received from the worker (the candidate never runs here).

Floats (docs/harness.md, "The correctness rule"): NaN/Inf where the reference is finite fail, NaN/Inf in the
reference must be matched; then every element (1 + rtol) * |c - r| <= atol + rtol * |r| AND the norm-relative
error ||c - r|| / ||r|| <= rtol. The atol comes from the dtype (DTYPE_TOLERANCE) or the spec's TOLERANCE, never
from the reference's magnitude: an absolute floor that grew with the outputs (it was rtol x RMS(reference)) let an
exclusive scan pass for cumsum on long rows. The factor (1 + rtol) makes what passes here also pass
torch.allclose(r, c, atol, rtol) in either argument order (KernelBench's rule, rtol x |c|): |c| >= |r| - |c - r|.
Ints and bools: exact.

One routine (`_scan`) computes every float check, a chunk at a time: deciding (stopping at the first chunk that
fails) and describing a failure (every chunk, for the message) run the same float operations per element.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .tolerances import DTYPE_TOLERANCE, FALLBACK_TOLERANCE, tolerance  # noqa: F401  (the rule's table)

FLOAT_KINDS = "fc"
CHUNK_BYTES = 1 << 18  # per temporary of a check: its passes run over data still in the core's cache


def element_bounds(rtol: float, atol: float) -> Tuple[float, float]:
    """The element rule (1 + rtol)|c - r| <= atol + rtol|r| as |c - r| <= atol' + rtol'|r|: (rtol', atol'), for
    every routine that applies it (Expected here, chunked_compare on a device)."""
    return rtol / (1 + rtol), atol / (1 + rtol)


def _norm(x: np.ndarray) -> float:
    """2-norm without BLAS (a BLAS thread pool on a busy machine costs more than the sum), in float64. Real
    arrays: one pass with no temporaries (einsum), half the time of squaring a copy on 32 MiB."""
    if x.dtype.kind == "f":
        flat = x.reshape(-1)
        return float(np.sqrt(np.einsum("i,i->", flat, flat, dtype=np.float64)))
    a = np.abs(x)
    return float(np.sqrt(np.sum(np.square(a), dtype=np.float64)))


def _where(index: Tuple[int, ...]) -> str:
    return "(" + ", ".join(str(int(i)) for i in index) + ")" if len(index) != 1 else f"[{int(index[0])}]"


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


@dataclass
class Tally:
    """What one scan found (flat indices; -1: none)."""
    squares: float = 0.0  # sum of squared errors where the reference is finite
    out: int = 0  # elements out of tolerance (finite candidate, finite reference)
    worst: int = -1  # the element whose error is the largest part of its allowance
    worst_excess: float = -1.0
    worst_diff: float = 0.0
    max_diff: float = 0.0
    broken: int = 0  # NaN or Inf where the reference is finite
    first_broken: int = -1
    special: int = -1  # first element where the reference is NaN/Inf and the candidate is not the same
    failed: bool = False  # (a deciding scan stops here)


class Expected:
    """A reference output with what every comparison against it needs, computed once: one reference is checked
    against many calls (the correctness calls, the timed calls), and on large outputs the judge's own arithmetic
    is what an evaluation waited for.

    wide=True: the robustness pass (wide_inputs.py), on inputs the judge made wider than the problem's. Signed
    inputs create cancellation a legitimate reordering of sums cannot match to a fixed floor, so there the atol is
    at least rtol x the RMS of the reference; and where the reference itself is NaN or Inf (an input outside the
    op's domain, such as the log of a negative number) nothing is compared."""

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
        self.finite, self.norm_r, self.all_finite = self._finite_norm()
        if wide and self.finite:
            self.atol = max(self.atol, self.rtol * self.norm_r / math.sqrt(self.finite))
        # the element rule (1 + rtol)|c - r| <= atol + rtol|r|, as |c - r| <= atol' + rtol'|r|
        self.scaled_rtol, self.scaled_atol = element_bounds(self.rtol, self.atol)

    def _finite_norm(self) -> Tuple[int, float, bool]:
        """(finite elements, their 2-norm, every element finite): one pass in chunks."""
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
        return count, math.sqrt(squares), count == self.r.size

    def _step(self) -> int:
        return max(1, CHUNK_BYTES // self.work.itemsize)

    def check(self, k: int, cand: np.ndarray, cand_dtype: str) -> Optional[str]:
        """None when output k matches; otherwise what is wrong, in words."""
        if cand_dtype != self.dtype:
            return f"output {k} has dtype {cand_dtype}, expected {self.dtype}"
        if cand.shape != self.ref.shape:
            return f"output {k} has shape {tuple(cand.shape)}, expected {tuple(self.ref.shape)}"
        if self.ref.size == 0:
            return None
        if not self.float:
            return self._exact(k, cand)
        if not self.finite:
            if self.wide:
                return None  # the reference is NaN/Inf everywhere on these inputs: nothing to check
            return (f"the reference for output {k} is NaN or Inf everywhere, so nothing can be checked; if the kernel "
                    f"reads that argument, list it in INPLACE rather than OUTPUTS (OUTPUTS are poisoned before each "
                    f"call)")
        c = cand.reshape(-1)
        if self._passes(self._scan(c, decide=True)):
            return None
        return self._describe(k, c, self._scan(c, decide=False))

    def _exact(self, k: int, cand: np.ndarray) -> Optional[str]:
        bad = cand != self.ref
        if bad.any():
            idx = np.unravel_index(int(np.argmax(bad)), self.ref.shape)
            # as Python values: numpy 2 writes a scalar's repr as np.int32(-1)
            return (f"output {k} is {cand[idx].item()!r} instead of {self.ref[idx].item()!r} at index {_where(idx)} "
                    f"({int(bad.sum())} of {self.ref.size} elements differ)")
        return None

    def _norm_rel(self, t: Tally) -> float:
        norm = math.sqrt(t.squares)
        return norm / self.norm_r if self.norm_r > 0 else norm

    def _passes(self, t: Tally) -> bool:
        return not t.failed and self._norm_rel(t) <= self.rtol

    def _scan(self, c: np.ndarray, decide: bool) -> Tally:
        """The float rule over the flat candidate c, a chunk at a time, with nothing of the output's size
        allocated. decide=True stops at the first chunk with a failing element (the norm is checked after);
        otherwise every chunk is tallied for the message. A NaN or Inf in the candidate fails `diff <= allowed`
        (NaN compares false, Inf exceeds any bound)."""
        t = Tally()
        n = self.r.size
        step = self._step()
        diff = np.empty(min(step, n), self.real)
        allowed = np.empty_like(diff)
        ok = np.empty(diff.size, bool)
        convert = self.work != self.r.dtype  # float16 (and bfloat16 sent as float32 is not): checked in float32
        for start in range(0, n, step):
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
                continue
            t.failed = True
            if decide:
                return t
            self._tally(t, d, a, start, index)
        if t.special >= 0:
            t.failed = True
        return t

    def _special(self, t: Tally, r: np.ndarray, cc: np.ndarray, finite: np.ndarray, start: int) -> None:
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
        if float(excess[j]) > t.worst_excess:
            t.worst_excess = float(excess[j])
            t.worst = start + (int(index[j]) if index is not None else j)
            t.worst_diff = float(d[j])
        t.max_diff = max(t.max_diff, float(d.max()))

    def _describe(self, k: int, c: np.ndarray, t: Tally) -> str:
        shape, size = self.ref.shape, self.ref.size

        def at(flat: int) -> Tuple[Any, Any, str]:
            idx = np.unravel_index(flat, shape)
            return c[flat], self.r[flat], _where(idx)

        if t.broken:
            cv, rv, where = at(t.first_broken)
            return (f"output {k} has {cv} at index {where} where the reference is {rv:.6g} ({t.broken} of {size} "
                    f"elements are NaN or Inf; an output element was not written, or overflowed)")
        if t.special >= 0:
            cv, rv, where = at(t.special)
            return f"output {k} is {cv} at index {where} where the reference is {rv}"
        cv, rv, where = at(max(t.worst, 0))
        return (f"output {k} is {cv:.6g} instead of {rv:.6g} at index {where} (error {t.worst_diff:.3g} there, "
                f"max error {t.max_diff:.3g}, {t.out} of {size} elements out of tolerance, norm-relative error "
                f"{self._norm_rel(t):.3g}; rtol={self.rtol:g}, atol={self.atol:.3g})")


def compare(k: int, cand: np.ndarray, cand_dtype: str, ref: np.ndarray, ref_dtype: str,
            spec_tol: Dict[str, Any]) -> Optional[str]:
    """None when output k matches; otherwise what is wrong, in words (one reference, one check)."""
    return Expected(ref, ref_dtype, spec_tol).check(k, cand, cand_dtype)
