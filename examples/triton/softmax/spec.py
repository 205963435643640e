# Row softmax on an NVIDIA GPU with Triton; tune num_warps in softmax.py.
import torch

BACKEND = "triton"
SOURCE = "softmax.py"
KERNEL = "softmax_kernel"
SHAPES = [
    {"rows": 4096, "cols": 1024},
    {"rows": 2048, "cols": 4097},
    {"rows": 8192, "cols": 511},
]
OUTPUTS = [1]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.float32, generator=g) * 4
    y = torch.empty_like(x)
    return x, y


def launch(k, x, y):
    return k.softmax(x, y)


def reference(x, y):
    return torch.softmax(x.double(), dim=1).float()


def FLOPS(shape):
    return 5.0 * shape["rows"] * shape["cols"]


def BYTES(shape):
    return 8.0 * shape["rows"] * shape["cols"]
