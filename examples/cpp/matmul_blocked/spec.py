# A blocked float32 matmul on the CPU; tune BLOCK_M / BLOCK_N / BLOCK_K in matmul.cpp.
import ctypes

import numpy as np

BACKEND = "cpp"
SOURCE = "matmul.cpp"
KERNEL = "matmul"
SHAPES = [
    {"m": 128, "n": 128, "k": 128},
    {"m": 130, "n": 257, "k": 96},
    {"m": 97, "n": 160, "k": 211},
]
OUTPUTS = [2]

_F = ctypes.POINTER(ctypes.c_float)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    m, n, k = shape["m"], shape["n"], shape["k"]
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.empty((m, n), dtype=np.float32)
    return a, b, c, m, n, k


def launch(lib, a, b, c, m, n, k):
    fn = lib.matmul
    fn.argtypes = [_F, _F, _F, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    fn.restype = None
    fn(a.ctypes.data_as(_F), b.ctypes.data_as(_F), c.ctypes.data_as(_F), m, n, k)
    return c


def reference(a, b, c, m, n, k):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def FLOPS(shape):
    return 2.0 * shape["m"] * shape["n"] * shape["k"]


def BYTES(shape):
    return 4.0 * (shape["m"] * shape["k"] + shape["k"] * shape["n"] + shape["m"] * shape["n"])
