"""The agent an SSH host runs for the life of one connection (`python3 -u -m kernelevolve_harness.host_agent`,
cwd = the host's workdir): it takes jobs as JSON lines on stdin, runs each through the job runner
(job_runner.py: timing lock, timeout, process tree, one envelope) in a folder of its own, and answers with JSON
lines. One long-lived agent keeps a job to a single round trip: no new process or SSH channel per job.

In:   {"op": "run", "id": ID, "dir": "jobs/x", "job": {...a job as job_runner reads it...}}
      {"op": "kill", "id": ID}            stop a job (a kill may arrive before its job has started)
Out:  {"event": "ready", "python": ..., "version": "3.11.2", "pid": ...}
      {"id": ID, "event": "started"}
      {"id": ID, "event": "done", "envelope": {...}}
      {"id": ID, "event": "error", "message": "..."}   the job could not be read or started

When stdin closes (the connection died) every job is stopped and every job folder removed, so nothing outlives
the client.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from typing import Any, Dict, Optional, Set, TextIO

from .job_runner import OWNERLESS, JobError, JobRun, parse_job


class Agent:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.out_lock = threading.Lock()
        self.lock = threading.Lock()
        self.runs: Dict[str, JobRun] = {}
        self.cancelled: Set[str] = set()  # kills that arrived before their job existed
        self.folders: Set[str] = set()  # job folders not removed yet
        self.threads: Dict[str, threading.Thread] = {}
        self.shutting_down = False

    def send(self, msg: Dict[str, Any]) -> None:
        line = json.dumps(msg) + "\n"
        with self.out_lock:
            try:
                self.out.write(line)
                self.out.flush()
            except (OSError, ValueError):
                pass  # the client is gone; shutdown follows from stdin

    def run(self, msg: Dict[str, Any]) -> None:
        job_id = str(msg.get("id"))
        folder = os.path.abspath(str(msg.get("dir") or os.path.join("jobs", job_id)))
        try:
            job = parse_job(msg.get("job"))
        except JobError as e:
            self.send({"id": job_id, "event": "error", "message": str(e)})
            return
        # the warm-worker server outlives this agent (the SSH connection) until idle: the next connection finds it
        run = JobRun(job, scratch=folder, owner=OWNERLESS)
        # Registering under the lock means a shutdown never races a job half set up: it sees every folder there is.
        with self.lock:
            if self.shutting_down:
                return
            self.runs[job_id] = run
            self.folders.add(folder)
            if job_id in self.cancelled:
                run.cancel()
        try:
            run.start()
            self.send({"id": job_id, "event": "started"})
            answer = run.wait()
        except Exception as e:  # noqa: BLE001 - the agent must answer whatever went wrong
            self.send({"id": job_id, "event": "error", "message": f"{type(e).__name__}: {e}"})
            answer = None
        finally:
            run.close()
            with self.lock:
                self.runs.pop(job_id, None)
                self.cancelled.discard(job_id)
        if answer is not None:
            self.send({"id": job_id, "event": "done", "envelope": answer})
        # Cleaning up is off the critical path: the verdict is already on its way (a shutdown cleans what is left).
        shutil.rmtree(folder, ignore_errors=True)
        with self.lock:
            self.folders.discard(folder)

    def kill(self, job_id: str) -> None:
        with self.lock:
            run: Optional[JobRun] = self.runs.get(job_id)
            if run is None:
                self.cancelled.add(job_id)
        if run is not None:
            run.cancel()

    def serve(self, lines: TextIO) -> None:
        self.send({"event": "ready", "python": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],
                   "pid": os.getpid()})
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if msg.get("op") == "run":
                self.threads = {k: t for k, t in self.threads.items() if t.is_alive()}
                t = threading.Thread(target=self.run, args=(msg,), daemon=True)
                self.threads[str(msg.get("id"))] = t
                t.start()
            elif msg.get("op") == "kill":
                self.kill(str(msg.get("id")))
        self.shutdown()

    def shutdown(self) -> None:
        """stdin closed: the client is gone; take every job with us, and its folder."""
        with self.lock:
            self.shutting_down = True
            running = list(self.runs.values())
        for run in running:
            run.cancel()
        for t in list(self.threads.values()):
            t.join(timeout=10)
        with self.lock:
            folders = list(self.folders)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    Agent(sys.stdout).serve(sys.stdin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
