"""C++ on the CPU: g++ to a shared library with a unique path, loaded with ctypes (RTLD_LOCAL)."""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import uuid
from typing import Any, List, Optional

from .. import static_c
from .base import Backend, Build, cache_dir, content_key, discard, run_tool

NAMES = ("cpp",)
CXX_FLAGS = ["-O3", "-march=native", "-std=c++17", "-shared", "-fPIC", "-fopt-info-vec-optimized"]


def _compiler_version(cxx: str) -> str:
    try:
        return subprocess.run([cxx, "-dumpfullversion"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def imported_symbols(lib: str) -> Optional[List[str]]:
    nm = shutil.which("nm")
    if not nm:
        return None
    r = subprocess.run([nm, "-D", "--undefined-only", lib], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    return [line.split()[-1] for line in r.stdout.splitlines() if line.strip()]


class CppBackend(Backend):
    name = "cpp"
    suffix = ".cpp"
    exports_kernel = True
    compiler_env = "CXX"
    default_compiler = "g++"

    def static_check(self, candidate: str, baseline: str) -> Optional[str]:
        return static_c.check(candidate, baseline, cuda=False)

    def flags(self, source_text: str) -> List[str]:
        flags = list(CXX_FLAGS)
        if re.search(r"#\s*pragma\s+omp\b", static_c.strip_comments(source_text)):
            flags.append("-fopenmp")  # only reachable when the baseline uses OpenMP (static checks)
        return flags

    def build(self, source: str, out_dir: str, timeout: float, kernel: str, cache: bool = False,
              extra_flags: Optional[List[str]] = None) -> Build:
        cxx = os.environ.get(self.compiler_env, self.default_compiler)
        with open(source, encoding="utf-8", errors="replace") as f:
            text = f.read()
        flags = self.flags(text) + (extra_flags or [])
        if cache:
            key = content_key(self.name, cxx, _compiler_version(cxx), " ".join(flags), text)
            out = os.path.join(cache_dir(), "builds", f"{key}.so")
            if os.path.exists(out) and os.path.exists(out + ".json"):
                import json
                with open(out + ".json") as f:
                    return Build(ok=True, artifact=out, stats=json.load(f), log="")
        else:
            out = os.path.join(out_dir, f"k_{uuid.uuid4().hex}.so")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tmp = f"{out}.{uuid.uuid4().hex}.tmp"
        import time
        t0 = time.monotonic()
        try:
            r = run_tool([cxx, *flags, source, "-o", tmp], timeout=timeout, scratch=out_dir)
        except subprocess.TimeoutExpired:
            discard(tmp)
            return Build(ok=False, timed_out=True, log=f"{cxx} ran past {timeout:.0f} s")
        except OSError as e:
            return Build(ok=False, log=f"cannot run {cxx}: {e}; install g++ or set CXX")
        stats = self.parse_stats(r.stderr, source)
        stats["compile_s"] = round(time.monotonic() - t0, 3)
        log = "\n".join(l for l in r.stderr.splitlines() if "optimized:" not in l)
        if r.returncode != 0:
            discard(tmp)
            return Build(ok=False, log=log, stats=stats)
        os.replace(tmp, out)
        if cache:
            import json
            with open(out + ".json", "w") as f:
                json.dump(stats, f)
        return Build(ok=True, artifact=out, stats=stats, log=log)

    def parse_stats(self, stderr: str, source: str) -> dict:
        base = os.path.basename(source)
        mine = [l for l in stderr.splitlines() if "optimized:" in l and base in l]
        return {
            "compiler": "g++",
            "vectorized_loops": sum("loop vectorized" in l for l in mine),
            "slp_vectorized": sum("basic block" in l for l in mine),
            "warnings": sum(": warning:" in l for l in stderr.splitlines()),
        }

    def artifact_check(self, candidate: Build, baseline: Build) -> Optional[str]:
        cand = imported_symbols(candidate.artifact)
        base = imported_symbols(baseline.artifact)
        if cand is None or base is None:
            return None
        bad = static_c.forbidden_symbols(cand, base)
        if bad:
            return (f"The built candidate calls {', '.join(bad[:5])}, which kernels may not use "
                    f"(threads, processes, exits, timers, I/O, the Python API or library fallbacks).")
        return None

    def load(self, artifact: str, kernel: str) -> Any:
        lib = ctypes.CDLL(artifact, mode=os.RTLD_LOCAL | os.RTLD_NOW)
        getattr(lib, kernel)  # fails now, with a clear error, when the kernel is not exported
        return lib


def make(name: str) -> CppBackend:
    return CppBackend()
