# Benchmark spec: a tiled transpose with poor tiles (see transpose.cpp).
import ctypes

import numpy as np

BACKEND = "cpp"
SOURCE = "transpose.cpp"
KERNEL = "transpose"
SHAPES = [{"rows": 1024, "cols": 1000}, {"rows": 777, "cols": 1290}]
OUTPUTS = [1]

_F = ctypes.POINTER(ctypes.c_float)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    r, c = shape["rows"], shape["cols"]
    return rng.standard_normal((r, c), dtype=np.float32), np.empty((c, r), dtype=np.float32), r, c


def launch(lib, x, out, r, c):
    fn = lib.transpose
    fn.argtypes = [_F, _F, ctypes.c_int, ctypes.c_int]
    fn.restype = None
    fn(x.ctypes.data_as(_F), out.ctypes.data_as(_F), r, c)
    return out


def reference(x, out, r, c):
    return np.ascontiguousarray(x.T)
