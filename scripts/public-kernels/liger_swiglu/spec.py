# Liger-Kernel's SwiGLU forward (silu(a) * b, one program per row): `BLOCK_SIZE, num_warps =
# calculate_settings(n_cols)`. bf16 MLP intermediate sizes (Llama 3 8B, Qwen2 7B, a ragged one). The source
# lies outside the repository: run `bash scripts/external-kernels.sh` first.
import os
import sys

import torch

_EXTERNAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".external")
sys.path.insert(0, os.path.join(_EXTERNAL, "Liger-Kernel", "src"))
sys.path.append(os.path.join(_EXTERNAL, "fallback"))

BACKEND = "triton"
SOURCE = "../../../.external/Liger-Kernel/src/liger_kernel/ops/swiglu.py"
KERNEL = "_swiglu_forward_kernel"
SHAPES = [
    {"rows": 2048, "cols": 14336},
    {"rows": 4096, "cols": 18944},
    {"rows": 777, "cols": 11008},
    {"rows": 8192, "cols": 2816},
]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.bfloat16, generator=g)
    return a, b


def launch(k, a, b):
    return k.swiglu_forward(a, b)[2]


def reference(a, b):
    af = a.float()
    return (af * torch.sigmoid(af)).to(b.dtype) * b


def BYTES(shape):
    return 3 * 2.0 * shape["rows"] * shape["cols"]
