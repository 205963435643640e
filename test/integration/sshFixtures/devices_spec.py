# The small C++ spec, noting which device each evaluation was given (CUDA_VISIBLE_DEVICES) beside itself.
import ctypes
import os

import numpy as np

BACKEND = "cpp"
SOURCE = "scale.cpp"
KERNEL = "scale"
SHAPES = [{"n": 1000}, {"n": 4099}]
OUTPUTS = [1]


def inputs(shape, seed):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "devices.log"), "a") as f:
        f.write("%s\n" % os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
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
