"""Array helpers for the worker, for numpy arrays and torch tensors alike (torch imported only if used).

Guard bands: every array argument is re-homed into a bigger buffer whose 4 KiB before and after the data
hold a random canary; a write past either end of the data changes the canary.
"""
from __future__ import annotations

import hashlib
import io
import mmap
import sys
from typing import Any, List, Optional, Tuple

import numpy as np

BAND = 4096  # bytes of canary on each side; a multiple of any alignment a kernel assumes
ALIGN = 64
INT_POISON = 0xA5


def _torch():
    return sys.modules.get("torch")


def is_torch(x: Any) -> bool:
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) or is_torch(x)


def leaves(x: Any) -> List[Any]:
    """The arrays of one argument, in order: the argument itself, or those inside a list or tuple (nested).
    Everything else in an argument (numbers, numpy scalars, None) is a value that is passed as it is."""
    if is_array(x):
        return [x]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in leaves(item)]
    return []


def _same_kind(x: Any, items: List[Any]) -> Any:
    return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)  # a named tuple takes its fields


def rebuild(x: Any, fn: Any) -> Any:
    """x with each of its arrays replaced by fn(array); lists and tuples rebuilt, other values kept."""
    if is_array(x):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return _same_kind(x, [rebuild(item, fn) for item in x])
    return x


class LayoutMismatch(ValueError):
    """Two sets of inputs of one shape differ in their arrays' layout (count, shape or dtype)."""


def layout(x: Any) -> Any:
    """What must be the same in every set of inputs of one shape: the arrays' places, shapes and dtypes."""
    if is_array(x):
        return ("array", tuple(x.shape), dtype_name(x))
    if isinstance(x, (list, tuple)):
        return [layout(item) for item in x]
    return "value"


def fill(dst: Any, src: Any, fn: Any) -> Any:
    """src's argument with src's own values (numbers, None, ...) and dst's arrays, each filled by fn(dst_array,
    src_array): how a set of inputs moves into buffers that already exist without leaving any value behind."""
    if is_array(src):
        if not is_array(dst) or tuple(dst.shape) != tuple(src.shape) or dtype_name(dst) != dtype_name(src):
            raise LayoutMismatch(f"an array of shape {tuple(src.shape)} ({dtype_name(src)}) where another set of "
                                 f"inputs has {layout(dst)}")
        fn(dst, src)
        return dst
    if isinstance(src, (list, tuple)):
        if not isinstance(dst, (list, tuple)) or len(dst) != len(src):
            raise LayoutMismatch(f"a {type(src).__name__} of {len(src)} where another set of inputs has {layout(dst)}")
        return _same_kind(src, [fill(d, s, fn) for d, s in zip(dst, src)])
    return src


def is_float(x: Any) -> bool:
    if is_torch(x):
        return x.dtype.is_floating_point or x.dtype.is_complex
    return x.dtype.kind in "fc"


def dtype_name(x: Any) -> str:
    return str(x.dtype).replace("torch.", "")


def nbytes(x: Any) -> int:
    return x.numel() * x.element_size() if is_torch(x) else x.nbytes


class Guard:
    """The canary around one re-homed array."""

    def __init__(self, buf: Any, front: slice, back: slice, canary: Any) -> None:
        self.buf, self.front, self.back, self.canary = buf, front, back, canary

    def damage(self) -> Optional[str]:
        """'before the start' / 'past the end' when a band was written, else None."""
        if is_torch(self.buf):
            t = _torch()  # both bands in one transfer from the device
            front, back = t.stack([(self.buf[self.front] != self.canary).any(),
                                   (self.buf[self.back] != self.canary).any()]).tolist()
            return "before the start" if front else "past the end" if back else None
        if not np.array_equal(self.buf[self.front], self.canary):
            return "before the start"
        if not np.array_equal(self.buf[self.back], self.canary):
            return "past the end"
        return None


def guarded_copy(x: Any, canary: bytes) -> Tuple[Any, Guard]:
    """A copy of x with the same shape, dtype, device and layout (C or Fortran order), inside guard bands."""
    size = nbytes(x)
    if is_torch(x):
        t = _torch()
        src = x.contiguous()
        buf = t.empty(BAND + size + BAND, dtype=t.uint8, device=x.device)
        can = t.frombuffer(bytearray(canary), dtype=t.uint8).to(x.device)
        buf[:BAND] = can
        buf[BAND + size:] = can
        view = buf[BAND:BAND + size].view(x.dtype).view(x.shape)
        view.copy_(src)
        return view, Guard(buf, slice(0, BAND), slice(BAND + size, BAND + size + BAND), can)
    fortran = x.flags.f_contiguous and not x.flags.c_contiguous
    buf = np.empty(BAND + size + BAND + ALIGN, dtype=np.uint8)
    start = (-buf.ctypes.data) % ALIGN + BAND
    can = np.frombuffer(canary, dtype=np.uint8)
    buf[start - BAND:start] = can
    buf[start + size:start + size + BAND] = can
    view = np.ndarray(x.shape, dtype=x.dtype, buffer=buf, offset=start, order="F" if fortran else "C")
    view[...] = x
    return view, Guard(buf, slice(start - BAND, start), slice(start + size, start + size + BAND), can)


def poison(x: Any) -> None:
    """NaN for floats; a byte pattern (0xA5...) for ints and bools, so an untouched output is recognisable."""
    if is_torch(x):
        if is_float(x):
            x.fill_(float("nan"))
        else:
            x.view(_torch().uint8).fill_(INT_POISON)
        return
    if is_float(x):
        x.fill(np.nan)
    else:
        x.view(np.uint8).fill(INT_POISON)


def scale(x: Any, factor: float) -> None:
    """Multiplies a float array in place (used to make every timed call see inputs it has never seen)."""
    if is_torch(x):
        x.mul_(factor)
    else:
        np.multiply(x, x.dtype.type(factor), out=x)


def copy_into(dst: Any, src: Any) -> None:
    if is_torch(dst):
        dst.copy_(src)
    else:
        dst[...] = src


def clone(x: Any) -> Any:
    return x.clone() if is_torch(x) else x.copy()


def host_copy(x: Any) -> Any:
    """A copy in host memory of the same kind and dtype (a CPU tensor for a tensor): out of reach of any later
    kernel, however it computes its addresses."""
    return x.detach().to("cpu", copy=True) if is_torch(x) else x.copy()


def host_numpy(x: Any) -> Tuple[np.ndarray, str]:
    """The array on the host as numpy (bfloat16 widened to float32), and the original dtype's name."""
    name = dtype_name(x)
    if is_torch(x):
        t = _torch()
        y = x.detach()
        if y.dtype == t.bfloat16:
            y = y.float()
        return y.cpu().contiguous().numpy(), name
    return np.ascontiguousarray(x), name


def digest(x: Any) -> str:
    """A fingerprint of the array's dtype, shape and bytes. Arrays in device memory are fingerprinted there
    (device_digest): copying 16-32 MiB to the host to hash it cost more than the kernel calls it checked."""
    if is_torch(x) and x.device.type != "cpu":
        return device_digest(x)
    a, name = host_numpy(x) if is_torch(x) else (np.ascontiguousarray(x), dtype_name(x))
    h = hashlib.sha256(f"{name}{a.shape}".encode())
    h.update(a.view(np.uint8).reshape(-1).data if a.size else b"")
    return h.hexdigest()


# Odd 64-bit multipliers (as signed int64) of the device fingerprint's two lanes.
_K = [-7046029254386353131, -4417276706812531889, 1609587929392839161, -7723592293110705685,
      -8663945395140668459, 6554710500474867539]


def device_digest(x: Any) -> str:
    """Two 64-bit sums over the array's bytes read as 64-bit words w_i, computed on its device:
    sum(w_i * a_i) and sum((w_i ^ b_i) * c_i) modulo 2^64, where a_i, b_i, c_i come from the word's index (a_i
    and c_i odd). Integer sums are exact, so equal bytes give equal fingerprints in any process, whatever the
    order of the reduction; a change to any one word always changes the first lane (an odd multiplier is
    invertible modulo 2^64), and changes to several words cancel in both lanes only by chance.

    Summed DIGEST_WORDS words at a time: the multipliers of the whole array at once took four times its size in
    temporaries (96 GB for a 17 GB KernelBench input), which ran the device out of memory."""
    t = _torch()
    head = f"{dtype_name(x)}{tuple(x.shape)}"
    n = nbytes(x)
    if n == 0:
        return head
    flat = x.detach().contiguous().reshape(-1).view(t.uint8)
    if flat.storage_offset() % 8:  # a view that does not start on a word: its own copy does
        flat = flat.clone()
    whole = n - n % 8
    lanes = [0, 0]
    for start in range(0, whole, DIGEST_WORDS * 8):
        part = flat[start:min(whole, start + DIGEST_WORDS * 8)].view(t.int64)
        _digest_words(t, part, start // 8, lanes)
    if n % 8:  # the last bytes, zero-padded to a word
        tail = t.cat([flat[whole:], flat.new_zeros(8 - n % 8)]).view(t.int64)
        _digest_words(t, tail, whole // 8, lanes)
    return f"{head}:{lanes[0] & (2**64 - 1):016x}{lanes[1] & (2**64 - 1):016x}"


DIGEST_WORDS = 1 << 24  # 128 MiB of words per step of device_digest (each temporary as large)


def _digest_words(t: Any, words: Any, first: int, lanes: List[int]) -> None:
    """Adds words (int64: the array's words from index `first` on) to the two lanes of device_digest."""
    def index() -> Any:
        return t.arange(first, first + words.numel(), device=words.device, dtype=t.int64)

    a = index().mul_(_K[0]).add_(_K[1]).bitwise_or_(1)
    lane1 = (words * a).sum()
    b = a.copy_(index()).mul_(_K[2]).add_(_K[3])  # a's memory, a no longer needed
    c = index().mul_(_K[4]).add_(_K[5]).bitwise_or_(1)
    lane2 = b.bitwise_xor_(words).mul_(c).sum()
    both = t.stack([lane1, lane2]).tolist()
    lanes[0] = (lanes[0] + both[0]) & (2**64 - 1)
    lanes[1] = (lanes[1] + both[1]) & (2**64 - 1)


def npy_parts(a: np.ndarray) -> Tuple[bytes, memoryview]:
    """The .npy encoding of a C-contiguous array as (header, data): sent as is, without copying the data into
    one bytes object first."""
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)  # (which would also make a zero-dimensional array one-dimensional)
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(a))
    return f.getvalue(), memoryview(a.reshape(-1).view(np.uint8)) if a.size else memoryview(b"")


def from_npy(b: Any) -> np.ndarray:
    """An array read from .npy bytes. From a bytearray or an mmap (what the channel receives) the array is a view
    of those bytes, not a copy."""
    if not isinstance(b, (bytearray, mmap.mmap)):
        return np.load(io.BytesIO(b), allow_pickle=False)
    f = io.BytesIO(memoryview(b)[:1 << 16])
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    else:
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    if dtype.hasobject:
        raise ValueError("object arrays are not accepted")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    a = np.frombuffer(b, dtype=dtype, count=count, offset=f.tell())
    return a.reshape(shape, order="F" if fortran else "C")


def _storage_ptr(t: Any) -> int:
    # torch before 2.0 (Debian's 1.13) names the untyped storage _storage()
    return (t.untyped_storage() if hasattr(t, "untyped_storage") else t._storage()).data_ptr()


def same_storage(a: Any, b: Any) -> bool:
    if is_torch(a) and is_torch(b):
        return a.data_ptr() == b.data_ptr() or _storage_ptr(a) == _storage_ptr(b)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.shares_memory(a, b)
    return False


def as_output_list(result: Any) -> List[Any]:
    """launch(...)'s return value as a list of outputs (None -> [])."""
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return list(result)
    return [result]
