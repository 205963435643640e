# Scalars drawn from the seed beside the arrays: each set of inputs has its own a and b, which must reach the
# candidate exactly as they reach the reference (in the correctness calls, the timed calls and the rechecks).
import ctypes

import numpy as np

BACKEND = "cpp"
SOURCE = "axpby.cpp"
KERNEL = "axpby"
SHAPES = [{"n": 4096}, {"n": 1000}, {"n": 65536}]
OUTPUTS = [2]

_F = ctypes.POINTER(ctypes.c_float)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    n = shape["n"]
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.empty(n, dtype=np.float32)
    a = np.float32(rng.uniform(-2.0, 2.0))
    b = np.float32(rng.uniform(-2.0, 2.0))
    return x, y, out, a, b, n


def launch(lib, x, y, out, a, b, n):
    fn = lib.axpby
    fn.argtypes = [_F, _F, _F, ctypes.c_float, ctypes.c_float, ctypes.c_int]
    fn.restype = None
    fn(x.ctypes.data_as(_F), y.ctypes.data_as(_F), out.ctypes.data_as(_F), float(a), float(b), int(n))
    return out
