# Liger-Kernel's LayerNorm forward: one program per row, `BLOCK_SIZE, num_warps = calculate_settings(n_cols)`.
# bf16 as in transformer blocks, one fp32 shape. The source lies outside the repository: run
# `bash scripts/external-kernels.sh` first.
import os
import sys

import torch

_EXTERNAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".external")
sys.path.insert(0, os.path.join(_EXTERNAL, "Liger-Kernel", "src"))
sys.path.append(os.path.join(_EXTERNAL, "fallback"))

BACKEND = "triton"
SOURCE = "../../../.external/Liger-Kernel/src/liger_kernel/ops/layer_norm.py"
KERNEL = "_layer_norm_forward_kernel"
SHAPES = [
    {"rows": 4096, "cols": 1024, "dtype": "bfloat16"},
    {"rows": 2048, "cols": 4096, "dtype": "bfloat16"},
    {"rows": 3001, "cols": 2560, "dtype": "bfloat16"},
    {"rows": 1024, "cols": 768, "dtype": "float32"},
]
EPS = 1e-5


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dtype = getattr(torch, shape["dtype"])
    x = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.float32, generator=g) * 2 + 0.5
    w = 1 + 0.1 * torch.randn(shape["cols"], device="cuda", dtype=torch.float32, generator=g)
    b = 0.1 * torch.randn(shape["cols"], device="cuda", dtype=torch.float32, generator=g)
    return x.to(dtype), w.to(dtype), b.to(dtype)


def launch(k, x, w, b):
    return k.layer_norm_forward(x, w, b, EPS)[0]


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x.float(), (x.shape[1],), w.float(), b.float(), EPS).to(x.dtype)


def BYTES(shape):
    size = 2 if shape["dtype"] == "bfloat16" else 4
    return 2.0 * size * shape["rows"] * shape["cols"]
