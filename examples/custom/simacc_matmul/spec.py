# A blocked float32 matmul on an in-house accelerator, through the custom backend: the spec names the device's
# toolchain (its compiler and its runtime launcher) and the folder of notes for that hardware. Here the device
# is simacc, the simulated accelerator of the harness's tests (harness/tests/simacc: it builds C++ under another
# name and runs on the host); for your hardware, name your own commands here or in the host's "toolchain".
# Tune BLOCK_M / BLOCK_N / BLOCK_K in matmul.cpp.
import ctypes
import os

import numpy as np

BACKEND = "custom"
SOURCE = "matmul.cpp"
KERNEL = "matmul"
SHAPES = [{"m": 96, "n": 128, "k": 96}, {"m": 65, "n": 130, "k": 77}]
OUTPUTS = [2]
TOOLCHAIN = {
    "compile": ["../../../harness/tests/simacc/simacc-cc", "{source}", "-o", "{output}"],
    "run": ["../../../harness/tests/simacc/simacc-run", "--"],
    "knowledge": "../../../harness/tests/simacc/knowledge",
    "hardware": "simacc",
}

_F = ctypes.POINTER(ctypes.c_float)


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    m, n, k = shape["m"], shape["n"], shape["k"]
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.empty((m, n), dtype=np.float32)
    return a, b, c, m, n, k


def launch(lib, a, b, c, m, n, k):
    if not os.environ.get("SIMACC_DEVICE"):  # the device's runtime attaches it; without simacc-run there is none
        raise RuntimeError("no simacc device is attached; run under simacc-run, the toolchain's run command")
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
