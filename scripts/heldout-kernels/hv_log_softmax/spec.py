# A log-softmax from a small public collection of Triton kernels (harsh-vsingh/triton-kernels, kernels/softmax.py):
# its block, warps and stages are module constants (BLOCK_SIZE = 1024, NUM_WARPS = 4, NUM_STAGES = 2) passed by
# name to every launch. Rows that are many (at least the GPU's SMs) or short go to one program a row, reading the
# row in BLOCK_SIZE steps twice (a running maximum and sum, then the output: `_logsoftmax_kernel_medium`); fewer,
# longer rows are split over several programs a row (partial sums, a merge, the output) with the same constants.
# fp32 rows of vocabulary width (Llama 3, Qwen 2, Gemma, Llama 2); on an H200 (132 SMs) 128 x 256000 takes the split
# path and the others the one-program path. Held out: a public softmax whose block, warps and stages are all
# searched, and no rule of the tuner was written after a grid of it. The source lies outside the repository: run
# `bash scripts/external-kernels.sh` first.
import os
import sys

import torch

# the module imports its repository's `utils` package
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".external", "hv-triton-kernels"))

BACKEND = "triton"
SOURCE = "../../../.external/hv-triton-kernels/kernels/softmax.py"
KERNEL = "_logsoftmax_kernel_medium"
SHAPES = [
    {"rows": 512, "cols": 128256},
    {"rows": 256, "cols": 151936},
    {"rows": 128, "cols": 256000},
    {"rows": 2048, "cols": 32000},
]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.float32, generator=g) * 3,)


def launch(k, x):
    return k.log_softmax(x)


def reference(x):
    return torch.log_softmax(x.double(), dim=-1).float()


def BYTES(shape):
    # the least a log-softmax moves: the row read once and written once (this kernel reads it twice)
    return 8.0 * shape["rows"] * shape["cols"]
