"""The backend interface: the judge side (static check, build) and the worker side (load, synchronise)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Set, Tuple


class BackendError(Exception):
    """The backend cannot work as the spec or the host configures it (a toolchain not named, not found): the
    user's to fix, reported like a spec error."""


@dataclass
class Build:
    ok: bool
    artifact: str = ""
    stats: Dict[str, Any] = field(default_factory=dict)
    log: str = ""
    timed_out: bool = False


JUDGE_DIR_ENV = "KERNELEVOLVE_JUDGE_DIR"  # set by the job runner: the folder a judge makes its working folder in


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


def run_tool(cmd: List[str], timeout: float, scratch: str, cwd: Optional[str] = None) -> subprocess.CompletedProcess:
    """Runs a compiler in its own session so a timeout kills it and everything it started. Its temporary files
    (g++'s and nvcc's intermediate sources and objects) go to a folder of their own under `scratch` (the judge's
    working folder), removed afterwards: a compiler killed at its timeout, or with its judge, leaves nothing in
    the system's temporary folder."""
    os.makedirs(scratch, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tool-", dir=scratch)
    env = {**os.environ, "TMPDIR": tmp, "TMP": tmp, "TEMP": tmp}
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env,
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
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def discard(path: str) -> None:
    """Removes a failed build's partial output (next to a cached build's place, where nothing else removes it)."""
    try:
        os.remove(path)
    except OSError:
        pass


class Backend:
    """One kind of kernel source. Each backend is one module of this package that defines NAMES (the spec
    BACKEND values it judges) and make(name) -> Backend; the judge and the workers ask it everything that
    differs between kinds, so adding a kind is one file (plus its tests)."""

    name = ""
    gpu = False  # timed with CUDA events or graphs in shared buffers; else on the CPU (perf_counter, lower quartile)
    suffix = ""
    graph_capture = False  # its launches can be captured in a CUDA graph (a ctypes launcher's legacy stream cannot)
    watches_operators = False  # the first call per shape runs under the torch operator watch (op_watch.py)
    jit_compiles = False  # compiles at the first call per shape: the reference calls the baseline on every shape
    # up front, and the candidate's worker counts what the baseline compiled again (compile.baseline_compiled)
    exports_kernel = False  # the built library must export KERNEL (a C ABI entry the spec's launch calls)
    warm_workers = True  # workers may be forked from this host's warm-worker server
    # the spec and the baseline are Python modules that a spec's fork point may import once for all its workers
    # (warm.Zygote); a backend whose load runs the device (a CUDA module) or builds nothing to import leaves it
    preloads_baseline = False

    # --- what the spec and the host configure --------------------------------------------------------
    def describe(self, spec_path: str) -> Dict[str, Any]:
        """Backend-specific facts of a spec for describe-spec (read without importing it)."""
        return {}

    def configure(self, spec_path: str) -> None:
        """Before anything is built: read what this backend needs from the spec and the host; BackendError
        when that is missing or unusable."""

    # --- judge side: static rules, build --------------------------------------------------------------
    def static_check(self, candidate: str, baseline: str) -> Optional[str]:
        raise NotImplementedError

    def build(self, source: str, out_dir: str, timeout: float, kernel: str, cache: bool = False,
              extra_flags: Optional[List[str]] = None) -> Build:
        raise NotImplementedError

    def artifact_check(self, candidate: Build, baseline: Build) -> Optional[str]:
        """A second look at the built artifact (imported symbols); None when fine."""
        return None

    # --- judge side: the workers' start and their compiled-kernel caches ------------------------------
    def worker_command(self, python_command: List[str]) -> List[str]:
        """The command line a cold worker runs (a device's runtime launcher may wrap it)."""
        return python_command

    def preload_modules(self) -> List[str]:
        """What the warm-worker server imports for this backend beyond numpy and the harness."""
        return []

    def prepare_caches(self, spec_path: str, baseline_text: str, workdir: str) -> None:
        """Before the workers start: where compiled kernels kept between evaluations live (a JIT's cache)."""

    def worker_settings(self, mode: str) -> Dict[str, Any]:
        """Fields of a worker's first message beyond the common ones (e.g. its own cache folder)."""
        return {}

    def reference_ready(self, ready: Dict[str, Any]) -> None:
        """The reference process said ready (with what it compiled, and where)."""

    def share_baseline(self) -> None:
        """After the reference compiled the baseline: keep that, and hand it to the candidate's worker."""

    def publish_compiled(self) -> None:
        """What the candidate's worker compiled, shared with later candidates' workers on this host (a JIT's store)."""

    def profile_env(self, workdir: str) -> Dict[str, str]:
        """Environment of the profiling run."""
        return {}

    def profile(self, judge: Any, rows: List[Dict[str, Any]], spreads: List[float]) -> Dict[str, Any]:
        """--profile: what this kind of device can say about the candidate (beyond the roofline): Nsight Compute
        on an NVIDIA GPU, the compiler's report and the timing spread on the CPU."""
        from ..profiling import cpu_profile, ncu_profile
        return ncu_profile(judge, self.profile_env(judge.workdir)) if self.gpu else cpu_profile(judge, spreads)

    # --- worker side -------------------------------------------------------------------------------
    def enter_worker(self, config: Dict[str, Any]) -> None:
        """First thing in a worker, before any kernel code (environment its compilers read)."""

    def load(self, artifact: str, kernel: str) -> Any:
        raise NotImplementedError

    def synchronize(self) -> None:
        pass

    def runtime_stats(self, k: Any, kernel: str) -> Dict[str, Any]:
        """Compile facts only known after the kernel ran (Triton JIT)."""
        return {}

    def compile_ahead(self, first_calls: Callable[[], None], module: Any = None) -> int:
        """Runs the first calls of a candidate (`module`) on every shape (_worker.py `precompile`) for what they
        compile; returns how many of those compiles ran beside one another instead of one after another (none
        here: the calls run as they are)."""
        first_calls()
        return 0

    def cache_snapshot(self) -> Dict[str, int]:
        """This process's compiled-kernel cache, file by file (empty for ahead-of-time backends)."""
        return {}

    def compiled_since(self, before: Dict[str, int]) -> int:
        """How many kernels were compiled here since a cache_snapshot."""
        return 0

    def rehome_worker(self, home: str) -> Dict[str, Any]:
        """A shared reference moves into its own folder: its cache goes too; returns fields for its ready message."""
        return {}

    def host_op_watch(self) -> Optional[Tuple[Callable[[Callable[[], Any]], Tuple[Any, Optional[Set[str]]]], str]]:
        """A watch of the candidate's host code with no operator allowed, and the library's name (KernelBench
        ModelNew); None: the torch watch compared with the baseline's own operators."""
        return None
