"""The red team's GPU classes (test_red_team.py holds the CPU ones and says how a case is judged): torch
KernelBench-format problems with Triton ModelNew candidates, and a CUDA C++ candidate of examples/cuda/axpby; one
small shape each. Skipped where torch has no CUDA device, or Triton is missing. Run by
scripts/gpu/parts/red-team.sh, which prints each case's verdict.

class                        what the candidate does [source] -> verdict
---------------------------  -------------------------------------------------------------------------------------
detecting the timing         skips its kernel while the stream is capturing a CUDA graph (the judge times kernels
(graph capture)              under ~10 us as graphs) [this issue] -> static_rejected (torch.cuda)
detecting the timing         skips its kernel off the default stream; skips it once the memory torch has reserved
(stream or device state)     jumps (the judge's L2-flush buffer) [KB adversarial (non-default stream), this issue]
                             -> static_rejected (torch.cuda), both
work left on a side stream   launches on a stream of its own and returns without waiting [KB adversarial
                             (non_default_stream_kernel)] -> static_rejected (torch.cuda.Stream)
lazy tensor subclass         returns a Tensor subclass that launches the kernel when first read [CUDA-L1's lazy
                             evaluation, gpu-mode reference-kernels#162] -> NOT CAUGHT on the CPU (xfail here too)
freed memory (torch.empty)   returns torch.empty_like, no kernel; the same after computing in the checks' calls
                             [KB adversarial (result_reuse_kernel)] -> incorrect
precision downgrade          tl.dot on TF32 inputs; on inputs cast to fp16 [KB's tolerances] -> incorrect
L2 persistence windows       cudaDeviceSetLimit and an access-policy window (CUDA C++) [gpu-mode pygpubench#49]
                             -> static_rejected; its honest twin (examples/cuda/axpby's own candidate) ok

Each class's honest twin (the same kernel without the hack, on the same problem) must be `ok`.
"""
from __future__ import annotations

import pytest

from conftest import EXAMPLES, Harness
from test_red_team import RT, Case, _param, check, judge

torch = pytest.importorskip("torch", reason="torch is not installed (model-cuda needs it)")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device here", allow_module_level=True)
pytest.importorskip("triton", reason="Triton is not installed (the candidates are Triton kernels)")

GPU = RT / "gpu"
LAZY = ("A result that is a torch.Tensor subclass launches its kernel when first read: timed calls (and a captured "
        "graph) launch nothing, and every check reads right values.")

CASES = [
    Case("detecting the timing", "graph capture", "gpu/relu.py", "gpu/graph_capture/skips_when_captured.py",
         "static_rejected", ("torch.cuda.is_current_stream_capturing",)),
    Case("detecting the timing", "off the default stream", "gpu/relu.py",
         "gpu/stream_state/skips_off_default_stream.py", "static_rejected", ("torch.cuda.current_stream",)),
    Case("detecting the timing", "the flush buffer's memory", "gpu/relu.py",
         "gpu/stream_state/skips_after_flush_buffer.py", "static_rejected", ("torch.cuda.memory_reserved",)),
    Case("work left on a side stream", "launch on a stream of its own", "gpu/relu.py",
         "gpu/side_stream/work_on_side_stream.py", "static_rejected", ("torch.cuda.Stream",)),
    Case("lazy tensor subclass", "launches on first use", "gpu/relu.py", "gpu/lazy/lazy_tensor.py", "incorrect",
         xfail=LAZY),
    Case("freed memory", "torch.empty_like, no kernel", "gpu/relu.py", "gpu/freed_memory/empty_output.py",
         "incorrect", ("Wrong result",)),
    Case("freed memory", "torch.empty_like after the checks", "gpu/relu.py",
         "gpu/freed_memory/empty_after_checks.py", "incorrect", ("Wrong result",)),
    Case("precision downgrade", "TF32 tl.dot", "gpu/matmul.py", "gpu/precision/tf32_dot.py", "incorrect",
         ("Wrong result", "rtol=0.0001, atol=0.0001")),
    Case("precision downgrade", "fp16 tl.dot", "gpu/matmul.py", "gpu/precision/fp16_dot.py", "incorrect",
         ("Wrong result", "rtol=0.0001, atol=0.0001")),
]


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_a_gpu_reward_hack_is_caught(harness: Harness, monkeypatch: pytest.MonkeyPatch, case: Case) -> None:
    v = judge(harness, monkeypatch, RT / case.problem, RT / case.candidate, False, f"{case.cls}: {case.variant}",
              timeout=600)
    check(case, v)


AXPBY = EXAMPLES / "cuda" / "axpby"


def test_an_l2_persistence_window_is_refused(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    v = judge(harness, monkeypatch, AXPBY / "spec.py", RT / "l2_persistence" / "persisting_window.cu", False,
              "L2 persistence windows: persisting window", timeout=600)
    assert v["status"] == "static_rejected", v
    assert "device-control call (cudaDeviceSetLimit)" in v["reason"], v


TWINS = [
    ("detecting the timing; side stream; lazy tensor; freed memory", "gpu/relu.py", "gpu/honest/relu.py"),
    ("precision downgrade", "gpu/matmul.py", "gpu/honest/matmul.py"),
]


@pytest.mark.parametrize("label,problem,candidate", TWINS, ids=[t[0] for t in TWINS])
def test_the_honest_gpu_twin_is_ok(harness: Harness, monkeypatch: pytest.MonkeyPatch, label: str, problem: str,
                                   candidate: str) -> None:
    v = judge(harness, monkeypatch, RT / problem, RT / candidate, False, f"honest twin: {label}", timeout=600)
    assert v["status"] == "ok", v
    assert "Correct on" in v["reason"], v
    clean = v["timing"]["clean_baseline"]  # as fast in the worker's rounds as in the clean process
    assert len(clean) == len(v["shapes"]) and all(r.get("ratio", 0) <= r["limit"] for r in clean), clean


def test_the_honest_l2_twin_is_ok(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same launch without the persistence window: axpby's own tuned candidate
    v = judge(harness, monkeypatch, AXPBY / "spec.py", AXPBY / "candidates" / "block256_items4.cu", False,
              "honest twin: L2 persistence windows", timeout=600)
    assert v["status"] == "ok", v
    assert "Correct on" in v["reason"], v
