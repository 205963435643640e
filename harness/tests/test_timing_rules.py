"""The worker's rules for how long to time (the GPU stops once both medians are known precisely)."""
from kernelevolve_harness._worker import _precise


def test_gpu_timing_stops_once_both_medians_are_precise() -> None:
    steady = [10.0 + 0.01 * (i % 5) for i in range(30)]
    noisy = [10.0 + (i % 7) for i in range(30)]
    assert _precise({"baseline": steady, "candidate": steady}, 0.002)
    assert not _precise({"baseline": steady, "candidate": noisy}, 0.002)
    assert not _precise({"baseline": steady[:3], "candidate": steady[:3]}, 0.002)  # too few to say


def test_the_timed_worker_runs_alone_on_its_core() -> None:
    # In its own Python: the judge's process takes the other cores for itself.
    import os
    import subprocess
    import sys
    from pathlib import Path
    script = """
import os, subprocess, sys
from kernelevolve_harness.judge import TimingCore
assert TimingCore(gpu=False, locked=True).core is None  # auto: GPU kernels only
assert TimingCore(gpu=True, locked=False).core is None  # ... and only with a device lock
os.environ["KERNELEVOLVE_TIMING_CORE"] = "1"
tc = TimingCore(gpu=False, locked=True)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
allowed = lambda pid: sorted(os.sched_getaffinity(pid))
tc.exclude(child.pid)
seen = [tc.core, allowed(0), allowed(child.pid)]
with tc.timing(child.pid):
    seen.append(allowed(child.pid))
seen.append(allowed(child.pid))
child.kill()
with tc.timing(child.pid):  # a worker already gone: timing goes on
    pass
print(seen)
"""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.pop("KERNELEVOLVE_TIMING_CORE", None)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    cores = sorted(os.sched_getaffinity(0))
    others = [c for c in cores if c != 1]
    if 1 in cores and len(cores) >= 2:
        assert r.stdout.strip() == str([1, others, others, [1], others])
    else:  # a single core (or none numbered 1): nothing to keep apart
        assert r.stdout.strip() == str([None, cores, cores, cores, cores])


def test_a_kept_timing_core_leaves_verdicts_as_they_were(harness, monkeypatch) -> None:
    from conftest import EXAMPLES
    monkeypatch.setenv("KERNELEVOLVE_TIMING_CORE", "1")
    spec = EXAMPLES / "cpp" / "softmax_rows"
    v, _ = harness.evaluate(spec / "spec.py", spec / "softmax.cpp", "--lock", str(harness.tmp / "cpu.lock"))
    assert v["status"] == "ok", v
