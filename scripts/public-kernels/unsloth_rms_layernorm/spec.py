# Unsloth's fast RMS LayerNorm forward (bf16): `BLOCK_SIZE, num_warps = calculate_settings(n_cols)` inside an
# autograd Function, launched as `fx[(n_rows,)](..., BLOCK_SIZE = BLOCK_SIZE, num_warps = num_warps)`. The
# source lies outside the repository: run `bash scripts/external-kernels.sh` first (it also cuts the
# transformers patching off the module and gives it calculate_settings as published).
import os
import sys

import torch

_EXTERNAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".external")
sys.path.insert(0, os.path.join(_EXTERNAL, "unsloth", "unsloth", "kernels"))

BACKEND = "triton"
SOURCE = "../../../.external/unsloth/unsloth/kernels/rms_layernorm.py"
KERNEL = "_rms_layernorm_forward"
SHAPES = [
    {"rows": 4096, "cols": 4096},
    {"rows": 3341, "cols": 2048},
    {"rows": 2048, "cols": 3584},
    {"rows": 16384, "cols": 512},
]
EPS = 1e-5


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.bfloat16, generator=g)
    w = 1 + 0.1 * torch.randn(shape["cols"], device="cuda", dtype=torch.float32, generator=g)
    return x, w.to(torch.bfloat16)


def launch(k, x, w):
    with torch.no_grad():
        return k.Fast_RMS_Layernorm.apply(x, w, EPS, False)


def reference(x, w):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + EPS)
    return y.to(w.dtype) * w


def BYTES(shape):
    return 2.0 * 2 * shape["rows"] * shape["cols"]
