# A small C++ spec for the SSH host tests: y = a * x over a few sizes.
import ctypes

import numpy as np

BACKEND = "cpp"
SOURCE = "scale.cpp"
KERNEL = "scale"
SHAPES = [{"n": 1000}, {"n": 4099}]
OUTPUTS = [1]


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape["n"]).astype(np.float32)
    y = np.empty_like(x)
    return (x, y, shape["n"], 1.5)


def launch(k, x, y, n, a):
    f = k.scale
    f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_float]
    f.restype = None
    f(x.ctypes.data, y.ctypes.data, n, a)
    return y


def reference(x, y, n, a):
    return (a * x).astype(np.float32)
