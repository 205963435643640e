"""Triton: the candidate module is imported under a unique name from a unique path; each worker has its own
TRITON_CACHE_DIR (set by the judge), so candidates never share compiled kernels."""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import uuid
from typing import Any, Dict, List, Optional

from .. import static_py
from .base import Backend, Build, content_key


class TritonBackend(Backend):
    name = "triton"
    gpu = True
    suffix = ".py"

    def static_check(self, candidate: str, baseline: str) -> Optional[str]:
        return static_py.check(candidate, baseline)

    def build(self, source: str, out_dir: str, timeout: float, kernel: str, cache: bool = False,
              extra_flags: Optional[List[str]] = None) -> Build:
        # Nothing to compile ahead of time (Triton compiles at the first call); check the syntax and that the
        # kernel is defined, then give the module a unique path.
        import ast
        with open(source, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            tree = ast.parse(text, filename=source)
        except SyntaxError as e:
            return Build(ok=False, log=f"{os.path.basename(source)}:{e.lineno}: {e.msg}")
        if not any(isinstance(n, ast.FunctionDef) and n.name == kernel for n in ast.walk(tree)):
            return Build(ok=False, log=f"{os.path.basename(source)} does not define the kernel {kernel}")
        # The baseline's module name is fixed by its text (recent Triton versions key compiled kernels by the
        # function's full name, module included), so what one evaluation compiled for it, kept by the judge,
        # serves the next; each candidate's name is new.
        stem = f"kernelevolve_baseline_{content_key(text)}" if cache else f"k_{uuid.uuid4().hex}"
        out = os.path.join(out_dir, f"{stem}.py")
        os.makedirs(out_dir, exist_ok=True)
        shutil.copyfile(source, out)
        return Build(ok=True, artifact=out, stats={"compiler": "triton"})

    def load(self, artifact: str, kernel: str) -> Any:
        name = os.path.splitext(os.path.basename(artifact))[0]
        spec = importlib.util.spec_from_file_location(name, artifact)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # @triton.jit needs the module importable by name
        spec.loader.exec_module(module)
        getattr(module, kernel)
        return module

    def synchronize(self) -> None:
        import torch
        torch.cuda.synchronize()

    def runtime_stats(self, k: Any, kernel: str) -> Dict[str, Any]:
        """n_regs / n_spills / shared of the compiled kernel(s) in the JIT function's cache."""
        fn = getattr(k, kernel, None)
        for _ in range(4):  # autotune/heuristics wrap the JITFunction in `.fn`; the JITFunction's own .fn is Python
            if fn is None or hasattr(fn, "device_caches") or hasattr(fn, "cache"):
                break
            fn = getattr(fn, "fn", None)
        stats: Dict[str, Any] = {}
        compiled = []
        caches = getattr(fn, "device_caches", None)
        if isinstance(caches, dict):
            for entry in caches.values():
                cache = entry[0] if isinstance(entry, tuple) else entry
                if isinstance(cache, dict):
                    compiled.extend(cache.values())
        elif isinstance(getattr(fn, "cache", None), dict):
            for per_dev in fn.cache.values():
                compiled.extend(per_dev.values())
        best = None
        for ck in compiled:
            try:
                ck._init_handles()
                row = {"n_regs": int(ck.n_regs), "n_spills": int(ck.n_spills), "shared": int(ck.metadata.shared),
                       "num_warps": int(ck.metadata.num_warps), "num_stages": int(ck.metadata.num_stages)}
            except Exception:
                continue
            if best is None or row["n_regs"] > best["n_regs"]:
                best = row
        if best:
            stats.update(best)
            stats["variants"] = len(compiled)
        return stats
