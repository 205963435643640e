# The mm spec of the adversarial tests, on the simulated accelerator simacc (the custom backend): built by its
# compiler, run under its runtime launcher, judged by the same guards as a cpp kernel.
import ctypes
import os

import numpy as np

BACKEND = "custom"
SOURCE = "../mm/mm.cpp"
KERNEL = "mm"
SHAPES = [{"m": 16, "n": 16, "k": 16}, {"m": 33, "n": 17, "k": 9}, {"m": 48, "n": 40, "k": 64}]
OUTPUTS = [2]
TOOLCHAIN = {
    "compile": ["../../simacc/simacc-cc", "{source}", "-o", "{output}"],
    "run": ["../../simacc/simacc-run", "--"],
    "knowledge": "../../simacc/knowledge",
    "hardware": "simacc",
}

_F = ctypes.POINTER(ctypes.c_float)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((shape["m"], shape["k"]), dtype=np.float32)
    b = rng.standard_normal((shape["k"], shape["n"]), dtype=np.float32)
    c = np.empty((shape["m"], shape["n"]), dtype=np.float32)
    return a, b, c, shape["m"], shape["n"], shape["k"]


def launch(lib, a, b, c, m, n, k):
    if not os.environ.get("SIMACC_DEVICE"):  # as a device's runtime would: no launcher, no device
        raise RuntimeError("no simacc device is attached; run under simacc-run, the toolchain's run command")
    fn = lib.mm
    fn.argtypes = [_F, _F, _F, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    fn.restype = None
    fn(a.ctypes.data_as(_F), b.ctypes.data_as(_F), c.ctypes.data_as(_F), m, n, k)
    return c
