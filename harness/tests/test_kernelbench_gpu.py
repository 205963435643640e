"""KernelBench-format torch problems on an NVIDIA GPU: Triton ModelNew candidates against the eager Model
(skipped where torch with CUDA, or Triton, is absent)."""
import pytest

from conftest import EXAMPLES, SPECS, Harness

torch = pytest.importorskip("torch", reason="torch is not installed (model-cuda needs it)")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device here", allow_module_level=True)
pytest.importorskip("triton")

KB = EXAMPLES / "kernelbench"


def judge(harness: Harness, problem: str, candidate: str) -> dict:
    v, _ = harness.evaluate(KB / f"{problem}.py", KB / "candidates" / problem / candidate, timeout=600)
    return v


def test_right_softmax_is_ok_on_every_shape(harness: Harness) -> None:
    v = judge(harness, "l1_softmax", "2_correct.py")
    assert v["status"] == "ok", v
    assert len(v["shapes"]) == 2


def test_softmax_on_half_the_rows_is_incorrect(harness: Harness) -> None:
    assert judge(harness, "l1_softmax", "1_wrong_partial.py")["status"] == "incorrect"


def test_torch_arithmetic_in_forward_is_refused_by_the_op_watch(harness: Harness) -> None:
    v = judge(harness, "l1_layernorm", "1_wrong_host_arithmetic.py")
    assert v["status"] == "static_rejected", v
    assert "torch mul" in v["reason"] or "torch add" in v["reason"], v


def test_weights_of_the_reference_reach_model_new(harness: Harness) -> None:
    # ModelNew makes its scale as ones; right only because the harness copies Model's random scale into it
    assert judge(harness, "l1_rmsnorm", "2_correct.py")["status"] == "ok"
    assert judge(harness, "l1_rmsnorm", "1_wrong_no_weight.py")["status"] == "incorrect"


def test_odd_shape_without_masks_is_incorrect_there(harness: Harness) -> None:
    v = judge(harness, "l1_row_sum", "1_wrong_one_shape.py")
    assert v["status"] == "incorrect", v
    assert "dim=5003" in v["reason"], v


def test_problem_judged_against_itself_is_ok(harness: Harness) -> None:
    # the run's baseline c0000: the problem's own Model calls torch, which the op watch must not count here
    v, _ = harness.evaluate(KB / "l1_relu.py", KB / "l1_relu.py", timeout=600)
    assert v["status"] == "ok", v


HARDSIGMOID = """import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hs_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, {value}, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        hs_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)
        return out
"""


def test_a_hardsigmoid_without_its_clamp_is_narrow_inputs_on_the_gpu_too(harness: Harness) -> None:
    # torch.rand's [0, 1): the robustness pass draws signed inputs on the device (torch's generator there)
    problem = SPECS / "narrow" / "hardsigmoid_torch.py"
    no_clamp = HARDSIGMOID.format(value="(x + 3.0) / 6.0")
    v, _ = harness.evaluate(problem, no_clamp, suffix=".py", timeout=600)
    assert v["status"] == "narrow_inputs", v
    assert "all in [0, 1)" in v["reason"], v
    v, _ = harness.evaluate(problem, no_clamp, "--inputs", "problem", suffix=".py", timeout=600)
    assert v["status"] == "ok", v
    right = HARDSIGMOID.format(value="tl.minimum(tl.maximum((x + 3.0) / 6.0, 0.0), 1.0)")
    v, _ = harness.evaluate(problem, right, suffix=".py", timeout=600)
    assert v["status"] == "ok", v


@pytest.fixture
def every_output_on_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELEVOLVE_DEVICE_COMPARE_BYTES", "0")  # device_outputs.py: every call's outputs


def test_outputs_compared_on_the_device_judge_as_on_the_host(harness: Harness, every_output_on_device: None) -> None:
    # the worker shares its outputs by CUDA IPC handle; the reference process compares them where they are
    v = judge(harness, "l1_softmax", "2_correct.py")
    assert v["status"] == "ok", v
    assert v["stages"]["compared_on_device"] >= 2 * 5, v["stages"]
    wrong = judge(harness, "l1_softmax", "1_wrong_partial.py")
    assert wrong["status"] == "incorrect" and "Wrong result on shape" in wrong["reason"], wrong
    assert judge(harness, "l1_rmsnorm", "1_wrong_no_weight.py")["status"] == "incorrect"
    v, _ = harness.evaluate(KB / "l1_relu.py", KB / "l1_relu.py", timeout=600)
    assert v["status"] == "ok" and v["stages"]["compared_on_device"] > 0, v


def test_a_64_mib_output_is_compared_on_the_device_by_default(harness: Harness) -> None:
    v, _ = harness.evaluate(KB / "l1_relu.py", KB / "l1_relu.py", timeout=600)  # 4096 x 4096 float32
    assert v["status"] == "ok", v
    assert v["stages"].get("compared_on_device", 0) > 0, v["stages"]


def test_the_robustness_pass_compared_on_the_device(harness: Harness, every_output_on_device: None) -> None:
    problem = SPECS / "narrow" / "hardsigmoid_torch.py"
    v, _ = harness.evaluate(problem, HARDSIGMOID.format(value="(x + 3.0) / 6.0"), suffix=".py", timeout=600)
    assert v["status"] == "narrow_inputs" and "all in [0, 1)" in v["reason"], v
    right = HARDSIGMOID.format(value="tl.minimum(tl.maximum((x + 3.0) / 6.0, 0.0), 1.0)")
    v, _ = harness.evaluate(problem, right, suffix=".py", timeout=600)
    assert v["status"] == "ok" and v["stages"]["compared_on_device"] > 0, v
