# A float16 matmul on an NVIDIA GPU with Triton; tune BLOCK_M/N/K, num_warps and num_stages in matmul.py.
import torch

BACKEND = "triton"
SOURCE = "matmul.py"
KERNEL = "matmul_kernel"
SHAPES = [
    {"m": 1024, "n": 1024, "k": 1024},
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


def BYTES(shape):
    return 2.0 * (shape["m"] * shape["k"] + shape["k"] * shape["n"] + shape["m"] * shape["n"])
