# Liger-Kernel's softmax forward: `BLOCK_SIZE, num_warps = calculate_settings(n_cols)`, a one-block kernel when
# the row fits and a two-pass kernel otherwise. fp32 attention-score-like rows, odd widths included. The
# source lies outside the repository: run `bash scripts/external-kernels.sh` first.
import os
import sys

import torch

_EXTERNAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".external")
sys.path.insert(0, os.path.join(_EXTERNAL, "Liger-Kernel", "src"))
sys.path.append(os.path.join(_EXTERNAL, "fallback"))

BACKEND = "triton"
SOURCE = "../../../.external/Liger-Kernel/src/liger_kernel/ops/softmax.py"
KERNEL = "_softmax_single_block_forward_kernel"
SHAPES = [
    {"rows": 8192, "cols": 1024},
    {"rows": 4096, "cols": 4097},
    {"rows": 16384, "cols": 333},
    {"rows": 512, "cols": 32000},
]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.float32, generator=g) * 3,)


def launch(k, x):
    return k._softmax_forward(x)[0]


def reference(x):
    return torch.softmax(x.double(), dim=-1).float()


def BYTES(shape):
    return 8.0 * shape["rows"] * shape["cols"]
