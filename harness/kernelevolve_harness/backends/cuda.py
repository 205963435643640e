"""CUDA C++: nvcc to a shared library with a unique path (an extern "C" launcher), loaded with ctypes.

`-Xptxas -v` gives registers, spills and shared memory per kernel; the architecture comes from the device
(nvidia-smi) unless KERNELEVOLVE_CUDA_ARCH says otherwise.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from typing import Any, Dict, List, Optional

from .. import static_c
from .base import Build, cache_dir, content_key, discard, run_tool
from .cpp import CppBackend, imported_symbols

NAMES = ("cuda",)


def device_arch() -> str:
    arch = os.environ.get("KERNELEVOLVE_CUDA_ARCH")
    if arch:
        return arch
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            r = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                               text=True, timeout=30)
            cap = r.stdout.strip().splitlines()[0].strip()
            major, minor = cap.split(".")
            return f"sm_{major}{minor}"
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            pass
    return "sm_90"


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def parse_ptxas(log: str, kernel: str) -> Dict[str, Any]:
    """Registers, spills and static shared memory of the kernel (the entry whose name contains KERNEL)."""
    entries: Dict[str, Dict[str, int]] = {}
    current = None
    for line in log.splitlines():
        m = _ENTRY.search(line) or _PROPS.search(line)
        if m:
            current = m.group(1)
            entries.setdefault(current, {})
            continue
        if current is None:
            continue
        m = _SPILL.search(line)
        if m:
            entries[current]["n_spills"] = int(m.group(1)) + int(m.group(2))
        m = _USED.search(line)
        if m:
            entries[current]["n_regs"] = int(m.group(1))
            entries[current]["shared"] = int(m.group(2) or 0)
    chosen = next((v for k, v in entries.items() if kernel in k and "n_regs" in v), None)
    if chosen is None:
        chosen = max((v for v in entries.values() if "n_regs" in v), key=lambda v: v["n_regs"], default={})
    return {"n_regs": chosen.get("n_regs"), "n_spills": chosen.get("n_spills", 0), "shared": chosen.get("shared", 0),
            "kernels": len(entries)}


class CudaBackend(CppBackend):
    name = "cuda"
    gpu = True
    suffix = ".cu"
    exports_kernel = False  # KERNEL is the __global__ function, called through the extern "C" launcher

    def preload_modules(self) -> List[str]:
        return ["torch"]

    def static_check(self, candidate: str, baseline: str) -> Optional[str]:
        return static_c.check(candidate, baseline, cuda=True)

    def build(self, source: str, out_dir: str, timeout: float, kernel: str, cache: bool = False,
              extra_flags: Optional[List[str]] = None) -> Build:
        nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        with open(source, encoding="utf-8", errors="replace") as f:
            text = f.read()
        arch = device_arch()
        flags = ["-O3", f"-arch={arch}", "-Xcompiler", "-fPIC", "-shared", "-Xptxas", "-v"] + (extra_flags or [])
        if cache:
            out = os.path.join(cache_dir(), "builds", f"{content_key('cuda', nvcc, ' '.join(flags), text)}.so")
            if os.path.exists(out) and os.path.exists(out + ".json"):
                import json
                with open(out + ".json") as f:
                    return Build(ok=True, artifact=out, stats=json.load(f))
        else:
            out = os.path.join(out_dir, f"k_{uuid.uuid4().hex}.so")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tmp = f"{out}.{uuid.uuid4().hex}.tmp.so"
        t0 = time.monotonic()
        try:
            r = run_tool([nvcc, *flags, source, "-o", tmp], timeout=timeout, scratch=out_dir)
        except subprocess.TimeoutExpired:
            discard(tmp)
            return Build(ok=False, timed_out=True, log=f"nvcc ran past {timeout:.0f} s")
        except OSError as e:
            return Build(ok=False, log=f"cannot run nvcc ({e}); install the CUDA toolkit or set NVCC")
        log = r.stdout + r.stderr
        stats = parse_ptxas(log, kernel)
        stats.update(compiler="nvcc", arch=arch, compile_s=round(time.monotonic() - t0, 3))
        if r.returncode != 0:
            discard(tmp)
            return Build(ok=False, log=log, stats=stats)
        os.replace(tmp, out)
        if cache:
            import json
            with open(out + ".json", "w") as f:
                json.dump(stats, f)
        return Build(ok=True, artifact=out, stats=stats,
                     log="\n".join(l for l in log.splitlines() if "ptxas info" not in l and l.strip()))

    def load(self, artifact: str, kernel: str) -> Any:
        import ctypes
        import torch  # initialises CUDA in this process before the library's first launch
        torch.cuda.init()
        # KERNEL is the __global__ function; the spec's launch calls the extern "C" launcher by its own name.
        return ctypes.CDLL(artifact, mode=os.RTLD_LOCAL | os.RTLD_NOW)

    def synchronize(self) -> None:
        import torch
        torch.cuda.synchronize()


def make(name: str) -> CudaBackend:
    return CudaBackend()


__all__ = ["CudaBackend", "parse_ptxas", "imported_symbols"]
