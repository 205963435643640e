"""A candidate's Triton kernels compiled side by side before its first calls.

Triton compiles a kernel at its first call for each specialization (argument types, alignments, constexpr values,
warps and stages), so the first call of every shape compiles one after the other: 2.2 s of a softmax candidate's
8 s on a busy H200 host, with 12 evaluations side by side, for three shapes. Before those calls, each is made once
with Triton's compile hook (`triton.knobs.runtime.jit_cache_hook`) answering "skip": nothing compiles and nothing
launches, and the hook records what each launch would have compiled (its JIT function and serialized
specialization). The recorded kernels are then compiled in threads (`JITFunction.preload`, into the function's own
cache: ptxas runs as a process of its own and much of the compiler outside the interpreter's lock), and the calls
that follow find them compiled.

Nothing here is trusted for a verdict: a kernel that does not compile ahead is compiled by its first call as
before, and that call reports what went wrong. A module with an autotuner is left alone: the autotuner would time
launches that were skipped and keep the configuration it picked from nothing.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Tuple

DEFAULT_THREADS = 4  # KERNELEVOLVE_COMPILE_THREADS; 0 or 1 compiles at the first calls, one after the other


def threads() -> int:
    try:
        return max(0, int(os.environ.get("KERNELEVOLVE_COMPILE_THREADS", DEFAULT_THREADS)))
    except ValueError:
        return DEFAULT_THREADS


def _runtime_knobs() -> Any:
    try:
        from triton import knobs  # Triton 3.4 on
    except ImportError:
        return None
    runtime = getattr(knobs, "runtime", None)
    return runtime if runtime is not None and hasattr(runtime, "jit_cache_hook") else None


def has_autotuner(module: Any) -> bool:
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return False
    return any(isinstance(v, Autotuner) for v in vars(module).values())


def record(calls: List[Callable[[], None]]) -> List[Tuple[Any, str]]:
    """Makes each call with every compile skipped; the (JIT function, specialization) each launch would have
    compiled, once each. A call that raises (its launcher read an output that was never written) ends its own
    recording only."""
    runtime = _runtime_knobs()
    if runtime is None:
        return []
    found: Dict[Tuple[int, str], Tuple[Any, str]] = {}

    def hook(*, fn: Any = None, compile: Any = None, **_: Any) -> bool:
        jit = getattr(fn, "jit_function", None)
        data = compile.get("specialization_data") if isinstance(compile, dict) else None
        if jit is None or not isinstance(data, str) or not hasattr(jit, "preload"):
            return False  # compiled here, at this call, as without the hook
        found.setdefault((id(jit), data), (jit, data))
        return True

    before = runtime.jit_cache_hook
    runtime.jit_cache_hook = hook
    try:
        for call in calls:
            try:
                call()
            except Exception:
                pass
    finally:
        runtime.jit_cache_hook = before
    return list(found.values())


def compile_ahead(module: Any, calls: List[Callable[[], None]]) -> Dict[str, Any]:
    """Records the kernels the calls would compile and compiles them in threads; what it did, for the verdict's
    compile facts ({} where it did nothing)."""
    n = threads()
    if n <= 1 or has_autotuner(module):
        return {}
    t = time.monotonic()
    found = record(calls)
    if len(found) < 2:  # one kernel compiles as fast at its call
        return {}
    for jit, _ in found:  # the function's hash and globals, worked out once here rather than by every thread
        try:
            getattr(jit, "cache_key")
        except Exception:
            pass

    from triton.runtime import driver
    device = driver.active.get_current_device()

    def one(job: Tuple[Any, str]) -> bool:
        try:
            driver.active.set_current_device(device)  # a new thread starts on device 0
            job[0].preload(job[1])
            return True
        except Exception:
            return False

    with ThreadPoolExecutor(max_workers=min(n, len(found)), thread_name_prefix="compile-ahead") as pool:
        done = sum(pool.map(one, found))
    return {"compiled_ahead": done, "compile_ahead_s": round(time.monotonic() - t, 3)}
