"""Scalars beside the arrays (a numpy float32 a and b drawn from the seed, a Python int n) travel with their set of
inputs into every call: the correctness calls, the timed calls, the fresh-input call and the rechecks."""
from conftest import SPECS, Harness

AXPBY = SPECS / "axpby" / "spec.py"
SIGNATURE = 'extern "C" void axpby(const float* x, const float* y, float* out, float a, float b, int n)'


def axpby(body: str, prelude: str = "") -> str:
    return prelude + SIGNATURE + " {\n" + body + "\n}\n"


def test_honest_kernel_with_seed_drawn_scalars_is_ok(harness: Harness) -> None:
    v, _ = harness.evaluate(AXPBY, SPECS / "axpby" / "axpby.cpp")
    assert v["status"] == "ok", v
    assert 0.5 < v["speedup"] < 2.0


def test_honest_rewrite_with_seed_drawn_scalars_is_ok(harness: Harness) -> None:
    body = """  int i = 0;
  for (; i + 4 <= n; i += 4) {
    out[i] = a * x[i] + b * y[i]; out[i + 1] = a * x[i + 1] + b * y[i + 1];
    out[i + 2] = a * x[i + 2] + b * y[i + 2]; out[i + 3] = a * x[i + 3] + b * y[i + 3];
  }
  for (; i < n; ++i) out[i] = a * x[i] + b * y[i];"""
    v, _ = harness.evaluate(AXPBY, axpby(body))
    assert v["status"] == "ok", v


def test_candidate_that_ignores_a_scalar_is_incorrect(harness: Harness) -> None:
    v, _ = harness.evaluate(AXPBY, axpby("  for (int i = 0; i < n; ++i) out[i] = a * x[i] + y[i];"))
    assert v["status"] == "incorrect", v
    assert "Wrong result" in v["reason"]


def test_candidate_that_keeps_the_first_timed_scalar_is_incorrect(harness: Harness) -> None:
    # Right in every correctness call (3 shapes x (2 seeds x 2 runs + 1 on the same buffers + up to 3 robustness
    # calls) = 24 at most), then it computes with the a and b it saw first once timing starts: caught only because
    # each timed call's scalars are those of its own set of inputs.
    prelude = "static int calls = 0; static float first_a, first_b;\n"
    body = """  if (++calls == 25) { first_a = a; first_b = b; }
  if (calls > 25) { a = first_a; b = first_b; }
  for (int i = 0; i < n; ++i) out[i] = a * x[i] + b * y[i];"""
    v, _ = harness.evaluate(AXPBY, axpby(body, prelude))
    assert v["status"] == "incorrect", v
    assert "timed" in v["reason"] or "fresh" in v["reason"], v


def test_candidate_that_caches_on_a_scalar_is_incorrect(harness: Harness) -> None:
    # Returns the last output again whenever a and b repeat: right for the second run of each correctness call,
    # wrong once the same scalars come back with other arrays: the robustness pass's calls (the seed's own scalars;
    # narrow_inputs where those come after every call on the problem's inputs) or the timed calls (incorrect).
    prelude = "#include <string.h>\nstatic float last_a = 0, last_b = 0; static int last_n = -1; static float memo[1 << 17];\n"
    body = """  if (a == last_a && b == last_b && n == last_n) { memcpy(out, memo, sizeof(float) * n); return; }
  for (int i = 0; i < n; ++i) out[i] = a * x[i] + b * y[i];
  memcpy(memo, out, sizeof(float) * n); last_a = a; last_b = b; last_n = n;"""
    v, _ = harness.evaluate(AXPBY, axpby(body, prelude))
    assert v["status"] in ("incorrect", "narrow_inputs"), v
    assert "Wrong result" in v["reason"], v
