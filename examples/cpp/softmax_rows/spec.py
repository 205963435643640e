# Row softmax on the CPU; tune VEC in softmax.cpp. The reference is the baseline itself (no reference()).
import ctypes

import numpy as np

BACKEND = "cpp"
SOURCE = "softmax.cpp"
KERNEL = "softmax"
SHAPES = [
    {"rows": 64, "cols": 1000},
    {"rows": 33, "cols": 4097},
    {"rows": 256, "cols": 257},
]
OUTPUTS = [1]

_F = ctypes.POINTER(ctypes.c_float)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((shape["rows"], shape["cols"])) * 4).astype(np.float32)
    y = np.empty_like(x)
    return x, y, shape["rows"], shape["cols"]


def launch(lib, x, y, rows, cols):
    fn = lib.softmax
    fn.argtypes = [_F, _F, ctypes.c_int, ctypes.c_int]
    fn.restype = None
    fn(x.ctypes.data_as(_F), y.ctypes.data_as(_F), rows, cols)
    return y


def FLOPS(shape):
    return 5.0 * shape["rows"] * shape["cols"]


def BYTES(shape):
    return 8.0 * shape["rows"] * shape["cols"]
