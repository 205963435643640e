# A float16 matmul launched with 16x16x16 tiles, 1 warp, 1 stage (scripts/gpu/tuner-kernels/matmul_small/matmul.py).
import torch

BACKEND = "triton"
SOURCE = "matmul.py"
KERNEL = "matmul_kernel"
SHAPES = [
    {"m": 2048, "n": 2048, "k": 2048},
    {"m": 1000, "n": 1537, "k": 513},
]
OUTPUTS = [2]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(shape["m"], shape["k"], device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(shape["k"], shape["n"], device="cuda", dtype=torch.float16, generator=g)
    c = torch.empty(shape["m"], shape["n"], device="cuda", dtype=torch.float16)
    return a, b, c


def launch(k, a, b, c):
    return k.matmul(a, b, c)


def reference(a, b, c):
    return torch.matmul(a.float(), b.float()).half()


def FLOPS(shape):
    return 2.0 * shape["m"] * shape["n"] * shape["k"]
