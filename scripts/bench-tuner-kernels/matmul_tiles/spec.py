# Benchmark spec: a tiled matmul with poor tile sizes (see matmul.cpp).
import ctypes

import numpy as np

BACKEND = "cpp"
SOURCE = "matmul.cpp"
KERNEL = "matmul"
SHAPES = [{"m": 192, "n": 200, "k": 160}, {"m": 129, "n": 255, "k": 97}]
OUTPUTS = [2]

_F = ctypes.POINTER(ctypes.c_float)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    m, n, k = shape["m"], shape["n"], shape["k"]
    return (rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32),
            np.empty((m, n), dtype=np.float32), m, n, k)


def launch(lib, a, b, c, m, n, k):
    fn = lib.matmul
    fn.argtypes = [_F, _F, _F, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    fn.restype = None
    fn(a.ctypes.data_as(_F), b.ctypes.data_as(_F), c.ctypes.data_as(_F), m, n, k)
    return c


def reference(a, b, c, m, n, k):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
