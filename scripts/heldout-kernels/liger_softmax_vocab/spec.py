# Liger-Kernel's softmax forward on rows longer than its one-block limit (65536 columns): the two-pass kernel
# (`_softmax_multi_block_forward_kernel`, a running max and sum over the row in BLOCK_SIZE steps, then the
# output), launched with `BLOCK_SIZE, num_warps = calculate_settings(n_cols)`: 65536 and 32 warps here. fp32 rows
# of vocabulary width (Llama 3, Qwen 2, Gemma, and an odd one), as a language model's sampling softmax sees them.
# Held out: the two-pass path no rule of the tuner was written after, and a softmax whose block, warps and stages
# are all searched (the one-block kernels have only their warps). The source lies outside the repository: run
# `bash scripts/external-kernels.sh` first.
import os
import sys

import torch

_EXTERNAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".external")
sys.path.insert(0, os.path.join(_EXTERNAL, "Liger-Kernel", "src"))
sys.path.append(os.path.join(_EXTERNAL, "fallback"))

BACKEND = "triton"
SOURCE = "../../../.external/Liger-Kernel/src/liger_kernel/ops/softmax.py"
KERNEL = "_softmax_multi_block_forward_kernel"
SHAPES = [
    {"rows": 512, "cols": 128256},
    {"rows": 256, "cols": 151936},
    {"rows": 128, "cols": 256000},
    {"rows": 1000, "cols": 100277},
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
