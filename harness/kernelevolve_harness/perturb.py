"""Timed inputs that cannot be recognised: each refill of a timed buffer set is a pool entry (a few draws per
pass) times a factor, and every float input also times a mask of per-element factors, rolled by an offset drawn
from the factor's bits.

With one common factor alone, two timed calls' inputs were related by a scale a memo could see: a row sum that
remembered results keyed by a sample of 64 input elements, and returned a remembered result times f when a new
sample was f times an old one, was judged 2.8-5.5x faster where computing the sums reads 0.55x. Now no two
refills share their ratio element to element: the mask (values in [0.9, 1.1), one per pool entry and dtype, from
the entry's seed) is rolled by an offset among MASK_ELEMENTS, unique to the factor, so a sample's ratios to any
earlier input differ from element to element. Inputs at factor 1.0 (the correctness calls, the fresh-input call)
are the problem's own draw, untouched.

The reference process makes the same inputs from the same (seed, factor): the same draw, the same mask from the
seed, the same offset from the factor, the same float operations in the same order.
"""
from __future__ import annotations

import struct
from typing import Any, Dict, Tuple

import numpy as np

from . import arrays as A

MASK_ELEMENTS = 1 << 20
# The mask's factors: far enough from 1 that an output reused at any common scale is off by more than any
# tolerance, near enough that the inputs keep the problem's range as the scale factor leaves it (rand's [0, 1)
# stays below 3, where a HardSigmoid's clamp begins)
MASK_LOW, MASK_HIGH = 0.9, 1.1
_masks: Dict[Tuple[int, str, str], Any] = {}


def offset(factor: float) -> int:
    """The mask's roll for a refill at this factor (its bits: every factor drawn is a new offset)."""
    return int.from_bytes(struct.pack("<d", factor), "little") % MASK_ELEMENTS


def _mask(like: Any, seed: int) -> Any:
    """Per-element factors in [MASK_LOW, MASK_HIGH) for arrays like `like` (its dtype and device), from the pool entry's seed."""
    if A.is_torch(like):
        key = (seed, str(like.dtype), str(like.device))
    else:
        key = (seed, str(like.dtype), "cpu")
    if key not in _masks:
        if len(_masks) >= 12:  # a pass's few pool entries; the last pass's go
            _masks.clear()
        if A.is_torch(like):
            import torch
            g = torch.Generator(device=like.device)
            g.manual_seed(seed % (2**63))
            m = torch.empty(MASK_ELEMENTS, dtype=torch.float32, device=like.device).uniform_(MASK_LOW, MASK_HIGH, generator=g)
            _masks[key] = m.to(like.dtype)
        else:
            rng = np.random.default_rng([seed % (2**32), 7])
            _masks[key] = rng.uniform(MASK_LOW, MASK_HIGH, MASK_ELEMENTS).astype(like.dtype)
    return _masks[key]


def _contiguous(x: Any) -> bool:
    return bool(x.is_contiguous()) if A.is_torch(x) else bool(x.flags.c_contiguous)


def apply(x: Any, seed: int, factor: float) -> None:
    """x (a float input of the pool entry drawn with `seed`, already times `factor`) times the rolled mask, in
    place: the element at position i in C order times mask[(i + offset) % MASK_ELEMENTS], whatever x's layout (the
    reference's draw and the worker's buffer may lay it out differently). Complex and empty arrays keep the factor
    alone."""
    if factor == 1.0 or A.nbytes(x) == 0:
        return
    if (A.is_torch(x) and x.dtype.is_complex) or (not A.is_torch(x) and x.dtype.kind == "c"):
        return
    m = _mask(x, seed)
    s = offset(factor)
    if not _contiguous(x):  # a strided or Fortran-order array: the mask laid out as its elements are, in C order
        if A.is_torch(x):
            import torch
            index = (torch.arange(x.numel(), device=x.device) + s) % MASK_ELEMENTS
            x.mul_(m[index].view(tuple(x.shape)))
        else:
            index = (np.arange(x.size, dtype=np.int64) + s) % MASK_ELEMENTS
            np.multiply(x, m[index].reshape(x.shape), out=x)
        return
    flat = x.reshape(-1)
    n = flat.shape[0]
    for start in range(0, n, MASK_ELEMENTS):
        chunk = flat[start:start + MASK_ELEMENTS]
        length = chunk.shape[0]
        a = min(length, MASK_ELEMENTS - s)
        _multiply(chunk[:a], m[s:s + a])
        if a < length:
            _multiply(chunk[a:], m[:length - a])


def _multiply(dst: Any, by: Any) -> None:
    if A.is_torch(dst):
        dst.mul_(by)
    else:
        np.multiply(dst, by, out=dst)
