# Quick GELU on bf16 vectors (scripts/gpu/tuner-kernels/quick_gelu/gelu.py), launched with BLOCK = 128, 1 warp.
import torch

BACKEND = "triton"
SOURCE = "gelu.py"
KERNEL = "quick_gelu_kernel"
SHAPES = [
    {"n": 16777216},
    {"n": 3000017},
]
OUTPUTS = [1]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = (torch.randn(shape["n"], device="cuda", dtype=torch.float32, generator=g) * 3).to(torch.bfloat16)
    return x, torch.empty_like(x)


def launch(k, x, y):
    return k.quick_gelu(x, y)


def reference(x, y):
    xf = x.float()
    return (xf * torch.sigmoid(1.702 * xf)).to(torch.bfloat16)


def BYTES(shape):
    return 4.0 * shape["n"]
