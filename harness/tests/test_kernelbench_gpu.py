"""KernelBench-format torch problems on an NVIDIA GPU: Triton ModelNew candidates against the eager Model
(skipped where torch with CUDA, or Triton, is absent)."""
import pytest

from conftest import EXAMPLES, Harness

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
