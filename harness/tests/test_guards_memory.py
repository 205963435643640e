"""Guard bands, poisoned outputs, unchanged inputs, NaN/Inf, partial sizes: each caught with a clear reason."""
from conftest import NAIVE, Harness


def test_write_one_past_the_end_is_caught_by_the_guard_band(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  C[M * N] = 0.0f;")
    assert v["status"] == "incorrect", v
    assert "past the end of argument 2" in v["reason"]


def test_write_before_the_start_is_caught_by_the_guard_band(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  C[-1] = 1.0f;")
    assert v["status"] == "incorrect", v
    assert "before the start of argument 2" in v["reason"]


def test_write_far_past_the_end_of_an_input_is_caught(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  const_cast<float*>(B)[K * N + 1000] = 0.0f;")
    assert v["status"] == "incorrect", v
    assert "past the end of argument 1" in v["reason"]


def test_mutating_an_input_is_caught(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  const_cast<float*>(A)[0] = 0.0f;")
    assert v["status"] == "incorrect", v
    assert "changed argument 0" in v["reason"] and "unchanged" in v["reason"]


def test_using_an_input_as_scratch_and_restoring_most_of_it_is_caught(harness: Harness) -> None:
    # Scales A in place and back: bitwise different because of rounding.
    body = """  float* a = const_cast<float*>(A);
  for (int i = 0; i < M * K; ++i) a[i] = a[i] * 3.0f;
""" + NAIVE.replace("A[i * K + k]", "(A[i * K + k] / 3.0f)") + """
  for (int i = 0; i < M * K; ++i) a[i] = a[i] / 3.0f;"""
    v = harness.mm(body)
    assert v["status"] == "incorrect", v


def test_leaving_outputs_unwritten_is_caught_by_poisoning(harness: Harness) -> None:
    # Writes only the first half of C; the rest keeps the NaN poison.
    v = harness.mm(NAIVE.replace("C[i * N + j] = s;", "if (i < M / 2) C[i * N + j] = s;"))
    assert v["status"] == "incorrect", v
    assert "NaN" in v["reason"] or "nan" in v["reason"]
    assert "shape" in v["reason"] and "seed" in v["reason"] and "index" in v["reason"]


def test_computing_only_multiples_of_16_fails_on_odd_shapes(harness: Harness) -> None:
    body = "  for (int i = 0; i < M * N; ++i) C[i] = 0.0f;\n" + NAIVE.replace("j < N", "j < (N & ~15)")
    v = harness.mm(body)
    assert v["status"] == "incorrect", v
    assert "n=17" in v["reason"] or "n=40" in v["reason"]


def test_returning_nan_is_rejected(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  C[M * N / 2] = __builtin_nanf(\"\");")
    assert v["status"] == "incorrect", v
    assert "NaN or Inf" in v["reason"]


def test_returning_inf_is_rejected(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  C[0] = __builtin_inff();")
    assert v["status"] == "incorrect", v
    assert "NaN or Inf" in v["reason"]


def test_a_small_numerical_error_is_reported_with_where_and_how_much(harness: Harness) -> None:
    v = harness.mm(NAIVE + "\n  C[M + 1] += 0.5f;")
    assert v["status"] == "incorrect", v
    assert "index (1, 1)" in v["reason"] or "index (0, 17)" in v["reason"] or "index" in v["reason"]
    assert "max error" in v["reason"] and "rtol" in v["reason"]
