"""A spec's fork point (warm.Zygote): the spec and its baseline, with the libraries they import, are imported once
per host, and that spec's workers are forked past them. On the H200, Liger's kernels import peft and with it
transformers: 11-12 s of every worker's start before this. Here a KernelBench-format problem on the CPU imports a
module of the test's own that records every import of it (the process that imported it) in a file."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import EXAMPLES, HARNESS, Harness
from test_warm_workers import until

PROBLEM = """import numpy as np
import slowdep

batch_size = 16
dim = 300
SHAPES = [{"batch_size": 16, "dim": 300}, {"batch_size": 7, "dim": 513}]


class Model:
    def __init__(self, dim):
        self.weight = np.random.rand(dim).astype(np.float32)

    def forward(self, x):
        return np.maximum(x, 0) * self.weight * slowdep.SCALE


def get_inputs():
    return [np.random.randn(batch_size, dim).astype(np.float32)]


def get_init_inputs():
    return [dim]
"""

# the example's C++ ModelNew, times the module's 2.0
RIGHT = (EXAMPLES / "kernelbench" / "cpu" / "candidates" / "relu_scale.py").read_text().replace(
    "* w[j];", "* w[j] * 2.0f;")
assert "2.0f" in RIGHT

SLOWDEP = """import os
import time
{extra}
with open(os.environ["SLOWDEP_LOG"], "a") as f:
    f.write(f"{{os.getpid()}}\\n")
time.sleep(0.3)
SCALE = 2.0
"""


@pytest.fixture
def problem(tmp_path: Path) -> Dict[str, Any]:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "slowdep.py").write_text(SLOWDEP.format(extra=""))
    spec = tmp_path / "relu_slowdep.py"
    spec.write_text(PROBLEM)
    warm = tmp_path / "warm"
    warm.mkdir(mode=0o700)
    return {"lib": lib, "spec": spec, "warm": warm, "log": tmp_path / "imports.txt"}


def judge(harness: Harness, p: Dict[str, Any], candidate: str, **env: str) -> Dict[str, Any]:
    path = harness.write(candidate, suffix=".py")
    full = dict(os.environ, PYTHONPATH=f"{HARNESS}{os.pathsep}{p['lib']}", KERNELEVOLVE_CACHE=str(harness.cache),
                KERNELEVOLVE_WARM_DIR=str(p["warm"]), KERNELEVOLVE_WARM_OWNER="none", SLOWDEP_LOG=str(p["log"]))
    full.update(env)
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", str(p["spec"]),
                        "--candidate", str(path), "--json"], capture_output=True, text=True, env=full,
                       cwd=str(harness.tmp), timeout=180)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def wave(harness: Harness, p: Dict[str, Any], candidate: str, n: int) -> List[Dict[str, Any]]:
    """n evaluations at once, each ok."""
    verdicts: List[Dict[str, Any]] = []
    runs = [threading.Thread(target=lambda: verdicts.append(judge(harness, p, candidate))) for _ in range(n)]
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    assert [v["status"] for v in verdicts] == ["ok"] * n, verdicts
    return verdicts


def imports(p: Dict[str, Any]) -> List[int]:
    return [int(x) for x in p["log"].read_text().split()] if p["log"].exists() else []


def server_log(p: Dict[str, Any]) -> str:
    return "".join(f.read_text() for f in p["warm"].glob("*.log"))


@pytest.fixture(autouse=True)
def stop_servers(problem: Dict[str, Any]) -> Any:
    yield
    for meta in problem["warm"].glob("w-*.json"):
        try:
            os.kill(int(json.loads(meta.read_text())["pid"]), signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            pass


def test_a_specs_imports_run_once_for_every_evaluation_on_the_host(harness: Harness, problem: Dict[str, Any]) -> None:
    first = judge(harness, problem, RIGHT)
    # its workers were forked while the fork point imported: they imported for themselves
    assert first["status"] == "ok" and "preloaded_workers" not in first["stages"], first
    assert until(lambda: "fork point pid" in server_log(problem) and " ready in " in server_log(problem), 20)
    second = judge(harness, problem, RIGHT)
    third = judge(harness, problem, RIGHT)
    assert second["status"] == third["status"] == "ok", (second, third)
    # the candidate's worker of each later evaluation (the shared reference is the first one's)
    assert second["stages"]["preloaded_workers"] == third["stages"]["preloaded_workers"] == 1, (second, third)
    # the fork point, and the first evaluation's reference and candidate worker
    assert len(imports(problem)) == 3, imports(problem)


def test_evaluations_started_before_the_fork_point_is_ready_do_not_wait_for_it(harness: Harness,
                                                                              problem: Dict[str, Any]) -> None:
    wave(harness, problem, RIGHT, 3)
    later = judge(harness, problem, RIGHT)
    assert later["status"] == "ok" and later["stages"]["preloaded_workers"] >= 1, later


def test_without_preloading_every_worker_imports_them(harness: Harness, problem: Dict[str, Any]) -> None:
    for _ in range(2):
        v = judge(harness, problem, RIGHT, KERNELEVOLVE_PRELOAD="0")
        assert v["status"] == "ok" and "preloaded_workers" not in v["stages"], v
    # the shared reference once, and each evaluation's candidate worker
    assert len(imports(problem)) == 3, imports(problem)


def test_imports_that_start_a_thread_get_spares_started_ahead(harness: Harness, problem: Dict[str, Any]) -> None:
    extra = "import threading\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()"
    (problem["lib"] / "slowdep.py").write_text(SLOWDEP.format(extra=extra))
    first = judge(harness, problem, RIGHT)
    assert first["status"] == "ok" and "preloaded_workers" not in first["stages"], first
    # the fork point's try did the imports; it cannot fork, and waits as the first spare
    assert until(lambda: "the first of them pid" in server_log(problem), 20), server_log(problem)
    assert "thread" in server_log(problem)
    assert len(imports(problem)) == 3, imports(problem)  # the try, and the first evaluation's two workers
    second = judge(harness, problem, RIGHT)
    # its candidate's worker was that spare (the shared reference is the first evaluation's), and a new spare
    # was started for the next request
    assert second["status"] == "ok" and second["stages"]["preloaded_workers"] == 1, second
    assert until(lambda: len(imports(problem)) == 4, 20), imports(problem)
    time.sleep(1.0)  # its imports end with the module's own 0.3 s
    third = judge(harness, problem, RIGHT)
    assert third["status"] == "ok" and third["stages"]["preloaded_workers"] == 1, third


SLOW = RIGHT.replace("extern \"C\" void relu_scale(", "extern \"C\" void relu_scale_(").replace(
    "\"\"\"\n\n\nclass ModelNew", """extern "C" void relu_scale(float* out, const float* x, const float* w, int64_t rows, int64_t cols) {
  for (volatile long k = 0; k < 20000000; ++k) {}
  relu_scale_(out, x, w, rows, cols);
}
\"\"\"


class ModelNew""")


def sockets_of_candidate_workers(server: int) -> Dict[int, List[str]]:
    """The server's children that run a judge's candidate (their output goes to its candidate.log; a spare still
    importing holds its own end of its socket, and a shared reference logs in its own folder), each with the
    sockets it holds."""
    found: Dict[int, List[str]] = {}
    try:
        kids = [int(x) for x in open(f"/proc/{server}/task/{server}/children").read().split()]
    except OSError:
        return found
    for pid in kids:
        try:
            if not os.readlink(f"/proc/{pid}/fd/1").endswith("candidate.log"):
                continue
            found[pid] = [t for t in (os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd"))
                          if t.startswith("socket:")]
        except OSError:
            continue
    return found


def test_no_worker_holds_a_socket_of_the_server(harness: Harness, problem: Dict[str, Any]) -> None:
    """A candidate that held the server's end of a spare's socket could hand that spare a job of its own, and the
    judge it was meant for would wait in vain: every worker, forked or a spare, holds none of the server's."""
    extra = "import threading\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()"
    (problem["lib"] / "slowdep.py").write_text(SLOWDEP.format(extra=extra))
    assert judge(harness, problem, RIGHT)["status"] == "ok"
    assert until(lambda: "the first of them pid" in server_log(problem), 20), server_log(problem)
    server = int(next(x for x in server_log(problem).splitlines() if "ready in" in x).split("(pid ")[1].split(",")[0])
    # two at once: one takes the spare that is ready, the other is forked beside the spare started for it
    verdicts: List[Dict[str, Any]] = []
    runs = [threading.Thread(target=lambda: verdicts.append(judge(harness, problem, SLOW))) for _ in range(2)]
    for t in runs:
        t.start()
    seen: Dict[int, List[str]] = {}
    while any(t.is_alive() for t in runs):
        seen.update(sockets_of_candidate_workers(server))
        time.sleep(0.02)
    for t in runs:
        t.join()
    assert [v["status"] for v in verdicts] == ["ok", "ok"], verdicts
    # one took the spare that was ready; the other was forked beside the spare started for it, or (a judge that
    # reached the server later than that spare's imports took, on a loaded machine: seen once in CI) took that spare
    assert sorted(v["stages"].get("preloaded_workers", 0) for v in verdicts) in ([0, 1], [1, 1]), verdicts
    assert len(seen) >= 2 and not any(seen.values()), seen


def test_a_wave_of_evaluations_finds_as_many_spares_as_the_wave_before_had_workers(harness: Harness,
                                                                                  problem: Dict[str, Any]) -> None:
    """A search asks in waves (a tune's first wave; its closing tables and their confirmations): when the try
    ends, spares are started for as many workers as ran at once, and the next wave finds each of them ready. Until
    2026-12-04 the try's end started none, and two of these three paid the imports."""
    extra = "import threading\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()"
    (problem["lib"] / "slowdep.py").write_text(SLOWDEP.format(extra=extra))
    first = wave(harness, problem, SLOW, 3)
    # the first wave pays the imports; a judge that reached the server after the try ended may take a spare started
    # then (on a loaded machine: seen once in CI, 2026-12-05)
    assert any("preloaded_workers" not in v["stages"] for v in first), first
    assert until(lambda: "the first of them pid" in server_log(problem), 20), server_log(problem)
    # the try, the wave's three candidate workers and its shared references (one or two), two more spares
    assert until(lambda: len(imports(problem)) >= 7, 20), imports(problem)
    time.sleep(1.0)  # their imports end with the module's own 0.3 s
    assert [v["stages"].get("preloaded_workers") for v in wave(harness, problem, SLOW, 3)] == [1, 1, 1]


def test_a_later_server_starts_spares_without_trying_a_fork_point_again(harness: Harness,
                                                                       problem: Dict[str, Any]) -> None:
    extra = "import threading\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()"
    (problem["lib"] / "slowdep.py").write_text(SLOWDEP.format(extra=extra))
    assert judge(harness, problem, RIGHT)["status"] == "ok"
    assert until(lambda: list(problem["warm"].glob("no-fork-point-*.json")), 20)
    for meta in problem["warm"].glob("w-*.json"):
        os.kill(int(json.loads(meta.read_text())["pid"]), signal.SIGTERM)
    assert until(lambda: not list(problem["warm"].glob("w-*.sock")), 20)
    v = judge(harness, problem, RIGHT)
    assert v["status"] == "ok", v
    assert "preloading" not in server_log(problem), server_log(problem)


def test_a_killed_fork_point_costs_an_import_not_a_verdict(harness: Harness, problem: Dict[str, Any]) -> None:
    assert judge(harness, problem, RIGHT)["status"] == "ok"
    assert until(lambda: " ready in " in server_log(problem).split("fork point pid", 1)[-1], 20)
    line = next(x for x in server_log(problem).splitlines() if "(fork point pid " in x)
    os.kill(int(line.split("(fork point pid ")[1].rstrip(")")), signal.SIGKILL)
    again = judge(harness, problem, RIGHT)
    assert again["status"] == "ok", again
    # a new fork point imports again: the first one, the first evaluation's two workers, the second one, and the
    # second evaluation's candidate worker (forked while the new one imported)
    assert until(lambda: len(imports(problem)) == 5, 20), imports(problem)
    # the killed one's folder (its copy of the baseline) went with it; the new one has its own
    assert len(list(problem["warm"].glob("preload-*"))) == 1


def test_a_reference_that_dies_at_its_start_is_reported_at_once(harness: Harness, problem: Dict[str, Any]) -> None:
    # The first request for a spec starts its fork point. The fork point, forked while the server held that
    # request's channel, kept a copy of it: the reference's death was not seen by its judge until the stage's
    # timeout (two minutes), then again for the reference started in its place.
    problem["spec"].write_text(PROBLEM.replace("        return np.maximum(x, 0)", "        os._exit(3)\n        return np.maximum(x, 0)")
                               .replace("import numpy as np", "import os\nimport numpy as np"))
    path = harness.write(RIGHT, suffix=".py")
    env = dict(os.environ, PYTHONPATH=f"{HARNESS}{os.pathsep}{problem['lib']}", KERNELEVOLVE_CACHE=str(harness.cache),
               KERNELEVOLVE_WARM_DIR=str(problem["warm"]), KERNELEVOLVE_WARM_OWNER="none",
               SLOWDEP_LOG=str(problem["log"]))
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", str(problem["spec"]),
                        "--candidate", str(path), "--json"], capture_output=True, text=True, env=env,
                       cwd=str(harness.tmp), timeout=170)
    assert time.monotonic() - t < 60, r.stderr
    assert r.returncode != 0 and "exited with code 3" in r.stderr, (r.returncode, r.stdout, r.stderr[-2000:])
