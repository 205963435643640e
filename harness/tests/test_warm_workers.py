"""Warm workers (warm.py): forked from a per-host server instead of started as new Pythons, with the same
verdicts, the same guards, and no process left behind."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from conftest import HARNESS, MM_SPEC, NAIVE, Harness, mm_source


def run_judge(harness: Harness, warm_dir: Path, body: str, *flags: str, **env: str) -> Dict[str, Any]:
    cand = harness.write(mm_source(body))
    full_env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(harness.cache),
                    KERNELEVOLVE_WARM_DIR=str(warm_dir))
    full_env.update(env)
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", str(MM_SPEC),
                        "--candidate", str(cand), "--json", *flags], capture_output=True, text=True, env=full_env,
                       cwd=str(harness.tmp), timeout=180)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def sockets(warm_dir: Path) -> List[Path]:
    return sorted(warm_dir.glob("*.sock")) if warm_dir.exists() else []


def server_pid(warm_dir: Path) -> Optional[int]:
    for log in warm_dir.glob("*.log"):
        for line in log.read_text().splitlines():
            if "ready in" in line:
                return int(line.split("(pid ")[1].split(",")[0])
    return None


def running(pid: int) -> bool:
    """Alive and not a zombie (an exited server waits for whoever adopted it to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def until(cond: Any, seconds: float) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return bool(cond())


@pytest.fixture
def warm_dir(tmp_path: Path) -> Any:
    d = tmp_path / "warm"
    yield d
    pid = server_pid(d) if d.exists() else None
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def test_evaluations_fork_their_workers_from_one_server(harness: Harness, warm_dir: Path) -> None:
    first = run_judge(harness, warm_dir, NAIVE)
    pid = server_pid(warm_dir)
    second = run_judge(harness, warm_dir, NAIVE)
    assert first["status"] == second["status"] == "ok", second
    assert first["workers"] == {"reference": "shared (started)", "candidate": "warm"}, first["workers"]
    assert second["workers"] == {"reference": "shared (reused)", "candidate": "warm"}, second["workers"]
    assert len(sockets(warm_dir)) == 1 and server_pid(warm_dir) == pid and pid is not None
    assert (warm_dir.stat().st_mode & 0o077) == 0, "the socket's folder must be private to its user"


CHEATS = {
    "crash": "  int* volatile p = 0;\n  *p = 1;\n",
    "out of bounds": NAIVE + "  C[M * N + 3] = 1.0f;\n",
    "mutates an input": NAIVE + "  ((float*)A)[0] = 0.0f;\n",
    "wrong": NAIVE + "  C[0] += 1.0f;\n",
    "nondeterministic": "  static int calls = 0; ++calls;\n" + NAIVE + "  if (calls % 2) C[1] += 1e-3f;\n",
    "hangs": "  volatile int spin = 1;\n  while (spin) {}\n",
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_warm_and_cold_workers_reach_the_same_verdict(harness: Harness, warm_dir: Path, name: str) -> None:
    flags = ("--timeout-scale", "0.05") if name == "hangs" else ()
    warm = run_judge(harness, warm_dir, CHEATS[name], *flags)
    cold = run_judge(harness, warm_dir, CHEATS[name], "--no-warm", *flags)
    assert warm["workers"]["candidate"] == "warm" and cold["workers"]["candidate"] == "cold"
    assert warm["status"] == cold["status"] != "ok", (warm["reason"], cold["reason"])


def test_the_server_exits_with_its_owner(harness: Harness, warm_dir: Path) -> None:
    # The owner is the process that runs the judges: here a short Python that runs one and, once told, exits.
    cand = harness.write(mm_source(NAIVE))
    env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(harness.cache),
               KERNELEVOLVE_WARM_DIR=str(warm_dir))
    env.pop("KERNELEVOLVE_WARM_OWNER", None)
    owner = ("import subprocess, sys; r = subprocess.run([sys.executable, '-m', 'kernelevolve_harness', "
             f"'evaluate', '--spec', {str(MM_SPEC)!r}, '--candidate', {str(cand)!r}, '--json'], "
             "capture_output=True, text=True); print(r.stdout, flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", owner], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None and proc.stdin is not None
    verdict = json.loads(proc.stdout.readline())
    assert verdict["workers"]["candidate"] == "warm"
    pid = server_pid(warm_dir)
    assert pid is not None and running(pid)
    proc.stdin.close()  # the owner exits
    proc.wait(timeout=30)
    assert until(lambda: not running(pid) and not sockets(warm_dir), 5), \
        "the server outlived its owner"


def test_an_idle_server_exits(harness: Harness, warm_dir: Path) -> None:
    v = run_judge(harness, warm_dir, NAIVE, KERNELEVOLVE_WARM_IDLE_S="1")
    assert v["workers"]["candidate"] == "warm"
    assert until(lambda: not sockets(warm_dir), 5), "the idle server is still there"


def test_a_folder_others_can_open_means_cold_workers(harness: Harness, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    v = run_judge(harness, shared, NAIVE)
    assert v["status"] == "ok"
    assert v["workers"]["candidate"].startswith("cold (no private folder"), v["workers"]
    assert not sockets(shared)


def test_a_server_that_cannot_start_means_cold_workers(harness: Harness, warm_dir: Path) -> None:
    v = run_judge(harness, warm_dir, NAIVE, KERNELEVOLVE_WARM_IDLE_S="not a number")
    assert v["status"] == "ok"
    assert "cold (the warm-worker server exited with code" in v["workers"]["candidate"], v["workers"]


def test_a_server_killed_mid_evaluation_costs_time_not_a_verdict(harness: Harness, warm_dir: Path) -> None:
    # A correct but slow candidate; the server is killed while its workers run: they die with it, and the
    # judge starts over with cold workers instead of blaming the candidate.
    slow = "  for (volatile long w = 0; w < 30000000; ++w) {}\n" + NAIVE
    cand = harness.write(mm_source(slow))
    env = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(harness.cache),
               KERNELEVOLVE_WARM_DIR=str(warm_dir))
    judge = subprocess.Popen([sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", str(MM_SPEC),
                              "--candidate", str(cand), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, cwd=str(harness.tmp))

    def children(pid: int) -> List[str]:
        try:
            return open(f"/proc/{pid}/task/{pid}/children").read().split()
        except OSError:
            return []

    assert until(lambda: server_pid(warm_dir) is not None and len(children(server_pid(warm_dir) or 0)) == 2, 60)
    time.sleep(0.5)
    os.kill(server_pid(warm_dir) or 0, signal.SIGKILL)
    out, err = judge.communicate(timeout=300)
    v = json.loads(out)
    assert v["status"] == "ok", v
    assert v["workers"]["candidate"].startswith("cold (the warm-worker server exited mid-evaluation"), v["workers"]


def test_a_socket_path_too_long_means_cold_workers(harness: Harness, tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 100)  # past the 108 bytes a Unix socket's path may have
    deep.mkdir(mode=0o700)
    v = run_judge(harness, deep, NAIVE)
    assert v["status"] == "ok"
    assert v["workers"]["candidate"].startswith("cold ("), v["workers"]


def test_a_server_with_threads_refuses_once_and_judges_go_cold(harness: Harness, warm_dir: Path,
                                                                tmp_path: Path) -> None:
    # Forking a process that runs other threads can copy a lock mid-use; such a server refuses, says why in a
    # file, and later judges go straight to cold workers instead of starting it again.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import threading, time\n"
                                           "threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n")
    path = f"{HARNESS}{os.pathsep}{site}"
    first = run_judge(harness, warm_dir, NAIVE, PYTHONPATH=path)
    second = run_judge(harness, warm_dir, NAIVE, PYTHONPATH=path)
    assert first["status"] == second["status"] == "ok"
    assert all(w.startswith("cold (the warm-worker server refused to serve here: 2 threads")
               for w in second["workers"].values()), second["workers"]
    assert len(list(warm_dir.glob("*.refused"))) == 1 and not sockets(warm_dir)
