"""ModelNew candidates of KernelBench-format problems (kernelbench.py): a Python module defining ModelNew.

model-cuda: torch problems on the GPU; ModelNew's kernels are Triton (or anything its module builds without
the forbidden modules), and its host code is watched for torch operators as a Triton candidate's is, but with
none allowed (the baseline is those operators). model-cpu: numpy problems (or torch on a CPU host); the
candidate's C++ is the module-level string CPP_SOURCE, checked and built here as a cpp candidate is, and
reached from ModelNew as `cpp.<function>(...)` (model_problem.CppLibrary).
"""
from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import sys
import uuid
from typing import Any, Callable, List, Optional, Set, Tuple

from .. import static_c, static_model
from .base import Backend, Build, content_key
from .cpp import CppBackend, imported_symbols
from .triton import TRITON_PRELOAD, WorkerCaches

NAMES = ("model-cpu", "model-cuda")


class ModelBackend(WorkerCaches, Backend):
    suffix = ".py"
    watches_operators = True
    preloads_baseline = True

    def __init__(self, device: str) -> None:
        super().__init__()
        self.name = f"model-{device}"
        self.gpu = device == "cuda"
        self.graph_capture = self.gpu
        self.baseline_text: Optional[str] = None
        self.cpp = CppBackend()

    # --- judge side -----------------------------------------------------------------------------------
    def static_check(self, candidate: str, baseline: str) -> Optional[str]:
        self.baseline_text = baseline
        reason = static_model.check(candidate, baseline)
        if reason or candidate == baseline:
            return reason
        tree = ast.parse(candidate)
        src = static_model.cpp_source(tree)
        if src is not None:
            if self.gpu:
                return "CPP_SOURCE is for CPU problems; on the GPU write the kernels in Triton."
            base_src = static_model.cpp_source(ast.parse(baseline)) if baseline else None
            return static_c.check(src, base_src or "", cuda=False)
        return None

    def build(self, source: str, out_dir: str, timeout: float, kernel: str, cache: bool = False,
              extra_flags: Optional[List[str]] = None) -> Build:
        with open(source, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            tree = ast.parse(text, filename=source)
        except SyntaxError as e:
            return Build(ok=False, log=f"{os.path.basename(source)}:{e.lineno}: {e.msg}")
        name = os.path.basename(source)
        if not cache and not static_model.defines_model_new(tree) and text != self.baseline_text:
            return Build(ok=False, log=f"{name} does not define class ModelNew; error: a candidate defines "
                                       f"ModelNew(nn.Module) with the problem's init arguments and forward inputs")
        if cache and not any(isinstance(n, ast.ClassDef) and n.name == kernel for n in tree.body):
            return Build(ok=False, log=f"{name} does not define class {kernel}")
        stem = f"kernelevolve_problem_{content_key(text)}" if cache else f"k_{uuid.uuid4().hex}"
        out = os.path.join(out_dir, f"{stem}.py")
        os.makedirs(out_dir, exist_ok=True)
        shutil.copyfile(source, out)
        stats = {"compiler": "python"}
        src = static_model.cpp_source(tree)
        if src:
            cpp_path = os.path.join(out_dir, f"{stem}_cpp.cpp")
            with open(cpp_path, "w", encoding="utf-8") as f:
                f.write(src)
            built = self.cpp.build(cpp_path, out_dir, timeout, kernel="", cache=False)
            if not built.ok:
                return Build(ok=False, log=built.log, stats=built.stats, timed_out=built.timed_out)
            os.replace(built.artifact, out[:-3] + ".so")
            stats = dict(built.stats)
        return Build(ok=True, artifact=out, stats=stats)

    def artifact_check(self, candidate: Build, baseline: Build) -> Optional[str]:
        lib = candidate.artifact[:-3] + ".so"
        if not os.path.exists(lib):
            return None
        syms = imported_symbols(lib)
        base_lib = baseline.artifact[:-3] + ".so"
        base = imported_symbols(base_lib) if os.path.exists(base_lib) else []
        bad = static_c.forbidden_symbols(syms or [], base or [])
        if bad:
            return (f"The built CPP_SOURCE calls {', '.join(bad[:5])}, which kernels may not use "
                    f"(threads, processes, exits, timers, I/O, the Python API or library fallbacks).")
        return None

    # --- worker side ----------------------------------------------------------------------------------
    def load(self, artifact: str, kernel: str) -> Any:
        name = os.path.splitext(os.path.basename(artifact))[0]
        spec = importlib.util.spec_from_file_location(name, artifact)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        lib = artifact[:-3] + ".so"
        if os.path.exists(lib):
            import ctypes
            from ..model_problem import CppLibrary
            module.cpp = CppLibrary(ctypes.CDLL(lib, mode=os.RTLD_LOCAL | os.RTLD_NOW))  # type: ignore[attr-defined]
        sys.modules[name] = module  # @triton.jit needs the module importable by name
        spec.loader.exec_module(module)
        return module

    def synchronize(self) -> None:
        if self.gpu:
            import torch
            torch.cuda.synchronize()

    def preload_modules(self) -> List[str]:
        return ["torch", *TRITON_PRELOAD] if self.gpu else []

    def host_op_watch(self) -> Tuple[Callable[[Callable[[], Any]], Tuple[Any, Optional[Set[str]]]], str]:
        """How the candidate's host code is watched in its first call per shape, and the library's name."""
        if self.gpu:
            from ..op_watch import watch
            return watch, "torch"
        from ..model_problem import numpy_watch
        return numpy_watch, "numpy"


def make(name: str) -> ModelBackend:
    return ModelBackend(name.split("-", 1)[1])
