"""What `kernelevolve suite` relies on from the harness for KernelBench problems, on the CPU (numpy problems of
KernelBench's format): an argument of get_init_inputs() is never a shape variable, and KernelBench's own eager
timing is reported beside the harness's ratio."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import EXAMPLES, Harness

# KernelBench's level-1 cumsum in numpy, `dim` an argument of Model (specs/kernelbench/cumsum_dim_arg.py)
CUMSUM = (Path(__file__).parent / "specs" / "kernelbench" / "cumsum_dim_arg.py").read_text()


def test_an_argument_of_get_init_inputs_is_not_a_shape(harness: Harness, tmp_path: Path) -> None:
    problem = tmp_path / "cumsum.py"
    problem.write_text(CUMSUM)
    r = harness.run("inspect", "--spec", str(problem), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["shapes"] == [{"batch_size": 32}]
    v, _ = harness.evaluate(problem, problem, suffix=".py", timeout=180)
    assert v["status"] == "ok", v
    assert [s["shape"] for s in v["shapes"]] == [{"batch_size": 32}]
    assert "dim" not in v["reason"]


def test_a_size_both_functions_read_stays_a_shape(harness: Harness, tmp_path: Path) -> None:
    # relu_scale's `dim` sizes the input and Model's weight: a size, read by get_inputs() too
    r = harness.run("inspect", "--spec", str(EXAMPLES / "kernelbench" / "cpu" / "relu_scale.py"), "--json")
    assert json.loads(r.stdout)["shapes"][0] == {"batch_size": 16, "dim": 1000}
    # a size read through a helper that get_inputs() calls is a size as well
    problem = tmp_path / "helper.py"
    problem.write_text(CUMSUM.replace("def get_inputs():\n    return [np.random.rand(batch_size, *input_shape)",
                                      "def rows():\n    return batch_size\n\n\ndef get_inputs():\n"
                                      "    return [np.random.rand(rows(), *input_shape)"))
    r = harness.run("inspect", "--spec", str(problem), "--json")
    assert json.loads(r.stdout)["shapes"] == [{"batch_size": 32}]


def test_kernelbench_timing_is_reported_beside_the_harness_ratio_on_the_cpu(harness: Harness) -> None:
    relu = EXAMPLES / "kernelbench" / "cpu" / "relu_scale.py"
    v, _ = harness.evaluate(relu, (EXAMPLES / "kernelbench" / "cpu" / "candidates" / "relu_scale.py").read_text(),
                            suffix=".py", timeout=180)
    assert v["status"] == "ok", v
    kb = v["kernelbench"]
    assert kb["method"] == "host_time" and kb["warmup"] == 3 and kb["trials"] >= 10
    assert kb["baseline_ms"] > 0 and kb["candidate_ms"] > 0
    assert abs(kb["speedup"] - kb["baseline_ms"] / kb["candidate_ms"]) < 1e-9 * kb["speedup"]
    for s in v["shapes"]:
        assert s["kernelbench"]["speedup"] == s["kernelbench"]["baseline_ms"] / s["kernelbench"]["candidate_ms"]
    # where the two disagree beyond the harness's interval, a note says so and why
    for note in v.get("notes", []):
        assert "KernelBench's eager timing reads" in note


def test_kernelbench_timing_is_left_out_of_ordinary_specs_and_when_switched_off(harness: Harness,
                                                                                monkeypatch: object) -> None:
    from kernelevolve_harness import kernelbench_timing
    assert kernelbench_timing.request("cpp") == {}
    assert kernelbench_timing.request("model-cpu")["kernelbench"]["trials"] == kernelbench_timing.TRIALS
    monkeypatch.setenv("KERNELEVOLVE_KERNELBENCH_TIMING", "0")  # type: ignore[attr-defined]
    assert kernelbench_timing.request("model-cuda") == {}


def test_a_disagreement_is_explained_in_the_notes_and_the_reason() -> None:
    from kernelevolve_harness import kernelbench_timing
    from kernelevolve_harness.verdicts import VerdictRecord
    rows = [{"shape": {"n": 16}, "baseline_ms": 0.010, "candidate_ms": 0.005, "speedup": 2.0, "interval": [1.9, 2.1]},
            {"shape": {"n": 4096}, "baseline_ms": 1.0, "candidate_ms": 0.5, "speedup": 2.0, "interval": [1.95, 2.05]}]
    record = VerdictRecord("ok", "Correct.", speedup=2.0, shapes=rows)
    # the short shape's eager calls are dominated by ~0.02 ms of launches; the long one agrees
    kernelbench_timing.annotate(record, [{"baseline_ms": 0.03, "candidate_ms": 0.025, "trials": 100},
                                         {"baseline_ms": 1.02, "candidate_ms": 0.51, "trials": 100}], gpu=True)
    verdict = record.to_json()
    assert list(verdict) == ["status", "reason", "speedup", "shapes", "kernelbench", "notes"]
    assert verdict["shapes"][0]["kernelbench"]["speedup"] == 0.03 / 0.025
    assert abs(verdict["kernelbench"]["speedup"] - ((0.03 / 0.025) * 2.0) ** 0.5) < 1e-12
    assert verdict["kernelbench"]["method"] == "cuda_event"
    assert len(verdict["notes"]) == 1 and "{n=16}" in verdict["notes"][0] and "host side" in verdict["notes"][0]
    assert verdict["reason"].startswith("Correct. KernelBench's eager timing reads 1.55x")
    assert "1 of 2 shape(s)" in verdict["reason"]
