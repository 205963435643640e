"""A job-queue folder on a shared filesystem, and the long-lived worker that serves it.

A Slurm host runs one worker per GPU as a batch job. Workers take candidates from
``QUEUE/pending/`` and judge each through the job runner (job_runner.py, as every host does: the judge in a child
process with every guard in force, the node's timing lock, the job's timeout), then leave its envelope in
``QUEUE/done/``.
Every hand-over is one ``rename`` on the shared filesystem, which is atomic, so a candidate is always
in exactly one of pending/, claimed/<worker>/ or done/, and a killed worker loses none.

Layout of QUEUE:
  pending/<name>.json            jobs the host wrote (write to a dot-file, then rename)
  claimed/<worker>/<name>.json   jobs a worker took (rename out of pending/)
  done/<name>.json               results: the runner's envelope and where it ran (dot-file, then renamed)
  cancel/<name>                  the host gave up on a job; its worker stops judging it
  workers/<worker>.json          heartbeats (rewritten every second) and the exit note
  work/<worker>/                 scratch for candidate files
  stop                           present once the run is over: workers exit

Subcommands (used by the host, run on the login node or inside the batch job):
  worker  --queue Q [--worker-id W] [--idle-s N] [--poll-s S]   serve until idle, stopped or killed
  poll    --queue Q [--ack NAME ...]                            print the queue's state as JSON
  requeue --queue Q --worker W                                  put a dead worker's jobs back
  cancel  --queue Q --name NAME                                 withdraw one job
  stop    --queue Q                                             ask every worker to exit
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from .job_runner import Job, JobRun

HEARTBEAT_S = 1.0
# The node-local folders of a worker's judges: kernelevolve-judge-<worker pid>@<node>-<random> in the job's TMPDIR
JUDGE_DIR_PREFIX = "kernelevolve-judge-"
# A harness killed from outside (not the candidate: the harness survives those) is retried this often.
MAX_ATTEMPTS = 3


def _write_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_json(path: Path) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
        return value if isinstance(value, dict) else None
    except (OSError, ValueError):
        return None


class Queue:
    def __init__(self, root: str) -> None:
        self.root = Path(root)
        self.pending = self.root / "pending"
        self.claimed = self.root / "claimed"
        self.done = self.root / "done"
        self.cancel_dir = self.root / "cancel"
        self.workers = self.root / "workers"
        self.work = self.root / "work"
        self.stop_file = self.root / "stop"

    def ensure(self) -> None:
        for d in (self.pending, self.claimed, self.done, self.cancel_dir, self.workers, self.work):
            d.mkdir(parents=True, exist_ok=True)

    def pending_names(self) -> List[str]:
        try:
            return sorted(n for n in os.listdir(self.pending) if n.endswith(".json") and not n.startswith("."))
        except FileNotFoundError:
            return []

    def requeue(self, worker: str) -> List[str]:
        """Moves a worker's claimed jobs back to pending/ (first in line again: names sort by submission)."""
        moved = []
        folder = self.claimed / worker
        if not folder.is_dir():
            return moved
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json") or name.startswith("."):
                continue
            src = folder / name
            job = _read_json(src)
            if job is None:
                continue
            if (self.cancel_dir / name[:-5]).exists():
                src.unlink(missing_ok=True)
                continue
            job["attempts"] = int(job.get("attempts", 0)) + 1
            job.setdefault("requeued_from", []).append(worker)
            _write_atomic(self.pending / name, job)
            src.unlink(missing_ok=True)
            moved.append(name[:-5])
        return moved


class Worker:
    def __init__(self, queue: Queue, worker_id: str, idle_s: float, poll_s: float, python: str) -> None:
        self.q = queue
        self.id = worker_id
        self.idle_s = idle_s
        self.poll_s = poll_s
        self.python = python
        self.node = socket.gethostname()
        self.job_id = os.environ.get("SLURM_JOB_ID", "")
        self.device = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        self.terminating = False
        self.run: Optional[JobRun] = None
        self.current: Optional[str] = None
        self.last_beat = 0.0
        self.started_at = time.time()
        self.judged = 0

    # -- heartbeats -----------------------------------------------------------------------------------
    def beat(self, state: str, force: bool = False, **extra: Any) -> None:
        now = time.time()
        if not force and now - self.last_beat < HEARTBEAT_S:
            return
        self.last_beat = now
        _write_atomic(self.q.workers / f"{self.id}.json", {
            "worker": self.id, "job_id": self.job_id, "node": self.node, "device": self.device,
            "pid": os.getpid(), "state": state, "current": self.current, "judged": self.judged,
            "started_at": self.started_at, "beat_at": now, **extra,
        })

    # -- the loop -------------------------------------------------------------------------------------
    def on_term(self, signum: int, _frame: Any) -> None:
        # scancel, a time limit or preemption: hand the job back before Slurm's SIGKILL comes.
        self.terminating = True
        self._kill_child()

    def _kill_child(self) -> None:
        run = self.run
        if run is not None:
            run.cancel()

    def claim(self) -> Optional[str]:
        mine = self.q.claimed / self.id
        for name in self.q.pending_names():
            try:
                os.rename(self.q.pending / name, mine / name)
            except FileNotFoundError:
                continue  # another worker was faster
            return name
        return None

    def serve(self) -> str:
        self.q.ensure()
        sweep_judge_dirs()
        (self.q.claimed / self.id).mkdir(parents=True, exist_ok=True)
        (self.q.work / self.id).mkdir(parents=True, exist_ok=True)
        signal.signal(signal.SIGTERM, self.on_term)
        signal.signal(signal.SIGINT, self.on_term)
        idle_since = time.time()
        reason = "idle"
        self.beat("idle", force=True)
        while True:
            if self.terminating:
                reason = "terminated"
                break
            if self.q.stop_file.exists():
                reason = "stopped"
                break
            name = self.claim()
            if name is None:
                if time.time() - idle_since > self.idle_s:
                    reason = "idle"
                    break
                self.beat("idle")
                time.sleep(self.poll_s)
                continue
            self.run_one(name)
            idle_since = time.time()
        self._kill_child()
        back = self.q.requeue(self.id)
        self.beat("exited", force=True, reason=reason, requeued=back)
        return reason

    def run_one(self, name: str) -> None:
        claimed_at = time.time()
        path = self.q.claimed / self.id / name
        try:
            # The file's mtime is when the host made it ready, on the shared filesystem's clock.
            queued_at: Optional[float] = path.stat().st_mtime
        except OSError:
            queued_at = None
        job = _read_json(path)
        if job is None:
            path.unlink(missing_ok=True)
            return
        self.current = name[:-5]
        self.beat("busy", force=True)
        scratch = self.q.work / self.id / self.current
        scratch.mkdir(parents=True, exist_ok=True)
        started_at = time.time()
        outcome = self._run_job(job, scratch)
        finished_at = time.time()
        self.current = None
        try:
            if outcome == "requeue" or (outcome == "withdrawn"):
                return
            if not path.exists():
                # The claim is the lease: the host took the job back (this worker looked dead) and
                # another worker judges it, so this verdict is dropped.
                return
            result: Dict[str, Any] = {
                "name": name[:-5], "id": job.get("id"), "worker": self.id, "job_id": self.job_id,
                "node": self.node, "device": self.device, "ready_at": job.get("ready_at"), "queued_at": queued_at,
                "claimed_at": claimed_at, "started_at": started_at, "finished_at": finished_at,
                "attempts": int(job.get("attempts", 0)) + 1,
            }
            result.update(outcome)
            _write_atomic(self.q.done / name, result)
            self.judged += 1
        finally:
            if outcome != "requeue":
                path.unlink(missing_ok=True)
            _rmtree(scratch)
            self.beat("idle", force=True)

    def _run_job(self, job: Dict[str, Any], scratch: Path) -> Any:
        """The job through the runner; "withdrawn" or "requeue" when it must not be answered, else the result."""
        name = self.current or ""
        timeout = job.get("timeout_s")
        # The node-local timing lock is named by the GPU's index on the node, which Slurm gives as SLURM_JOB_GPUS
        # even where cgroups renumber CUDA_VISIBLE_DEVICES from 0; CUDA_VISIBLE_DEVICES itself stays Slurm's.
        gpus = os.environ.get("SLURM_JOB_GPUS") or os.environ.get("SLURM_STEP_GPUS") or self.device or None
        run = JobRun(Job(spec=str(job["spec"]), baseline=job.get("baseline"),
                         candidate_source=str(job["candidate_source"]),
                         candidate_name=os.path.basename(str(job["candidate_name"])),
                         profile=bool(job.get("profile")), lock_device=gpus,
                         inputs="problem" if job.get("inputs") == "problem" else "wide",
                         toolchain=job.get("toolchain") if isinstance(job.get("toolchain"), dict) else None,
                         timeout_s=float(timeout) if timeout else None,
                         memory_share=_share(job.get("memory_share")), background=job.get("background") is True),
                     scratch=str(scratch), python=self.python, owner=os.getpid(),
                     # the judge compiles and runs its workers on the node's disk, not the queue's shared one
                     judge_dir=tempfile.mkdtemp(prefix=f"{JUDGE_DIR_PREFIX}{os.getpid()}@{socket.gethostname()}-"))
        self.run = run
        withdrawn = False

        def tick() -> None:
            nonlocal withdrawn
            self.beat("busy")
            if (self.q.cancel_dir / name).exists() or self.q.stop_file.exists():
                withdrawn = True
                run.cancel()

        try:
            if self.terminating:
                run.cancel()
            run.start()
            answer = run.wait(tick, poll_s=min(self.poll_s, 0.2))
        finally:
            self.run = None
            run.close()
        if self.terminating:
            return "requeue"
        if withdrawn or answer["outcome"] == "cancelled":
            return "withdrawn"
        code = answer.get("exit")
        if answer["outcome"] == "harness_error" and isinstance(code, int) and code < 0:
            claimed = _read_json(self.q.claimed / self.id / f"{name}.json") or {}
            if int(claimed.get("attempts", 0)) + 1 < MAX_ATTEMPTS:
                # The harness was killed from outside (OOM killer, a signal to the step): judge it again elsewhere.
                self.q.requeue(self.id)
                return "requeue"
        return {"envelope": answer}


def sweep_judge_dirs(tmp: Optional[str] = None) -> List[str]:
    """Removes the judge folders of this user's workers on this node that are gone: a worker killed outright (its
    node's OOM killer, SIGKILL at the end of its time) cannot remove the folder of the job it was judging. Only this
    node's folders are looked at (a TMPDIR on a filesystem that nodes share holds others', whose process numbers
    mean nothing here). Run when a worker starts; returns what it removed."""
    base = Path(tmp or tempfile.gettempdir())
    node = socket.gethostname()
    removed = []
    for d in (p for p in base.iterdir() if p.name.startswith(JUDGE_DIR_PREFIX)):
        # <pid>@<node>-<random>: mkdtemp's random part has no "-", a node's name may
        pid, at, rest = d.name[len(JUDGE_DIR_PREFIX):].partition("@")
        if not at or rest.rsplit("-", 1)[0] != node:
            continue
        try:
            if not pid.isdigit() or d.is_symlink() or d.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
            continue  # its worker (or a process that took its number) is alive
        except ProcessLookupError:
            pass
        except OSError:
            continue  # another user's process, or the folder went meanwhile
        _rmtree(d)
        removed.append(str(d))
    return removed


def _rmtree(path: Path) -> None:
    if not path.exists():
        return
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            _rmtree(child)
        else:
            child.unlink(missing_ok=True)
    try:
        path.rmdir()
    except OSError:
        pass


def poll(queue: Queue, ack: List[str]) -> Dict[str, Any]:
    """The whole state in one answer, so a remote host needs one round-trip per tick."""
    for name in ack:
        (queue.done / f"{name}.json").unlink(missing_ok=True)
        (queue.cancel_dir / name).unlink(missing_ok=True)
    now = time.time()
    done = []
    try:
        names = sorted(n for n in os.listdir(queue.done) if n.endswith(".json") and not n.startswith("."))
    except FileNotFoundError:
        names = []
    for n in names:
        r = _read_json(queue.done / n)
        if r is not None:
            done.append(r)
    workers: Dict[str, Any] = {}
    try:
        beats = [n for n in os.listdir(queue.workers) if n.endswith(".json") and not n.startswith(".")]
    except FileNotFoundError:
        beats = []
    for n in beats:
        b = _read_json(queue.workers / n)
        if b is not None:
            b["age_s"] = max(0.0, now - float(b.get("beat_at", now)))
            workers[n[:-5]] = b
    claimed: Dict[str, List[str]] = {}
    try:
        for w in os.listdir(queue.claimed):
            names_w = [n[:-5] for n in os.listdir(queue.claimed / w) if n.endswith(".json") and not n.startswith(".")]
            if names_w:
                claimed[w] = sorted(names_w)
    except FileNotFoundError:
        pass
    return {"now": now, "done": done, "workers": workers, "claimed": claimed,
            "pending": [n[:-5] for n in queue.pending_names()]}


def cancel(queue: Queue, name: str) -> str:
    try:
        (queue.pending / f"{name}.json").unlink()
        return "withdrawn"
    except FileNotFoundError:
        pass
    queue.cancel_dir.mkdir(parents=True, exist_ok=True)
    (queue.cancel_dir / name).touch()
    return "marked"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kernelevolve_harness.worker_service")
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker")
    w.add_argument("--queue", required=True)
    w.add_argument("--worker-id", default=None)
    w.add_argument("--idle-s", type=float, default=300.0)
    w.add_argument("--poll-s", type=float, default=0.1)
    w.add_argument("--python", default=sys.executable)
    pl = sub.add_parser("poll")
    pl.add_argument("--queue", required=True)
    pl.add_argument("--ack", nargs="*", default=[])
    rq = sub.add_parser("requeue")
    rq.add_argument("--queue", required=True)
    rq.add_argument("--worker", required=True)
    c = sub.add_parser("cancel")
    c.add_argument("--queue", required=True)
    c.add_argument("--name", required=True)
    s = sub.add_parser("stop")
    s.add_argument("--queue", required=True)
    a = p.parse_args(argv)
    q = Queue(a.queue)
    if a.cmd == "worker":
        worker_id = a.worker_id or os.environ.get("SLURM_JOB_ID") or f"{socket.gethostname()}-{os.getpid()}"
        reason = Worker(q, worker_id, a.idle_s, a.poll_s, a.python).serve()
        print(json.dumps({"worker": worker_id, "exit": reason}), flush=True)
        return 0
    if a.cmd == "poll":
        print(json.dumps(poll(q, a.ack)))
        return 0
    if a.cmd == "requeue":
        print(json.dumps({"requeued": q.requeue(a.worker)}))
        return 0
    if a.cmd == "cancel":
        print(json.dumps({"cancel": cancel(q, a.name)}))
        return 0
    if a.cmd == "stop":
        q.root.mkdir(parents=True, exist_ok=True)
        q.stop_file.touch()
        print(json.dumps({"stopped": True}))
        return 0
    return 2


def _share(value: Any) -> Optional[float]:
    """A job's memory_share as the runner takes it (a fraction above 0 and at most 1), else the whole device."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        return None
    return float(value)


if __name__ == "__main__":
    sys.exit(main())
