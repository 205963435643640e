"""The judge: the parent process that produces the verdict. It never imports candidate code.

Order: static checks -> build (baseline cached, candidate to a unique path) -> a clean reference process
(never sees the candidate) -> the candidate's worker (its own process group, output to a log file, a private
pipe carrying a per-run nonce) -> correctness calls checked here against the reference -> interleaved timing
under the device lock -> the timed outputs rechecked -> verdict.
"""
from __future__ import annotations

import math
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from .backends import Backend, BackendError, Build, get_backend
from .backends.base import JUDGE_DIR_ENV
from . import kernelbench_timing
from .device_lock import device_lock, yield_s
from .protocol import Channel, ChannelClosed, ChannelTimeout, DrainedChannel
from .reference_answers import ReferenceAnswers
from .spec import SpecError, read_header
from .ratios import LEVEL, apart, intervals, lower_quartile, median, shape_estimate, with_floor, worth_retiming
from .static_c import strip_comments
from .timing_settings import TimingSettings
from .verdicts import Verdict, VerdictRecord, alias_verdict, shape_text as _shape_text
from .worker_limits import worker_limits

LOG_LIMIT = 4000
CANARY_BYTES = 4096  # arrays.BAND; numpy is imported only once the workers are started (it costs start-up time)
HARNESS_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Stage timeouts in seconds, before --timeout-scale. Correctness and timing are per message (per call, per shape).
TRACE = bool(os.environ.get("KERNELEVOLVE_TRACE"))  # stage timestamps on stderr, for finding slow stages
TIMEOUTS = {"compile": 180.0, "reference": 300.0, "load": 120.0, "correctness": 60.0, "timing": 120.0, "verify": 120.0}


@dataclass
class Options:
    spec: str
    candidate: str
    baseline: Optional[str] = None
    profile: bool = False
    lock: Optional[str] = None
    timeout_scale: float = 1.0
    warm: bool = True  # fork workers from this host's warm-worker server (warm.py) when it can be had
    shared_reference: bool = True  # one reference process for every evaluation of a spec (_worker.SharedReference)
    owner: Optional[int] = None  # the process whose exit ends that server (default: this one)
    inputs: str = "wide"  # "problem": no robustness pass (wide_inputs.py), as KernelBench judges
    background: bool = False  # a leader judged again: the search's evaluations take the lock first (device_lock.py)


class WarmServerLost(Exception):
    """A warm worker died because its server did (killed from outside): not the candidate's doing."""


class SharedReferenceLost(Exception):
    """The shared reference process went away mid-evaluation (idle exit racing a new judge, or killed): the
    evaluation is judged again with a reference of its own."""




# what torch says in a GPU backend's worker where it can use no GPU: a build without CUDA (the CPU wheel), no
# driver, no device
NO_GPU = re.compile(r"Torch not compiled with CUDA enabled|Found no NVIDIA driver[^\n]*|No CUDA GPUs are available"
                    r"|CUDA driver initialization failed[^\n]*")


def no_gpu_here(log: str) -> Optional[str]:
    """torch's own words for "no usable GPU here" in a worker's log, or None."""
    m = NO_GPU.search(log)
    return m.group(0).strip() if m else None


def _tail(text: str, limit: int = LOG_LIMIT) -> str:
    return text if len(text) <= limit else "...\n" + text[-limit:]


class Process:
    """A worker process with its private channel; killed with its whole process group. Forked by this host's
    warm-worker server when it can be (see warm.py), else started as a new Python."""

    def __init__(self, config: Dict[str, Any], workdir: str, name: str,
                 command: Callable[[List[str]], List[str]] = lambda argv: argv, limit_memory: bool = False,
                 warm: Optional[Tuple[str, int]] = None, shared: str = "",
                 preload: Optional[Dict[str, str]] = None) -> None:
        self.log_path = os.path.join(workdir, f"{name}.log")
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = HARNESS_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        env.setdefault("MKL_NUM_THREADS", "1")
        env.pop("KERNELEVOLVE_NONCE", None)
        parent = os.getpid()
        self.proc: Any = None
        self.warm_note = ""
        with open(self.log_path, "wb") as log:
            if warm is not None:
                from . import warm as warm_server
                backend, owner = warm
                self.proc, self.warm_note = warm_server.spawn(backend, owner, env, workdir, log.fileno(), to_worker_r,
                                                              from_worker_w, limit_memory, shared, preload)
            if self.proc is None:
                self.proc = subprocess.Popen(
                    command([sys.executable, "-m", "kernelevolve_harness._worker", str(to_worker_r),
                             str(from_worker_w)]),
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    pass_fds=(to_worker_r, from_worker_w), start_new_session=True, env=env, cwd=workdir,
                    preexec_fn=lambda: worker_limits(limit_memory, parent),
                )
        self.warm = not isinstance(self.proc, subprocess.Popen)
        self.shared = getattr(self.proc, "shared", "") if self.warm else ""  # "started" or "reused"
        self.preloaded = bool(getattr(self.proc, "preloaded", False)) if self.warm else False
        os.close(to_worker_r)
        os.close(from_worker_w)
        chan = Channel(from_worker_r, to_worker_w)
        # The reference's answers are read as they come (a shared reference must never wait on this judge).
        self.chan: Any = DrainedChannel(chan) if config["mode"] == "reference" else chan
        self.nonce = config["nonce"]
        self.chan.send(config)

    def recv(self, timeout: float) -> Tuple[Dict[str, Any], List[bytes]]:
        header, blobs = self.chan.recv(timeout)
        if header.get("nonce") != self.nonce:
            raise Verdict("runtime_error", "The worker sent a message without this run's nonce, so it was not trusted.",
                          self.log())
        return header, blobs

    def send(self, header: Dict[str, Any]) -> None:
        try:
            self.chan.send(header)
        except OSError:
            pass  # the worker is gone; the next recv reports how

    def exit_description(self, wait_s: float = 2.0) -> str:
        try:
            code = self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return f"exited with code {code}"

    def log(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - LOG_LIMIT))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def kill(self) -> None:
        if self.shared:  # not this evaluation's to end: it leaves, and the reference goes on serving others
            self.chan.close()
            self.proc.close()
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.warm:
            self.proc.close()  # the server reaps it (and kills its group too, should the signal above have failed)
        else:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.chan.close()


def _trace_cpu(judge: "Judge") -> None:
    """KERNELEVOLVE_TRACE: the judge's own CPU seconds (the workers report theirs in their messages)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write(f"[{time.monotonic() - judge.t0:7.3f}s] judge CPU: {r.ru_utime + r.ru_stime:.2f} s\n")


def _import_checks() -> None:
    from . import arrays, compare  # noqa: F401


def _precompiles(backend: Any) -> bool:
    """Whether the candidate's worker calls it once per shape while the reference starts (_worker.py,
    `precompile`): for backends that compile at the first call (Triton); KERNELEVOLVE_PRECOMPILE=0 never, =1 for
    every backend (the CPU tests of the path)."""
    how = os.environ.get("KERNELEVOLVE_PRECOMPILE", "")
    return how == "1" or (how != "0" and bool(backend.jit_compiles))


def defined_symbols(lib: str) -> Optional[List[str]]:
    nm = shutil.which("nm")
    if not nm:
        return None
    r = subprocess.run([nm, "-D", "--defined-only", lib], capture_output=True, text=True, timeout=60)
    return [line.split()[-1] for line in r.stdout.splitlines() if line.strip()] if r.returncode == 0 else None


class Judge:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.scale = max(opts.timeout_scale, 1e-3)
        self.header = read_header(opts.spec)
        self.backend: Backend = get_backend(self.header.backend)
        try:
            self.backend.configure(self.header.path)
        except BackendError as e:
            raise SpecError(str(e))
        self.baseline_path = os.path.abspath(opts.baseline) if opts.baseline else self.header.source
        # A job runner names where this folder goes (inside the job's own folder), so that a judge killed before it
        # could remove it leaves nothing behind once its job is cleaned up; the workers never see the name.
        parent = os.environ.pop(JUDGE_DIR_ENV, "") or None
        if parent is not None:
            os.makedirs(parent, exist_ok=True)
        self.workdir = tempfile.mkdtemp(prefix="kernelevolve-", dir=parent)
        self.nonce = secrets.token_hex(16)
        self.canary = os.urandom(CANARY_BYTES).hex()
        self.compile_stats: Dict[str, Any] = {}
        self.log = ""
        self.ref: Optional[Process] = None
        self.worker: Optional[Process] = None
        self.imports: Optional[threading.Thread] = None
        self.spec_key = ""  # _spec_key
        self.answers: Optional[ReferenceAnswers] = None  # the conversation with the reference (reference_answers.py)
        self.rng = secrets.SystemRandom()
        self.stage = "compile"
        self.t0 = time.monotonic()
        # Seconds spent in each stage, reported in every verdict (where an evaluation's time goes).
        self.stages: Dict[str, float] = {}
        self.workers: Dict[str, str] = {}  # how each worker was started: warm (forked) or cold (and why)

    def timeout(self, stage: str) -> float:
        return TIMEOUTS[stage] * self.scale

    # --- the whole evaluation --------------------------------------------------------------------------
    def run(self) -> VerdictRecord:
        try:
            return self._run()
        except Verdict as v:
            log = "\n".join(x for x in (self.log, v.log) if x)
            return VerdictRecord(v.status, v.reason, compile=self.compile_stats or None, stages=self._stage_times(),
                                 workers=self.workers or None, log=_tail(log) if log else None)
        finally:
            if TRACE:
                _trace_cpu(self)
            if self.imports is not None:
                self.imports.join()  # done before anything else of this process starts a worker (a fork)
            for p in (self.worker, self.ref):
                if p is not None:
                    p.kill()
            if self.worker is not None:
                self.backend.publish_compiled()
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _run(self) -> VerdictRecord:
        cand_text = self._read(self.opts.candidate, "--candidate")
        base_text = self._read(self.baseline_path, "--baseline")
        kernel = self.header.kernel
        if not re.search(rf"\b{re.escape(kernel)}\b", base_text):
            raise SpecError(f'KERNEL = "{kernel}" does not appear in {self.baseline_path}; '
                            f"set KERNEL to the name of the function being evolved.")
        reason = self.backend.static_check(cand_text, base_text)
        if reason:
            raise Verdict("static_rejected", reason)
        base_build = self.backend.build(self.baseline_path, self.workdir, self.timeout("compile") * 4, kernel,
                                        cache=True)
        if not base_build.ok:
            raise SpecError(f"The baseline {self.baseline_path} does not build; fix it first:\n{_tail(base_build.log, 2000)}")
        self.backend.prepare_caches(self.header.path, base_text, self.workdir)
        self.ref = self._start("reference", base_build)
        ref = self.ref
        self.answers = ReferenceAnswers(ref.send, lambda: self._recv(ref, "reference"), self.stages,
                                        lambda: self.info.get("tolerance") or {})
        self.worker = self._start("candidate", base_build)
        # numpy and the comparison (~80 ms of imports) load while the candidate compiles, not at the first check
        self.imports = threading.Thread(target=_import_checks, name="import-checks", daemon=True)
        self.imports.start()
        t = time.monotonic()
        cand_build = self.backend.build(self.opts.candidate, self.workdir, self.timeout("compile"), kernel)
        self.stages["compile_s"] = time.monotonic() - t
        self.compile_stats = dict(cand_build.stats)
        self.profile_artifact = cand_build.artifact
        self.log = cand_build.log.strip()
        if cand_build.timed_out:
            raise Verdict("timeout", f"Compiling the candidate ran past {self.timeout('compile'):.0f} s (stage: compile).")
        if not cand_build.ok:
            first = next((l for l in cand_build.log.splitlines() if "error" in l), "the compiler failed")
            raise Verdict("compile_error", f"The candidate does not compile: {first.strip()[:300]}")
        reason = self.backend.artifact_check(cand_build, base_build)
        if reason:
            raise Verdict("static_rejected", reason)
        if self.backend.exports_kernel:
            syms = defined_symbols(cand_build.artifact)
            if syms is not None and kernel not in syms:
                raise Verdict("compile_error", f'The candidate does not export the kernel "{kernel}"; '
                                               f'declare it extern "C" with the baseline\'s signature.')
        precompiling = _precompiles(self.backend)
        if precompiling:  # the candidate's first calls (its JIT compiles) while the reference starts
            self.worker.send({"type": "precompile", "candidate_artifact": cand_build.artifact})
            asked = time.monotonic()
        t = time.monotonic()
        info = self._reference_ready()
        # what of the reference's start (its process, the baseline's probe and compiles) the candidate's compile
        # did not cover: a new spec's first evaluation on a host waits here
        self.stages["reference_ready_wait_s"] = time.monotonic() - t
        self.backend.share_baseline()
        self.info = info
        self.shapes: List[Dict[str, Any]] = info["shapes"]
        self.outputs: List[int] = self.ref_outputs
        self.inplace: List[int] = self.ref_inplace
        self.seeds = [self.rng.randrange(1, 2**31) for _ in range(2)]
        # A baseline with OpenMP permits the candidate's OpenMP thread pool, which outlives each call.
        threads_allowed = bool(re.search(r"#\s*pragma\s+omp\b", strip_comments(base_text)))
        self.threads_allowed = threads_allowed
        self.worker.send({"type": "candidate", "candidate_artifact": cand_build.artifact, "seeds": self.seeds,
                          "outputs": self.outputs, "inplace": self.inplace, "threads_allowed": threads_allowed,
                          "inputs": self.opts.inputs, "share_bytes": self.answers.share_bytes,
                          # where each shape's wide-input call comes among its correctness calls (after how many
                          # of them): drawn here, so that no call count is the one checked on wide inputs
                          "wide_at": [self.rng.randrange(0, 3 * len(self.seeds)) for _ in self.shapes],
                          # and which of them has its library operators watched (the op watch)
                          "watch_at": [self.rng.randrange(0, 2 * len(self.seeds)) for _ in self.shapes]})
        t = time.monotonic()
        if precompiling:  # a crash or a hang in loading it is the load stage's, in its first calls the correctness
            self._expect("precompile_loaded", "load")  # stage's, as they were
            # from asking to the candidate loaded: the worker's own start (a context still being made) and the load
            self.stages["first_calls_start_s"] = time.monotonic() - asked
            done, _ = self._expect("precompiled", "correctness")
            self.stages["precompile_s"] = float(done.get("seconds") or 0.0)
            if done.get("ahead"):
                self.stages["precompile_ahead"] = int(done["ahead"])
            self.backend.publish_compiled()  # for candidates judged meanwhile (a tuner's wave)
        self._expect("loaded", "load")
        self._correctness()
        self.stages["correctness_s"] = time.monotonic() - t
        return self._timing()

    def _stage_times(self) -> Dict[str, float]:
        out = {k: round(v, 3) for k, v in self.stages.items()}
        out["total_s"] = round(time.monotonic() - self.t0, 3)
        return out

    def _read(self, path: str, flag: str) -> str:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError as e:
            raise SpecError(f"Cannot read {path} ({e.strerror}); check the path given to {flag}.")

    def _start(self, mode: str, base: Build) -> Process:
        config = {
            "mode": mode, "nonce": self.nonce, "spec": self.header.path, "backend": self.header.backend,
            "kernel": self.header.kernel, "baseline_artifact": base.artifact, "canary": self.canary,
            **self.backend.worker_settings(mode),
        }
        from . import warm
        use_warm = self.opts.warm and self.backend.warm_workers and warm.enabled()
        owner = self.opts.owner if self.opts.owner is not None else os.getpid()
        shared = self._shared_key(base) if mode == "reference" and use_warm else ""
        preload = self._preload(base) if use_warm else None
        t = time.monotonic()
        p = Process(config, self.workdir, mode, self.backend.worker_command, limit_memory=not self.backend.gpu,
                    warm=(self.header.backend, owner) if use_warm else None, shared=shared, preload=preload)
        # the server's start and, for a spec's first workers on a host, its fork point's imports (warm.Zygote)
        self.stages["worker_start_s"] = self.stages.get("worker_start_s", 0.0) + time.monotonic() - t
        if p.preloaded:
            self.stages["preloaded_workers"] = self.stages.get("preloaded_workers", 0) + 1
        self.workers[mode] = (f"shared ({p.shared})" if p.shared else "warm" if p.warm
                              else "cold" + (f" ({p.warm_note})" if p.warm_note else ""))
        if TRACE:
            sys.stderr.write(f"[{time.monotonic() - self.t0:7.3f}s] {mode}: {self.workers[mode]}, pid {p.proc.pid}\n")
        return p

    def _preload(self, base: Build) -> Optional[Dict[str, str]]:
        """What a fork point of this spec imports for its workers (warm.Zygote), where the backend's spec and
        baseline are Python modules; KERNELEVOLVE_PRELOAD=0 turns it off."""
        if not self.backend.preloads_baseline or os.environ.get("KERNELEVOLVE_PRELOAD", "1") == "0":
            return None
        from .backends.base import content_key
        return {"key": content_key("preload", self._spec_key()), "backend": self.header.backend,
                "spec": self.header.path, "artifact": base.artifact, "kernel": self.header.kernel}

    def _shared_key(self, base: Build) -> str:
        """Evaluations with the same spec, baseline and device share one reference process (empty: not shared).
        The warm-worker server is already one per harness version, Python, owner and import environment."""
        if not self.opts.shared_reference or os.environ.get("KERNELEVOLVE_SHARED_REFERENCE", "1") == "0":
            return ""
        from .backends.base import content_key
        return content_key(self._spec_key(), os.environ.get("CUDA_VISIBLE_DEVICES", ""))

    def _spec_key(self) -> str:
        """The spec's text and path, the baseline's text, the backend and the kernel, read and hashed once."""
        if not self.spec_key:
            from .backends.base import content_key
            with open(self.header.path, encoding="utf-8", errors="replace") as f:
                spec_text = f.read()
            with open(self.baseline_path, encoding="utf-8", errors="replace") as f:
                base_text = f.read()
            self.spec_key = content_key(spec_text, os.path.abspath(self.header.path), base_text,
                                        self.header.backend, self.header.kernel)
        return self.spec_key

    # --- reference process ----------------------------------------------------------------------------
    def _reference_ready(self) -> Dict[str, Any]:
        assert self.ref is not None
        header, _ = self._recv(self.ref, "reference")
        if header["type"] == "spec_error":
            raise SpecError(header["message"])
        if header["type"] != "ready":
            raise SpecError(f"The reference process failed: {header.get('message', header['type'])}")
        self.ref_outputs = header["outputs"]
        assert self.answers is not None
        self.answers.ready(header)  # the outputs' size, and whether they can be compared where they are
        self.ref_inplace = header["inplace"]
        if header.get("log"):
            self.ref.log_path = header["log"]  # a shared reference logs in its own folder
        self.backend.reference_ready(header)
        for phase, secs in (header.get("start_s") or {}).items():  # this judge waited for the reference's start
            if isinstance(secs, (int, float)):
                self.stages[f"reference_start_{phase}_s"] = float(secs)
        if TRACE:
            sys.stderr.write(f"[{time.monotonic() - self.t0:7.3f}s] reference: compiled {header.get('compiled', 0)} "
                             f"new cache entries for the baseline\n")
        return header["info"]

    # --- messages ---------------------------------------------------------------------------------------
    def _recv(self, proc: Process, stage: str) -> Tuple[Dict[str, Any], List[bytes]]:
        try:
            header, blobs = proc.recv(self.timeout(stage))
            if TRACE:
                sys.stderr.write(f"[{time.monotonic() - self.t0:7.3f}s] {os.path.basename(proc.log_path)[:-4]}: "
                                 f"{header.get('type')} {sum(map(len, blobs)) >> 10} KiB"
                                 + (f" (its CPU so far: {header['cpu_s']} s)" if "cpu_s" in header else "") + "\n")
            return header, blobs
        except ChannelTimeout:
            if proc is self.ref:
                raise SpecError(f"The reference (the baseline through launch) ran past {self.timeout(stage):.0f} s; "
                                f"use smaller SHAPES or a larger --timeout-scale.")
            proc.kill()
            raise Verdict("timeout", f"The candidate ran past {self.timeout(stage):.1f} s in the {stage} stage"
                                     f"{self._where()}; its process group was killed.", proc.log())
        except ChannelClosed:
            how = proc.exit_description()
            if proc.warm and proc.proc.server_lost:
                raise WarmServerLost()
            if proc is self.ref and proc.shared:
                raise SharedReferenceLost()
            if proc is self.ref:
                cause = no_gpu_here(proc.log()) if self.backend.gpu else None
                if cause:
                    raise SpecError(f"This spec's kernels need a GPU that torch can use, and there is none here "
                                    f"({cause}): judge it on a GPU host (`kernelevolve hosts --check` says what each "
                                    f"host has).")
                raise SpecError(f"The reference process {how} during {stage}:\n{_tail(proc.log(), 1500)}")
            raise Verdict("runtime_error", f"The candidate's process {how} in the {stage} stage{self._where()} "
                                           f"before sending its final result.", proc.log())

    def _where(self) -> str:
        call = getattr(self, "current", None)
        if not call:
            return ""
        return f" (shape {_shape_text(self.shapes[call[0]])}" + (f", seed {call[1]})" if call[1] is not None else ")")

    def _expect(self, kind: str, stage: str) -> Tuple[Dict[str, Any], List[bytes]]:
        assert self.worker is not None
        header, blobs = self._recv(self.worker, stage)
        if header["type"] == "error":
            first = header.get("message", "")
            what = "failed to load" if header.get("stage") == "load" else f"raised an error in the {header.get('stage')} stage"
            raise Verdict("runtime_error", f"The candidate {what}{self._where()}: {first[:300]}",
                          header.get("trace", "") + "\n" + self.worker.log())
        if header["type"] == "fallback":
            raise self._fallback(header)
        if header["type"] == "tampered":
            when = "when its module was imported" if header.get("after") == "import" else "during its calls"
            raise Verdict("incorrect", f"The candidate {header.get('change')} {when}: nothing a candidate does may "
                                       f"change the libraries, modules or settings the baseline runs with (its time "
                                       f"would not be the one the user measures); compute in the kernel instead.")
        if header["type"] != kind:
            raise Verdict("runtime_error", f"The worker sent {header['type']!r} where {kind!r} was expected.")
        return header, blobs

    # --- correctness ---------------------------------------------------------------------------------
    def _check_call(self, header: Dict[str, Any], blobs: List[bytes], shape: int, seed: int, factor: float,
                    what: str, known_good: Optional[Tuple[List[Any], List[str]]] = None,
                    wide: bool = False) -> List[Any]:
        """Checks one call's evidence. Outputs bitwise equal to ones already found correct for the same inputs
        (known_good) are not compared again."""
        where = f"shape {_shape_text(self.shapes[shape])}, seed {seed}" + (f", {what}" if what else "")
        if header.get("leftovers"):
            raise Verdict("runtime_error", f"On {where}, {header['leftovers']}; kernels must finish their work before returning.")
        if header.get("guard"):
            raise Verdict("incorrect", f"On {where}, the candidate {header['guard']} (an out-of-bounds write, caught by the guard bands).")
        if header.get("alias"):
            raise alias_verdict(where, header["alias"])
        if header.get("shared") is not None:
            self._check_on_device(header, shape, seed, factor, where, wide)
            return []
        ref_header, ref_outs = self.answers.expected(shape, seed, factor, wide)
        digests, ref_digests = header.get("digests") or [], ref_header["digests"]
        for j, (d, rd) in enumerate(zip(digests, ref_digests)):
            if rd is not None and j not in self.outputs and j not in self.inplace and d != rd:
                raise Verdict("incorrect", f"On {where}, the candidate changed argument {j}, an input that must come "
                                           f"back bitwise unchanged (declare it in INPLACE if the kernel may write it).")
        from .arrays import from_npy
        from .compare import same_bytes
        outs = [from_npy(b) for b in blobs]
        dtypes = header.get("dtypes") or []
        if len(outs) != len(ref_outs):
            raise Verdict("incorrect", f"On {where}, launch returned {len(outs)} output(s), expected {len(ref_outs)}.")
        if known_good is not None and known_good[1] == dtypes and len(known_good[0]) == len(outs) and all(
                same_bytes(a, b) for a, b in zip(known_good[0], outs)):
            return outs
        for k, (c, expected) in enumerate(zip(outs, ref_outs)):
            problem = expected.check(k, c, dtypes[k])
            if problem:
                raise Verdict("incorrect", f"Wrong result on {where}: {problem}.")
        return outs

    def _check_on_device(self, header: Dict[str, Any], shape: int, seed: int, factor: float, where: str,
                         wide: bool) -> None:
        """A call whose outputs its worker shared (device_outputs.py): the reference process compares them with the
        expected ones where they are; then the worker may let go of them."""
        assert self.worker is not None
        # the worker decides call by call, from the outputs' size, whether to share them; `answers.on_device` (from
        # the first shape's outputs) only says whether expected outputs are asked ahead as bytes. A spec whose later
        # shape alone reaches the threshold shares those calls' outputs (Liger's softmax on an H200).
        if self.answers.share_bytes is None or not isinstance(header["shared"], list):
            raise Verdict("runtime_error", "The worker shared its outputs where this evaluation compares them here.")
        dtypes = header.get("dtypes") or []
        answer = self.answers.ask(shape, seed, factor, wide, {"compare": {"outputs": header["shared"], "dtypes": dtypes}})
        self.worker.send({"type": "compared"})
        if answer.get("unopened"):
            raise Verdict("runtime_error", f"On {where}, the reference process could not open the candidate's outputs "
                                           f"on the device ({answer['unopened']}); KERNELEVOLVE_DEVICE_COMPARE_BYTES=off "
                                           f"compares them on the host instead.")
        self.stages["compared_on_device"] = self.stages.get("compared_on_device", 0) + 1
        for j, (d, rd) in enumerate(zip(header.get("digests") or [], answer["digests"])):
            if rd is not None and j not in self.outputs and j not in self.inplace and d != rd:
                raise Verdict("incorrect", f"On {where}, the candidate changed argument {j}, an input that must come "
                                           f"back bitwise unchanged (declare it in INPLACE if the kernel may write it).")
        count = answer.get("count")
        if len(header["shared"]) != count:
            raise Verdict("incorrect", f"On {where}, launch returned {len(header['shared'])} output(s), expected {count}.")
        compared = answer.get("compared") or []
        for problem in compared:
            if problem:
                raise Verdict("incorrect", f"Wrong result on {where}: {problem}.")
        if len(compared) != count:
            raise Verdict("runtime_error", f"On {where}, the reference process compared {len(compared)} of {count} "
                                           f"outputs on the device.")

    def _correctness(self) -> None:
        assert self.worker is not None
        self.answers.prefetch([(i, seed, 1.0) for i in range(len(self.shapes)) for seed in self.seeds])
        wide = self.opts.inputs == "wide"
        if wide:
            from .wide_inputs import PROBES
            for kind in PROBES:
                self.answers.prefetch([(i, self.seeds[0], 1.0) for i in range(len(self.shapes))], wide=kind)
        first: Dict[Tuple[int, int], Tuple[List[Any], List[str]]] = {}
        widened: List[int] = []  # the shapes judged on wide inputs
        narrow: Optional[Verdict] = None  # the first probe found wrong (robustness.py)
        while True:
            header, blobs = self._expect_any("correctness")
            if header["type"] == "calling":
                self.current = (header["shape"], header["seed"])
                continue
            if header["type"] == "correct_done":
                self.compile_stats.update(header.get("compile") or {})
                self.current = None
                if narrow is not None:
                    raise narrow
                if wide:
                    from .robustness import require_every_pass
                    require_every_pass(self, widened)
                    for i in range(len(self.shapes)):  # checked: the wide expected outputs are not needed again
                        for kind in PROBES:
                            self.answers.forget(i, self.seeds[0], 1.0, wide=kind)
                return
            if header["type"] != "call":
                raise Verdict("runtime_error", f"The worker sent {header['type']!r} during correctness checks.")
            i, seed, rep = header["shape"], header["seed"], header["rep"]
            if header.get("phase") in ("wide", "small", "large"):
                # a probe's outputs wrong: narrow_inputs, said once every call on the problem's own inputs is
                # checked (wrong there too, the candidate is incorrect, whatever came first)
                from .robustness import check_magnitude_call, check_wide_call
                try:
                    if header["phase"] == "wide":
                        check_wide_call(self, header, blobs, wide)
                        widened.append(i)
                    else:
                        check_magnitude_call(self, header, blobs, wide, header["phase"])
                except Verdict as v:
                    if v.status != "narrow_inputs":
                        raise
                    if header["phase"] == "wide":
                        widened.append(i)
                    narrow = narrow or v
                continue
            if rep not in (0, 1, 2):
                raise Verdict("runtime_error", f"The worker sent a correctness call numbered {rep!r}.")
            what = ("", "second run", "the same buffers called again with new inputs")[rep]
            outs = self._check_call(header, blobs, i, seed, 1.0, what, known_good=first.get((i, seed)) if rep else None)
            if rep == 0:
                first[(i, seed)] = (outs, header.get("dtypes") or [])
            elif rep == 1 and not self.backend.gpu and not self.threads_allowed:  # threaded reductions reorder sums
                from .compare import same_bytes
                for k, (a, b) in enumerate(zip(first[(i, seed)][0], outs)):
                    if not same_bytes(a, b):
                        raise Verdict("incorrect", f"The candidate is not deterministic: two runs on the same inputs "
                                                   f"(shape {_shape_text(self.shapes[i])}, seed {seed}) gave different output {k}.")
            if rep == 1:  # both runs checked: neither their outputs nor the expected ones are needed again (the
                # call on the same buffers with this seed's inputs came before its runs)
                first.pop((i, seed), None)
                self.answers.forget(i, seed, 1.0)

    def _fallback(self, header: Dict[str, Any]) -> Verdict:
        """The op watch saw library operators in the candidate's host code (_worker.watched_call)."""
        where = f"On shape {_shape_text(self.shapes[header['shape']])}" + (
            ", on fresh inputs after the timed rounds" if header.get("after_timing") else "")
        if header.get("library") == "numpy":
            return Verdict("static_rejected", f"{where}, the candidate's host code computes with "
                                              f"{', '.join(header['ops'][:5])}: a library fallback outside the kernel.")
        ops = ", ".join(f"torch {o}" for o in header["ops"][:5])
        return Verdict("static_rejected", f"{where}, the candidate's host code computes with {ops} on the GPU, which "
                                          f"the baseline does not: a library fallback outside the kernel.")

    def _expect_any(self, stage: str) -> Tuple[Dict[str, Any], List[bytes]]:
        assert self.worker is not None
        header, blobs = self._recv(self.worker, stage)
        if header["type"] == "refused":  # memory_plan.py: the problem does not fit the device, whatever the kernel
            raise SpecError(str(header.get("message", ""))[:2000])
        if header["type"] == "fallback":
            raise self._fallback(header)
        if header["type"] == "error":
            raise Verdict("runtime_error", f"The candidate raised an error in the {header.get('stage')} stage"
                                           f"{self._where()}: {header.get('message', '')[:300]}",
                          header.get("trace", "") + "\n" + self.worker.log())
        return header, blobs

    # --- timing ------------------------------------------------------------------------------------
    def _timed_passes(self, shapes: List[int], received: List[List[Dict[str, Any]]], held: List[List[float]]) -> None:
        """One timed pass of each of these shapes. The worker prepares a shape (inputs, buffers, calibration,
        graphs) before this judge takes the device lock, times its rounds under it, and checks what needs no quiet
        device (guard bands, the fresh-input call) after it is released: nothing else runs while it is held."""
        for i in shapes:
            self.current = (i, None)
            self._timing_message("prepared", i)
            self.answers.settle()
            t = time.monotonic()
            with device_lock(self.opts.lock, held, yield_s() if self.opts.background else 0.0):
                self.stages["lock_wait_s"] = self.stages.get("lock_wait_s", 0.0) + time.monotonic() - t
                self.worker.send({"type": "go"})
                header = self._timing_message("timing", i)
            self.stages["timing_s"] = self.stages.get("timing_s", 0.0) + (held[-1][1] - held[-1][0] if self.opts.lock
                                                                          else time.monotonic() - t)
            self.worker.send({"type": "released"})
            checked = self._timing_message("checked", i)
            header.update(verify=checked["verify"], fresh=checked["fresh"], phases=checked.get("phases"))
            received[i].append(header)
            # The inputs of this pass's kept calls are known now: the reference computes their outputs while the
            # worker prepares the next pass (settled before that pass takes the lock) instead of after the last.
            self.answers.prefetch([(i, e["seed"], e["factor"]) for e in header["verify"] + [header["fresh"]]])
            self._note_phases(i, header)
            if TRACE:  # wall-clock, to be set beside the lock's holds (test_timing_lock.py)
                spans = checked.get("spans") or {}
                sys.stderr.write(f"[{time.monotonic() - self.t0:7.3f}s] pass of shape {i}: "
                                 + (f"lock held {held[-1][0]:.6f}-{held[-1][1]:.6f}; " if self.opts.lock else "")
                                 + "; ".join(f"{k} {a:.6f}-{b:.6f}" for k, (a, b) in spans.items()) + "\n")
            if isinstance(header.get("host_waits"), int) and header["host_waits"] != 0:
                # rounds set aside because a launch was still being queued when its timing began (-1: every one
                # was, and the samples were kept as they were)
                key = "host_waits" if header["host_waits"] > 0 else "host_bound_shapes"
                self.stages[key] = self.stages.get(key, 0) + max(1, header["host_waits"])

    def _clean_baseline(self) -> List[Dict[str, Any]]:
        """Each shape's baseline clocked the same way in the candidate's worker and in the clean reference process,
        in alternating blocks (clean_baseline.py), up to clean_baseline.READINGS times for a shape that read slower
        in the worker than the two processes' noise allows; raises the verdict when the last reading is slower too.
        The worker's process snapshot is checked first, so a change it can name is said as such."""
        from . import clean_baseline
        assert self.worker is not None and self.answers is not None
        self.worker.send({"type": "snapshot"})
        self._expect("untouched", "timing")
        self.answers.settle()
        self.clean_held: List[List[float]] = []
        n = len(self.shapes)
        clocked: Dict[int, Dict[str, List[float]]] = {i: {"worker": [], "clean": []} for i in range(n)}
        t = time.monotonic()
        rows: List[Dict[str, Any]] = [{} for _ in range(n)]
        todo = list(range(n))
        for reading in range(clean_baseline.READINGS):
            for i in todo:
                rows[i] = self._clean_clock(i, clocked[i], rows[i], clean_baseline.LONGER ** reading)
            todo = [i for i in todo if clean_baseline.too_slow(rows[i])]
            if not todo:
                break
        self.stages["clean_baseline_s"] = time.monotonic() - t
        why = clean_baseline.verdict_reason(rows)
        if why:
            raise Verdict("incorrect", why)
        return rows

    def _clean_clock(self, i: int, clocked: Dict[str, List[float]], last: Dict[str, Any],
                     longer: float) -> Dict[str, Any]:
        """One reading of shape i: the worker, the clean process, the clean process, the worker (each a block of
        clean_baseline.clock, inputs of a draw no check uses), the fastest sample of every block so far on either
        side. The worker's blocks run under the device lock held here; the reference takes it for its own (a
        shared reference may be answering other judges first, and no judge holds the lock while it waits)."""
        from . import clean_baseline
        assert self.worker is not None and self.answers is not None
        seed = self.rng.randrange(1, 2**31)
        batch = int(self.clean_batch.get(i, 1))
        for who in ("worker", "clean", "clean", "worker"):
            if who == "worker":
                with device_lock(self.opts.lock, self.clean_held, yield_s() if self.opts.background else 0.0):
                    self.worker.send({"type": "clock", "shape": i, "seed": seed, "batch": batch, "longer": longer})
                    header, _ = self._expect("clock", "timing")
            else:
                header = self.answers.ask(i, seed, 1.0, False, {"clock": batch, "longer": longer, "lock": self.opts.lock,
                                                                "background": yield_s() if self.opts.background
                                                                else 0.0})
                self.clean_held += header.get("held") or []
                if header.get("error"):
                    return clean_baseline.not_measured(self.shapes[i], header["error"])
            clocked[who] += [float(x) for x in header.get("times") or []]
        if not clocked["worker"] or not clocked["clean"]:
            return clean_baseline.not_measured(self.shapes[i], "no samples")
        row = clean_baseline.judged(min(clocked["worker"]), clocked["clean"], bool(self.backend.gpu),
                                    self.shapes[i], self.clean_timer.get(i, ""))
        if "ratio" in last:
            row["readings"] = last.get("readings", []) + [last["ratio"]]
        return row

    def _timing_message(self, kind: str, i: int) -> Dict[str, Any]:
        assert self.worker is not None
        header, _ = self._expect_any("timing")
        if header["type"] == "call":  # a guard or leftover tripped
            self._check_call(header, [], i, 0, 1.0, "during timing")
            raise Verdict("runtime_error", "The worker stopped timing without saying why.")
        if header["type"] != kind or header.get("shape") != i:
            raise Verdict("runtime_error", f"The worker sent {header['type']!r} during timing where {kind!r} "
                                           f"was expected.")
        return header

    def _to_retime(self, received: List[List[Dict[str, Any]]], estimate: Any) -> List[int]:
        """The shapes to time again (at most KERNELEVOLVE_RETIME_SHAPES, default 2, the least sure first): those
        whose interval is wider than their goal (ratio_goal; ratio_goal_short for a shape timed as CUDA graphs,
        whose passes aim no closer) and near enough to it for more passes to help (ratios.worth_retiming), and
        not wholly below far_below (a launch that loses by half needs no finer figure)."""
        ratios = []
        for passes in received:
            b, c = shape_estimate([_pass(h) for h in passes], estimate)
            ratios.append(b / c if c > 0 else float("inf"))
        shape_iv, _ = intervals([[_pass(h) for h in passes] for passes in received], estimate,
                                kinds=[_timer(passes) for passes in received])
        s = self.timing_settings
        goals = [s.ratio_goal_short if passes and all(h.get("timer") == "cuda-graph" for h in passes) else s.ratio_goal
                 for passes in received]
        # a shape wholly below far_below is not timed again: its passes stopped at far_goal (timing_settings.py)
        unsure = {k for k, (r, iv) in enumerate(zip(ratios, shape_iv))
                  if worth_retiming(iv, r, goals[k], s.retime_reach) and not (s.far_below > 0 and iv[1] < s.far_below)}
        width = {k: shape_iv[k][1] / max(shape_iv[k][0], 1e-12) for k in unsure}
        return sorted(sorted(unsure, key=lambda k: -width[k])[:max(0, s.retime_shapes)])

    def _note_phases(self, i: int, header: Dict[str, Any]) -> None:
        """Adds shape i's timed-section phases to the verdict's stages (timing_<phase>_s, summed over shapes)."""
        phases = _phases(header)
        for phase, secs in phases.items():
            key = f"timing_{phase}_s"
            self.stages[key] = self.stages.get(key, 0.0) + secs
        if TRACE:
            sys.stderr.write(f"[{time.monotonic() - self.t0:7.3f}s] timed shape {i}: {header.get('rounds')} rounds, "
                             f"{header.get('timer')}, {header.get('rule')}; "
                             + ", ".join(f"{k} {v:.3f} s" for k, v in phases.items()) + "\n")

    def _timing(self) -> VerdictRecord:
        assert self.worker is not None
        gpu = self.backend.gpu
        n = len(self.shapes)
        settings = TimingSettings.from_env(gpu)
        self.timing_settings = settings
        cmd = {
            "type": "time", "secret": self.rng.randrange(2**62), "settings": settings.to_message(),
            "pool_seeds": [[self.rng.randrange(1, 2**31) for _ in range(3)] for _ in range(n)],
            "fresh_seeds": [self.rng.randrange(1, 2**31) for _ in range(n)],
        }
        rows: List[Dict[str, Any]] = []
        spreads: List[float] = []
        methods: List[str] = []
        received: List[List[Dict[str, Any]]] = [[] for _ in range(n)]  # each shape's timed passes
        estimate = median if gpu else lower_quartile
        # The lock is held around each pass's rounds alone (_timed_passes); the timed outputs are checked (here,
        # and by the reference process) only after the last timed call, so neither competes with the timing.
        held: List[List[float]] = []
        self.stages["lock_wait_s"] = 0.0
        self.stages["timing_s"] = 0.0
        self.worker.send(cmd)
        self._timed_passes(list(range(n)), received, held)
        # Shapes whose ratio is less sure than the goal, or that disagree with the others, are timed again in new
        # buffers with new inputs; two passes of a shape that disagree get a third (median of three).
        again = self._to_retime(received, estimate) if settings.ratio_goal > 0 else []
        for _ in range(2):
            if not again:
                break
            self.worker.send({"type": "retime", "shapes": again,
                              "pool_seeds": [[self.rng.randrange(1, 2**31) for _ in range(3)] for _ in range(n)],
                              "fresh_seeds": [self.rng.randrange(1, 2**31) for _ in range(n)]})
            self._timed_passes(again, received, held)
            self.stages["retimed_shapes"] = self.stages.get("retimed_shapes", 0) + len(again)
            again = [i for i in again if len(received[i]) == 2 and apart(*[
                intervals([[_pass(h)]], estimate)[0][0] for h in received[i]])]
        self.current = None
        self.clean_batch = {i: passes[0]["batch"]["baseline"] for i, passes in enumerate(received)}
        self.clean_timer = {i: str(passes[0].get("timer", "")) for i, passes in enumerate(received)}
        clean = self._clean_baseline()
        asked = kernelbench_timing.request(self.backend.name)
        if asked:  # KernelBench's eager timing, beside ours: timing too, so under the lock
            self.answers.settle()
            t = time.monotonic()
            with device_lock(self.opts.lock, held, yield_s() if self.opts.background else 0.0):
                self.stages["lock_wait_s"] += time.monotonic() - t
                self.worker.send({"type": "timed", **asked})
                final, _ = self._expect("final", "timing")
            self.stages["timing_s"] += held[-1][1] - held[-1][0] if self.opts.lock else time.monotonic() - t
        else:
            self.worker.send({"type": "timed"})
            final, _ = self._expect("final", "timing")
        t = time.monotonic()
        # The device is free again: the worker now sends what it kept (outputs and arguments of timed calls and
        # of the fresh-input call), while the reference process computes the expected outputs for all of it.
        kept = [(i, e["seed"], e["factor"], bool(e.get("wide"))) for i, passes in enumerate(received) for h in passes
                for e in h["verify"] + [h["fresh"]]]
        self.answers.prefetch([k[:3] for k in kept if not k[3]])
        self.answers.prefetch([k[:3] for k in kept if k[3]], wide=True)
        # a key kept twice (a CUDA graph refills each buffer set with the same input set every replay) is computed
        # once and let go after its last check
        uses: Dict[Tuple[int, int, float, bool], int] = {}
        for k in kept:
            uses[k] = uses.get(k, 0) + 1
        for i, passes in enumerate(received):
            for header in passes:
                if header["fresh"]["guard"]:
                    self._check_call({"guard": header["fresh"]["guard"]}, [], i, header["fresh"]["seed"], 1.0,
                                     "fresh inputs in the timed buffers after timing")
            # every timed pass's kept calls and its fresh-input call, one message each (one call's outputs held
            # at a time: memory_plan.py)
            left = sum(len(h["verify"]) + 1 for h in passes)
            while left > 0:
                evidence, blobs = self._expect_any("verify")
                if evidence["type"] != "verify" or evidence.get("shape") != i or not evidence.get("entries"):
                    raise Verdict("runtime_error", f"The worker sent {evidence['type']!r} where the evidence of "
                                                   f"shape {i} was expected.")
                offset = 0
                for v in evidence["entries"]:
                    part = blobs[offset:offset + v["count"]]
                    offset += v["count"]
                    wide = bool(v.get("wide"))
                    what = ("fresh inputs in the timed buffers after timing" if v["what"] == "fresh"
                            else "wide inputs in the timed buffers between timed rounds" if wide
                            else f"a {v['what']} call, inputs scaled by {v['factor']:.3f}")
                    evidence_header = {"digests": v["digests"], "dtypes": v["dtypes"], "shared": v.get("shared"),
                                       "alias": v.get("alias")}
                    if wide:
                        from .robustness import check_wide_probe
                        check_wide_probe(self, evidence_header, part, i, v["seed"], what)
                    else:
                        self._check_call(evidence_header, part, i, v["seed"], v["factor"], what)
                    k = (i, v["seed"], v["factor"], wide)
                    uses[k] = uses.get(k, 1) - 1
                    if uses[k] <= 0:
                        self.answers.forget(*k)
                    left -= 1
                blobs, part = [], []  # the received outputs go before the next call's arrive
            header = passes[0]
            b, c = shape_estimate([_pass(h) for h in passes], estimate)
            spreads.append(_iqr(header["samples"]["candidate"]) / c if c > 0 else 0.0)
            methods.append(header.get("timer", ""))
            rows.append({"shape": self.shapes[i], "baseline_ms": b, "candidate_ms": c,
                         "speedup": b / c if c > 0 else float("inf"),
                         "samples": sum(len(h["samples"]["candidate"]) for h in passes),
                         "batch": header["batch"]["candidate"], "method": header.get("timer", ""),
                         # why each timed pass stopped (stopping_rule.py): "precise", "far below", "ceiling: ..."
                         "stops": [(h.get("rule") or {}).get("stop", "") for h in passes],
                         # timed calls, picked among a pass's rounds, whose outputs were checked (the last
                         # sample's and the fresh-input call are checked besides)
                         "spot_checks": sum(1 for h in passes for e in h["verify"] if e.get("what") == "timed")})
            if len(passes) > 1:
                rows[-1]["passes"] = len(passes)
            if isinstance(header.get("memory"), dict):  # the memory plan of its first pass (memory_plan.py)
                rows[-1]["memory"] = header["memory"]
        shape_iv, overall_iv = intervals([[_pass(h) for h in passes] for passes in received], estimate,
                                         kinds=[_timer(passes) for passes in received])
        speedup = math.exp(sum(math.log(max(r["speedup"], 1e-12)) for r in rows) / len(rows))
        if not gpu:  # what drifts between a CPU's passes (ratios.CPU_FLOOR)
            shape_iv = [with_floor(iv, r["speedup"]) for iv, r in zip(shape_iv, rows)]
            overall_iv = with_floor(overall_iv, speedup)
        for row, (lo, hi) in zip(rows, shape_iv):
            row["interval"] = [lo, hi]
        self.stages["verify_s"] = time.monotonic() - t
        method = ", ".join(sorted(set(methods)))
        timing: Dict[str, Any] = {
            "method": method, "estimator": "median" if gpu else "lower quartile",
            "lock": bool(self.opts.lock), "lock_held": held or None,
            "paired": "interleaved rounds",
            "interval": f"{int(LEVEL * 100)}%: bootstrap over rounds, widened to the spread between buffer "
                        f"sets and passes and to the two run orders' readings"
                        + ("" if gpu else ", and to at least +-3% (what drifts between a CPU's passes)"),
            "clean_baseline": clean}
        if self.opts.lock:
            timing["clean_lock_held"] = self.clean_held
        flushed = [h.get("code_flush_bytes", 0) for passes in received for h in passes if h.get("timer") == "cuda-events"]
        if flushed:  # each event-timed sample started with the instruction caches emptied (code_flush.py; 0: not)
            timing["code_flush_bytes"] = min(flushed)
        if os.environ.get("KERNELEVOLVE_VERDICT_PASSES") == "1":  # every pass's samples, for a study of the
            # judge's rules offline (scripts/gpu/retime_study.py): which shapes a rule would time again, and what
            # the verdict would have read without those passes
            timing["passes"] = [[{"samples": h["samples"], "buffer_sets": h.get("buffer_sets"),
                                  "orders": h.get("orders"), "timer": h.get("timer")} for h in passes]
                                for passes in received]
        verdict = VerdictRecord(
            "ok", f"Correct on {n} shape(s) x {len(self.seeds)} seeds; {speedup:.2f}x the baseline "
                  f"({overall_iv[0]:.2f}-{overall_iv[1]:.2f}; geometric mean of paired ratios).",
            speedup=speedup, speedup_interval=list(overall_iv), shapes=rows, compile=self.compile_stats,
            timing=timing)
        kernelbench_timing.annotate(verdict, final.get("kernelbench"), gpu)
        if self.opts.profile:
            from .profiling import profile
            verdict.profile = profile(self, rows, spreads)
        verdict.stages = self._stage_times()
        verdict.workers = self.workers
        if self.log:
            verdict.log = _tail(self.log)
        return verdict


def _timer(passes: List[Dict[str, Any]]) -> str:
    """How a shape's passes were timed (every pass of a shape the same way): its intervals pool the spread between
    clusters with the shapes timed alike (ratios.intervals)."""
    return str(passes[0].get("timer", "")) if passes else ""


def _pass(header: Dict[str, Any]) -> Tuple[List[float], List[float], List[int], List[int]]:
    """A timed pass's samples, the buffer set of each round (none named: one set) and its order (none named: the
    orders are not told apart)."""
    def ints(key: str) -> List[int]:
        xs = header.get(key)
        return [int(x) for x in xs] if isinstance(xs, list) and all(isinstance(x, int) for x in xs) else []
    return header["samples"]["baseline"], header["samples"]["candidate"], ints("buffer_sets"), ints("orders")


def _phases(header: Dict[str, Any]) -> Dict[str, float]:
    """The worker's account of where a shape's timed section went (diagnostics only; never part of a verdict's
    judgement, so anything malformed is left out)."""
    phases = header.get("phases")
    if not isinstance(phases, dict):
        return {}
    return {k: float(phases[k]) for k in _PHASES
            if isinstance(phases.get(k), (int, float)) and math.isfinite(phases[k]) and phases[k] >= 0}


_PHASES = ("setup", "capture", "rounds", "evidence")  # what the worker reports of each shape's timed section


def _iqr(xs: List[float]) -> float:
    s = sorted(xs)
    if len(s) < 4:
        return 0.0
    return s[(3 * len(s)) // 4] - s[len(s) // 4]


def evaluate(opts: Options) -> Dict[str, Any]:
    """Judges one candidate; its verdict as printed (verdicts.VerdictRecord)."""
    from . import kernelbench
    import dataclasses
    kernelbench.require_problem_or_spec(opts.spec)
    opts = dataclasses.replace(opts, spec=kernelbench.spec_for(opts.spec))  # a KernelBench problem as a spec
    try:
        verdict = Judge(opts).run()
    except SharedReferenceLost:
        verdict = Judge(dataclasses.replace(opts, shared_reference=False)).run()
        verdict.workers = {**(verdict.workers or {}), "reference": (
            "warm (the shared reference exited mid-evaluation, so it was judged again with its own)")}
    except WarmServerLost:
        # Judged again from the start with new Pythons: the verdict is never the server's fault.
        verdict = Judge(dataclasses.replace(opts, warm=False)).run()
        verdict.workers = {k: "cold (the warm-worker server exited mid-evaluation, so it was judged again)"
                           for k in verdict.workers or {}}
    return verdict.to_json()
