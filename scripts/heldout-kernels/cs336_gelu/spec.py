# Stanford CS336 (spring 2025) lecture 6's tanh-approximate GELU, launched with `block_size = 1024` and Triton's
# default warps, on fp32 activations (the lecture's own dtype). Held out: a public kernel no rule of the tuner
# was written after. The source lies outside the repository: run `bash scripts/external-kernels.sh` first.
import torch

BACKEND = "triton"
SOURCE = "../../../.external/cs336/cs336_kernels.py"
KERNEL = "triton_gelu_kernel"
SHAPES = [
    {"n": 16777216},
    {"n": 45088768},  # 4096 x 11008
    {"n": 3000017},
]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    # activations within about +-4.5: the kernel's tanh through exp(2a) overflows to nan beyond |x| ~ 10.6, and
    # the judge's timed calls scale inputs by up to 2
    return (torch.randn(shape["n"], device="cuda", dtype=torch.float32, generator=g) * 0.75,)


def launch(k, x):
    return k.triton_gelu(x)


def reference(x):
    xd = x.double()
    return (0.5 * xd * (1.0 + torch.tanh(0.7978845608028654 * (xd + 0.044715 * xd ** 3)))).float()


def BYTES(shape):
    return 8.0 * shape["n"]
