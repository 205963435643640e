"""Triton: the candidate module is imported under a unique name from a unique path; each worker has its own
TRITON_CACHE_DIR (set by the judge). The baseline's compiled kernels are kept between evaluations: only the
reference process (which never sees a candidate) fills that folder, and each worker's own folder starts as a copy
of it (copy_cache). What candidates compiled is shared through the host's store (publish, below): a candidate's
worker takes from it a kernel an earlier candidate compiled for the same key."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import uuid
from typing import Any, Callable, Dict, List, Optional

from .. import static_py
from .base import Backend, Build, cache_dir, content_key

NAMES = ("triton",)
# What Triton imports at a kernel's first launch (its experimental Gluon language, since 3.4): the warm-worker
# server imports it once for every worker it forks.
TRITON_PRELOAD = ["triton", "triton.language", "triton.compiler", "triton.runtime.jit", "triton.runtime.cache",
                  "triton.experimental.gluon", "triton.experimental.gluon.language",
                  "triton.experimental.gluon.nvidia.hopper", "triton.backends.nvidia.compiler"]


class WorkerCaches:
    """Each worker of an evaluation compiles into a TRITON_CACHE_DIR of its own (in the evaluation's folder)."""

    def __init__(self) -> None:
        self.workdir = ""
        self.own_cache = False

    def worker_folder(self, mode: str) -> str:
        return os.path.join(self.workdir, f"triton-{mode}")

    def prepare_caches(self, spec_path: str, baseline_text: str, workdir: str) -> None:
        self.workdir = workdir

    def worker_settings(self, mode: str) -> Dict[str, Any]:
        settings: Dict[str, Any] = {"triton_cache_dir": self.worker_folder(mode)}
        # the reference compiles only the baseline; a CPU problem's candidate is native code, which could write
        # a file where its worker's compiled kernels are
        store = kernel_store() if mode == "candidate" and getattr(self, "gpu", False) else None
        if store:
            settings["triton_store"] = store
        return settings

    def publish_compiled(self) -> None:
        """What the candidate's worker compiled so far, into the host's store (publish)."""
        store = kernel_store()
        if not store or not self.workdir:
            return
        try:
            os.makedirs(store, exist_ok=True)
        except OSError:
            return
        if publish(self.worker_folder("candidate"), store):
            prune(store, int(os.environ.get("KERNELEVOLVE_KERNEL_STORE_ENTRIES", "2000")))

    def profile_env(self, workdir: str) -> Dict[str, str]:
        return {"TRITON_CACHE_DIR": os.path.join(workdir, "triton-profile")}

    def enter_worker(self, config: Dict[str, Any]) -> None:
        if config.get("triton_cache_dir"):
            os.environ["TRITON_CACHE_DIR"] = config["triton_cache_dir"]
            self.own_cache = True
        if config.get("triton_store"):
            os.environ[STORE_ENV] = config["triton_store"]
            os.environ["TRITON_CACHE_MANAGER"] = "kernelevolve_harness.triton_store:StoreCacheManager"

    def cache_snapshot(self) -> Dict[str, int]:
        return cache_writes(os.environ.get("TRITON_CACHE_DIR") if self.own_cache else None)

    def compiled_since(self, before: Dict[str, int]) -> int:
        return compiled_between(before, self.cache_snapshot())

    def rehome_worker(self, home: str) -> Dict[str, Any]:
        """A shared reference's cache moves into its own folder; later judges find the baseline's kernels there
        when they keep none yet."""
        src = os.environ.get("TRITON_CACHE_DIR") if self.own_cache else None
        if not src or not os.path.isdir(src):
            return {}
        dst = os.path.join(home, "triton")
        copy_cache(src, dst)
        os.environ["TRITON_CACHE_DIR"] = dst
        return {"triton_cache": dst}


class TritonBackend(WorkerCaches, Backend):
    name = "triton"
    gpu = True
    suffix = ".py"
    graph_capture = True
    watches_operators = True
    jit_compiles = True
    preloads_baseline = True

    def __init__(self) -> None:
        super().__init__()
        self.kept: Optional[str] = None  # the baseline's compiled kernels, kept between evaluations
        self.ref_cache = ""  # the folder the reference process compiled the baseline into

    def preload_modules(self) -> List[str]:
        return ["torch", *TRITON_PRELOAD]

    # --- the baseline's compiled kernels, shared between evaluations -------------------------------------
    def prepare_caches(self, spec_path: str, baseline_text: str, workdir: str) -> None:
        """Where this baseline's compiled kernels are kept between evaluations (keyed by the baseline, the spec
        and the Python): without it every evaluation compiled the baseline for every shape twice."""
        super().prepare_caches(spec_path, baseline_text, workdir)
        with open(spec_path, encoding="utf-8", errors="replace") as f:
            spec_text = f.read()
        self.kept = os.path.join(cache_dir(), "triton-baseline", content_key(baseline_text, spec_text, sys.executable))

    def worker_settings(self, mode: str) -> Dict[str, Any]:
        if mode == "reference":
            self._seed(mode)
        return super().worker_settings(mode)

    def _seed(self, mode: str) -> None:
        if self.kept and os.path.isdir(self.kept):
            try:
                copy_cache(self.kept, self.worker_folder(mode))
            except OSError:
                pass  # a cold cache costs compile time, never a verdict

    def reference_ready(self, ready: Dict[str, Any]) -> None:
        # in this evaluation's folder, or a shared reference's own
        self.ref_cache = str(ready.get("triton_cache") or self.worker_folder("reference"))

    def share_baseline(self) -> None:
        """After the reference process compiled the baseline for every shape: keep its cache (once), and give
        the candidate's worker a copy before it first calls the baseline."""
        if not self.kept:
            return
        if not os.path.isdir(self.kept) and os.path.isdir(self.ref_cache):
            tmp = f"{self.kept}.{os.getpid()}.tmp"
            try:
                copy_cache(self.ref_cache, tmp)
                os.rename(tmp, self.kept)  # atomic; another judge may have been first
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)
        self._seed("candidate")

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
        for _ in range(4):  # autotune/heuristics wrap the JITFunction in `.fn`; the JITFunction's own .fn is Python.
            # An Autotuner has a `cache` too (its key -> chosen Config), so it is walked through, not read
            if fn is None or hasattr(fn, "device_caches") or (hasattr(fn, "cache") and not hasattr(fn, "configs")):
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
        store = sys.modules.get("kernelevolve_harness.triton_store")
        if store is not None:
            stats["from_store"] = store.TAKEN[0]
        return stats

    def compile_ahead(self, first_calls: Callable[[], None], module: Any = None) -> int:
        """The first calls with each kernel's compile handed to threads: a launch that would compile (Triton's
        jit_cache_hook, called before every compile) records the compile, starts it in a pool and returns without
        running (the first calls keep nothing they compute), so a candidate's shapes and kernels compile side by
        side and the checks find them compiled. On the H200, Liger's GeGLU at one warp (four shapes) took 27.0 s of
        first calls so, against 42.0 s one compile after another (2026-12-05); on the H100 its 37.8 s one after
        another had held up a tune whose other candidates were judged in 21 s.
        Left as they are: a candidate with an autotuner among its module's names (the autotuner's timings pick the
        configuration the checks and the timing use), and a launch inside an autotuner's run anywhere. A kernel the
        pool missed (a launch that depended on an output the skipped launches never wrote) is compiled by the checks,
        as before; where the calls fail with the compiles handed over, they run again as they are. Without the hook
        (Triton before 3.4), or with KERNELEVOLVE_COMPILE_AHEAD=0, the calls run as they are. Returns the compiles
        done in the pool."""
        if os.environ.get("KERNELEVOLVE_COMPILE_AHEAD", "1") == "0":
            first_calls()
            return 0
        try:
            from triton import knobs
            from triton.runtime.autotuner import Autotuner
            from triton.runtime.driver import driver
        except ImportError:
            first_calls()
            return 0
        runtime = getattr(knobs, "runtime", None)
        tuned = any(isinstance(v, Autotuner) for v in getattr(module, "__dict__", {}).values())
        if tuned or runtime is None or not hasattr(runtime, "jit_cache_hook") or runtime.jit_cache_hook is not None:
            first_calls()
            return 0
        from concurrent.futures import ThreadPoolExecutor
        tuner = Autotuner.run.__code__
        device = driver.active.get_current_device()
        threads = max(1, min(8, len(os.sched_getaffinity(0))))
        pool = ThreadPoolExecutor(threads, thread_name_prefix="compile-ahead")
        started: Dict[str, Any] = {}

        def compile_one(fn: Any, data: str) -> None:
            driver.active.set_current_device(device)
            fn.preload(data)

        def defer(**call: Any) -> Optional[bool]:
            if call.get("is_manual_warmup"):
                return None
            frame = sys._getframe(1)
            while frame is not None:
                if frame.f_code is tuner:
                    return None
                frame = frame.f_back
            fn = call["fn"].jit_function
            key = f"{id(fn)}:{call['key']}"
            if key not in started:
                started[key] = pool.submit(compile_one, fn, call["compile"]["specialization_data"])
            return True

        runtime.jit_cache_hook = defer
        try:
            first_calls()
            again = False
        except Exception:
            # a launcher that fails on what the skipped launches never wrote, or Triton that cannot describe a
            # compile to the hook: the calls again as they are, finding compiled what the pool compiled
            again = True
        finally:
            runtime.jit_cache_hook = None
            pool.shutdown(wait=True)  # a compile that failed is compiled again, and reported, by the checks
        if again:
            first_calls()
        return sum(1 for f in started.values() if f.exception() is None)


def copy_cache(src: str, dst: str) -> None:
    """Copies a Triton cache folder so that the copy serves lookups on its own, entry by entry (copy_entry)."""
    os.makedirs(dst, exist_ok=True)
    for entry in os.listdir(src):
        if os.path.isdir(os.path.join(src, entry)):
            copy_entry(os.path.join(src, entry), os.path.join(dst, entry))


def copy_entry(src: str, dst: str, home: Optional[str] = None, keep: Optional[Callable[[str], bool]] = None) -> None:
    """Copies one entry of a Triton cache (a folder named by the compile's key). Triton finds a compiled kernel
    through a group file (__grp__<name>.json) that lists its files by absolute path: a plain copy still points
    into the folder it came from, and once that folder is gone, every lookup misses and the kernel is compiled
    again (into the copy, so a count of new entries does not see it). The copy's group files point into `home`
    (where the copy will live; `dst` itself unless it is renamed there after). A file the destination has already
    is left as it is, and each new one arrives whole (a temporary name, then renamed): the worker may be running
    from that folder already (its first calls while the reference starts), and a compiled launcher rewritten in
    place under a process that has it loaded kills that process (SIGSEGV on the H200, the candidate's first
    correctness call). `keep(name)`: which of a group's files to copy (the rest leave the group too)."""
    home = home or dst
    os.makedirs(dst, exist_ok=True)
    names = [n for n in os.listdir(src) if os.path.isfile(os.path.join(src, n))]
    groups = [n for n in names if n.startswith("__grp__") and n.endswith(".json")]
    for name in names:
        if name in groups or (keep is not None and not keep(name)):
            continue
        target = os.path.join(dst, name)
        if not os.path.exists(target):
            tmp = f"{target}.{os.getpid()}.tmp"
            shutil.copy2(os.path.join(src, name), tmp)
            os.replace(tmp, target)
    for name in groups:
        target = os.path.join(dst, name)
        if os.path.exists(target) and keep is None:
            _rehome_group(target, dst, home)
            continue
        try:
            with open(os.path.join(src, name), encoding="utf-8") as f:
                group = json.load(f)
            children = group.get("child_paths")
            if not isinstance(children, dict):
                raise ValueError("no child_paths")
        except (OSError, ValueError):
            if not os.path.exists(target):
                shutil.copy2(os.path.join(src, name), target)  # as it is: a lookup that misses costs a compile
            continue
        moved = {k: os.path.join(home, os.path.basename(str(v))) for k, v in children.items()
                 if keep is None or keep(os.path.basename(str(v)))}
        if not all(os.path.exists(os.path.join(dst, os.path.basename(v))) for v in moved.values()):
            continue  # a group whose files are not all here would be a lookup that fails, not one that misses
        _write_json(target, {**group, "child_paths": moved})


def _rehome_group(path: str, folder: str, home: str) -> None:
    """A group file already in the destination: its paths into `home`, where its files are."""
    try:
        with open(path, encoding="utf-8") as f:
            group = json.load(f)
        children = group.get("child_paths")
        if not isinstance(children, dict):
            return
        moved = {k: os.path.join(home, os.path.basename(str(v))) for k, v in children.items()}
        if moved != children and all(os.path.exists(os.path.join(folder, os.path.basename(v)))
                                     for v in moved.values()):
            _write_json(path, {**group, "child_paths": moved})
    except (OSError, ValueError):
        pass  # a lookup that misses costs a compile, never a verdict


def _write_json(path: str, value: Any) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f)
    os.replace(tmp, path)


# --- the host's store of what candidates compiled ----------------------------------------------------------
# A tuner's candidates differ in their launch settings, not in their kernels' text: most of what one candidate
# compiles (a kernel's text with one set of constants, warps and stages) an earlier one compiled already. Each
# candidate's worker still compiles into a folder of its own; its judge, after the worker's first calls and again
# at the end, publishes what that folder holds into the host's store (publish), and a worker whose own folder
# lacks an entry takes it from the store (triton_store.StoreCacheManager) instead of compiling it again. Only a
# judge writes the store, and only what Triton wrote into a worker's folder: a candidate can write no file (its
# static checks refuse open, os, Triton's runtime and compiler), so an entry is what Triton compiled for its key,
# as in the cache Triton shares between all of a user's processes by default.
STORE_ENV = "KERNELEVOLVE_TRITON_STORE"
BINARIES = (".json", ".cubin", ".hsaco")  # what loading a compiled kernel reads (Triton's binary-only cache)


def kernel_store() -> Optional[str]:
    """The host's store (KERNELEVOLVE_KERNEL_STORE=0: none; each candidate compiles all it calls)."""
    if os.environ.get("KERNELEVOLVE_KERNEL_STORE", "1") == "0":
        return None
    return os.path.join(cache_dir(), "triton-store")


def publish(folder: str, store: str) -> int:
    """Adds to the store each complete kernel of a worker's cache folder that the store lacks: its group file,
    its metadata and binary (the intermediate forms stay behind). Compiled launchers (host libraries, one per
    signature, the baseline's among the worker's copies already) are not shared. An entry arrives whole (built
    under a temporary name, then renamed); where two judges publish one key, the first stays. Returns how many
    entries were added."""
    added = 0
    try:
        entries = os.listdir(folder)
    except OSError:
        return 0
    for key in entries:
        src, dst = os.path.join(folder, key), os.path.join(store, key)
        if os.path.exists(dst) or not os.path.isdir(src):
            continue
        try:
            names = os.listdir(src)
        except OSError:
            continue
        if not any(n.startswith("__grp__") and n.endswith(".json") for n in names):
            continue  # a launcher, a compile still running, or one that died half written
        tmp = os.path.join(store, f".{key}.{os.getpid()}.tmp")
        try:
            copy_entry(src, tmp, home=dst, keep=lambda n: n.endswith(BINARIES))
            os.rename(tmp, dst)
            added += 1
        except OSError:
            pass  # the same key published meanwhile, or the store's disk full: a later compile, never a verdict
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return added


def prune(store: str, limit: int) -> int:
    """Above `limit` entries, the oldest published go until a quarter of the room is free; returns how many. A
    worker copying an entry that goes meanwhile compiles it instead."""
    try:
        keys = [e for e in os.scandir(store) if e.is_dir() and not e.name.startswith(".")]
    except OSError:
        return 0
    if len(keys) <= limit:
        return 0
    keys.sort(key=lambda e: e.stat().st_mtime)
    gone = keys[:len(keys) - limit * 3 // 4]
    for e in gone:
        shutil.rmtree(e.path, ignore_errors=True)
    return len(gone)


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



def make(name: str) -> TritonBackend:
    return TritonBackend()
