# For the process-exit tests: a candidate library that exports `exit_mode` asks launch to leave the worker
# process in that way (Python-level exits the static checks of a C candidate cannot express).
import ctypes
import os
import sys

import numpy as np

BACKEND = "cpp"
SOURCE = "mm.cpp"
KERNEL = "mm"
SHAPES = [{"m": 8, "n": 8, "k": 8}]
OUTPUTS = [2]

_F = ctypes.POINTER(ctypes.c_float)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((shape["m"], shape["k"]), dtype=np.float32)
    b = rng.standard_normal((shape["k"], shape["n"]), dtype=np.float32)
    c = np.empty((shape["m"], shape["n"]), dtype=np.float32)
    return a, b, c, shape["m"], shape["n"], shape["k"]


def launch(lib, a, b, c, m, n, k):
    fn = lib.mm
    fn.argtypes = [_F, _F, _F, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    fn(a.ctypes.data_as(_F), b.ctypes.data_as(_F), c.ctypes.data_as(_F), m, n, k)
    mode = getattr(lib, "exit_mode", None)
    if mode is not None:
        mode.restype = ctypes.c_int
        which = mode()
        if which == 1:
            os._exit(0)
        if which == 2:
            sys.exit(0)
        if which == 3:
            raise SystemExit(5)
    return c
