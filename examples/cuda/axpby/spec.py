# out = a*x + b*y on an NVIDIA GPU in CUDA C++; tune BLOCK and ITEMS in axpby.cu.
import ctypes

import torch

BACKEND = "cuda"
SOURCE = "axpby.cu"
KERNEL = "axpby_kernel"
SHAPES = [{"n": 1 << 24}, {"n": (1 << 22) + 3}, {"n": 1000003}]
OUTPUTS = [2]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(shape["n"], device="cuda", generator=g)
    y = torch.randn(shape["n"], device="cuda", generator=g)
    out = torch.empty_like(x)
    return x, y, out, 1.5, -0.25, shape["n"]


def launch(lib, x, y, out, a, b, n):
    fn = lib.axpby
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_float, ctypes.c_int]
    fn.restype = None
    fn(x.data_ptr(), y.data_ptr(), out.data_ptr(), a, b, n)
    return out


def reference(x, y, out, a, b, n):
    return a * x + b * y


def FLOPS(shape):
    return 3.0 * shape["n"]


def BYTES(shape):
    return 12.0 * shape["n"]
