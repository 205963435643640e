"""Outputs compared where they are: a GPU's large outputs never cross to the host.

A published KernelBench problem returns up to 8.6 GB per call, and an evaluation checks some ten calls: copied to
the host, sent through a pipe and compared there, each took seconds, and the host held several such copies. So
where the outputs are torch tensors on a GPU and one call's outputs reach SHARE_BYTES, the candidate's worker
shares them with the reference process instead (a CUDA IPC handle per output: no copy) and waits; the reference
process, which never runs candidate code, computes its own expected outputs on the same device and applies the
judge's rule to the pair there, a chunk at a time (chunked_compare.py); the judge reads the answer (which output,
if any, is wrong, in float_rule.py's words), and tells the worker it may let go of its outputs.

The rule is the judge's (float_rule.py): the dtype and shape first, then the element-wise bound with the dtype's
or the spec's (rtol, atol) and the norm-relative error; on the robustness pass's wide inputs, the atol is
float_rule.wide_floor's, and elements where the reference is NaN or Inf are not compared.

Nothing here decides anything in the candidate's process: the worker only says where its outputs are.

Host tensors (torch on a CPU) are shared the same way, through shared memory, only with
KERNELEVOLVE_SHARE_HOST_TENSORS=1: that is how the tests run this path on a machine without a GPU (a worker
may write no file over 32 MiB, and shared memory counts as one).
"""
from __future__ import annotations

import mmap
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import arrays as A
from . import float_rule as F
from .chunked_compare import check, wide_atol
from .tolerances import tolerance

# One call's outputs from this many bytes on are compared on their device (KERNELEVOLVE_DEVICE_COMPARE_BYTES;
# 0 for every call's, "off" for none). 4 MiB: below it a host copy and numpy cost little; above it, at the rate a
# search judges a softmax on an H200 (a hundred a minute and more), host comparisons cost a candidate 17 CPU
# seconds where the device's cost 7 (docs/benchmarks.md, "Judged candidates a minute"), more than a 16-core host has to give.
SHARE_BYTES = 4 << 20


def share_bytes() -> Optional[int]:
    """The threshold, or None where outputs are never shared."""
    value = os.environ.get("KERNELEVOLVE_DEVICE_COMPARE_BYTES", "")
    if value.strip().lower() in ("off", "none", "no"):
        return None
    try:
        return int(float(value)) if value.strip() else SHARE_BYTES
    except ValueError:
        return SHARE_BYTES


def _torch() -> Any:
    return sys.modules.get("torch")


def shareable(outs: List[Any], threshold: Optional[int]) -> bool:
    """Whether one call's outputs go to the reference where they are: every one a torch tensor on one kind of
    device (a number or a numpy array among them sends them all the old way), and together at least the
    threshold."""
    t = _torch()
    if threshold is None or t is None or not outs:
        return False
    if not all(isinstance(o, t.Tensor) for o in outs) or len({o.device.type for o in outs}) != 1:
        return False
    kinds = ("cuda", "cpu") if os.environ.get("KERNELEVOLVE_SHARE_HOST_TENSORS") == "1" else ("cuda",)
    return outs[0].device.type in kinds and sum(A.nbytes(o) for o in outs) >= threshold


def on_device(outs: List[Any], threshold: Optional[int], gpu: bool) -> Optional[List[Any]]:
    """A timed call's kept outputs (host copies, taken while the candidate's kernels could still run) back on the
    GPU (gpu=True) for sharing, when they are torch tensors that reach the threshold; None otherwise (they are
    sent as blobs)."""
    t = _torch()
    if threshold is None or t is None or not outs or not all(isinstance(o, t.Tensor) for o in outs):
        return None
    if sum(A.nbytes(o) for o in outs) < threshold:
        return None
    if not gpu:
        return outs if shareable(outs, threshold) else None
    return [o if o.device.type == "cuda" else o.to("cuda") for o in outs]


def share(outs: List[Any]) -> Tuple[List[Dict[str, Any]], List[Any]]:
    """A description of each output that another process of this machine can open (a CUDA IPC handle, or for a
    host tensor the name of its shared memory; where it starts, its sizes and strides, its dtype), and the
    tensors that must stay alive until it has been compared."""
    keep, described = [], []
    for o in outs:
        o = o.detach()
        if o.device.type == "cpu":
            path, mapped = _host_copy(o)
            described.append({"device": "cpu", "path": path, "offset": 0, "shape": list(o.shape),
                              "stride": _contiguous_strides(list(o.shape)), "dtype": str(o.dtype).replace("torch.", ""),
                              "dtype_name": A.dtype_name(o), "storage_bytes": A.nbytes(o)})
            keep.append(_Unlinked(path, mapped))
            continue
        common = {"offset": int(o.storage_offset()), "shape": list(o.shape), "stride": list(o.stride()),
                  "dtype": str(o.dtype).replace("torch.", ""), "dtype_name": A.dtype_name(o)}
        (device, handle, size_bytes, offset_bytes, ref_handle, ref_offset, event_handle,
         event_sync) = o.untyped_storage()._share_cuda_()
        described.append(dict(
            common, device=int(device), handle=bytes(handle).hex(), storage_bytes=int(size_bytes),
            storage_offset_bytes=int(offset_bytes), ref_handle=bytes(ref_handle).hex(), ref_offset=int(ref_offset),
            event=bytes(event_handle).hex() if event_handle else "", event_sync=bool(event_sync)))
        keep.append(o)
    return described, keep


def try_share(outs: List[Any]) -> Optional[Tuple[List[Dict[str, Any]], List[Any]]]:
    """share(), or None where these outputs cannot be shared (an allocator without IPC handles, such as torch's
    expandable segments): they are then sent as bytes, as smaller outputs are."""
    try:
        return share(outs)
    except Exception:
        return None


_copies = 0


def _host_copy(o: Any) -> Tuple[str, Any]:
    """A host tensor copied into a file of /dev/shm that the reference process can map (KERNELEVOLVE_SHARE_HOST_
    TENSORS); the path and the mapping."""
    global _copies
    t = _torch()
    _copies += 1
    path = f"/dev/shm/kernelevolve-output-{os.getpid()}-{_copies}"
    n = A.nbytes(o)
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.ftruncate(fd, max(n, 1))
        mapped = mmap.mmap(fd, max(n, 1))
    finally:
        os.close(fd)
    if n:
        view = t.frombuffer(mapped, dtype=t.uint8, count=n).view(o.dtype).reshape(o.shape)
        view.copy_(o)
        del view
    return path, mapped


class _Unlinked:
    """A /dev/shm copy, removed when let go."""

    def __init__(self, path: str, mapped: Any) -> None:
        self.path, self.mapped = path, mapped

    def __del__(self) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass


def _contiguous_strides(shape: List[int]) -> List[int]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return list(reversed(strides))


def open_shared(d: Dict[str, Any]) -> Any:
    """The tensor a share() description names, in this process (read here, never written)."""
    t = _torch()
    if t is None:
        raise ValueError("an output was shared as a torch tensor, but torch is not loaded here")
    dtype = getattr(t, d["dtype"])
    if d["device"] == "cpu":
        n = int(d["storage_bytes"])
        if n == 0:
            return t.empty(tuple(d["shape"]), dtype=dtype)
        with open(d["path"], "rb") as f:
            mapped = mmap.mmap(f.fileno(), n, access=mmap.ACCESS_COPY)  # written by no one here
        return t.frombuffer(mapped, dtype=t.uint8, count=n).view(dtype).reshape(tuple(d["shape"]))
    t.cuda._lazy_init()
    storage = t.UntypedStorage._new_shared_cuda(
        d["device"], bytes.fromhex(d["handle"]), d["storage_bytes"], d["storage_offset_bytes"],
        bytes.fromhex(d["ref_handle"]), d["ref_offset"], bytes.fromhex(d["event"]) if d["event"] else b"",
        d["event_sync"])
    out = t.empty((0,), dtype=dtype, device=f"cuda:{d['device']}")
    out.set_(storage, d["offset"], tuple(d["shape"]), tuple(d["stride"]))
    return out


def compare(k: int, cand: Any, cand_dtype: str, ref: Any, spec_tol: Dict[str, Any], wide: bool) -> Optional[str]:
    """None when output k matches its reference, else what is wrong, in float_rule's words."""
    ref_dtype = A.dtype_name(ref)
    if cand_dtype != ref_dtype:
        return F.dtype_differs(k, cand_dtype, ref_dtype)
    if tuple(cand.shape) != tuple(ref.shape):
        return F.shape_differs(k, cand.shape, ref.shape)
    if ref.device != cand.device:
        cand = cand.to(ref.device)
    rtol, atol = tolerance(ref_dtype, spec_tol)
    if wide and (ref.is_floating_point() or ref.is_complex()):
        atol = wide_atol(ref, rtol, atol)
    return check(k, cand, ref, rtol, atol, wide=wide)
