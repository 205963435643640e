"""Outputs compared where they are (device_outputs.py): the candidate's worker shares its outputs with the reference
process, which compares them with the expected ones there and answers the judge; nothing of the outputs' size
crosses a pipe. On a GPU the outputs are shared by CUDA IPC handle (test_gpu_backends.py, test_kernelbench_gpu.py);
here the same path runs with torch on the CPU, the outputs shared through /dev/shm
(KERNELEVOLVE_SHARE_HOST_TENSORS=1), every call's outputs shared (KERNELEVOLVE_DEVICE_COMPARE_BYTES=0)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import Harness

torch = pytest.importorskip("torch")

PROBLEM = '''import torch
import torch.nn as nn

batch_size = 512
dim = 1001
SHAPES = [{"batch_size": 512, "dim": 1001}, {"batch_size": 33, "dim": 65}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
'''

MODEL_NEW = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}
'''


@pytest.fixture
def on_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELEVOLVE_MODEL_DEVICE", "cpu")
    monkeypatch.setenv("KERNELEVOLVE_SHARE_HOST_TENSORS", "1")
    monkeypatch.setenv("KERNELEVOLVE_DEVICE_COMPARE_BYTES", "0")


def judge(harness: Harness, body: str, *flags: str) -> dict:
    problem = harness.tmp / "relu_times_two.py"
    problem.write_text(PROBLEM)
    candidate = problem if body == "" else MODEL_NEW.format(body=body)
    v, _ = harness.evaluate(problem, candidate, *flags, suffix=".py", timeout=240)
    return v


def test_the_problem_judged_against_itself_is_ok_with_every_output_compared_where_it_is(harness: Harness,
                                                                                        on_device: None) -> None:
    v = judge(harness, "")
    assert v["status"] == "ok", v
    # 2 shapes: 2 seeds x 2 runs + the call on the same buffers, and the timed calls' evidence (the robustness
    # pass: the draw is in [0, 1), so both shapes are judged on wide inputs too)
    assert v["stages"]["compared_on_device"] >= 2 * 5 + 2, v["stages"]


def test_a_wrong_output_compared_on_the_device_is_incorrect_in_the_usual_words(harness: Harness,
                                                                              on_device: None) -> None:
    v = judge(harness, "(x + x.abs()) + 1e-3")  # relu(x) * 2 is x + |x|
    assert v["status"] == "incorrect", v
    assert "Wrong result on shape {batch_size=512, dim=1001}" in v["reason"], v
    assert "elements out of tolerance" in v["reason"] and "rtol=0.0001, atol=0.0001" in v["reason"], v


def test_right_only_on_the_problems_inputs_is_narrow_inputs_on_the_device_too(harness: Harness,
                                                                             on_device: None) -> None:
    v = judge(harness, "x * 2.0")  # no ReLU: the same wherever x >= 0, and the problem draws x in [0, 1)
    assert v["status"] == "narrow_inputs", v
    assert "wrong on signed inputs" in v["reason"] and "output 0 is" in v["reason"], v
    assert judge(harness, "x * 2.0", "--inputs", "problem")["status"] == "ok"


def test_an_output_of_another_dtype_is_named(harness: Harness, on_device: None) -> None:
    v = judge(harness, "(x + x.abs()).double()")
    assert v["status"] == "incorrect", v
    assert "has dtype float64, expected float32" in v["reason"], v


def test_the_rule_on_the_device_is_the_judges_rule() -> None:
    # The same outputs and references through compare.Expected (the judge, on the host) and device_outputs.compare
    # (the reference process, where the outputs are): one rule (float_rule.py), the same words.
    from kernelevolve_harness import device_outputs
    from kernelevolve_harness.compare import Expected
    rng = np.random.default_rng(5)
    ref = rng.standard_normal((64, 129)).astype(np.float32)
    cases = {"equal": ref.copy(), "within": ref * (1 + 5e-5), "one off": ref.copy(), "nan": ref.copy(),
             "scan": np.concatenate([np.zeros((64, 1), np.float32), ref[:, :-1]], axis=1)}
    cases["one off"][3, 7] += 1e-3
    cases["nan"][0, 0] = math.nan
    for wide in (False, True):
        for name, cand in cases.items():
            on_host = Expected(ref, "float32", {}, wide=wide).check(0, cand, "float32")
            there = device_outputs.compare(0, torch.from_numpy(cand), "float32", torch.from_numpy(ref), {}, wide)
            assert there == on_host, (name, wide, on_host, there)
            assert (there is None) == (name in ("equal", "within")), (name, wide, there)
    assert "has shape (64, 128), expected (64, 129)" in device_outputs.compare(
        0, torch.zeros(64, 128), "float32", torch.from_numpy(ref), {}, False)


def test_the_wide_inputs_floor_is_the_judges_on_the_device() -> None:
    # the robustness pass's atol (rtol x the RMS of the reference's finite elements) summed on the device
    from kernelevolve_harness.chunked_compare import wide_atol
    from kernelevolve_harness.compare import Expected
    ref = (np.random.default_rng(6).standard_normal(5000) * 30).astype(np.float32)
    ref[[3, 70]] = [math.nan, -math.inf]
    host = Expected(ref, "float32", {}, wide=True).atol
    assert host > 1e-4
    assert wide_atol(torch.from_numpy(ref), 1e-4, 1e-4) == pytest.approx(host, rel=1e-12)
    assert wide_atol(torch.full((4,), math.nan), 1e-4, 1e-4) == 1e-4  # nothing finite: the plain atol


def test_a_reference_nan_everywhere_says_what_to_fix_on_the_device_too() -> None:
    # even where the candidate does not match the reference's NaN (the judge's words: the spec is what to fix)
    from kernelevolve_harness import device_outputs
    ref = torch.full((4, 4), math.nan)
    said = device_outputs.compare(0, torch.zeros(4, 4), "float32", ref, {}, False)
    assert said is not None and "NaN or Inf everywhere" in said and "INPLACE" in said, said
    assert device_outputs.compare(0, torch.zeros(4, 4), "float32", ref, {}, True) is None


def test_outputs_that_cannot_be_shared_are_sent_as_bytes() -> None:
    # an allocator without IPC handles (torch's expandable segments) is not the candidate's doing: try_share says
    # None and the worker sends the outputs as it sends small ones
    from kernelevolve_harness import device_outputs
    assert device_outputs.try_share([object()]) is None
    assert device_outputs.try_share([torch.zeros(3)]) is not None


def test_outputs_a_worker_sends_as_bytes_after_all_are_compared_here(harness: Harness, on_device: None) -> None:
    # 3000 x 3001 float32 (36 MB) cannot be shared through /dev/shm from a worker, which may write no file over
    # 32 MiB: the worker sends it as bytes, and the judge, comparing on the device for this evaluation, asks the
    # reference for that call's expected outputs then (it used to wait for an answer it never asked for)
    problem = harness.tmp / "relu_times_two_large.py"
    problem.write_text(PROBLEM.replace("batch_size = 512\ndim = 1001", "batch_size = 3000\ndim = 3001").replace(
        '{"batch_size": 512, "dim": 1001}', '{"batch_size": 3000, "dim": 3001}'))
    v, _ = harness.evaluate(problem, problem, suffix=".py", timeout=300)
    assert v["status"] == "ok", v
    assert 0 < v["stages"]["compared_on_device"], v["stages"]  # the small shape's calls


def test_a_spec_whose_later_shape_alone_reaches_the_threshold_is_judged(harness: Harness, on_device: None,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The worker decides call by call from the outputs' size whether to share them; the judge had decided once,
    # from the first shape's outputs, whether it would take shared ones. Liger's softmax on the H200 (its first
    # shape's output 33.5 MB, its second 67.1 MB, the threshold 64 MiB) was a runtime_error ("The worker shared its
    # outputs where this evaluation compares them here") in every evaluation: a kernel that could not be judged.
    monkeypatch.setenv("KERNELEVOLVE_DEVICE_COMPARE_BYTES", str(1 << 20))
    problem = harness.tmp / "relu_times_two_small_first.py"
    problem.write_text(PROBLEM.replace('SHAPES = [{"batch_size": 512, "dim": 1001}, {"batch_size": 33, "dim": 65}]',
                                       'SHAPES = [{"batch_size": 33, "dim": 65}, {"batch_size": 512, "dim": 1001}]'))
    v, _ = harness.evaluate(problem, problem, suffix=".py", timeout=240)
    assert v["status"] == "ok", v
    # the large shape's calls (2 MB each) compared where they are, the small shape's (8.6 KB) here
    assert v["stages"].get("compared_on_device", 0) >= 5, v["stages"]
    wrong = harness.tmp / "wrong.py"
    wrong.write_text(MODEL_NEW.format(body="(x + x.abs()) + 1e-3"))
    v, _ = harness.evaluate(problem, wrong, suffix=".py", timeout=240)
    assert v["status"] == "incorrect", v
