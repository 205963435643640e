"""The candidate's first calls while the reference starts (judge.py `_precompiles`, _worker.py `precompile`): on by
default for backends that compile at the first call (Triton, tested on the GPU), and here on the C++ backend with
KERNELEVOLVE_PRECOMPILE=1. The verdicts are the ones without it: what goes wrong in those calls is the
correctness stage's, and a candidate that counts its calls gains nothing from the extra ones."""
import pytest

from conftest import NAIVE, Harness

STATE = "#include <cstring>\n#include <cmath>\nstatic int calls = 0;\n"


@pytest.fixture
def precompiling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELEVOLVE_PRECOMPILE", "1")


def test_a_right_candidate_is_ok_and_its_first_calls_are_a_stage(harness: Harness, precompiling: None) -> None:
    v = harness.mm(NAIVE)
    assert v["status"] == "ok", v
    assert v["stages"]["precompile_s"] > 0, v["stages"]


def test_a_wrong_candidate_is_wrong_as_without_them(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = NAIVE.replace("s += A", "s -= A")
    without = harness.mm(wrong)
    monkeypatch.setenv("KERNELEVOLVE_PRECOMPILE", "1")
    v = harness.mm(wrong)
    assert "precompile_s" not in without["stages"] and "precompile_s" in v["stages"]
    assert v["status"] == without["status"] == "incorrect", (v, without)
    assert v["reason"].split(", seed")[0] == without["reason"].split(", seed")[0]


def test_a_crash_in_the_first_calls_is_a_runtime_error_of_the_correctness_stage(harness: Harness, precompiling: None) -> None:
    v = harness.mm(NAIVE + "\n  *(volatile int*)nullptr = 1;")
    assert v["status"] == "runtime_error", v
    assert "SIGSEGV" in v["reason"] and "correctness" in v["reason"], v["reason"]


def test_a_hang_in_the_first_calls_is_a_timeout_of_the_correctness_stage(harness: Harness, precompiling: None) -> None:
    v = harness.mm("  volatile int spin = 1;\n  while (spin) {}\n" + NAIVE, "", "--timeout-scale", "0.05")
    assert v["status"] == "timeout", v
    assert "correctness stage" in v["reason"] and "killed" in v["reason"], v["reason"]


def test_caching_by_call_count_is_still_caught(harness: Harness, precompiling: None) -> None:
    # replays its last output on most calls once it has been called a few times: the extra first calls only make
    # it start sooner, inside the correctness checks
    prelude = STATE + "static float saved[48 * 40];\n"
    body = """  ++calls;
  if (calls > 15 && calls % 4 != 0) { std::memcpy(C, saved, sizeof(float) * M * N); return; }
""" + NAIVE + "\n  std::memcpy(saved, C, sizeof(float) * M * N);"
    v = harness.mm(body, prelude)
    assert v["status"] == "incorrect", v


def test_the_cpp_backend_does_not_precompile_by_default(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNELEVOLVE_PRECOMPILE", raising=False)
    v = harness.mm(NAIVE)
    assert v["status"] == "ok" and "precompile_s" not in v["stages"], v


def test_a_write_out_of_bounds_in_the_first_calls_lands_in_a_guard_band_and_is_caught(harness: Harness, precompiling: None) -> None:
    v = harness.mm(NAIVE + "\n  C[-1] = 1.0f;")
    assert v["status"] == "incorrect", v
    assert "before the start of argument 2" in v["reason"]
