# Liger-Kernel's GEGLU forward (tanh-approximated gelu(a) * b, one program per row): `BLOCK_SIZE, num_warps =
# calculate_settings(n_cols)`. bf16 MLP intermediate sizes (Gemma 2B / 7B, a ragged one). The source lies
# outside the repository: run `bash scripts/external-kernels.sh` first.
import os
import sys

import torch

_EXTERNAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".external")
sys.path.insert(0, os.path.join(_EXTERNAL, "Liger-Kernel", "src"))
sys.path.append(os.path.join(_EXTERNAL, "fallback"))

BACKEND = "triton"
SOURCE = "../../../.external/Liger-Kernel/src/liger_kernel/ops/geglu.py"
KERNEL = "_geglu_tanh_forward_kernel"
SHAPES = [
    {"rows": 2048, "cols": 16384},
    {"rows": 4096, "cols": 24576},
    {"rows": 1531, "cols": 9216},
    {"rows": 8192, "cols": 3072},
]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.bfloat16, generator=g)
    return a, b


def launch(k, a, b):
    return k.geglu_forward(a, b)[2]


def reference(a, b):
    gelu = torch.nn.functional.gelu(a.float(), approximate="tanh")
    return gelu.to(b.dtype) * b


def BYTES(shape):
    return 3 * 2.0 * shape["rows"] * shape["cols"]
