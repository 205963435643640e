"""The comparison where outputs live (chunked_compare.py: torch tensors, each chunk's figures in one transfer from
the device) and the judge's on the host (compare.Expected: numpy, chunk by chunk) are two ways of computing one
tally for float_rule.py's rule and words: for the same (rtol, atol) they must say the same, whatever the chunk
size. Here on CPU tensors; on the GPU machine through test_device_outputs.py."""
from __future__ import annotations

from typing import Optional

import numpy as np
import pytest

from kernelevolve_harness.chunked_compare import check
from kernelevolve_harness.compare import Expected

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-4, 1e-5


def both(cand: np.ndarray, ref: np.ndarray, chunk: int, rtol: float = RTOL, atol: float = ATOL) -> Optional[str]:
    """What the judge says on the host, which the chunked check must say on tensors."""
    tol = {"rtol": rtol, "atol": atol}
    on_host = Expected(ref, str(ref.dtype), tol).check(0, cand, str(cand.dtype))
    on_tensors = check(0, torch.from_numpy(np.ascontiguousarray(cand)), torch.from_numpy(np.ascontiguousarray(ref)),
                       rtol, atol, chunk=chunk)
    assert on_tensors == on_host, (on_tensors, on_host)
    return on_host


@pytest.fixture
def rows() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((37, 53)).astype(np.float32)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 24])
def test_a_right_output_passes_at_any_chunk_size(rows: np.ndarray, chunk: int) -> None:
    ref = np.cumsum(rows, axis=1)
    cand = (ref * (1 + 1e-6)).astype(np.float32)
    assert both(cand, ref, chunk) is None


@pytest.mark.parametrize("chunk", [7, 1 << 24])
def test_an_exclusive_scan_fails_with_the_same_sentence(rows: np.ndarray, chunk: int) -> None:
    ref = np.cumsum(rows, axis=1)
    cand = ref - rows  # off by one element in every row
    text = both(cand, ref, chunk)
    assert text and "out of tolerance" in text and "norm-relative error" in text


@pytest.mark.parametrize("chunk", [5, 1 << 24])
def test_one_wrong_element_in_the_last_chunk_fails(rows: np.ndarray, chunk: int) -> None:
    ref = rows.copy()
    cand = rows.copy()
    cand[-1, -1] += 1.0
    text = both(cand, ref, chunk)
    assert text and "(36, 52)" in text and "1 of 1961 elements" in text


@pytest.mark.parametrize("chunk", [3, 1 << 24])
def test_nan_or_inf_where_the_reference_is_finite_fails(rows: np.ndarray, chunk: int) -> None:
    cand = rows.copy()
    cand[5, 7] = np.nan
    cand[20, 1] = np.inf
    text = both(cand, rows, chunk)
    assert text and "2 of 1961 elements are NaN or Inf" in text


@pytest.mark.parametrize("chunk", [4, 1 << 24])
def test_specials_in_the_reference_must_be_matched(rows: np.ndarray, chunk: int) -> None:
    ref = rows.copy()
    ref[3, 3] = np.inf
    ref[9, 0] = np.nan
    cand = ref.copy()
    assert both(cand, ref, chunk) is None
    cand[9, 0] = 1.0
    text = both(cand, ref, chunk)  # where the reference is NaN or Inf, the candidate must be the same
    assert text == "output 0 is 1.0 at index (9, 0) where the reference is nan", text


def test_a_reference_of_nan_everywhere_cannot_be_checked() -> None:
    ref = np.full((4, 4), np.nan, np.float32)
    text = both(ref.copy(), ref, 3)
    assert text and "NaN or Inf everywhere" in text


def test_ints_must_be_equal() -> None:
    ref = np.arange(100, dtype=np.int32).reshape(10, 10)
    cand = ref.copy()
    assert both(cand, ref, 9) is None
    cand[7, 3] = -1
    text = both(cand, ref, 9)
    assert text and "(7, 3)" in text and "1 of 100 elements differ" in text
    assert text.startswith("output 0 is -1 instead of 73 "), text  # Python values, not np.int32(-1)


def test_the_norm_rule_fails_a_small_error_everywhere_that_each_element_allows() -> None:
    ref = np.ones(1000, np.float32)
    cand = ref + 9e-5  # each element within atol + rtol|r| = 1.1e-4; the norm-relative error 9e-5 < rtol too
    assert both(cand, ref, 64) is None
    text = both(cand, ref, 64, rtol=5e-5, atol=1e-4)  # element-wise ok (1.5e-4), norm-relative 9e-5 > 5e-5
    assert text and "0 of 1000 elements out of tolerance" in text


def test_float16_and_float64_are_compared_by_the_same_rule() -> None:
    rng = np.random.default_rng(3)
    for dtype in (np.float16, np.float64):
        ref = rng.standard_normal(999).astype(dtype)
        cand = ref.copy()
        cand[500] = cand[500] + dtype(0.5)
        assert both(cand, ref, 100, rtol=1e-3, atol=1e-3)
        assert both(ref.copy(), ref, 100, rtol=1e-3, atol=1e-3) is None


@pytest.mark.parametrize("chunk", [11, 1 << 24])
def test_errors_at_the_edge_of_the_allowance_are_judged_alike_on_both_sides(rows: np.ndarray, chunk: int) -> None:
    # (1 + rtol)|c - r| <= atol + rtol|r|: an error just inside passes, one between that and atol + rtol|r| fails, in
    # both routines (rtol 1e-2, where the factor is resolvable in float32; a floor far below the values)
    rtol, atol = 1e-2, 1e-9
    plain = atol + rtol * np.abs(rows.astype(np.float64))
    inside = (rows + 0.98 * plain / (1 + rtol) * np.sign(rows)).astype(np.float32)
    between = rows.copy()
    between[3, 4] = np.float32(rows[3, 4] + 0.995 * plain[3, 4] * np.sign(rows[3, 4]))
    assert both(inside, rows, chunk, rtol, atol) is None
    text = both(between, rows, chunk, rtol, atol)
    assert text and "(3, 4)" in text and "1 of 1961 elements out of tolerance" in text, text


@pytest.mark.parametrize("seed", range(40))
def test_tensors_and_arrays_say_the_same_on_outputs_with_zeros_and_specials(seed: int) -> None:
    # zeros with atol 0 (0/0 in the allowance), NaN and Inf on either side, near misses: one transfer per chunk
    # must find what the host's chunks find
    g = np.random.default_rng(seed)
    ref = g.standard_normal(300).astype(np.float32)
    ref[g.integers(0, 300, 30)] = 0.0
    cand = (ref + g.standard_normal(300).astype(np.float32) * g.choice([0.0, 1e-7, 1e-5, 1e-3])).astype(np.float32)
    for arr in (ref, cand):
        if g.random() < 0.5:
            arr[g.integers(0, 300, 2)] = g.choice([np.nan, np.inf, -np.inf])
    if g.random() < 0.3:
        cand[ref == 0.0] = 0.0
    atol = float(g.choice([0.0, 1e-6, 1e-4]))
    for chunk in (1, 17, 1 << 24):
        both(cand, ref, chunk, atol=atol)


def test_a_tensors_guard_bands_say_which_side_was_written() -> None:
    from kernelevolve_harness.arrays import BAND, guarded_copy
    canary = bytes(i % 251 for i in range(BAND))
    x = torch.arange(12, dtype=torch.float32)
    for side, where in ((None, None), ("front", "before the start"), ("back", "past the end")):
        view, guard = guarded_copy(x, canary)
        if side == "front":
            guard.buf[BAND - 1] ^= 0xFF
        elif side == "back":
            guard.buf[BAND + 48] ^= 0xFF  # the first byte after the 12 floats
        assert guard.damage() == where
        assert torch.equal(view, x)


def test_a_zero_allowance_matched_exactly_hides_no_element_out_of_tolerance() -> None:
    # a spec's atol 0 and a reference element of exactly 0 that the candidate matches: 0/0 in that element's
    # excess, which argmax took for the worst, so the element 2.5 allowances off elsewhere passed (until
    # 2026-12-03); the rule counts 0/0 as a match
    ref = np.random.default_rng(0).standard_normal(10000).astype(np.float32)
    ref[5] = 0.0
    cand = ref.copy()
    cand[100] *= 1 + 5e-4
    for chunk in (64, 1 << 24):
        text = both(cand, ref, chunk, rtol=1e-4, atol=0.0)
        assert text and "[100]" in text and "1 of 10000 elements out of tolerance" in text, text
