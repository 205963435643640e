# The Triton softmax example on shapes small enough (a few microseconds) to be timed as CUDA graphs.
import torch

BACKEND = "triton"
SOURCE = "../../../../examples/triton/softmax/softmax.py"
KERNEL = "softmax_kernel"
SHAPES = [{"rows": 64, "cols": 128}, {"rows": 33, "cols": 257}]
OUTPUTS = [1]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.float32, generator=g)
    return x, torch.empty_like(x)


def launch(k, x, y):
    return k.softmax(x, y)


def reference(x, y):
    return torch.softmax(x.double(), dim=1).float()
