# A baseline with OpenMP: candidates may then use OpenMP too (the static checks are differential).
import ctypes
import numpy as np
BACKEND = "cpp"
SOURCE = "k.cpp"
KERNEL = "scale"
SHAPES = [{"n": 100000}]
_F = ctypes.POINTER(ctypes.c_float)
def inputs(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape["n"], dtype=np.float32)
    return x, np.empty_like(x), shape["n"]
def launch(lib, x, y, n):
    lib.scale.argtypes = [_F, _F, ctypes.c_int]
    lib.scale(x.ctypes.data_as(_F), y.ctypes.data_as(_F), n)
    return y
