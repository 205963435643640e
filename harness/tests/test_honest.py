"""Honest candidates are judged ok, and faster ones show a speedup."""
from conftest import EXAMPLES, NAIVE, Harness


def test_baseline_against_itself_is_ok_and_about_even(harness: Harness) -> None:
    v = harness.mm(NAIVE)
    assert v["status"] == "ok", v
    assert len(v["shapes"]) == 3
    assert 0.5 < v["speedup"] < 2.0
    for s in v["shapes"]:
        assert s["baseline_ms"] > 0 and s["candidate_ms"] > 0
        assert abs(s["speedup"] - s["baseline_ms"] / s["candidate_ms"]) < 1e-9


def test_tuned_matmul_example_is_ok_with_a_speedup(harness: Harness) -> None:
    spec = EXAMPLES / "cpp" / "matmul_blocked" / "spec.py"
    v, _ = harness.evaluate(spec, EXAMPLES / "cpp" / "matmul_blocked" / "candidates" / "tuned_blocks.cpp")
    assert v["status"] == "ok", v
    assert v["speedup"] > 1.5, v
    assert v["compile"]["vectorized_loops"] >= 1


def test_softmax_example_with_more_accumulators_is_ok_and_timed_per_shape(harness: Harness) -> None:
    spec = EXAMPLES / "cpp" / "softmax_rows" / "spec.py"
    v, _ = harness.evaluate(spec, EXAMPLES / "cpp" / "softmax_rows" / "candidates" / "vec16.cpp")
    assert v["status"] == "ok", v
    # Whether it is faster is not asserted: its gain is small (1.08-1.34x on a quiet 2-core machine) and CI's other
    # lanes share those cores (1.045x once, 0.93x once, with the end-to-end lane beside it). The figure is the
    # benchmarks' (docs/benchmarks.md, vec16). Each shape's paired ratio is within its reported interval.
    for s in v["shapes"]:
        assert s["baseline_ms"] > 0 and s["candidate_ms"] > 0
        low, high = s["interval"]
        assert low <= s["speedup"] <= high, s


def test_transposed_loop_order_is_faster_than_naive(harness: Harness) -> None:
    # i-k-j order: the inner loop walks B and C contiguously and vectorises.
    body = """  for (int i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      for (int j = 0; j < N; ++j) C[i * N + j] += a * B[k * N + j];
    }"""
    v = harness.mm(body)
    assert v["status"] == "ok", v
    assert v["speedup"] > 1.2, v


def test_profile_reports_vectorisation_spread_and_roofline(harness: Harness) -> None:
    spec = EXAMPLES / "cpp" / "matmul_blocked" / "spec.py"
    v, _ = harness.evaluate(spec, EXAMPLES / "cpp" / "matmul_blocked" / "candidates" / "tuned_blocks.cpp", "--profile")
    assert v["status"] == "ok", v
    p = v["profile"]
    assert p["vectorized_loops"] >= 1
    assert p["timing_spread_iqr_over_median"] >= 0
    assert p["gflops"] > 0 and p["gbytes_per_s"] > 0 and p["arithmetic_intensity"] > 1


def test_a_candidate_far_slower_stops_timing_once_that_is_sure(harness: Harness, monkeypatch) -> None:
    # the naive product done 12 times over: about 0.02-0.1x the baseline. With a pass goal no pass can meet
    # (+-0.1%), its passes stop once their intervals lie below half the baseline's speed within +-5%, or below a
    # quarter of it however wide ("far below": at the CPU's floor of 5 rounds), or at a ceiling; with the rule off,
    # all at a ceiling. The ratios are of the same order: a pass at the floor on this loaded machine read 0.022x
    # where the same launch at the ceiling read 0.029x
    monkeypatch.setenv("KERNELEVOLVE_ROUND_GOAL", "0.001")
    slow = "  for (int rep = 0; rep < 12; ++rep) {\n" + NAIVE.replace("float s = 0.0f", "volatile float s = 0.0f") + "\n  }"
    v = harness.mm(slow)
    assert v["status"] == "ok", v
    stops = [stop for s in v["shapes"] for stop in s["stops"]]
    assert "far below" in stops and all(stop == "far below" or stop.startswith("ceiling") for stop in stops), stops
    for s in v["shapes"]:
        assert s["interval"][1] < 0.5, s
    monkeypatch.setenv("KERNELEVOLVE_FAR_BELOW", "0")
    off = harness.mm(slow)
    assert off["status"] == "ok", off
    assert all(stop.startswith("ceiling") for s in off["shapes"] for stop in s["stops"]), off["shapes"]
    assert sum(s["samples"] for s in off["shapes"]) > sum(s["samples"] for s in v["shapes"])
    # the same verdict, and figures of the same order: two runs of one launch on a loaded machine have read
    # 1.6x apart (0.011x and 0.018x), so "the same order" is within a factor of 3, not a tight tolerance
    for a, b in zip(v["shapes"], off["shapes"]):
        assert b["interval"][1] < 0.5, (a, b)
        assert 1 / 3 < b["speedup"] / a["speedup"] < 3, (a, b)


def test_a_pass_far_below_stops_before_the_floor_and_keeps_its_spot_checks(harness: Harness, monkeypatch) -> None:
    # the GPU's floors on the CPU (30 rounds; far below from 10): the same slow product's passes stop before the
    # floor where their intervals lie far below, and every pass still had two of its timed calls' outputs checked,
    # those drawn past the round where it stopped taken right after it
    monkeypatch.setenv("KERNELEVOLVE_ROUND_GOAL", "0.001")
    monkeypatch.setenv("KERNELEVOLVE_MIN_SAMPLES", "30")
    monkeypatch.setenv("KERNELEVOLVE_TIMING_BUDGET_S", "0")
    slow = "  for (int rep = 0; rep < 12; ++rep) {\n" + NAIVE.replace("float s = 0.0f", "volatile float s = 0.0f") + "\n  }"
    v = harness.mm(slow)
    assert v["status"] == "ok", v
    early = [s for s in v["shapes"] if s["stops"] == ["far below"] and s["samples"] < 30]
    assert early, v["shapes"]
    for s in v["shapes"]:
        assert s["spot_checks"] == 2 * len(s["stops"]) and s["interval"][1] < 0.5, s
