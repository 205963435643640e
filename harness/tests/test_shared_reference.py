"""One reference process for every evaluation of a spec on a host (_worker.SharedReference): started by the
first judge, reused by the next ones, concurrent ones included; verdicts as with a reference of one's own; a
shared reference that dies costs time, never a verdict; nothing left behind."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

from conftest import HARNESS, MM_SPEC, NAIVE, Harness, mm_source
from test_warm_workers import run_judge, running, server_pid, until, warm_dir  # noqa: F401 (fixture)

WRONG = NAIVE + "  C[0] += 1.0f;\n"


def judge_process(harness: Harness, warm_dir: Path, body: str, **env: str) -> subprocess.Popen:
    cand = harness.write(mm_source(body))
    full = dict(os.environ, PYTHONPATH=str(HARNESS), KERNELEVOLVE_CACHE=str(harness.cache),
                KERNELEVOLVE_WARM_DIR=str(warm_dir), **env)
    return subprocess.Popen([sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", str(MM_SPEC),
                             "--candidate", str(cand), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=full, cwd=str(harness.tmp))


def children(pid: int) -> List[int]:
    try:
        return [int(x) for x in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        return []


def test_later_evaluations_reuse_the_reference_the_first_started(harness: Harness, warm_dir: Path) -> None:
    first = run_judge(harness, warm_dir, NAIVE)
    wrong = run_judge(harness, warm_dir, WRONG)
    again = run_judge(harness, warm_dir, NAIVE)
    assert first["workers"] == {"reference": "shared (started)", "candidate": "warm"}, first["workers"]
    assert wrong["workers"]["reference"] == again["workers"]["reference"] == "shared (reused)"
    assert first["status"] == again["status"] == "ok", (first, again)
    # the wait for the reference to be ready (its start, for the first) is a stage of its own
    assert all(v["stages"].get("reference_ready_wait_s", -1) >= 0 for v in (first, again)), (first, again)
    assert wrong["status"] == "incorrect" and "Wrong result" in wrong["reason"], wrong
    private = run_judge(harness, warm_dir, WRONG, KERNELEVOLVE_SHARED_REFERENCE="0")
    assert private["workers"]["reference"] == "warm" and private["status"] == "incorrect"
    assert private["reason"].split(", seed")[0] == wrong["reason"].split(", seed")[0]  # seeds are per evaluation


def test_concurrent_evaluations_share_one_reference(harness: Harness, warm_dir: Path) -> None:
    # up to KERNELEVOLVE_JUDGES_PER_REFERENCE judges (2 by default) share one process: four here
    env = {"KERNELEVOLVE_JUDGES_PER_REFERENCE": "5"}
    assert run_judge(harness, warm_dir, NAIVE, **env)["workers"]["reference"] == "shared (started)"
    judges = [judge_process(harness, warm_dir, body, **env) for body in (NAIVE, WRONG, NAIVE, WRONG)]
    verdicts = [json.loads(j.communicate(timeout=300)[0]) for j in judges]
    assert [v["status"] for v in verdicts] == ["ok", "incorrect", "ok", "incorrect"], verdicts
    assert {v["workers"]["reference"] for v in verdicts} == {"shared (reused)"}
    server = server_pid(warm_dir)
    assert server is not None and until(lambda: len(children(server)) == 1, 10), children(server or 0)
    homes = list(warm_dir.glob("reference-*"))
    assert [h.name for h in homes] == [f"reference-{children(server)[0]}"]
    os.kill(server, signal.SIGTERM)
    assert until(lambda: not running(server) and not list(warm_dir.glob("reference-*")), 10), \
        "the shared reference's folder outlived its server"


def test_a_shared_reference_that_dies_mid_evaluation_costs_time_not_a_verdict(harness: Harness,
                                                                             warm_dir: Path) -> None:
    # A correct but slow candidate; its shared reference is killed once the judge has its first answers: the
    # judge finds it gone when it asks for the timed calls' references, and judges again with its own.
    slow = "  for (volatile long w = 0; w < 30000000; ++w) {}\n" + NAIVE
    judge = judge_process(harness, warm_dir, slow, KERNELEVOLVE_TRACE="1")
    assert judge.stderr is not None
    pid = 0
    deadline = time.time() + 120
    for line in judge.stderr:
        if "reference: shared (started), pid " in line:
            pid = int(line.rsplit("pid ", 1)[1])
        if pid and "candidate: call " in line:  # the reference has answered the first correctness call
            break
        assert time.time() < deadline, "no trace of the shared reference"
    assert pid
    os.kill(pid, signal.SIGKILL)
    out, _ = judge.communicate(timeout=300)
    v = json.loads(out)
    assert v["status"] == "ok", v
    assert v["workers"]["reference"].startswith("warm (the shared reference exited mid-evaluation"), v["workers"]
    # and the next evaluation starts a new one
    assert run_judge(harness, warm_dir, NAIVE)["workers"]["reference"] == "shared (started)"


def test_many_concurrent_evaluations_spread_over_more_shared_references(harness: Harness, warm_dir: Path) -> None:
    # One reference answers one request at a time: past KERNELEVOLVE_JUDGES_PER_REFERENCE concurrent judges, the
    # server starts another for the same key (up to KERNELEVOLVE_MAX_SHARED_REFERENCES), and judges join the
    # least busy one. Verdicts are the same whichever answers.
    slow = "  for (volatile long w = 0; w < 20000000; ++w) {}\n" + NAIVE
    env = {"KERNELEVOLVE_JUDGES_PER_REFERENCE": "1", "KERNELEVOLVE_MAX_SHARED_REFERENCES": "2"}
    assert run_judge(harness, warm_dir, NAIVE, **env)["workers"]["reference"] == "shared (started)"
    judges = [judge_process(harness, warm_dir, body, **env) for body in (slow, WRONG, slow, WRONG)]
    server = server_pid(warm_dir)
    assert server is not None
    most = 0
    while any(j.poll() is None for j in judges):
        most = max(most, len(list(warm_dir.glob("reference-*"))))
        time.sleep(0.05)
    verdicts = [json.loads(j.communicate(timeout=300)[0]) for j in judges]
    assert [v["status"] for v in verdicts] == ["ok", "incorrect", "ok", "incorrect"], verdicts
    assert most == 2, most  # a second shared reference, and no third
    assert "shared (started)" in {v["workers"]["reference"] for v in verdicts}
