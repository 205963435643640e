"""Triton: the candidate module is imported under a unique name from a unique path; each worker has its own
TRITON_CACHE_DIR (set by the judge), so candidates never share compiled kernels."""
from __future__ import annotations

import importlib.util
import json
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


def copy_cache(src: str, dst: str) -> None:
    """Copies a Triton cache folder so that the copy serves lookups on its own. Triton finds a compiled kernel
    through a group file (__grp__<name>.json) that lists its files by absolute path: a plain copy still points
    into the folder it came from, and once that folder is gone, every lookup misses and the kernel is compiled
    again (into the copy, so a count of new entries does not see it). The copy's group files point into the copy."""
    shutil.copytree(src, dst, dirs_exist_ok=True)
    for entry in os.listdir(dst):
        folder = os.path.join(dst, entry)
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if not (name.startswith("__grp__") and name.endswith(".json")):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as f:
                    group = json.load(f)
                children = group.get("child_paths")
                if not isinstance(children, dict):
                    continue
                moved = {k: os.path.join(folder, os.path.basename(str(v))) for k, v in children.items()}
                if moved == children or not all(os.path.exists(v) for v in moved.values()):
                    continue
                group["child_paths"] = moved
                tmp = f"{path}.{os.getpid()}.tmp"
                with open(tmp, "w", encoding="utf-8") as f:
                    json.dump(group, f)
                os.replace(tmp, path)
            except (OSError, ValueError):
                continue  # a lookup that misses costs a compile, never a verdict


def cache_writes(folder: Optional[str]) -> Dict[str, int]:
    """Every file in a Triton cache folder with its modification time: a compile writes files (new ones, or
    the same names again where a lookup missed), a lookup that hits writes none."""
    out: Dict[str, int] = {}
    if not folder or not os.path.isdir(folder):
        return out
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            try:
                out[path] = os.stat(path).st_mtime_ns
            except OSError:
                pass
    return out


def compiled_between(before: Dict[str, int], after: Dict[str, int]) -> int:
    """How many cache entries (kernels, launchers) were written between two cache_writes snapshots."""
    return len({os.path.dirname(p) for p, t in after.items() if before.get(p) != t})

