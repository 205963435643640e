"""The SSH host's agent (host_agent.py), driven over pipes as the SSH channel drives it: jobs in as JSON lines,
answers out; a kill, a timeout and a closed connection each leave no process and no job folder behind."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from conftest import HARNESS, MM_SPEC, NAIVE, mm_source
from test_job_runner import SPIN, processes_under, wait_for_candidate


class AgentProcess:
    def __init__(self, workdir: Path, cache: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(cache),
                   KERNELEVOLVE_LOCK_DIR=str(workdir / "locks"), TMPDIR=str(workdir))
        self.workdir = workdir
        self.proc = subprocess.Popen([sys.executable, "-u", "-m", "kernelevolve_harness.host_agent"], cwd=str(workdir),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.lines: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, msg: Dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 120) -> Dict[str, Any]:
        return self.lines.get(timeout=timeout)

    def until(self, job_id: str, event: str, timeout: float = 120) -> Dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            msg = self.next(max(0.1, end - time.monotonic()))
            if msg.get("id") == job_id and msg.get("event") in (event, "error"):
                return msg


@pytest.fixture
def agent(tmp_path: Path, cache_dir: Path) -> Iterator[AgentProcess]:
    a = AgentProcess(tmp_path, cache_dir)
    ready = a.next(30)
    assert ready["event"] == "ready" and ready["version"].startswith("3.")
    yield a
    if a.proc.poll() is None:
        a.proc.kill()


def job(body: str, **extra: Any) -> Dict[str, Any]:
    return {"spec": str(MM_SPEC), "candidate_source": mm_source(body), "candidate_name": "cand.cpp", **extra}


def test_a_job_is_answered_with_the_runners_envelope_and_its_folder_removed(agent: AgentProcess) -> None:
    agent.send({"op": "run", "id": "a", "dir": "jobs/a", "job": job(NAIVE, device="1")})
    assert agent.until("a", "started")["event"] == "started"
    done = agent.until("a", "done")
    e = done["envelope"]
    assert e["outcome"] == "verdict" and e["verdict"]["status"] == "ok", e
    assert e["lock"] == str(agent.workdir / "locks" / "gpu-1.lock")
    end = time.monotonic() + 5
    while (agent.workdir / "jobs" / "a").exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert not (agent.workdir / "jobs" / "a").exists()


def test_a_bad_job_is_an_error_event_not_a_dead_agent(agent: AgentProcess) -> None:
    agent.send({"op": "run", "id": "bad", "job": {"spec": "x.py"}})
    msg = agent.until("bad", "done")
    assert msg["event"] == "error" and "names its candidate once" in msg["message"]
    agent.send({"op": "run", "id": "good", "dir": "jobs/good", "job": job(NAIVE)})
    assert agent.until("good", "done")["envelope"]["verdict"]["status"] == "ok"


def test_timeout_kill_and_early_kill_leave_no_process(agent: AgentProcess) -> None:
    agent.send({"op": "run", "id": "t", "dir": "jobs/t", "job": job(SPIN, timeout_s=3)})
    e = agent.until("t", "done")["envelope"]
    assert e["verdict"]["status"] == "timeout"
    assert processes_under(agent.workdir / "jobs") == []

    agent.send({"op": "run", "id": "k", "dir": "jobs/k", "job": job(SPIN)})
    agent.until("k", "started")
    wait_for_candidate(agent.workdir / "jobs" / "k")  # its worker is inside the candidate's endless call
    assert processes_under(agent.workdir / "jobs" / "k")  # and its judge waits on it
    agent.send({"op": "kill", "id": "k"})
    assert agent.until("k", "done")["envelope"]["outcome"] == "cancelled"
    assert processes_under(agent.workdir / "jobs") == []

    # A kill right behind its job, before the job's process exists, still takes.
    agent.send({"op": "run", "id": "e", "dir": "jobs/e", "job": job(SPIN)})
    agent.send({"op": "kill", "id": "e"})
    assert agent.until("e", "done", timeout=30)["envelope"]["outcome"] == "cancelled"
    assert processes_under(agent.workdir / "jobs") == []


def test_a_closed_connection_takes_every_job_and_folder_with_it(agent: AgentProcess) -> None:
    agent.send({"op": "run", "id": "c", "dir": "jobs/c", "job": job(SPIN)})
    agent.until("c", "started")
    wait_for_candidate(agent.workdir / "jobs" / "c")  # its worker is inside the candidate's endless call
    assert processes_under(agent.workdir / "jobs" / "c")  # and its judge waits on it
    assert agent.proc.stdin is not None
    agent.proc.stdin.close()
    agent.proc.wait(timeout=30)
    assert processes_under(agent.workdir / "jobs") == []
    assert not (agent.workdir / "jobs" / "c").exists()
