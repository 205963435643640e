"""The judge's comparison: tolerances, NaN/Inf, shape and dtype mismatches, and the words it uses."""
import numpy as np

from kernelevolve_harness.compare import compare


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


def test_a_prepared_reference_gives_the_same_answers() -> None:
    # The judge prepares each reference once (Expected) and checks many calls against it.
    from kernelevolve_harness.compare import Expected
    rng = np.random.default_rng(3)
    r = rng.standard_normal((64, 33)).astype(np.float32)
    cases = [r.copy(), r * (1 + 1e-6), r * (1 + 1e-2), r + 1e-3, np.where(r > 2, np.nan, r).astype(np.float32),
             r[:, :32].copy(), r.astype(np.float64)]
    special = r.copy()
    special[0, 0] = np.inf
    for ref in (r, special):
        for tol in ({}, {"rtol": 1e-2}, {"atol": 1e-3}):
            e = Expected(ref, "float32", tol)
            for c in cases:
                dtype = str(c.dtype)
                assert e.check(0, c, dtype) == compare(0, c, dtype, ref, "float32", tol)


def test_a_prepared_reference_checks_large_outputs_chunk_by_chunk_with_the_same_answers() -> None:
    # Outputs of many chunks: a bad element, a NaN or an Inf in any chunk (the last one partial), and errors
    # each within the elementwise bound whose norm is not, are found as the full comparison finds them.
    from kernelevolve_harness.compare import CHUNK_BYTES, Expected
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
            expected = compare(0, c, str(r.dtype), r, str(r.dtype), {})
            assert e.check(0, c, str(r.dtype)) == expected, name
            assert (expected is None) == (name in ("equal", "noise")), (name, expected)


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


def test_the_norm_is_the_plain_formula_for_every_kind() -> None:
    from kernelevolve_harness.compare import _norm
    rng = np.random.default_rng(3)
    for x in (rng.standard_normal((64, 33)).astype(np.float32), rng.standard_normal(1000),
              rng.standard_normal(77).astype(np.float16), rng.standard_normal(50) + 1j * rng.standard_normal(50),
              np.zeros(0, np.float32)):
        plain = float(np.sqrt(np.sum(np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)) ** 2)))
        assert abs(_norm(x) - plain) <= 1e-12 * max(plain, 1.0), (x.dtype, _norm(x), plain)
