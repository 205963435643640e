"""The robustness pass: where a problem draws its inputs from a narrow range, the candidate is also judged on
signed, larger inputs of the same shapes (wide_inputs.py, robustness.py). KernelBench-format numpy problems with
C++ ModelNews, judged by the real harness."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SPECS, Harness

NARROW = SPECS / "narrow"

MODEL_NEW = """import numpy as np

CPP_SOURCE = r\"\"\"
#include <cstdint>
#include <algorithm>
extern "C" void op(float* out, const float* x, int64_t n) {{
  for (int64_t i = 0; i < n; ++i) {{ float v = x[i]; out[i] = {value}; }}
}}
\"\"\"


class ModelNew:
    def __init__(self):
        pass

    def forward(self, x):
        out = np.empty_like(x)
        cpp.op(out, x, x.size)
        return out
"""


def model_new(value: str) -> str:
    return MODEL_NEW.format(value=value)


def judge(harness: Harness, problem: str, value: str, *flags: str) -> dict:
    v, _ = harness.evaluate(NARROW / problem, model_new(value), *flags, suffix=".py", timeout=180)
    return v


def test_a_hardsigmoid_without_its_clamp_is_narrow_inputs_and_ok_on_the_problems_inputs_alone(harness: Harness) -> None:
    no_clamp = "(v + 3.0f) / 6.0f"
    v = judge(harness, "hardsigmoid.py", no_clamp)
    assert v["status"] == "narrow_inputs", v
    assert "Right on the problem's inputs (argument 0 all in [0, 1)) but wrong on signed inputs" in v["reason"], v
    assert "--inputs problem" in v["reason"] and "speedup" not in v, v
    ok = judge(harness, "hardsigmoid.py", no_clamp, "--inputs", "problem")
    assert ok["status"] == "ok", ok


def test_a_relu_right_only_for_non_negative_inputs_is_narrow_inputs(harness: Harness) -> None:
    v = judge(harness, "relu.py", "v")  # the identity: a ReLU wherever x >= 0
    assert v["status"] == "narrow_inputs", v
    assert "all non-negative" in v["reason"], v
    assert judge(harness, "relu.py", "v", "--inputs", "problem")["status"] == "ok"


def test_correct_candidates_are_ok_both_ways(harness: Harness) -> None:
    for problem, value in (("hardsigmoid.py", "std::min(1.0f, std::max(0.0f, (v + 3.0f) / 6.0f))"),
                           ("relu.py", "v > 0.0f ? v : 0.0f")):
        for flags in ((), ("--inputs", "problem")):
            v = judge(harness, problem, value, *flags)
            assert v["status"] == "ok", (problem, flags, v)


SCAN = """import numpy as np

CPP_SOURCE = r\"\"\"
#include <cstdint>
extern "C" void scan(float* out, const float* x, int64_t rows, int64_t n) {{
  for (int64_t r = 0; r < rows; ++r) {{
    const float* row = x + r * n;
    float* o = out + r * n;
{body}
  }}
}}
\"\"\"


class ModelNew:
    def __init__(self):
        pass

    def forward(self, x):
        out = np.empty_like(x)
        cpp.scan(out, x, x.shape[0], x.shape[1])
        return out
"""
EXCLUSIVE = """    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) { o[i] = s; s += row[i]; }"""
# blocks of 256 summed on their own, then offset by the running total: another order of the same additions
BLOCKED = """    float total = 0.0f;
    for (int64_t b = 0; b < n; b += 256) {
      float s = 0.0f;
      int64_t end = b + 256 < n ? b + 256 : n;
      for (int64_t i = b; i < end; ++i) { s += row[i]; o[i] = s; }
      for (int64_t i = b; i < end; ++i) o[i] += total;
      total += s;
    }"""


def test_an_exclusive_scan_for_cumsum_is_incorrect_and_a_blocked_one_ok(harness: Harness) -> None:
    # At KernelBench's cumsum scale the old absolute floor (rtol x the RMS of the reference) passed it.
    v, _ = harness.evaluate(NARROW / "cumsum.py", SCAN.format(body=EXCLUSIVE), suffix=".py", timeout=180)
    assert v["status"] == "incorrect", v
    assert "out of tolerance" in v["reason"], v
    v, _ = harness.evaluate(NARROW / "cumsum.py", SCAN.format(body=BLOCKED), suffix=".py", timeout=180)
    assert v["status"] == "ok", v  # on the problem's rows and on signed ones, where the sums cancel


# --- the inputs themselves --------------------------------------------------------------------------------
def test_narrow_draws_are_named_and_wide_ones_left_alone() -> None:
    from kernelevolve_harness.wide_inputs import narrowness
    rng = np.random.default_rng(0)
    assert narrowness(rng.random((64, 64), dtype=np.float32)) == "all in [0, 1)"
    assert narrowness(rng.random(100) * 7) == "all non-negative"
    assert narrowness((rng.random(100) - 0.5).astype(np.float32)) == "all in [-1, 1]"
    assert narrowness(rng.standard_normal((64, 64)).astype(np.float32)) is None
    assert narrowness((rng.random(100) > 0.5).astype(np.float32)) is None  # a mask: whole numbers
    assert narrowness(np.arange(10, dtype=np.int64)) is None


def test_wide_inputs_are_the_same_in_both_workers_and_keep_shapes_dtypes_outputs_and_values() -> None:
    from kernelevolve_harness.wide_inputs import widen
    rng = np.random.default_rng(1)
    x = rng.random((33, 65), dtype=np.float32)
    y = rng.standard_normal(50)
    out = np.zeros((33, 65), np.float32)
    args = [x, y, out, 3.5, np.asfortranarray(rng.random((4, 5)).astype(np.float16))]
    wide, narrow, what = widen(args, [2], 7)
    again, _, _ = widen([a.copy() if isinstance(a, np.ndarray) else a for a in args], [2], 7)
    assert narrow == "argument 0 all in [0, 1), argument 4 all in [0, 1)", narrow
    assert "standard deviation 2" in what and "\u00b18" in what, what
    assert wide[1] is y and wide[2] is out and wide[3] == 3.5
    for w, a, b in zip(wide, again, args):
        if isinstance(b, np.ndarray):
            assert w.shape == b.shape and w.dtype == b.dtype and np.array_equal(w, a)
    assert wide[4].flags.f_contiguous
    assert (wide[0] < 0).mean() > 0.4 and np.abs(wide[0]).max() >= 8.0
    assert widen([y], [], 7) == ([y], "", "")


def test_wide_tensors_are_made_on_the_tensors_device_the_same_each_time() -> None:
    torch = pytest.importorskip("torch")
    from kernelevolve_harness.wide_inputs import narrowness, widen
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.rand(33, 65, device=device)
    h = (0.99 * torch.rand(4, 5, device=device)).half()  # rand()'s values near 1 would round to 1.0 in half
    mask = (torch.rand(10, device=device) > 0.5).float()
    assert narrowness(torch.randn(64, 64, device=device)) is None and narrowness(mask) is None
    wide, narrow, _ = widen([x, h, mask], [], 11)
    again, _, _ = widen([x.clone(), h.clone(), mask], [], 11)
    assert narrow == "argument 0 all in [0, 1), argument 1 all in [0, 1)", narrow
    assert wide[2] is mask and wide[1].dtype == torch.float16 and wide[0].device == x.device
    assert torch.equal(wide[0], again[0]) and torch.equal(wide[1], again[1])
    assert 0.4 < float((wide[0] < 0).float().mean()) < 0.6 and float(wide[0].abs().max()) == 8.0

