"""Running one job on this machine: what every host (local, SSH, Slurm) calls, so that the timing lock, the
timeout, the process tree and its cleanup, and the verdict envelope are decided once, here.

A job is a JSON object:

  spec              path of the spec on this machine (required)
  candidate_source  the candidate's whole file, written into the job's scratch folder   } one of the two
  candidate         path of a candidate file already on this machine                  }
  candidate_name    file name for candidate_source (keeps its extension: .cpp, .cu, .py)
  baseline          path of the baseline source (default: the spec's SOURCE)
  baseline_source, baseline_name   a baseline sent with the job instead
  profile           true to profile the candidate
  inputs            "wide" (default: the robustness pass where the spec's inputs are narrow) or "problem"
  device            the device the job runs on (CUDA_VISIBLE_DEVICES); names its timing lock
  lock_device       names the timing lock when the device's machine-wide name differs from `device` (a Slurm
                    job's GPUs, renumbered from 0 inside the job)
  timeout_s         the whole evaluation's limit, from its start here; the runner stops it and answers "timeout"
  toolchain         the host's toolchain for a custom-backend spec ({"compile", "run", "knowledge", "hardware"},
                    field by field over the spec's TOOLCHAIN; backends/custom.py)
  memory_share      the share of the device's memory the evaluation plans within (0 < share <= 1; default the
                    whole device): evaluations run side by side on one device (memory_plan.py), each with a
                    reference process of its own that ends with it
  background        true for a re-judgement (a leader's confirmation, judged early beside the search): evaluations
                    waiting for the timing lock without it take it first (device_lock.py)

The answer is one envelope (a JSON object, ENVELOPE = 1):

  {"envelope": 1, "outcome": "verdict", "verdict": {...}, "node", "device", "lock", "elapsed_ms", "machine"}

"machine" is what judged it: {"cpu": "<model> (<n> cores)", "gpu": "<name>"} as `check-host` names them (no "gpu"
on a machine without one).
  {"envelope": 1, "outcome": "spec_error", "message": "what is wrong with the spec and how to fix it", ...}
  {"envelope": 1, "outcome": "harness_error", "message": "...", "exit": code, "log": "stderr tail", ...}
  {"envelope": 1, "outcome": "cancelled", ...}

The judge runs in a child process (a new session), so a job that hangs or is cancelled is killed with its whole
tree and the runner lives on to say so.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from .backends.base import JUDGE_DIR_ENV, cache_dir
from .device_lock import lock_path
from .host_check import machine
from .process_tree import kill_tree
from .verdicts import VerdictRecord

ENVELOPE = 1
LOG_TAIL = 4000
HARNESS_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC_ERROR_PREFIX = "kernelevolve_harness: "


class JobError(ValueError):
    """The job itself is malformed (a host's bug, not the candidate's): said in one sentence."""


@dataclass
class Job:
    spec: str
    candidate: Optional[str] = None
    candidate_source: Optional[str] = None
    candidate_name: Optional[str] = None
    baseline: Optional[str] = None
    baseline_source: Optional[str] = None
    baseline_name: Optional[str] = None
    profile: bool = False
    inputs: str = "wide"
    device: Optional[str] = None
    lock_device: Optional[str] = None
    timeout_s: Optional[float] = None
    toolchain: Optional[Dict[str, Any]] = None  # the host's toolchain (the custom backend), over the spec's
    memory_share: Optional[float] = None  # the share of the device's memory the evaluation keeps to (memory_plan.py)
    background: bool = False  # a re-judgement: the search's evaluations take the timing lock first (device_lock.py)


def _opt_str(data: Dict[str, Any], key: str) -> Optional[str]:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise JobError(f'The job\'s "{key}" must be a string; got {type(value).__name__}.')
    return str(value)


def _file_name(value: Optional[str], key: str) -> Optional[str]:
    if value is not None and (not value or os.path.basename(value) != value or value in (".", "..")):
        raise JobError(f'The job\'s "{key}" must be a plain file name such as kernel.cpp; got {value!r}.')
    return value


def parse_job(data: Any) -> Job:
    """A Job from its JSON form, every field checked."""
    if not isinstance(data, dict):
        raise JobError("A job must be a JSON object with at least \"spec\" and the candidate.")
    unknown = sorted(set(data) - set(Job.__dataclass_fields__) - {"id"})
    if unknown:
        raise JobError(f"The job has fields this harness does not know: {', '.join(unknown)}.")
    spec = _opt_str(data, "spec")
    if not spec:
        raise JobError('The job has no "spec" (the path of the spec on this machine).')
    job = Job(spec=spec, candidate=_opt_str(data, "candidate"), candidate_source=_opt_str(data, "candidate_source"),
              candidate_name=_file_name(_opt_str(data, "candidate_name"), "candidate_name"),
              baseline=_opt_str(data, "baseline"), baseline_source=_opt_str(data, "baseline_source"),
              baseline_name=_file_name(_opt_str(data, "baseline_name"), "baseline_name"),
              device=_opt_str(data, "device"), lock_device=_opt_str(data, "lock_device"))
    if (job.candidate is None) == (job.candidate_source is None):
        raise JobError('A job names its candidate once: "candidate" (a path) or "candidate_source" with '
                       '"candidate_name".')
    if job.candidate_source is not None and not job.candidate_name:
        raise JobError('"candidate_source" needs "candidate_name", the file name that keeps its extension.')
    if job.baseline_source is not None and not job.baseline_name:
        raise JobError('"baseline_source" needs "baseline_name", the file name that keeps its extension.')
    # Paths are the caller's: relative ones resolve against where run-job was started, not the scratch folder.
    job.spec = os.path.abspath(job.spec)
    job.candidate = os.path.abspath(job.candidate) if job.candidate else None
    job.baseline = os.path.abspath(job.baseline) if job.baseline else None
    profile = data.get("profile", False)
    if not isinstance(profile, bool) and profile is not None:
        raise JobError('The job\'s "profile" must be true or false.')
    job.profile = bool(profile)
    background = data.get("background", False)
    if not isinstance(background, bool) and background is not None:
        raise JobError('The job\'s "background" must be true or false.')
    job.background = bool(background)
    inputs = data.get("inputs", "wide")
    if inputs not in ("wide", "problem", None):
        raise JobError(f'The job\'s "inputs" must be "wide" or "problem"; got {inputs!r}.')
    job.inputs = inputs or "wide"
    timeout = data.get("timeout_s")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise JobError(f'The job\'s "timeout_s" must be a positive number of seconds; got {timeout!r}.')
        job.timeout_s = float(timeout)
    toolchain = data.get("toolchain")
    if toolchain is not None and not isinstance(toolchain, dict):
        raise JobError('The job\'s "toolchain" must be an object such as {"compile": [...], "run": [...]}.')
    job.toolchain = toolchain
    share = data.get("memory_share")
    if share is not None:
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
            raise JobError(f'The job\'s "memory_share" must be a fraction of the device above 0 and at most 1; got {share!r}.')
        job.memory_share = float(share)
    return job


def envelope(outcome: str, **fields: Any) -> Dict[str, Any]:
    return {"envelope": ENVELOPE, "outcome": outcome, **fields}


def _tail(text: str) -> str:
    return text[-LOG_TAIL:]


def _seconds(s: float) -> str:
    return f"{s:g}"


class JobRun:
    """One job from start to envelope. `cancel()` may be called from another thread (or a signal handler)."""

    def __init__(self, job: Job, scratch: Optional[str] = None, python: str = sys.executable,
                 owner: Optional[int] = None, judge_dir: Optional[str] = None) -> None:
        self.job = job
        self.python = python
        self.owner = owner if owner is not None else os.getpid()  # OWNERLESS (0): the server lives until idle
        self.node = socket.gethostname()
        self._own_scratch = scratch is None
        self.scratch = scratch or tempfile.mkdtemp(prefix="kernelevolve-job-")
        # Where the judge makes its working folder (compiled candidates, worker logs, Triton caches), which its
        # workers run in: a judge stopped with its process tree cannot remove it, so close() does. Inside the
        # scratch unless the caller names a folder on a local disk (a Slurm worker's scratch is on a shared one).
        self.judge_dir = judge_dir or os.path.join(self.scratch, ".judge")
        self.proc: Optional[subprocess.Popen] = None
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self.lock = ""
        self.started_at = 0.0
        self._setup_error = ""

    def _args(self) -> List[str]:
        os.makedirs(self.scratch, exist_ok=True)
        job = self.job
        candidate = job.candidate
        if job.candidate_source is not None:
            candidate = os.path.join(self.scratch, job.candidate_name or "candidate")
            with open(candidate, "w", encoding="utf-8") as f:
                f.write(job.candidate_source)
        baseline = job.baseline
        if job.baseline_source is not None:
            baseline = os.path.join(self.scratch, f"baseline-{job.baseline_name}")
            with open(baseline, "w", encoding="utf-8") as f:
                f.write(job.baseline_source)
        self.lock = lock_path(job.lock_device if job.lock_device is not None else job.device)
        args = [self.python, "-m", "kernelevolve_harness", "evaluate", "--spec", job.spec,
                "--candidate", str(candidate), "--json", "--lock", self.lock]
        if baseline:
            args += ["--baseline", baseline]
        if job.profile:
            args.append("--profile")
        if job.background:
            args.append("--background")
        if job.inputs != "wide":
            args += ["--inputs", job.inputs]
        return args

    def start(self) -> None:
        try:
            args = self._args()
        except OSError as e:  # the scratch folder or the lock cannot be had: this machine's fault, said plainly
            self._setup_error = str(e) if isinstance(e, PermissionError) and "timing lock" in str(e) else (
                f"Cannot prepare the job on {self.node}: {e}.")
            return
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (HARNESS_ROOT, env.get("PYTHONPATH", "")) if p)
        if "PYTHONPYCACHEPREFIX" not in env:
            # The judge is a new Python per job: its imports (numpy, the harness) read their compiled bytecode from
            # the harness's cache, written there once, also where the machine's image sets PYTHONDONTWRITEBYTECODE
            # or its packages' folders are read-only (on the H200's image every judge compiled numpy and the harness
            # from their sources: a third of its CPU time)
            env["PYTHONPYCACHEPREFIX"] = os.path.join(cache_dir(), "pycache")
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        # The warm-worker server outlives the job: on a local or SSH host it has no owner and lives until idle
        # (KERNELEVOLVE_WARM_IDLE_S), so the next evaluation, from whatever process, finds it; a Slurm worker
        # owns its server (the allocation ends with it). KERNELEVOLVE_WARM_OWNER, when set, decides.
        env.setdefault("KERNELEVOLVE_WARM_OWNER", "none" if self.owner == OWNERLESS else str(self.owner))
        env[JUDGE_DIR_ENV] = self.judge_dir
        if self.job.device is not None:
            env["CUDA_VISIBLE_DEVICES"] = self.job.device
        if self.job.toolchain:
            env["KERNELEVOLVE_TOOLCHAIN"] = json.dumps(self.job.toolchain)
        if self.job.memory_share is not None:
            env["KERNELEVOLVE_DEVICE_MEMORY_SHARE"] = f"{self.job.memory_share:g}"
            # A shared reference outlives its evaluation (KERNELEVOLVE_REFERENCE_IDLE_S) holding its inputs and
            # expected outputs on the device, outside every share: beside others, each evaluation has its own.
            env["KERNELEVOLVE_SHARED_REFERENCE"] = "0"
        self._out = open(os.path.join(self.scratch, ".stdout"), "w+b")
        self._err = open(os.path.join(self.scratch, ".stderr"), "w+b")
        self.started_at = time.time()
        with self._lock:
            if self._cancelled.is_set():
                return
            self.proc = subprocess.Popen(args, cwd=self.scratch, env=env, stdin=subprocess.DEVNULL, stdout=self._out,
                                         stderr=self._err, start_new_session=True)

    def cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            if self.proc is not None and self.proc.poll() is None:
                kill_tree(self.proc.pid)

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def wait(self, tick: Optional[Callable[[], None]] = None, poll_s: float = 0.05) -> Dict[str, Any]:
        """Waits for the judge (calling `tick` between polls), stops it at the job's limit, and answers."""
        deadline = self.started_at + self.job.timeout_s if self.job.timeout_s else None
        timed_out = False
        proc = self.proc
        while proc is not None and proc.poll() is None:
            if tick is not None:
                tick()
            if deadline is not None and time.time() > deadline:
                timed_out = True
                kill_tree(proc.pid)
                proc.wait()
                break
            try:
                proc.wait(timeout=poll_s)
            except subprocess.TimeoutExpired:
                pass
        # Whatever the judge left behind in its session goes too (its compilers, a stray child).
        if proc is not None:
            kill_tree(proc.pid)
        return self._answer(proc, timed_out)

    def _read(self, f: Any) -> str:
        try:
            f.seek(0)
            return f.read().decode("utf-8", "replace")
        finally:
            f.close()

    def _answer(self, proc: Optional[subprocess.Popen], timed_out: bool) -> Dict[str, Any]:
        stdout = self._read(self._out) if hasattr(self, "_out") else ""
        stderr = self._read(self._err) if hasattr(self, "_err") else ""
        where = {"node": self.node, "device": self.job.device, "lock": self.lock,
                 "machine": machine(self.job.lock_device if self.job.lock_device is not None else self.job.device),
                 "elapsed_ms": (time.time() - self.started_at) * 1000.0 if self.started_at else 0.0,
                 "exit": proc.returncode if proc is not None else None}
        if self.cancelled:
            return envelope("cancelled", **where)
        if self._setup_error:
            return envelope("harness_error", message=self._setup_error, **where)
        if timed_out:
            timeout = VerdictRecord("timeout", f"The evaluation did not finish within {_seconds(self.job.timeout_s or 0)} "
                                               f"s on {self.node}; it was stopped with everything it started.",
                                    log=_tail(stderr or stdout))
            return envelope("verdict", verdict=timeout.to_json(), **where)
        code = proc.returncode if proc is not None else None
        if code == 2:
            said = [l[len(SPEC_ERROR_PREFIX):] for l in stderr.splitlines() if l.startswith(SPEC_ERROR_PREFIX)]
            if said:
                return envelope("spec_error", message="\n".join(said), **where)
        lines = stdout.strip().splitlines()
        if lines:
            try:
                verdict = json.loads(lines[-1])
            except ValueError:
                verdict = None
            if isinstance(verdict, dict) and isinstance(verdict.get("status"), str):
                return envelope("verdict", verdict=verdict, **where)
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
        return envelope("harness_error", message=f"The harness {how} on {self.node} without a verdict. Check that "
                                                 f"Python 3.9+ with numpy is installed there.",
                        log=_tail(stderr or stdout), **where)

    def close(self) -> None:
        """Removes the judge's folder, and the scratch folder if this run made it."""
        shutil.rmtree(self.judge_dir, ignore_errors=True)
        if self._own_scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
        else:
            for name in (".stdout", ".stderr"):
                try:
                    os.unlink(os.path.join(self.scratch, name))
                except OSError:
                    pass


OWNERLESS = 0  # JobRun's owner for a server that outlives whoever ran the job (until idle)


def run_job(job: Job, scratch: Optional[str] = None, owner: Optional[int] = None,
            tick: Optional[Callable[[], None]] = None) -> Dict[str, Any]:
    run = JobRun(job, scratch=scratch, owner=owner)
    try:
        run.start()
        return run.wait(tick)
    finally:
        run.close()


def main(job_file: Optional[str]) -> int:
    """`run-job`: reads the job (a file, or stdin), prints one envelope line; exit 0 whatever the candidate did."""
    try:
        if job_file and job_file != "-":
            with open(job_file, encoding="utf-8") as f:
                text = f.read()
        else:
            text = sys.stdin.read()
        try:
            data = json.loads(text)
        except ValueError as e:
            raise JobError(f"The job is not valid JSON ({e}).")
        job = parse_job(data)
    except (JobError, OSError) as e:
        sys.stdout.write(json.dumps(envelope("harness_error", message=f"Bad job: {e}")) + "\n")
        return 2
    # The local host's runner: the server stays warm for the next `kernelevolve evaluate` or `evolve`.
    run = JobRun(job, owner=OWNERLESS)
    # A host that is gone (an editor killed mid-run) ends the job: its judge, orphaned, ends in turn.
    from .parent_watch import exit_with_parent
    exit_with_parent()

    def stop(_signum: int, _frame: Any) -> None:
        run.cancel()

    # The host stops a job with SIGTERM (or SIGINT): the whole tree goes, and the answer says "cancelled".
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        run.start()
        answer = run.wait()
    finally:
        run.close()
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    return 0
