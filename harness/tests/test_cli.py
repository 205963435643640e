"""The harness's commands besides evaluate, the readable summary, and the device lock."""
import json

from conftest import EXAMPLES, NAIVE, SPECS, Harness, mm_source


def test_version_is_a_stable_content_hash(harness: Harness) -> None:
    a = harness.run("version")
    b = harness.run("version")
    assert a.returncode == 0 and a.stdout == b.stdout
    assert len(a.stdout.strip()) == 16


def test_inspect_prints_the_spec_for_tools(harness: Harness) -> None:
    r = harness.run("inspect", "--spec", str(EXAMPLES / "cpp" / "matmul_blocked" / "spec.py"), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["backend"] == "cpp" and info["kernel"] == "matmul"
    assert info["source"].endswith("matmul.cpp")
    assert {"m": 130, "n": 257, "k": 96} in info["shapes"]
    assert info["flops"][0] == 2.0 * 128 ** 3


def test_without_json_a_readable_summary_is_printed(harness: Harness) -> None:
    cand = harness.write(mm_source(NAIVE))
    r = harness.run("evaluate", "--spec", str(SPECS / "mm" / "spec.py"), "--candidate", str(cand))
    assert r.returncode == 0
    assert r.stdout.startswith("ok")
    assert "baseline" in r.stdout and "candidate" in r.stdout and "m=33 n=17 k=9" in r.stdout


def test_timing_under_a_lock_file(harness: Harness) -> None:
    lock = harness.tmp / "device.lock"
    v, _ = harness.evaluate(SPECS / "mm" / "spec.py", mm_source(NAIVE), "--lock", str(lock))
    assert v["status"] == "ok"
    assert v["timing"]["lock"] is True and lock.exists()


def test_an_explicit_baseline_is_used(harness: Harness) -> None:
    slow = harness.write(mm_source("  for (int r = 0; r < 8; ++r) {\n" + NAIVE + "\n  }"))
    v, _ = harness.evaluate(SPECS / "mm" / "spec.py", mm_source(NAIVE), "--baseline", str(slow))
    assert v["status"] == "ok", v
    assert v["speedup"] > 2.0, v


def test_every_verdict_says_where_its_time_went(harness: Harness) -> None:
    ok = harness.mm(NAIVE)
    assert ok["status"] == "ok", ok
    stages = ok["stages"]
    for k in ("compile_s", "correctness_s", "lock_wait_s", "timing_s", "verify_s", "total_s"):
        assert stages[k] >= 0, stages
    assert stages["total_s"] >= stages["compile_s"] + stages["timing_s"]
    # the worker's account of the timed section: its rounds lie inside the lock's holds (timing_s), its setup
    # before them and its evidence after them, all inside the evaluation
    phases = [stages[f"timing_{p}_s"] for p in ("setup", "capture", "rounds", "evidence")]
    assert 0 < stages["timing_rounds_s"] <= stages["timing_s"] + 0.01, stages
    assert sum(phases) <= stages["total_s"], stages
    broken = harness.mm("  this is not C++;\n")
    assert broken["status"] == "compile_error" and "compile_s" in broken["stages"], broken
