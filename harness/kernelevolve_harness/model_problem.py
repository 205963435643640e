"""A KernelBench-format problem at run time: what the generated spec (kernelbench.py) calls in the worker and
reference processes.

Shapes: the problem's module-level size constants are one shape (those get_inputs() reads: a constant read only
by get_init_inputs() is an argument of Model, not a size); a problem may list more in SHAPES (dicts of
constants to override), which get_inputs() and get_init_inputs() then read. Inputs: get_inputs() under the
seed the judge picks (Python's, numpy's and torch's generators seeded alike), drawn on the problem's GPU (torch's
default device) or on the host and moved to the problem's device.

Weights: each (module, shape) gets one instance, made under a fixed seed from get_init_inputs() (as
KernelBench makes Model and ModelNew under the same seed); then every parameter, buffer or numpy attribute of
ModelNew whose name and shape match one of Model's is copied from a Model made under that seed, so a ModelNew
that creates its weights in another order still computes with the reference's weights.
"""
from __future__ import annotations

import ast
import ctypes
import importlib.util
import os
import random
import sys
import uuid
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import numpy as np

from .tolerances import KERNELBENCH_TOLERANCE
from .kernelbench import init_only_names

INIT_SEED = 42


def _torch() -> Any:
    return sys.modules.get("torch")


def _import(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _constants(module: Any) -> Dict[str, Any]:
    return {k: v for k, v in vars(module).items()
            if not k.startswith("_") and k.isidentifier() and type(v) in (int, float, bool) and k != "TORCH_COMPILE"}


def _out_of_memory(t: Any, e: BaseException) -> bool:
    oom = getattr(t, "OutOfMemoryError", None)
    return (oom is not None and isinstance(e, oom)) or "out of memory" in str(e).lower()


def _seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    t = _torch()
    if t is not None:
        t.manual_seed(seed)


# --- the numpy host-code watch (model-cpu) ----------------------------------------------------------------
# numpy functions a ModelNew's host code may call on its inputs: allocation, layout and shape queries.
NUMPY_PLUMBING = {"empty_like", "zeros_like", "ones_like", "full_like", "ascontiguousarray", "copyto", "reshape",
                  "ravel", "shape", "ndim", "size", "result_type", "can_cast", "shares_memory", "may_share_memory"}
_watching: Optional[Set[str]] = None


class WatchedArray(np.ndarray):
    """An input as ModelNew sees it during the watched call: every numpy computation on it is recorded."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if _watching is not None:
            _watching.add(f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"))
        plain = [x.view(np.ndarray) if isinstance(x, WatchedArray) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, WatchedArray) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*plain, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if _watching is not None and func.__name__ not in NUMPY_PLUMBING:
            _watching.add(f"numpy.{func.__name__}")
        return super().__array_function__(func, tuple(t for t in types if t is not WatchedArray) or (np.ndarray,),
                                          args, kwargs)


def numpy_watch(call: Callable[[], Any]) -> Tuple[Any, Optional[Set[str]]]:
    """(call's result, numpy computations the candidate's host code ran on its inputs), as op_watch.watch."""
    global _watching
    _watching = set()
    try:
        result = call()
        return result, set(_watching)
    finally:
        _watching = None


def _plain(x: Any) -> Any:
    if isinstance(x, WatchedArray):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


# --- the C++ library a model-cpu ModelNew calls -----------------------------------------------------------
class CppLibrary:
    """The candidate's CPP_SOURCE, built by the judge and loaded here: `cpp.my_kernel(out, x, n)` passes
    arrays as pointers to their data, ints as int64_t and floats as double (the kernel's parameter types)."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("_"):
            raise AttributeError(name)
        fn = getattr(self._lib, name)  # AttributeError names the missing symbol
        fn.restype = None

        def call(*args: Any) -> None:
            converted = []
            for i, a in enumerate(args):
                t = _torch()
                if isinstance(a, np.ndarray):
                    if not a.flags.c_contiguous:
                        raise TypeError(f"{name}: argument {i} is not C-contiguous; pass np.ascontiguousarray(x)")
                    converted.append(ctypes.c_void_p(a.ctypes.data))
                elif t is not None and isinstance(a, t.Tensor):
                    if not a.is_contiguous() or a.device.type != "cpu":
                        raise TypeError(f"{name}: argument {i} must be a contiguous CPU tensor")
                    converted.append(ctypes.c_void_p(a.data_ptr()))
                elif isinstance(a, (bool, int, np.integer)):
                    converted.append(ctypes.c_int64(int(a)))
                elif isinstance(a, (float, np.floating)):
                    converted.append(ctypes.c_double(float(a)))
                else:
                    raise TypeError(f"{name}: argument {i} is {type(a).__name__}; pass arrays, ints or floats")
            fn(*converted)
        return call


# ---------------------------------------------------------------------------------------------------------
class ModelProblem:
    def __init__(self, path: str, device: str) -> None:
        self.path = path
        self.device = device
        self.module = _import(path, f"kernelevolve_problem_{uuid.uuid4().hex}")
        self.defaults = _constants(self.module)
        declared = getattr(self.module, "SHAPES", None)
        if declared is not None:
            if not isinstance(declared, (list, tuple)) or not declared or not all(isinstance(s, dict) for s in declared):
                raise ValueError("SHAPES in a problem file must be a non-empty list of dicts of its size constants")
            unknown = sorted({k for s in declared for k in s} - set(self.defaults))
            if unknown:
                raise ValueError(f"SHAPES names {', '.join(unknown)}, which are not module-level size constants "
                                 f"of the problem")
            self.shapes = [dict(s) for s in declared]
        else:
            # the sizes get_inputs() reads; a constant only get_init_inputs() reads is an argument of Model
            with open(path, encoding="utf-8") as f:
                init_only = init_only_names(ast.parse(f.read(), filename=path))
            self.shapes = [{k: v for k, v in self.defaults.items() if type(v) is int and k not in init_only}]
        # KernelBench's own rule unless the problem file gives a TOLERANCE (compare.py, docs/harness.md)
        self.tolerance = dict(getattr(self.module, "TOLERANCE", None) or KERNELBENCH_TOLERANCE)
        self.instances: Dict[Tuple[int, Tuple[Any, ...]], Any] = {}
        self.by_signature: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
        self.keep: List[Any] = []  # the modules behind self.instances' keys stay alive (ids are not reused)

    # --- shapes and inputs -------------------------------------------------------------------------------
    def apply(self, shape: Dict[str, Any]) -> None:
        for k, v in self.defaults.items():
            setattr(self.module, k, shape.get(k, v))

    def inputs(self, shape: Dict[str, Any], seed: int) -> Tuple[Any, ...]:
        self.apply(shape)
        args = [self.to_device(a) for a in self.draw(seed)]
        sig = self.signature(args)
        known = self.by_signature.setdefault(sig, dict(shape))
        if known != dict(shape):
            raise ValueError(f"shapes {known} and {shape} give inputs of the same sizes; make them differ")
        return tuple(args)

    def draw(self, seed: int) -> List[Any]:
        """get_inputs() under the seed. On a GPU, its tensors are drawn there (torch's default device set to the
        GPU while it runs): the same distributions from the GPU's generator, the same values in every process of
        one device; drawing a published KernelBench input on the host took seconds (6.4 GB of torch.rand) and
        this was done some fifteen times per evaluation. KERNELEVOLVE_INPUTS_ON_HOST=1, or a get_inputs() that
        fails so, draws on the host as KernelBench does."""
        t = _torch()
        if t is not None and self.device != "cpu" and os.environ.get("KERNELEVOLVE_INPUTS_ON_HOST") != "1":
            _seed(seed)
            try:
                with t.device(self.device):
                    return list(self.module.get_inputs())
            except Exception as e:
                if _out_of_memory(t, e):
                    # never drawn on the host instead: the other process of the evaluation drew on the device,
                    # and the two draws would differ (the judge would see an input changed)
                    raise

        _seed(seed)
        return list(self.module.get_inputs())

    def to_device(self, a: Any) -> Any:
        t = _torch()
        if t is not None and isinstance(a, t.Tensor):
            return a.to(self.device).contiguous()
        if isinstance(a, np.ndarray):
            return np.ascontiguousarray(a)
        return a

    @staticmethod
    def signature(args: List[Any]) -> Tuple[Any, ...]:
        return tuple((tuple(a.shape), str(a.dtype)) if hasattr(a, "shape") and hasattr(a, "dtype") else repr(a)
                     for a in args)

    # --- instances -------------------------------------------------------------------------------------
    def instance(self, k: Any, args: Tuple[Any, ...]) -> Any:
        shape = self.by_signature.get(self.signature(list(args)))
        if shape is None:
            raise ValueError("launch() was called with inputs that inputs() did not make")
        key = (id(k), tuple(sorted(shape.items())))
        inst = self.instances.get(key)
        if inst is None:
            inst = self.make(k, shape)
            self.instances[key] = inst
            self.keep.append(k)
        return inst

    def init_inputs(self, shape: Dict[str, Any]) -> List[Any]:
        self.apply(shape)
        _seed(INIT_SEED)
        return list(self.module.get_init_inputs())

    def make(self, k: Any, shape: Dict[str, Any]) -> Any:
        cls = getattr(k, "ModelNew", None)
        candidate = cls is not None
        cls = cls if candidate else getattr(k, "Model")
        init = self.init_inputs(shape)
        _seed(INIT_SEED)
        inst = cls(*init)
        t = _torch()
        if t is not None and isinstance(inst, t.nn.Module):
            inst = inst.to(self.device)
        if candidate:
            init = self.init_inputs(shape)
            _seed(INIT_SEED)
            self.copy_weights(self.module.Model(*init), inst)
        elif getattr(k, "TORCH_COMPILE", False) is True and t is not None:
            # the second baseline: the problem's Model under torch.compile (set only in a baseline file)
            inst = t.compile(inst)
        return inst

    def copy_weights(self, ref: Any, inst: Any) -> None:
        t = _torch()
        if t is not None and isinstance(ref, t.nn.Module) and isinstance(inst, t.nn.Module):
            ours = inst.state_dict()
            theirs = ref.state_dict()
            with t.no_grad():
                for name, value in theirs.items():
                    if name in ours and tuple(ours[name].shape) == tuple(value.shape):
                        ours[name].copy_(value)
            return
        for name, value in vars(ref).items():
            mine = getattr(inst, name, None)
            if isinstance(value, np.ndarray) and isinstance(mine, np.ndarray) and mine.shape == value.shape:
                mine[...] = value

    # --- one call --------------------------------------------------------------------------------------
    def reference(self, *args: Any) -> Any:
        """The problem's Model in eager mode, whatever baseline is timed (a torch.compile baseline too)."""
        return self.launch(self.module, *args)

    def launch(self, k: Any, *args: Any) -> Any:
        inst = self.instance(k, args)
        t = _torch()
        if _watching is not None and hasattr(k, "ModelNew"):
            args = tuple(a.view(WatchedArray) if isinstance(a, np.ndarray) else a for a in args)
        if t is not None and isinstance(inst, t.nn.Module):
            with t.no_grad():
                return inst(*args)
        return _plain(inst(*args) if callable(inst) else inst.forward(*args))
