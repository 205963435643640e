"""scripts/gpu/kernelbench_selfjudge.py (the level-1 self-judgement of scripts/gpu/parts/i24-level1.sh), on the
CPU: the listing in KernelBench's order, the GPU shares, the scheduler (side by side where memory holds, the
largest alone) and the summary of a results file. The judging itself needs the H200."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from conftest import REPO

SCRIPT = REPO / "scripts" / "gpu" / "kernelbench_selfjudge.py"
spec = importlib.util.spec_from_file_location("kernelbench_selfjudge", SCRIPT)
assert spec is not None and spec.loader is not None
S = importlib.util.module_from_spec(spec)
spec.loader.exec_module(S)
GB = 10**9


def test_problems_are_listed_in_kernelbench_order(tmp_path: Path) -> None:
    for name in ("10_A.py", "2_B.py", "100_C.py", "1_D.py", "__init__.py", "notes.txt"):
        (tmp_path / name).write_text("")
    assert [Path(p).name for p in S.problems(str(tmp_path))] == ["1_D.py", "2_B.py", "10_A.py", "100_C.py"]


def test_a_published_hardsigmoid_gets_eight_sets_and_a_small_problem_still_fits_beside_it() -> None:
    # eight input/output sets: what the first run on the H200 showed two processes hold at once; the outputs are
    # compared on the device, so the host holds little
    size = 4 * 4096 * 393216
    gpu, host = S.shares(size, size)
    assert gpu >= 8 * 2 * size and host < 2 * size
    small_gpu, _ = S.shares(1 << 20, 1 << 20)
    assert small_gpu == S.FLOOR_GPU
    assert gpu + small_gpu < 0.95 * 139 * GB


class FakeJob(S.Job):
    """A job that sleeps instead of judging, and notes when it ran."""
    log: List[Any] = []

    def start(self, lock: str, stated: Any) -> None:
        self.t0 = time.monotonic()
        self.stated = stated
        self.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.4)"])

    def result(self, killed: bool = False) -> Dict[str, Any]:
        FakeJob.log.append((self.name, self.t0, time.monotonic(), self.stated))
        return {"name": self.name, "phase": self.phase, "status": "ok", "speedup": 1.0, "wall_s": 0.4, "oom": False}


def test_the_scheduler_runs_side_by_side_what_fits_and_the_largest_alone(tmp_path: Path) -> None:
    FakeJob.log = []
    total = 100 * GB
    jobs = [FakeJob("/x/big.py", str(tmp_path), total, GB, True, "shared")]
    jobs += [FakeJob(f"/x/s{k}.py", str(tmp_path), 30 * GB, GB, False, "shared") for k in range(5)]
    done = S._drain(jobs, 2, total, 100 * GB, str(tmp_path / "lock"), time.monotonic() + 60, 60, "/x")
    assert sorted(r["name"] for r in done) == ["big", "s0", "s1", "s2", "s3", "s4"]
    spans = {name: (a, b, stated) for name, a, b, stated in FakeJob.log}
    big = spans["big"]
    assert big[2] is None  # alone: the whole GPU, nothing stated
    for name, (a, b, stated) in spans.items():
        if name != "big":
            assert b <= big[0] or a >= big[1], "a problem ran beside the one judged alone"
            assert stated == 30 * GB
    # never more than two at once (the jobs limit), and some side by side
    events = sorted([(a, 1) for a, _, _ in spans.values()] + [(b, -1) for _, b, _ in spans.values()])
    running, most = 0, 0
    for _, step in events:
        running += step
        most = max(most, running)
    assert most == 2


def test_problems_past_the_deadline_are_reported_not_run(tmp_path: Path) -> None:
    jobs = [FakeJob(f"/x/p{k}.py", str(tmp_path), GB, GB, False, "shared") for k in range(3)]
    done = S._drain(jobs, 1, 10 * GB, 10 * GB, str(tmp_path / "lock"), time.monotonic() - 1, 60, "/x")
    assert [r["status"] for r in done] == ["not run"] * 3


class OutOfMemoryBesideOthers(FakeJob):
    """Runs out of memory when judged beside others, and is fine alone."""

    def result(self, killed: bool = False) -> Dict[str, Any]:
        r = super().result(killed)
        if self.phase == "shared":
            r.update(status="runtime_error", reason="CUDA out of memory. Tried to allocate 6.00 GiB", oom=True)
        return r


def test_a_problem_out_of_memory_beside_others_is_judged_again_alone_at_once(tmp_path: Path, monkeypatch) -> None:
    FakeJob.log = []
    monkeypatch.setattr(S, "Job", OutOfMemoryBesideOthers)
    jobs = [OutOfMemoryBesideOthers("/x/big.py", str(tmp_path), 30 * GB, GB, False, "shared")]
    jobs += [FakeJob(f"/x/s{k}.py", str(tmp_path), 30 * GB, GB, False, "shared") for k in range(3)]
    done = S._drain(jobs, 2, 100 * GB, 100 * GB, str(tmp_path / "lock"), time.monotonic() + 60, 60, "/x")
    by = {r["name"]: r for r in done}
    assert sorted(by) == ["big", "s0", "s1", "s2"] and by["big"]["status"] == "ok", done
    assert by["big"]["first"]["status"] == "runtime_error" and by["big"]["phase"] == "alone"
    runs = [(a, b, stated) for name, a, b, stated in FakeJob.log if name == "big"]
    assert len(runs) == 2 and runs[1][2] is None  # the second alone, with the whole GPU
    others = [(a, b) for name, a, b, _ in FakeJob.log if name != "big"]
    assert all(b <= runs[1][0] or a >= runs[1][1] for a, b in others), "a problem ran beside the one judged alone"


def test_the_summary_counts_statuses_and_lists_failures_memory_and_the_slowest(tmp_path: Path) -> None:
    rows = [{"name": f"{k}_Ok", "status": "ok", "speedup": 1.0 + (k % 3 - 1) * 0.01, "wall_s": float(k)}
            for k in range(1, 13)]
    rows.append({"name": "23_Softmax", "status": "ok", "speedup": 1.05, "wall_s": 90.0, "oom": False,
                 "first": {"status": "runtime_error", "oom": True}})
    rows.append({"name": "95_CrossEntropy", "status": "incorrect", "reason": "Wrong result on shape ...",
                 "wall_s": 20.0})
    rows.append({"name": "42_Max_pool", "status": "spec_error", "oom": True,
                 "reason": "The problem does not fit in this GPU's memory ...", "wall_s": 3.0})
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "wall_s").write_text("412.5\n")
    r = subprocess.run([sys.executable, str(SCRIPT), "--summary", str(results)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "15 problems: ok 13, incorrect 1, spec_error 1" in out
    assert "out of memory or refused for memory: 2" in out and "first beside others: runtime_error" in out
    assert "the problem itself failed (not ok judged against itself): 2" in out and "95_CrossEntropy" in out
    assert "outside 1.00 +- 0.03: 1" in out and "23_Softmax: 1.050x" in out
    assert "total wall time 412 s (6.9 min)" in out
    slow = out.split("slowest ten:")[1].strip().splitlines()
    assert len(slow) == 10 and slow[0].split()[0] == "23_Softmax" and slow[1].split()[0] == "95_CrossEntropy"


def test_the_part_says_it_needs_a_gpu_and_exits_0_without_one(tmp_path: Path) -> None:
    r = subprocess.run(["bash", str(REPO / "scripts" / "gpu" / "parts" / "i24-level1.sh"), str(tmp_path / "raw")],
                       capture_output=True, text=True, timeout=60, cwd=str(REPO))
    assert r.returncode == 0 and "needs a GPU" in r.stdout, (r.stdout, r.stderr)


def test_the_summary_of_shards_is_the_summary_of_the_level(tmp_path: Path) -> None:
    files = []
    for k, (names, wall) in enumerate([(["1_A", "3_C"], 200.0), (["2_B"], 150.0)]):
        d = tmp_path / f"shard{k}"
        d.mkdir()
        (d / "results.jsonl").write_text("".join(json.dumps({"name": n, "status": "ok", "speedup": 1.0,
                                                             "wall_s": 10.0}) + "\n" for n in names))
        (d / "wall_s").write_text(f"{wall}\n")
        files.append(str(d / "results.jsonl"))
    r = subprocess.run([sys.executable, str(SCRIPT), "--summary", *files], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "3 problems: ok 3" in r.stdout and "total wall time 350 s" in r.stdout


def test_a_dry_run_on_numpy_problems_judges_each_against_itself(tmp_path: Path) -> None:
    # the CPU stand-in for the H200 run: examples/kernelbench/cpu, every other problem (--shard 1/2)
    raw = tmp_path / "raw"
    r = subprocess.run([sys.executable, str(SCRIPT), str(REPO / "examples" / "kernelbench" / "cpu"), str(raw),
                        "--jobs", "2", "--shard", "1/2"], capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in (raw / "results.jsonl").read_text().splitlines()]
    assert [row["name"] for row in rows] == ["softmax_rows"] and rows[0]["status"] == "ok", rows
    assert rows[0]["memory"][0]["sets"] >= 1 and "1 problems: ok 1" in r.stdout
