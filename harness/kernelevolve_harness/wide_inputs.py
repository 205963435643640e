"""The robustness pass's inputs (docs/harness.md, "The robustness pass").

A problem whose inputs() draws every value from a narrow range (torch.rand's [0, 1), all non-negative, all small)
never shows a kernel that is right only there: a HardSigmoid without its clamp, a ReLU that passes its input
through. Where a float input of one set comes out narrow, the judge also calls the candidate on inputs of the same
shapes and dtypes with wider values (signed normal values of twice the problem's largest magnitude, and a few
at 8 times that), the reference recomputed on them. Both workers make them from the same draw and seed, so they
agree bit for bit; arrays whose values are all whole numbers (masks, indices, counts kept as floats) and pure
outputs are left as drawn.

Beside them, on every problem whatever its draw, two magnitude probes (PROBES): the problem's own inputs scaled
down (SMALL: x1e-3, where an epsilon added in the wrong place shows: RMSNorm's eps outside the square root is within
float32's tolerance at unit scale and several times off there), and scaled up to where exp-type functions overflow
in the dtype (LARGE: 100 in float32 and bfloat16, 10 in float16, reached by both signs where the draw has both, the
larger at most twice it; where a softmax without the row maximum subtracted turns NaN). The candidate must stay
within tolerance wherever the reference does: elements are compared as on the wide inputs (compare.Expected, wide),
where the reference's NaN and Inf are not compared.
"""
from __future__ import annotations

import sys
from typing import Any, List, Optional, Tuple

import numpy as np

from . import arrays as A

SPREAD = 2.0  # the wide values' standard deviation, in units of the problem's largest magnitude (at least 1)
EXTREME = 8.0  # the few extreme values, in the same units
EXTREMES = 8  # how many
SMALL = 1e-3
LARGE = {"float16": 10.0}  # the largest input magnitude of the LARGE probe, by dtype
LARGE_DEFAULT = 100.0  # float32 (exp overflows past 88.7) and bfloat16 (float32's range)
PROBES = ("wide", "small", "large")  # the robustness pass's kinds of inputs
CHUNK = 1 << 22  # elements per pass of the statistics (no temporary of a multi-GB input's size)
DEVICE_CHUNK = 1 << 26  # on a GPU (each chunk's three reductions wait for the device once each)


def _stats(x: Any) -> Tuple[float, float, bool]:
    """(smallest, largest, every value a whole number) of a float array, in chunks."""
    flat = x.reshape(-1)
    step = DEVICE_CHUNK if A.is_torch(x) and x.device.type != "cpu" else CHUNK
    lo, hi, whole = float("inf"), float("-inf"), True
    for start in range(0, flat.shape[0], step):
        part = flat[start:start + step]
        if A.is_torch(part):
            part = part.float()  # (half-precision rounding is missing on some CPUs' torch)
            lo, hi = min(lo, float(part.min())), max(hi, float(part.max()))
            whole = whole and bool((part == part.round()).all())
        else:
            lo, hi = min(lo, float(part.min())), max(hi, float(part.max()))
            whole = whole and bool((part == np.round(part)).all())
    return lo, hi, whole


def narrowness(x: Any) -> Optional[str]:
    """How the values of a float array are narrow, in words ("all in [0, 1)"), or None."""
    if not A.is_float(x) or A.nbytes(x) == 0 or (not A.is_torch(x) and x.dtype.kind == "c"):
        return None
    if A.is_torch(x) and x.dtype.is_complex:
        return None
    lo, hi, whole = _stats(x)
    if whole or not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    if lo >= 0:
        return "all in [0, 1)" if hi < 1 else "all in [0, 1]" if hi <= 1 else "all non-negative"
    if max(-lo, hi) <= 1:
        return "all in [-1, 1]"
    return None


def _wide(x: Any, seed: int, salt: int) -> Tuple[Any, float]:
    """Wide values for an array like x (same shape, dtype and device), and their standard deviation."""
    lo, hi, _ = _stats(x)
    sigma = SPREAD * max(1.0, abs(lo), abs(hi))
    n = A.nbytes(x) // (x.element_size() if A.is_torch(x) else x.itemsize)
    if A.is_torch(x):
        torch = sys.modules["torch"]
        g = torch.Generator(device=x.device)
        g.manual_seed((seed * 1000003 + salt) % (2**63))
        out = torch.empty(tuple(x.shape), dtype=torch.float32, device=x.device)
        out.normal_(0.0, sigma, generator=g)
        picks = torch.randint(0, n, (min(EXTREMES, n),), generator=g, device=x.device)
        signs = torch.tensor([1.0, -1.0], device=x.device).repeat((picks.numel() + 1) // 2)[:picks.numel()]
        out.view(-1)[picks] = signs * (EXTREME / SPREAD * sigma)
        return out.to(x.dtype).contiguous(), sigma
    rng = np.random.default_rng([seed % (2**32), salt])
    wide = rng.standard_normal(x.shape, dtype=np.float64 if x.dtype.itemsize > 4 else np.float32)
    wide *= sigma
    picks = rng.integers(0, n, min(EXTREMES, n))
    flat = wide.reshape(-1)
    flat[picks] = np.resize([1.0, -1.0], picks.size) * (EXTREME / SPREAD * sigma)
    out = np.empty_like(x)  # x's layout (C or Fortran order) and dtype
    out[...] = wide
    return out, sigma


def widen(args: List[Any], outputs: List[int], seed: int) -> Tuple[List[Any], str, str]:
    """args with every narrow float input replaced by wide values, what was narrow ("argument 0 all in [0, 1)")
    and what replaced it; ("", "") when no input is narrow (then no robustness pass)."""
    narrow: List[str] = []
    sigmas: List[float] = []
    salt = 0

    def replace(j: int, x: Any) -> Any:
        nonlocal salt
        salt += 1
        if j in outputs:
            return x
        how = narrowness(x)
        if how is None:
            return x
        narrow.append(f"argument {j} {how}")
        out, sigma = _wide(x, seed, salt)
        sigmas.append(sigma)
        return out

    wide = [A.rebuild(a, lambda x, j=j: replace(j, x)) for j, a in enumerate(args)]
    if not narrow:
        return args, "", ""
    s = max(sigmas)
    what = (f"normal values of standard deviation {'up to ' if len(set(sigmas)) > 1 else ''}{s:g}, a few at "
            f"\u00b1{EXTREME / SPREAD * s:g}")
    return wide, ", ".join(narrow), what


def _dtype_name(x: Any) -> str:
    return str(x.dtype).replace("torch.", "")


def rescale(args: List[Any], outputs: List[int], kind: str) -> Tuple[List[Any], str, str]:
    """The SMALL or LARGE probe: every float input that is not all whole numbers (nor a pure output) multiplied in
    place (args are a fresh draw) by SMALL, or by what brings its largest magnitude to LARGE; what was scaled and
    how, or ("", "") when nothing was."""
    scaled: List[str] = []
    targets: List[float] = []

    def replace(j: int, x: Any) -> Any:
        if j in outputs or not A.is_float(x) or A.nbytes(x) == 0:
            return x
        if (A.is_torch(x) and x.dtype.is_complex) or (not A.is_torch(x) and x.dtype.kind == "c"):
            return x
        lo, hi, whole = _stats(x)
        top = max(abs(lo), abs(hi))
        if whole or not np.isfinite(top) or top == 0:
            return x
        target = LARGE.get(_dtype_name(x), LARGE_DEFAULT)
        # both signs past the target where the draw has both (exp(x) and exp(-x) overflow alike), the larger at
        # most twice it
        near = min(abs(lo), abs(hi)) if lo < 0 < hi else 0.0
        A.scale(x, SMALL if kind == "small" else target / max(near, top / 2))
        scaled.append(f"argument {j}")
        targets.append(target)
        return x

    out = [A.rebuild(a, lambda x, j=j: replace(j, x)) for j, a in enumerate(args)]
    if not scaled:
        return args, "", ""
    how = (f"scaled by {SMALL:g}" if kind == "small" else
           "scaled to magnitudes of " + "/".join(f"{v:g}" for v in sorted(set(targets)))
           + " and up to twice that (where exp overflows in the dtype)")
    return out, ", ".join(scaled), f"the problem's inputs {how}"


def probe(args: List[Any], outputs: List[int], seed: int, kind: str) -> Tuple[List[Any], str, str]:
    """The robustness pass's inputs of one kind (PROBES) made from a fresh draw: (args, what was changed, how);
    ("", "") in the last two when the kind does not apply to this draw."""
    if kind == "wide":
        return widen(args, outputs, seed)
    return rescale(args, outputs, kind)
