"""Every kind of argument a spec's inputs() may return goes through the correctness calls, the timed calls, the
rechecks and the reference the same way. Two checks per kind: in process, a timed call's arguments (a set of
inputs moved into the guarded buffers, scaled) equal what the reference computes with for the same seed and
scale; and end to end, the baseline judged against itself is ok while a candidate that mishandles the kind is
caught. docs/harness.md lists the kinds and these tests."""
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pytest

from conftest import Harness

PRELUDE = """import ctypes
import numpy as np

BACKEND = "cpp"
SOURCE = "k.cpp"
KERNEL = "k"
SHAPES = [{"n": 1000}, {"n": 257}]
_P = ctypes.c_void_p
"""

KINDS: Dict[str, Dict[str, str]] = {
    # Arrays of every numpy dtype the cpp backend can pass (bfloat16 has no numpy dtype: test_gpu_backends.py).
    "dtypes": {"spec": """
DTYPES = ["float16", "float32", "float64", "complex64", "int8", "int32", "int64", "uint8", "bool"]
OUTPUTS = list(range(len(DTYPES), 2 * len(DTYPES)))


def _draw(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(n).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    return rng.integers(0, 100, n).astype(dt)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    n = shape["n"]
    xs = [_draw(rng, d, n) for d in DTYPES]
    return (*xs, *[np.empty(n, dtype=d) for d in DTYPES], n)


def launch(lib, *args):
    fn = lib.k
    fn.argtypes = [_P, _P, ctypes.c_int, ctypes.c_int]
    fn.restype = None
    n = args[-1]
    xs, outs = args[:len(DTYPES)], args[len(DTYPES):2 * len(DTYPES)]
    for x, out in zip(xs, outs):
        fn(x.ctypes.data, out.ctypes.data, n, x.itemsize)
    return outs
""", "kernel": """#include <string.h>
// out = x reversed, element by element, whatever the element's size
extern "C" void k(const char* x, char* out, int n, int size) {
  for (int i = 0; i < n; ++i) memcpy(out + (long)i * size, x + (long)(n - 1 - i) * size, size);
}
""", "wrong": """#include <string.h>
extern "C" void k(const char* x, char* out, int n, int size) {
  for (int i = 0; i < n; ++i) memcpy(out + (long)i * size, x + (long)(n - 1 - i) * size, size);
  if (size == 1 && n > 0) out[0] = x[0];  // one-byte elements: the first one not reversed
}
"""},
    # Strided and non-contiguous views: every other column, a Fortran-order array, a transposed view.
    "strided": {"spec": """
OUTPUTS = [3]


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    m, n = 7, shape["n"] // 7
    x = rng.standard_normal((m, 2 * n), dtype=np.float32)[:, ::2]
    y = np.asfortranarray(rng.standard_normal((m, n), dtype=np.float32))
    z = rng.standard_normal((n, m), dtype=np.float32).T
    return x, y, z, np.empty((m, n), dtype=np.float32), m, n


def launch(lib, x, y, z, out, m, n):
    fn = lib.k
    fn.argtypes = [_P, ctypes.c_long, ctypes.c_long, _P, ctypes.c_long, ctypes.c_long, _P, ctypes.c_long,
                   ctypes.c_long, _P, ctypes.c_int, ctypes.c_int]
    fn.restype = None
    s = lambda a: [a.ctypes.data, a.strides[0] // a.itemsize, a.strides[1] // a.itemsize]
    fn(*s(x), *s(y), *s(z), out.ctypes.data, m, n)
    return out
""", "kernel": """
// out = x + 2y + 3z, each read through its own element strides
extern "C" void k(const float* x, long x0, long x1, const float* y, long y0, long y1, const float* z, long z0,
                  long z1, float* out, int m, int n) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) out[i * n + j] = x[i * x0 + j * x1] + 2 * y[i * y0 + j * y1] + 3 * z[i * z0 + j * z1];
}
""", "wrong": """
extern "C" void k(const float* x, long x0, long x1, const float* y, long y0, long y1, const float* z, long z0,
                  long z1, float* out, int m, int n) {
  // y read as if it were in C order
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) out[i * n + j] = x[i * x0 + j * x1] + 2 * y[i * n + j] + 3 * z[i * z0 + j * z1];
}
"""},
    # Scalars of every sort, drawn from the seed: a numpy float64, a Python float and int, a 0-dim array, a tuple of
    # numpy float32s, and None.
    "scalars": {"spec": """
OUTPUTS = [1]


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    n = shape["n"]
    x = rng.standard_normal(n, dtype=np.float32)
    a = np.float64(rng.uniform(-2, 2))
    b = float(rng.uniform(-2, 2))
    k = int(rng.integers(1, 50))
    c = np.array(rng.uniform(-2, 2), dtype=np.float32)
    de = (np.float32(rng.uniform(-2, 2)), np.float32(rng.uniform(-2, 2)))
    return x, np.empty(n, dtype=np.float32), a, b, k, c, de, None, n


def launch(lib, x, out, a, b, k, c, de, nothing, n):
    assert nothing is None
    fn = lib.k
    fn.argtypes = [_P, _P, ctypes.c_double, ctypes.c_double, ctypes.c_int, ctypes.c_float, ctypes.c_float,
                   ctypes.c_float, ctypes.c_int]
    fn.restype = None
    fn(x.ctypes.data, out.ctypes.data, float(a), b, k, float(c), float(de[0]), float(de[1]), n)
    return out
""", "kernel": """
extern "C" void k(const float* x, float* out, double a, double b, int k, float c, float d, float e, int n) {
  for (int i = 0; i < n; ++i) out[i] = (float)(a * x[i] + b) + k + c * x[i] + d * e;
}
""", "wrong": """
extern "C" void k(const float* x, float* out, double a, double b, int k, float c, float d, float e, int n) {
  for (int i = 0; i < n; ++i) out[i] = (float)(a * x[i] + b) + k + c * x[i] + d;  // e ignored
}
"""},
    # Lists of arrays (inputs in one list, outputs in another, returned by nothing: OUTPUTS names the list).
    "lists": {"spec": """
OUTPUTS = [1]


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    n = shape["n"]
    xs = [rng.standard_normal(n, dtype=np.float32) for _ in range(3)]
    return xs, [np.empty(n, dtype=np.float32), np.empty(n, dtype=np.float32)], n


def launch(lib, xs, outs, n):
    fn = lib.k
    fn.argtypes = [_P, _P, _P, _P, _P, ctypes.c_int]
    fn.restype = None
    fn(*[a.ctypes.data for a in xs], *[o.ctypes.data for o in outs], n)
""", "kernel": """
extern "C" void k(const float* x0, const float* x1, const float* x2, float* o0, float* o1, int n) {
  for (int i = 0; i < n; ++i) { o0[i] = x0[i] + 2 * x1[i]; o1[i] = 3 * x2[i] - x0[i]; }
}
""", "wrong": """
extern "C" void k(const float* x0, const float* x1, const float* x2, float* o0, float* o1, int n) {
  for (int i = 0; i < n; ++i) { o0[i] = x0[i] + 2 * x1[i]; o1[i] = 3 * x2[i] - x0[i]; }
  ((float*)x1)[0] = 0.0f;  // writes an input inside the list
}
"""},
    # An in-place argument (read and written), nothing returned.
    "inplace": {"spec": """
INPLACE = [0]


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    n = shape["n"]
    return rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32), n


def launch(lib, x, y, n):
    fn = lib.k
    fn.argtypes = [_P, _P, ctypes.c_int]
    fn.restype = None
    fn(x.ctypes.data, y.ctypes.data, n)
""", "kernel": """
extern "C" void k(float* x, const float* y, int n) {
  for (int i = 0; i < n; ++i) x[i] = 2 * x[i] + y[i];
}
""", "wrong": """
extern "C" void k(float* x, const float* y, int n) {
  for (int i = 0; i < n; ++i) x[i] = 2 * x[i] + y[i];
  ((float*)y)[n - 1] += 1.0f;  // y is an input, not in INPLACE
}
"""},
    # Outputs that alias inputs: the in-place argument itself and a reshaped view of an output argument are
    # returned (OUTPUTS inferred from the view).
    "alias": {"spec": """
INPLACE = [0]


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    n = shape["n"]
    return rng.standard_normal(n, dtype=np.float32), np.empty(n, dtype=np.float32), n


def launch(lib, x, out, n):
    fn = lib.k
    fn.argtypes = [_P, _P, ctypes.c_int]
    fn.restype = None
    fn(x.ctypes.data, out.ctypes.data, n)
    return x, out.reshape(-1, 1)
""", "kernel": """
extern "C" void k(float* x, float* out, int n) {
  for (int i = 0; i < n; ++i) { out[i] = x[i] * x[i]; x[i] += 1.0f; }
}
""", "wrong": """
extern "C" void k(float* x, float* out, int n) {
  for (int i = 0; i < n; ++i) { out[i] = x[i] * x[i]; if (i) x[i] += 1.0f; }
}
"""},
}


def write_spec(root: Path, kind: str) -> Path:
    folder = root / kind
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.py").write_text(PRELUDE + KINDS[kind]["spec"])
    (folder / "k.cpp").write_text(KINDS[kind]["kernel"])
    return folder / "spec.py"


def _same(got: Any, want: Any, path: str) -> None:
    from kernelevolve_harness import arrays as A
    assert A.layout(got) == A.layout(want), path
    if A.is_array(want):
        assert got.dtype == want.dtype and got.shape == want.shape, path
        assert A.digest(got) == A.digest(want), f"{path}: different values"
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want), path
        for n, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{n}]")
    else:
        assert type(got) is type(want) and (got == want or (got is None and want is None)), f"{path}: {got!r} != {want!r}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_timed_call_sees_what_the_reference_sees(tmp_path: Path, kind: str) -> None:
    from kernelevolve_harness import _worker as W
    from kernelevolve_harness import arrays as A
    from kernelevolve_harness.spec import validate
    spec = str(write_spec(tmp_path, kind))
    cfg = {"nonce": "n", "backend": "cpp", "spec": spec}
    cand, ref = W.CandidateWorker(None, cfg), W.ReferenceWorker(None, cfg)
    # the reference as the judge starts it: the spec validated, the baseline built and probed (OUTPUTS inferred)
    ref.load_spec()
    info = validate(ref.spec, spec)
    build = ref.backend.build(str(tmp_path / kind / "k.cpp"), str(tmp_path), 120, "k")
    assert build.ok, build.log
    ref.kb = ref.backend.load(build.artifact, "k")
    ref.outputs, ref.inplace = list(info.outputs or []), list(info.inplace)
    ref.probe(info)
    cand.load_spec()
    cand.outputs, cand.inplace = ref.outputs, ref.inplace
    seeds = [11, 22, 33]
    for i in range(len(cand.shapes)):
        pool = [cand.make_inputs(i, s, 1.0) for s in seeds]
        gargs, guards = cand.guarded_args(pool[0])
        assert guards, "every array is in guard bands"
        for p, factor in [(1, 0.625), (2, 1.75), (0, 1.0), (1, 1.0)]:
            cand.refill(gargs, pool, p, factor, seeds[p])
            want = ref.make_inputs(i, seeds[p], factor)
            assert len(gargs) == len(want)
            for j, (g, w) in enumerate(zip(gargs, want)):
                if j in cand.outputs:
                    assert A.layout(g) == A.layout(w)
                    for leaf in A.leaves(g):  # poisoned: NaN for floats, 0xA5 bytes otherwise
                        raw = leaf.view(np.uint8)
                        assert np.isnan(leaf).all() if A.is_float(leaf) and leaf.dtype.kind == "f" else \
                            (raw == 0xA5).all() or A.is_float(leaf)
                else:
                    _same(g, w, f"{kind}, shape {i}, entry {p}, scale {factor}, argument {j}")
        assert cand.guard_damage(guards) is None
        # the guarded buffers keep the layout of what inputs() returned where it was C or Fortran ordered
        for a, g in zip(pool[0], gargs):
            for x, y in zip(A.leaves(a), A.leaves(g)):
                assert x.flags.f_contiguous == y.flags.f_contiguous or x.flags.c_contiguous


def test_inputs_whose_layout_changes_with_the_seed_are_a_spec_error(harness: Harness, tmp_path: Path) -> None:
    folder = tmp_path / "ragged"
    folder.mkdir()
    (folder / "spec.py").write_text(PRELUDE + """
OUTPUTS = [1]


def inputs(shape, seed):
    n = shape["n"] + seed % 3
    return np.ones(n, dtype=np.float32), np.empty(n, dtype=np.float32), n


def launch(lib, x, out, n):
    fn = lib.k
    fn.argtypes = [_P, _P, ctypes.c_int]
    fn(x.ctypes.data, out.ctypes.data, n)
    return out
""")
    (folder / "k.cpp").write_text('extern "C" void k(const float* x, float* out, int n) '
                                  '{ for (int i = 0; i < n; ++i) out[i] = x[i]; }\n')
    r = harness.run("evaluate", "--spec", str(folder / "spec.py"), "--candidate", str(folder / "k.cpp"), "--json")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "different count, shape or dtype for two seeds" in r.stderr, r.stderr


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_baseline_is_ok_and_a_mishandling_candidate_is_caught(harness: Harness, tmp_path: Path, kind: str) -> None:
    spec = write_spec(tmp_path, kind)
    ok, _ = harness.evaluate(spec, spec.parent / "k.cpp")
    assert ok["status"] == "ok", ok
    assert len(ok["shapes"]) == 2
    wrong, _ = harness.evaluate(spec, KINDS[kind]["wrong"])
    assert wrong["status"] == "incorrect", wrong
