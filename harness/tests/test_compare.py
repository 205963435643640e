"""The judge's comparison (compare.Expected, the rule of float_rule.py): tolerances, NaN/Inf, shape and dtype
mismatches, and the words it uses."""
from typing import Any, Dict, Optional

import numpy as np

from kernelevolve_harness.compare import Expected


def compare(k: int, cand: np.ndarray, cand_dtype: str, ref: np.ndarray, ref_dtype: str,
            spec_tol: Dict[str, Any]) -> Optional[str]:
    """One reference, one check: what the judge says of output k."""
    return Expected(ref, ref_dtype, spec_tol).check(k, cand, cand_dtype)


def test_equal_arrays_pass_and_small_float_noise_passes() -> None:
    r = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    assert compare(0, r.copy(), "float32", r, "float32", {}) is None
    assert compare(0, r * (1 + 1e-6), "float32", r, "float32", {}) is None


def test_wrong_shape_and_dtype_are_named() -> None:
    r = np.zeros((4, 4), np.float32)
    assert "shape (4, 3), expected (4, 4)" in compare(1, np.zeros((4, 3), np.float32), "float32", r, "float32", {})
    assert "dtype float64, expected float32" in compare(0, r.astype(np.float64), "float64", r, "float32", {})


def test_nan_where_the_reference_is_finite_fails_with_the_index() -> None:
    r = np.ones((3, 3), np.float32)
    c = r.copy()
    c[2, 1] = np.nan
    msg = compare(0, c, "float32", r, "float32", {})
    assert "index (2, 1)" in msg and "NaN or Inf" in msg


def test_matching_nan_in_the_reference_passes() -> None:
    r = np.array([1.0, np.nan, np.inf], np.float32)
    assert compare(0, r.copy(), "float32", r, "float32", {}) is None
    assert compare(0, np.array([1.0, 0.0, np.inf], np.float32), "float32", r, "float32", {}) is not None


def test_one_bad_element_fails_the_elementwise_check_even_when_the_norm_is_close() -> None:
    r = np.ones(100000, np.float32)
    c = r.copy()
    c[777] = 1.1
    msg = compare(0, c, "float32", r, "float32", {})
    assert msg is not None and "[777]" in msg and "max error 0.1" in msg


def test_spec_tolerance_overrides_the_default() -> None:
    r = np.ones(10, np.float32)
    c = r * 1.001
    assert compare(0, c, "float32", r, "float32", {}) is not None
    assert compare(0, c, "float32", r, "float32", {"rtol": 1e-2}) is None


def test_integers_must_match_exactly() -> None:
    r = np.arange(10, dtype=np.int32)
    c = r.copy()
    c[3] = 4
    msg = compare(0, c, "int32", r, "int32", {})
    assert "index [3]" in msg and "1 of 10" in msg


def test_a_reference_that_is_nan_everywhere_says_what_to_fix_in_the_spec() -> None:
    # An argument that the kernel reads but the spec lists in OUTPUTS is poisoned, so the reference is NaN.
    r = np.full((4, 4), np.nan, np.float32)
    msg = compare(0, r.copy(), "float32", r, "float32", {})
    assert msg is not None and "INPLACE" in msg and "NaN or Inf everywhere" in msg


def test_a_prepared_reference_answers_each_call_as_a_fresh_one_would() -> None:
    # The judge prepares each reference once (Expected) and checks many calls against it: nothing of one check
    # (a failure's tally, a deciding scan stopped early) carries into the next.
    rng = np.random.default_rng(3)
    r = rng.standard_normal((64, 33)).astype(np.float32)
    special = r.copy()
    special[0, 0] = np.inf
    for ref in (r, special):
        cases = [ref * (1 + 5e-2), ref.copy(), np.where(ref > 2, np.nan, ref).astype(np.float32), ref * (1 + 1e-6),
                 ref + 1e-3, ref[:, :32].copy(), ref.astype(np.float64), ref.copy()]
        for tol in ({}, {"rtol": 1e-2}, {"atol": 1e-3}):
            e = Expected(ref, "float32", tol)
            said = [e.check(0, c, str(c.dtype)) for c in cases]
            assert said == [compare(0, c, str(c.dtype), ref, "float32", tol) for c in cases]
            assert said[0] is not None and said[1] is None and said[-1] is None, said


def test_a_prepared_reference_checks_large_outputs_chunk_by_chunk() -> None:
    # Outputs of many chunks: a bad element, a NaN or an Inf in any chunk (the last one partial), and errors
    # each within the elementwise bound whose norm is not, are found wherever they are.
    from kernelevolve_harness.compare import CHUNK_BYTES
    rng = np.random.default_rng(5)
    n = 5 * (CHUNK_BYTES // 4) + 123
    for dtype in (np.float32, np.float64):
        r = rng.standard_normal(n).astype(dtype)
        e = Expected(r, str(r.dtype), {})
        cases = {"equal": r.copy(), "noise": r * (1 + 0.1 * e.rtol)}
        for where in (5, n // 2, n - 1):
            bad = r.copy()
            bad[where] += 1.0
            cases[f"bad at {where}"] = bad
            nan = r.copy()
            nan[where] = np.nan
            cases[f"nan at {where}"] = nan
            inf = r.copy()
            inf[where] = -np.inf
            cases[f"inf at {where}"] = inf
        # every element off by 0.9 of its allowed error: elementwise fine, the norm-relative error is not
        cases["norm"] = r + 0.9 * (e.atol + e.rtol * np.abs(r)).astype(dtype)
        for name, c in cases.items():
            said = e.check(0, c, str(r.dtype))
            assert (said is None) == (name in ("equal", "noise")), (name, said)
            if " at " in name:
                assert f"[{name.split(' at ')[1]}]" in said, (name, said)
            if name.startswith(("nan", "inf")):
                assert "1 of " in said and "are NaN or Inf" in said, (name, said)
            if name == "norm":
                assert f"0 of {n} elements out of tolerance" in said, said


def test_same_bytes_is_bitwise_equality_without_copies() -> None:
    from kernelevolve_harness.compare import same_bytes
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert same_bytes(a, a.copy())
    assert same_bytes(np.asfortranarray(a), a)  # same values, other layout: the same bytes once made contiguous
    assert not same_bytes(a, a.reshape(4, 3))
    assert not same_bytes(a, a.astype(np.int32))
    b = a.copy()
    b[2, 3] = np.nextafter(b[2, 3], np.float32(np.inf))  # one bit in the last element
    assert not same_bytes(a, b)
    assert not same_bytes(np.array([0.0]), np.array([-0.0]))  # equal as numbers, not as bytes
    nan = np.array([np.nan], dtype=np.float32)
    other_nan = nan.view(np.uint32).copy()
    other_nan[0] ^= 1
    assert not same_bytes(nan, other_nan.view(np.float32))  # NaN payloads count
    assert same_bytes(nan, nan.copy())  # and a NaN equals itself, bit for bit
    odd = np.arange(7, dtype=np.int8)  # sizes no wider word divides
    assert same_bytes(odd, odd.copy()) and not same_bytes(odd, odd[::-1].copy())
    assert same_bytes(np.zeros((0, 3)), np.zeros((0, 3)))


def test_a_references_norm_is_the_plain_formula_for_every_kind() -> None:
    rng = np.random.default_rng(3)
    for x in (rng.standard_normal((64, 33)).astype(np.float32), rng.standard_normal(1000),
              rng.standard_normal(77).astype(np.float16), rng.standard_normal(50) + 1j * rng.standard_normal(50)):
        plain = float(np.sqrt(np.sum(np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)) ** 2)))
        norm = Expected(x, str(x.dtype), {}).norm_r
        assert abs(norm - plain) <= 1e-12 * max(plain, 1.0), (x.dtype, norm, plain)


# --- the rule: an absolute floor that never grows with the outputs (docs/harness.md, "The correctness rule") ----
def _rows(seed: int, shape=(32, 32768)) -> np.ndarray:
    return np.random.default_rng(seed).random(shape, dtype=np.float32)  # torch.rand's [0, 1), as KernelBench draws


def test_an_exclusive_scan_in_place_of_cumsum_fails_on_long_rows() -> None:
    # The old default atol (rtol x RMS of the reference, ~0.95 here; ~95 at KernelBench's rtol) let it pass.
    from kernelevolve_harness.tolerances import KERNELBENCH_TOLERANCE
    x = _rows(1)
    ref = np.cumsum(x, axis=1, dtype=np.float32)
    exclusive = ref - x
    for tol in ({}, KERNELBENCH_TOLERANCE, {"rtol": 1e-2}):
        msg = compare(0, exclusive, "float32", ref, "float32", tol)
        assert msg is not None and "out of tolerance" in msg, (tol, msg)
    # a legitimate reordering of the same sums (blocks of 1024 summed, then their prefix) passes
    blocked = np.cumsum(x.reshape(32, 32, 1024), axis=2, dtype=np.float32)
    blocked += np.concatenate([np.zeros((32, 1, 1), np.float32),
                               np.cumsum(blocked[:, :-1, -1:], axis=1, dtype=np.float32)], axis=1)
    assert compare(0, blocked.reshape(32, 32768), "float32", ref, "float32", KERNELBENCH_TOLERANCE) is None


def test_a_reduction_missing_its_last_block_fails() -> None:
    from kernelevolve_harness.tolerances import KERNELBENCH_TOLERANCE
    x = _rows(2)
    ref = x.sum(axis=1, dtype=np.float32)
    short = x[:, :-256].sum(axis=1, dtype=np.float32)  # 32768 columns, the last block of 256 left out
    assert np.allclose(short, ref, rtol=1e-2, atol=1e-2 * np.sqrt(np.mean(ref ** 2)))  # the old KernelBench default
    for tol in ({}, KERNELBENCH_TOLERANCE):
        msg = compare(0, short, "float32", ref, "float32", tol)
        assert msg is not None and "32 of 32 elements out of tolerance" in msg, msg


def test_a_row_or_a_column_left_unwritten_fails() -> None:
    ref = np.random.default_rng(3).standard_normal((512, 1024)).astype(np.float32)
    row = ref.copy()
    row[311] = 0.0
    col = ref.copy()
    col[:, 1023] = 0.0
    for wrong, where in ((row, "(311, "), (col, ", 1023)")):
        msg = compare(0, wrong, "float32", ref, "float32", {})
        assert msg is not None and where in msg, msg


def test_the_absolute_floor_is_the_same_for_outputs_of_any_magnitude() -> None:
    small = np.random.default_rng(4).standard_normal(1000).astype(np.float32)
    for scale in (1.0, 1e3, 1e6):
        e = Expected(small * np.float32(scale), "float32", {})
        assert (e.rtol, e.atol) == (1e-4, 1e-4)
    assert Expected(small, "float32", {"atol": 1e-6}).atol == 1e-6
    assert Expected(small, "float64", {}).atol == 1e-9


def test_a_spec_may_give_a_tolerance_per_dtype() -> None:
    from kernelevolve_harness.compare import tolerance
    tol = {"rtol": 1e-3, "float16": {"atol": 5e-3}}
    assert tolerance("float16", tol) == (1e-3, 5e-3)
    assert tolerance("float32", tol) == (1e-3, 1e-4)
    assert tolerance("bfloat16", {}) == (2e-2, 2e-2)


def test_what_passes_also_passes_torch_allclose_in_either_order() -> None:
    # KernelBench's rule is torch.allclose(ref, new, atol, rtol): rtol x |new|. Ours takes the error (1 + rtol) times.
    from kernelevolve_harness.tolerances import KERNELBENCH_TOLERANCE
    rng = np.random.default_rng(6)
    ref = (rng.standard_normal(20000) * 100).astype(np.float32)
    for shrink in (1 - 1.5e-4, 1 - 0.99e-4, 1 + 0.99e-4):
        cand = (ref * shrink).astype(np.float32)
        ours = compare(0, cand, "float32", ref, "float32", KERNELBENCH_TOLERANCE) is None
        theirs = np.allclose(ref, cand, rtol=1e-4, atol=1e-4) and np.allclose(cand, ref, rtol=1e-4, atol=1e-4)
        assert not ours or theirs, shrink


def test_the_robustness_pass_skips_elements_outside_the_ops_domain_and_allows_cancellation() -> None:
    ref = np.array([np.nan, 2.0, 1000.0, 1e-3], np.float32)  # the log of a negative input is NaN
    cand = np.array([7.0, 2.0, 1000.0, 1e-3 + 0.02], np.float32)
    assert Expected(ref, "float32", {}).check(0, cand, "float32") is not None
    assert Expected(ref, "float32", {}, wide=True).check(0, cand, "float32") is None  # 0.02 < 1e-4 x RMS ~ 0.05
    assert Expected(ref, "float32", {}, wide=True).check(0, cand * 2, "float32") is not None


def test_half_precision_and_complex_outputs_are_checked_by_the_same_routine() -> None:
    rng = np.random.default_rng(8)
    half = rng.standard_normal(70000).astype(np.float16)  # several chunks, checked in float32
    assert compare(0, half.copy(), "float16", half, "float16", {}) is None
    bad = half.copy()
    bad[65000] += np.float16(0.5)
    msg = compare(0, bad, "float16", half, "float16", {})
    assert msg is not None and "[65000]" in msg and "1 of 70000" in msg, msg
    z = (rng.standard_normal(5000) + 1j * rng.standard_normal(5000)).astype(np.complex64)
    assert compare(0, z * np.complex64(1 + 1e-6), "complex64", z, "complex64", {}) is None
    off = z.copy()
    off[7] += np.complex64(1j)
    assert "[7]" in compare(0, off, "complex64", z, "complex64", {})
