# Stanford CS336 (spring 2025) lecture 6's row softmax: one program per row, `BLOCK_SIZE =
# triton.next_power_of_2(N)` (the block is the row), Triton's default warps; fp32 rows, odd widths included.
# Held out: a public kernel no rule of the tuner was written after. The source lies outside the repository: run
# `bash scripts/external-kernels.sh` first.
import torch

BACKEND = "triton"
SOURCE = "../../../.external/cs336/cs336_kernels.py"
KERNEL = "triton_softmax_kernel"
SHAPES = [
    {"rows": 8192, "cols": 1024},
    {"rows": 4096, "cols": 3000},
    {"rows": 16384, "cols": 257},
    {"rows": 1024, "cols": 16384},
]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.float32, generator=g) * 3,)


def launch(k, x):
    return k.triton_softmax(x)


def reference(x):
    return torch.softmax(x.double(), dim=-1).float()


def BYTES(shape):
    return 8.0 * shape["rows"] * shape["cols"]
