"""The backend interface: the judge side (static check, build) and the worker side (load, synchronise)."""
from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class Build:
    ok: bool
    artifact: str = ""
    stats: Dict[str, Any] = field(default_factory=dict)
    log: str = ""
    timed_out: bool = False


def cache_dir() -> str:
    d = os.environ.get("KERNELEVOLVE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "kernelevolve")
    os.makedirs(d, exist_ok=True)
    return d


def content_key(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def run_tool(cmd: List[str], timeout: float, cwd: Optional[str] = None) -> subprocess.CompletedProcess:
    """Runs a compiler in its own session so a timeout kills it and everything it started."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        import signal
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.communicate()
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


class Backend:
    name = ""
    gpu = False
    suffix = ""

    # --- judge side -------------------------------------------------------------------------------
    def static_check(self, candidate: str, baseline: str) -> Optional[str]:
        raise NotImplementedError

    def build(self, source: str, out_dir: str, timeout: float, kernel: str, cache: bool = False,
              extra_flags: Optional[List[str]] = None) -> Build:
        raise NotImplementedError

    def artifact_check(self, candidate: Build, baseline: Build) -> Optional[str]:
        """A second look at the built artifact (imported symbols); None when fine."""
        return None

    # --- worker side ------------------------------------------------------------------------------
    def load(self, artifact: str, kernel: str) -> Any:
        raise NotImplementedError

    def synchronize(self) -> None:
        pass

    def runtime_stats(self, k: Any, kernel: str) -> Dict[str, Any]:
        """Compile facts only known after the kernel ran (Triton JIT)."""
        return {}
