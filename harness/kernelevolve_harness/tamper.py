"""The baseline's surroundings, proven unchanged by the candidate (the candidate's worker; judge.py says what is
found).

The baseline is timed in the candidate's process, beside it (shape_timing.py). A candidate that slows the
baseline down there, or changes what it computes, would read faster than the user would measure: a module that
rebinds numpy.cumsum at import, through a helper so that no assignment names numpy, read 26.3x where its kernel
alone reads 2.36x. The static scan (static_py.py) sees only what is written; this sees what was done. A snapshot
is taken before the candidate's code is first loaded and compared after its import and again after the timed
rounds:

- every callable, class and module reachable as an attribute of the modules the baseline's process has loaded
  from the libraries it computes with (numpy, torch, triton, math, the spec's and the baseline's own modules, and
  their submodules), and every attribute of their classes (a tensor method set on torch.Tensor), by identity;
  also which module object each of those names maps to in sys.modules (a module replaced there);
- the environment variables (OMP_NUM_THREADS and the like, read by libraries as they start thread pools);
- the libraries' global switches that change the baseline's speed or rounding (torch's threads, TF32, cuDNN's
  algorithm choice and determinism, the default dtype, grad mode; numpy's error handling and buffer size);
- the machine code of every library loaded: a page of an executable mapping that has been written (a ctypes or
  C++ patch of a function's code) shows as private dirty memory in /proc/self/smaps.

What it cannot see is a native write into a library's data (glibc's malloc settings, a function pointer in a
table): the baseline's time in this process is also compared with its time in the reference process, which never
ran candidate code (clean_baseline.py).

A library patches itself as it loads parts of itself: torch._dynamo, imported at its first use (a Triton launch
can reach it), rebinds torch.manual_seed to the same function wrapped so that dynamo does not trace it. Such a
rebinding (LIBRARY_WRAPS: the new object wraps the very object the snapshot saw, and the module that makes it is
loaded) is the library's, not the candidate's; without this an honest Triton kernel read `incorrect` on an H100
("rebound torch.manual_seed during its calls").
"""
from __future__ import annotations

import os
import sys
import types
from typing import Any, Dict, List, Optional, Set, Tuple

LIBRARIES = {"numpy", "torch", "triton", "math", "cmath", "operator", "functools", "builtins"}
# environment variables the libraries set themselves as they start (torch's lazy CUDA initialization)
SET_BY_LIBRARIES = {"CUDA_MODULE_LOADING"}
# attributes a library rebinds to a wrapper of the same object when one of its modules loads: (module, name) ->
# the module whose import does it
LIBRARY_WRAPS = {("torch", "manual_seed"): "torch._dynamo"}

Key = Tuple[str, ...]


def _watched(roots: Set[str]) -> List[Tuple[str, Any]]:
    return [(name, m) for name, m in list(sys.modules.items())
            if m is not None and name.split(".")[0] in roots]


def _code(v: Any) -> bool:
    """What runs: functions, classes, modules, descriptors. A library's flags and caches (torch.cuda._initialized,
    __warningregistry__) change as it works; the switches that matter are compared by value (_switches)."""
    return callable(v) or isinstance(v, (types.ModuleType, property, staticmethod, classmethod))


def _attributes(roots: Set[str]) -> Dict[Key, int]:
    out: Dict[Key, int] = {}
    for mname, m in _watched(roots):
        out[("sys.modules", mname)] = id(m)
        d = getattr(m, "__dict__", None)
        if not isinstance(d, dict):
            continue
        for k, v in list(d.items()):
            if not _code(v):
                continue
            out[(mname, k)] = id(v)
            # a class's attributes once, under the module that names it as its own (torch.Tensor, not each alias)
            if isinstance(v, type) and getattr(v, "__module__", "") == mname and getattr(v, "__name__", "") == k:
                for ck, cv in list(vars(v).items()):
                    if _code(cv):
                        out[(mname, k, ck)] = id(cv)
    return out


def _c_environment() -> Dict[str, str]:
    """The C library's environment (what setenv changes, and what libraries read): os.environ is Python's copy,
    made at start, which a setenv from native code leaves as it was."""
    try:
        import ctypes
        env = ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError, AttributeError):
        return dict(os.environ)
    out: Dict[str, str] = {}
    i = 0
    while env[i]:
        name, _, value = env[i].decode("utf-8", "replace").partition("=")
        out[name] = value
        i += 1
    return out


def _switches() -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    np = sys.modules.get("numpy")
    if np is not None:
        out["numpy.geterr()"] = sorted(np.geterr().items())
        out["numpy.getbufsize()"] = np.getbufsize()
    t = sys.modules.get("torch")
    if t is not None:
        try:
            out["torch.get_num_threads()"] = t.get_num_threads()
            out["torch.is_grad_enabled()"] = t.is_grad_enabled()
            out["torch.get_default_dtype()"] = str(t.get_default_dtype())
            out["torch.are_deterministic_algorithms_enabled()"] = t.are_deterministic_algorithms_enabled()
            out["torch.backends.cudnn.enabled"] = t.backends.cudnn.enabled
            out["torch.backends.cudnn.benchmark"] = t.backends.cudnn.benchmark
            out["torch.backends.cudnn.deterministic"] = t.backends.cudnn.deterministic
            out["torch.backends.cudnn.allow_tf32"] = t.backends.cudnn.allow_tf32
            out["torch.backends.cuda.matmul.allow_tf32"] = t.backends.cuda.matmul.allow_tf32
            out["torch.get_float32_matmul_precision()"] = t.get_float32_matmul_precision()
        except Exception:  # an older or partial torch: what it has is compared
            pass
    return out


def _code_written() -> Dict[str, int]:
    """Kilobytes of private dirty memory in each library's executable mappings (0 for code never written)."""
    out: Dict[str, int] = {}
    current: Optional[str] = None
    try:
        with open("/proc/self/smaps") as f:
            for line in f:
                head = line.split(None, 5)
                if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
                    current = (head[5].strip() if len(head) > 5 else "[anonymous]") if "x" in head[1] else None
                elif current is not None and line.startswith("Private_Dirty:"):
                    out[current] = out.get(current, 0) + int(line.split()[1])
    except OSError:
        pass  # no /proc (not Linux): the other checks stand
    return out


class Snapshot:
    """What the candidate may not change, taken before its code is first loaded."""

    def __init__(self, own_modules: List[str]) -> None:
        self.roots = LIBRARIES | {m for m in own_modules if m}
        self.attributes = _attributes(self.roots)
        self.wrappable = {key: getattr(sys.modules[key[0]], key[1], None) for key in LIBRARY_WRAPS
                          if key[0] in sys.modules}
        self.environment = _c_environment()
        self.switches = _switches()
        self.code = _code_written()

    def _wrapped_by_library(self, key: Key) -> bool:
        """The library's own rebinding (LIBRARY_WRAPS): the module that makes it is loaded, and the new object wraps
        the one the snapshot saw."""
        if key not in self.wrappable or LIBRARY_WRAPS[key] not in sys.modules:
            return False
        now = getattr(sys.modules.get(key[0]), key[1], None)
        return now is not None and getattr(now, "__wrapped__", None) is self.wrappable[key]

    def changed(self) -> Optional[str]:
        """One sentence naming the first change found, or None."""
        now = _attributes(self.roots)
        for key, before in sorted(self.attributes.items()):
            after = now.get(key)
            if after != before and not self._wrapped_by_library(key):
                what = key[1] if key[0] == "sys.modules" else ".".join(key)
                if key[0] == "sys.modules":
                    return f"replaced the module {what} in sys.modules"
                return f"{'removed' if after is None else 'rebound'} {what}"
        for key in sorted(now.keys() - self.attributes.keys()):
            # a new attribute on a class that was there before shadows the one it inherits (torch.Tensor.relu)
            if len(key) == 3 and key[:2] in self.attributes:
                return f"set {'.'.join(key)}"
        env = _c_environment()
        for name in sorted((set(env) | set(self.environment)) - SET_BY_LIBRARIES):
            if env.get(name) != self.environment.get(name):
                return f"changed the environment variable {name}"
        switches = _switches()
        for name, before in self.switches.items():
            if switches.get(name) != before:
                return f"changed {name} from {before!r} to {switches.get(name)!r}"
        for path, kb in _code_written().items():
            # a library loaded before (the candidate's own, loaded since, is its business; anonymous executable
            # memory is a JIT's, written as it works)
            if path.startswith("/") and path in self.code and kb > self.code[path]:
                return f"wrote into the machine code of {path}"
        return None
