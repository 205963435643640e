"""Output comparison, run by the judge on arrays received from the worker (the candidate never runs here).

Floats: NaN/Inf where the reference is finite fail; then a norm-relative error ||c-r|| / ||r|| <= rtol AND an
elementwise |c-r| <= atol + rtol*|r|. Default atol is relative to the reference's scale (rtol times its RMS),
so one tolerance suits inputs of any magnitude; a spec's TOLERANCE gives absolute values. Ints and bools:
exact.
"""
from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

import numpy as np

DEFAULT_RTOL = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-4, "float64": 1e-9, "complex64": 1e-4,
                "complex128": 1e-9}
FLOAT_KINDS = "fc"
CHUNK_BYTES = 1 << 18  # per temporary of a prepared check: its passes run over data still in the core's cache


def tolerance(dtype: str, ref: np.ndarray, spec_tol: Dict[str, float]) -> Tuple[float, float]:
    rtol = spec_tol.get("rtol", DEFAULT_RTOL.get(dtype, 1e-4))
    if "atol" in spec_tol:
        atol = spec_tol["atol"]
    else:
        finite = ref[np.isfinite(ref)] if ref.size else ref
        rms = float(np.sqrt(np.mean(np.abs(finite.astype(np.complex128 if finite.dtype.kind == "c" else np.float64)) ** 2))) if finite.size else 0.0  # noqa: E501
        atol = rtol * max(rms, 1e-30)
    return float(rtol), float(atol)


def _norm(x: np.ndarray) -> float:
    """2-norm without BLAS (a BLAS thread pool on a busy machine costs more than the sum), in float64. Real
    arrays: one pass with no temporaries (einsum), half the time of squaring a copy on 32 MiB."""
    if x.dtype.kind == "f":
        flat = x.reshape(-1)
        return float(np.sqrt(np.einsum("i,i->", flat, flat, dtype=np.float64)))
    a = np.abs(x)
    return float(np.sqrt(np.sum(np.square(a), dtype=np.float64)))


def _finite_norm(x: np.ndarray) -> Optional[float]:
    """The 2-norm of a flat float array (as _norm), or None when some element is NaN or Inf: one pass over the
    data in chunks, with no temporaries of its size."""
    step = max(1, CHUNK_BYTES // x.itemsize)
    finite = np.empty(min(step, x.size), bool)
    squares = 0.0
    for start in range(0, x.size, step):
        part = x[start:start + step]
        if not bool(np.isfinite(part, out=finite[:part.size]).all()):
            return None
        squares += float(np.einsum("i,i->", part, part, dtype=np.float64))
    return math.sqrt(squares)


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


class Expected:
    """A reference output with what every comparison against it needs, computed once: one reference is checked
    against many calls (two runs per seed, the timed calls), and on large outputs the judge's own arithmetic is
    what an evaluation waited for."""

    def __init__(self, ref: np.ndarray, ref_dtype: str, spec_tol: Dict[str, float]) -> None:
        self.ref, self.dtype, self.tol = ref, ref_dtype, spec_tol
        self.fast = ref.size > 0 and ref.dtype.kind == "f"
        if self.fast:
            self.wide = np.float64 if ref.dtype.itemsize > 4 else np.float32
            self.r = ref.astype(self.wide, copy=False).reshape(-1)
            norm_r = _finite_norm(self.r)
            self.fast = norm_r is not None
        if self.fast:
            self.norm_r = norm_r
            # tolerance() for an all-finite reference, from the norm already at hand (rms = norm / sqrt(n))
            self.rtol = float(spec_tol.get("rtol", DEFAULT_RTOL.get(ref_dtype, 1e-4)))
            self.atol = float(spec_tol["atol"]) if "atol" in spec_tol else \
                self.rtol * max(self.norm_r / float(np.sqrt(self.r.size)), 1e-30)

    def check(self, k: int, cand: np.ndarray, cand_dtype: str) -> Optional[str]:
        """None when output k matches; otherwise what is wrong, in words."""
        if not self.fast or cand_dtype != self.dtype or cand.shape != self.ref.shape:
            return compare(k, cand, cand_dtype, self.ref, self.dtype, self.tol)
        # Every element finite in the reference: a handful of passes over the data; any failure is described
        # by the full comparison below.
        if not self._within(cand.astype(self.wide, copy=False).reshape(-1)):
            return compare(k, cand, cand_dtype, self.ref, self.dtype, self.tol)
        return None

    def _within(self, c: np.ndarray) -> bool:
        """|c - r| <= atol + rtol * |r| everywhere and ||c - r|| / ||r|| <= rtol, a chunk at a time: the five
        passes of a check then read the candidate and the reference from memory once, and nothing of the
        output's size is allocated (on a 32 MiB output, 3.5 times faster than whole-array passes; whole arrays
        of allowed errors, kept per reference, were 32 MiB each). The same float operations as compare() on each
        element. A NaN or Inf in the candidate fails `diff <= allowed` (NaN compares false, Inf exceeds any
        bound)."""
        n = self.r.size
        step = max(1, CHUNK_BYTES // self.r.itemsize)
        diff = np.empty(min(step, n), self.wide)
        allowed = np.empty_like(diff)
        ok = np.empty(diff.size, bool)
        squares = 0.0
        for start in range(0, n, step):
            r = self.r[start:start + step]
            d, a = diff[:r.size], allowed[:r.size]
            np.subtract(c[start:start + step], r, out=d)
            np.abs(d, out=d)
            np.abs(r, out=a)
            a *= self.rtol
            a += self.atol
            if not bool(np.less_equal(d, a, out=ok[:r.size]).all()):
                return False
            squares += float(np.einsum("i,i->", d, d, dtype=np.float64))  # one pass, no temporaries
        norm = math.sqrt(squares)
        return (norm / self.norm_r if self.norm_r > 0 else norm) <= self.rtol


def compare(k: int, cand: np.ndarray, cand_dtype: str, ref: np.ndarray, ref_dtype: str,
            spec_tol: Dict[str, float]) -> Optional[str]:
    """None when output k matches; otherwise what is wrong, in words."""
    if cand_dtype != ref_dtype:
        return f"output {k} has dtype {cand_dtype}, expected {ref_dtype}"
    if cand.shape != ref.shape:
        return f"output {k} has shape {tuple(cand.shape)}, expected {tuple(ref.shape)}"
    if ref.size == 0:
        return None
    if ref.dtype.kind not in FLOAT_KINDS:
        bad = cand != ref
        if bad.any():
            idx = np.unravel_index(int(np.argmax(bad)), ref.shape)
            return (f"output {k} is {cand[idx]!r} instead of {ref[idx]!r} at index {_where(idx)} "
                    f"({int(bad.sum())} of {ref.size} elements differ)")
        return None
    # float32 arithmetic suffices for checking float32/16 outputs (and halves the time on large arrays).
    if ref.dtype.kind == "c":
        wide = np.complex128 if ref.dtype.itemsize > 8 else np.complex64
    else:
        wide = np.float64 if ref.dtype.itemsize > 4 else np.float32
    c = cand.astype(wide, copy=False)
    r = ref.astype(wide, copy=False)
    r_finite = np.isfinite(r)
    c_finite = np.isfinite(c)
    broken = r_finite & ~c_finite
    if broken.any():
        idx = np.unravel_index(int(np.argmax(broken)), ref.shape)
        return (f"output {k} has {c[idx]} at index {_where(idx)} where the reference is {r[idx]:.6g} "
                f"({int(broken.sum())} of {ref.size} elements are NaN or Inf; an output element was not written, "
                f"or overflowed)")
    special = ~r_finite
    if special.any():
        mismatch = special & ~((np.isnan(r) & np.isnan(c)) | (r == c))
        if mismatch.any():
            idx = np.unravel_index(int(np.argmax(mismatch)), ref.shape)
            return f"output {k} is {c[idx]} at index {_where(idx)} where the reference is {r[idx]}"
    if not r_finite.any():
        return (f"the reference for output {k} is NaN or Inf everywhere, so nothing can be checked; if the kernel "
                f"reads that argument, list it in INPLACE rather than OUTPUTS (OUTPUTS are poisoned before each call)")
    rtol, atol = tolerance(ref_dtype, ref, spec_tol)
    if special.any():
        cf, rf = c[r_finite], r[r_finite]
    else:
        cf, rf = c.reshape(-1), r.reshape(-1)
    diff = np.abs(cf - rf)
    norm_r = _norm(rf)
    norm_rel = _norm(diff) / norm_r if norm_r > 0 else _norm(diff)
    allowed = np.abs(rf)
    allowed *= rtol
    allowed += atol
    excess = diff / allowed
    worst = int(np.argmax(excess))
    if norm_rel > rtol or excess[worst] > 1.0:
        flat_index = np.flatnonzero(r_finite.reshape(-1))[worst]
        idx = np.unravel_index(int(flat_index), ref.shape)
        n_bad = int((excess > 1.0).sum())
        return (f"output {k} is {c[idx]:.6g} instead of {r[idx]:.6g} at index {_where(idx)} (error {diff[worst]:.3g} there, max error {float(diff.max()):.3g}, "  # noqa: E501
                f"{n_bad} of {ref.size} elements out of tolerance, norm-relative error {norm_rel:.3g}; "
                f"rtol={rtol:g}, atol={atol:.3g})")
    return None
