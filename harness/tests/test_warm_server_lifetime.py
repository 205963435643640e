"""A warm-worker server without an owner (KERNELEVOLVE_WARM_OWNER=none, and by default for jobs of a local or SSH
host) outlives the evaluation that started it: the next evaluation reuses it, a server of another harness version
is replaced, another user's is never used, and idleness ends it."""
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from conftest import HARNESS, MM_SPEC, NAIVE, Harness, mm_source
from test_warm_workers import running, sockets, until


def env_for(harness: Harness, warm_dir: Path, **extra: str) -> Dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(harness.cache),
               KERNELEVOLVE_WARM_DIR=str(warm_dir), KERNELEVOLVE_WARM_OWNER="none")
    env.update(extra)
    return env


def judge_in_own_process(harness: Harness, warm_dir: Path, **extra: str) -> Dict[str, Any]:
    # each evaluation from a process of its own that exits (as `kernelevolve evaluate` does): no owner outlives it
    cand = harness.write(mm_source(NAIVE))
    code = ("import subprocess, sys; r = subprocess.run([sys.executable, '-m', 'kernelevolve_harness', 'evaluate', "
            f"'--spec', {str(MM_SPEC)!r}, '--candidate', {str(cand)!r}, '--json'], capture_output=True, text=True); "
            "sys.stdout.write(r.stdout)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                       env=env_for(harness, warm_dir, **extra), cwd=str(harness.tmp))
    return json.loads(r.stdout)


def status(harness: Harness, warm_dir: Path) -> Dict[str, Any]:
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "warm-status"], capture_output=True, text=True,
                       env=env_for(harness, warm_dir), timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def live_pid(harness: Harness, warm_dir: Path) -> Optional[int]:
    alive = [s["pid"] for s in status(harness, warm_dir)["servers"] if s["alive"]]
    return alive[0] if len(alive) == 1 else None


@pytest.fixture
def warm_dir(tmp_path: Path) -> Any:
    d = tmp_path / "warm"
    yield d
    for f in d.glob("w-*.json") if d.exists() else []:
        try:
            os.kill(json.loads(f.read_text())["pid"], signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            pass


def test_the_next_evaluation_reuses_the_server_and_its_shared_reference(harness: Harness, warm_dir: Path) -> None:
    assert status(harness, warm_dir)["warm"] is False
    first = judge_in_own_process(harness, warm_dir)
    pid = live_pid(harness, warm_dir)
    assert pid is not None and status(harness, warm_dir)["warm"] is True
    second = judge_in_own_process(harness, warm_dir)
    assert first["status"] == second["status"] == "ok", second
    assert first["workers"] == {"reference": "shared (started)", "candidate": "warm"}, first["workers"]
    assert second["workers"] == {"reference": "shared (reused)", "candidate": "warm"}, second["workers"]
    assert live_pid(harness, warm_dir) == pid and len(sockets(warm_dir)) == 1
    info = status(harness, warm_dir)["servers"][0]
    assert info["owner"] == 0 and info["version"] == status(harness, warm_dir)["version"]


def test_a_server_of_another_version_is_replaced(harness: Harness, warm_dir: Path) -> None:
    judge_in_own_process(harness, warm_dir)
    old = live_pid(harness, warm_dir)
    assert old is not None
    # the running server now claims another harness version, in a socket of that version's name
    meta = next(warm_dir.glob("w-*.json"))
    info = json.loads(meta.read_text())
    info["version"] = "0" * 16
    stale = warm_dir / "w-stale0000000000000000.json"
    stale.write_text(json.dumps(info))
    meta.unlink()
    next(warm_dir.glob("w-*.sock")).rename(warm_dir / "w-stale0000000000000000.sock")
    v = judge_in_own_process(harness, warm_dir)
    assert v["status"] == "ok" and v["workers"]["candidate"] == "warm", v
    assert until(lambda: not running(old), 10), "the server of the other version is still running"
    new = live_pid(harness, warm_dir)
    assert new is not None and new != old


def test_an_idle_server_without_an_owner_exits(harness: Harness, warm_dir: Path) -> None:
    v = judge_in_own_process(harness, warm_dir, KERNELEVOLVE_WARM_IDLE_S="2")
    assert v["workers"]["candidate"] == "warm"
    assert until(lambda: not sockets(warm_dir) and not status(harness, warm_dir)["servers"], 15), \
        "the idle server is still there"


def test_a_socket_served_by_another_user_is_never_used(tmp_path: Path) -> None:
    from kernelevolve_harness import warm
    if os.getuid() != 0:
        pytest.skip("making a server of another user takes root")
    path = tmp_path / "w-foreign.sock"
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a server of user 65534 (nobody): the peer credentials are those of the process that listens
        try:
            os.close(ready_r)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.bind(str(path))
            os.setuid(65534)
            s.listen(4)
            os.write(ready_w, b"1")
            s.accept()
            os._exit(0)
        except BaseException:
            os._exit(1)
    os.close(ready_w)
    try:
        assert os.read(ready_r, 1) == b"1"
        assert warm._connect(str(path)) is None
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_a_local_hosts_jobs_leave_the_server_warm_for_the_next_one(harness: Harness, warm_dir: Path) -> None:
    # The local host runs each job as `run-job` from the CLI; no owner is set: the server outlives the runner and
    # the CLI, and the next job, from another process, forks from it and reuses its shared reference.
    env = env_for(harness, warm_dir)
    del env["KERNELEVOLVE_WARM_OWNER"]
    job = json.dumps({"spec": str(MM_SPEC), "candidate_source": mm_source(NAIVE), "candidate_name": "cand.cpp"})
    verdicts = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "run-job"], input=job, capture_output=True,
                           text=True, env=env, timeout=180, cwd=str(harness.tmp))
        verdicts.append(json.loads(r.stdout)["verdict"])
        pid = live_pid(harness, warm_dir)
        assert pid is not None, "no warm server after the job"
        verdicts[-1]["server"] = pid
    first, second = verdicts
    assert first["status"] == second["status"] == "ok", second
    assert second["workers"] == {"reference": "shared (reused)", "candidate": "warm"}, second["workers"]
    assert first["server"] == second["server"]
    assert status(harness, warm_dir)["servers"][0]["owner"] == 0
