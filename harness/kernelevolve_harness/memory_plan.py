"""How many copies of a problem's arrays an evaluation holds at once, planned from the memory the device has and
the size of one input/output set (docs/harness.md, "Memory").

A KernelBench level-1 problem as published has inputs of 4-9 GB (HardSigmoid on 4096 x 393216 fp32: 6.4 GB in,
6.4 GB out). Fixed counts (four rotating buffer sets, a pool of three input sets, eight rounds of outputs in
flight) made such a problem fail with an out-of-memory error on a 139 GB H200 while judging the problem itself.
Here each count is the judge's wish, cut down to what fits, down to one; a problem that does not fit even then is
refused before any call, with the arithmetic and what to change.

In bytes, with I the input arrays of one call (every array argument: a pool entry, or a buffer set's arrays) and
O the outputs one call returns in new memory (0 when it writes into its arguments); one set S = I + O:

    correctness calls: 3 I + 2 O   the pristine inputs, the guarded copy the kernel gets and its output (the
                                   candidate's worker), the reference's inputs and output (the reference process,
                                   on the same device at the same time)
    timed calls:       2 I + 3 O   one pool entry to refill from, one buffer set, the outputs of one round (two
                                   calls) and the last call of the candidate, kept for checking
    minimum = the larger of the two; then, while they fit, in this order:
    each further buffer set: S;  each further pool entry: I;  each further round queued before reading: 2 O
    (rounds: at most 2 GiB of outputs queued; queuing exists for calls of microseconds)

`KERNELEVOLVE_DEVICE_MEMORY_BYTES` states the memory instead of measuring it (tests; a device shared with other
work). Measured: on a GPU, the device's free memory plus what this process's allocator holds unused
(torch.cuda.mem_get_info, memory_reserved - memory_allocated); on a CPU, MemAvailable of /proc/meminfo.
`KERNELEVOLVE_DEVICE_MEMORY_SHARE` (a fraction, the job's "memory_share") plans within that share of the device's
whole memory (of the stated memory where it is stated), never more than the measured figure: evaluations run side
by side on one device (`kernelevolve suite --jobs`) each keep to their share instead of each planning from the
memory free when it starts.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

MEMORY_ENV = "KERNELEVOLVE_DEVICE_MEMORY_BYTES"
SHARE_ENV = "KERNELEVOLVE_DEVICE_MEMORY_SHARE"
HEADROOM = 0.9  # of the free memory: the allocator's rounding and fragmentation, the model's own temporaries
GPU_RESERVE = 1 << 30  # the CUDA context, library workspaces, the L2 flush's two 256 MiB buffers
LARGE_SET = 256 << 20  # from this size of a set, memory a process no longer uses goes back to the device at once
GROUP_ROUNDS = 8  # GPU rounds queued before the worker waits for them (each holds two calls' outputs)
ROUNDS_BYTES = 2 << 30  # the most output memory of rounds queued: a call that writes more runs long enough alone
GB = 1e9


class MemoryRefused(Exception):
    """The problem does not fit the device even with one buffer set; the message gives the arithmetic."""


def _gb(n: float) -> str:
    return f"{n / GB:.2f} GB" if n >= GB else f"{n / 1e6:.2f} MB"


def stated_bytes() -> Optional[int]:
    text = os.environ.get(MEMORY_ENV, "").strip()
    if not text:
        return None
    try:
        value = int(float(text))
    except ValueError:
        return None
    return value if value > 0 else None


def memory_share() -> Optional[float]:
    """The share of the device this evaluation keeps to (0 < share < 1), or None for the whole device."""
    text = os.environ.get(SHARE_ENV, "").strip()
    try:
        value = float(text) if text else 0.0
    except ValueError:
        return None
    return value if 0 < value < 1 else None


def free_bytes(gpu: bool, held: int = 0) -> Tuple[int, str]:
    """(bytes this evaluation may use on its device, where the figure comes from). `held`: arrays this process
    already holds that the plan counts (a measured figure no longer includes them)."""
    value, source = _measured_bytes(gpu, held)
    share = memory_share()
    if share is None:
        return value, source
    whole = stated_bytes() or _total_bytes(gpu)
    if whole is None:
        return value, source
    kept = int(whole * share)
    if kept >= value:
        return value, f"{source}, within this evaluation's share of {share:.2f} of the device"
    return kept, f"this evaluation's share of {share:.2f} of the device's {_gb(whole)}, judged beside others"


def gpu_free_bytes(device: Any = None) -> Tuple[int, int]:
    """(free, total) bytes of a GPU (the current one by default), free counting what this process's allocator
    holds unused (memory_reserved - memory_allocated): torch lends it again before asking the driver."""
    import torch
    free, total = torch.cuda.mem_get_info(device)
    unused = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return int(free + max(0, unused)), int(total)


def _total_bytes(gpu: bool) -> Optional[int]:
    """The device's whole memory: the GPU's, or the host's RAM."""
    if gpu:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            return gpu_free_bytes()[1]
        return None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _measured_bytes(gpu: bool, held: int) -> Tuple[int, str]:
    stated = stated_bytes()
    if stated is not None:
        return stated, f"stated by {MEMORY_ENV}"
    if gpu:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            return gpu_free_bytes()[0] + held, "free on the GPU"
        return 1 << 62, "not measured"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 + held, "available RAM"
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")), "available RAM"
    except (ValueError, OSError, AttributeError):
        return 1 << 62, "not measured"


@dataclass(frozen=True)
class MemoryPlan:
    input_bytes: int  # I: one set's input arrays (a pool entry)
    set_bytes: int  # S: one buffer set (its arrays) and the outputs one call returns in new memory
    output_bytes: int  # O: the outputs one call returns in new memory
    free_bytes: int  # what the device has for this evaluation
    source: str  # where free_bytes comes from
    sets: int  # buffer sets: the GPU's rotation or graph batch, the CPU's batch (shared by both kernels when 1)
    pool: int  # input sets kept to refill the buffers from
    group_rounds: int  # GPU rounds queued before the worker reads them
    gpu: bool

    @property
    def usable_bytes(self) -> int:
        return usable(self.free_bytes, self.gpu)

    @property
    def planned_bytes(self) -> int:
        timed = (timing_bytes(self.input_bytes, self.output_bytes) + (self.sets - 1) * self.set_bytes
                 + (self.pool - 1) * self.input_bytes + 2 * (self.group_rounds - 1) * self.output_bytes)
        return max(correctness_bytes(self.input_bytes, self.output_bytes), timed)

    @property
    def large(self) -> bool:
        return self.set_bytes >= LARGE_SET

    def set_for_round(self, r: int) -> int:
        """The buffer set round r runs in: the sets in turn."""
        return r % self.sets

    def to_json(self) -> dict:
        return {"sets": self.sets, "pool": self.pool, "group_rounds": self.group_rounds,
                "set_bytes": self.set_bytes, "input_bytes": self.input_bytes, "output_bytes": self.output_bytes,
                "free_bytes": self.free_bytes, "planned_bytes": self.planned_bytes, "source": self.source}


def usable(free: int, gpu: bool) -> int:
    return max(0, int(free * HEADROOM) - (GPU_RESERVE if gpu else 0))


def correctness_bytes(input_bytes: int, output_bytes: int) -> int:
    return 3 * input_bytes + 2 * output_bytes


def timing_bytes(input_bytes: int, output_bytes: int) -> int:
    """The timed calls with one buffer set, one pool entry and one round at a time."""
    return 2 * input_bytes + 3 * output_bytes


def minimum_bytes(input_bytes: int, set_bytes: int, output_bytes: int) -> int:
    return max(correctness_bytes(input_bytes, output_bytes), timing_bytes(input_bytes, output_bytes))


def refusal(input_bytes: int, set_bytes: int, output_bytes: int, free: int, source: str, gpu: bool) -> Optional[str]:
    """Why the problem cannot be judged on this device even with one buffer set, or None when it can."""
    need = minimum_bytes(input_bytes, set_bytes, output_bytes)
    have = usable(free, gpu)
    if need <= have:
        return None
    device = "GPU" if gpu else "machine"
    kept_back = f"{int(HEADROOM * 100)}%" + (f" less {_gb(GPU_RESERVE)} for the CUDA context" if gpu else "")
    return (f"The problem does not fit in this {device}'s memory, even judged with one buffer set: one input/output "
            f"set is {_gb(set_bytes)} (inputs {_gb(input_bytes)}, outputs returned {_gb(output_bytes)}); judging "
            f"holds at least {_gb(need)} at once (correctness: 3 copies of the inputs and 2 of the outputs, the "
            f"candidate's and the reference's; timing: 2 copies of the inputs and 3 of the outputs), and the "
            f"{device} has "
            f"{_gb(free)} ({source}), of which judging plans with {kept_back}: {_gb(have)}. Make the problem about "
            f"{max(2, int(need / max(have, 1) + 0.999))}x smaller (a smaller batch_size or dimension in the problem "
            f"file), or "
            f"judge it on a {device} with more memory.")


def plan(input_bytes: int, set_bytes: int, output_bytes: int, wanted_sets: int, wanted_pool: int, gpu: bool,
         free: Optional[int] = None, source: str = "given", wanted_rounds: int = GROUP_ROUNDS,
         held: int = 0) -> MemoryPlan:
    """The counts for one shape: each of the judge's wishes, cut to what fits (buffer sets first: the interval
    needs them; then the pool; then the rounds in flight), at least one each. Raises MemoryRefused when one of
    each does not fit."""
    if free is None:
        free, source = free_bytes(gpu, held)
    why = refusal(input_bytes, set_bytes, output_bytes, free, source, gpu)
    if why:
        raise MemoryRefused(why)
    spare = usable(free, gpu) - timing_bytes(input_bytes, output_bytes)
    sets = 1 + _how_many(spare, set_bytes, max(0, wanted_sets - 1))
    spare -= (sets - 1) * set_bytes
    pool = 1 + _how_many(spare, input_bytes, max(0, wanted_pool - 1))
    spare -= (pool - 1) * input_bytes
    wanted_rounds = min(wanted_rounds, max(1, ROUNDS_BYTES // max(1, 2 * output_bytes)))
    rounds = 1 + _how_many(spare, 2 * output_bytes, max(0, wanted_rounds - 1))
    return MemoryPlan(input_bytes=input_bytes, set_bytes=set_bytes, output_bytes=output_bytes, free_bytes=free,
                      source=source, sets=sets, pool=pool, group_rounds=rounds, gpu=gpu)


def _how_many(spare: int, each: int, most: int) -> int:
    if each <= 0:
        return most
    return max(0, min(most, spare // each))


# --- measuring a set, and giving memory back -----------------------------------------------------------------
def array_bytes(values: List[Any], skip: Optional[List[int]] = None) -> int:
    """Bytes of the arrays in a list of arguments or outputs (those at the indices in skip left out)."""
    from . import arrays as A
    skipped = set(skip or [])
    return sum(A.nbytes(leaf) for j, a in enumerate(values) if j not in skipped for leaf in A.leaves(a))


def new_output_bytes(outs: List[Any], args: List[Any]) -> int:
    """Bytes of the outputs a call returned in memory of their own (not in one of its arguments)."""
    from . import arrays as A
    leaves = [leaf for a in args for leaf in A.leaves(a)]
    return sum(A.nbytes(o) for o in outs if A.is_array(o) and not any(A.same_storage(o, leaf) for leaf in leaves))


def release(gpu: bool, set_bytes: int) -> None:
    """Device memory this process holds but no longer uses goes back to the device, so the other process of the
    evaluation (the reference, or the candidate's worker) can have it: torch's allocator otherwise keeps it.
    Only for large sets: for small ones the allocator's cache is what makes the next call cheap."""
    if not gpu or set_bytes < LARGE_SET:
        return
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        import gc
        gc.collect()
        torch.cuda.empty_cache()
