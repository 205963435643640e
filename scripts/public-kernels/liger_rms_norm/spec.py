# Liger-Kernel's RMSNorm forward (Llama casting), bf16 as in Llama-family models. The launcher computes its
# launch parameters (`BLOCK_SIZE, num_warps = calculate_settings(n_cols)`) and picks a one-row or a 16-row
# kernel by shape. The source lies outside the repository: run `bash scripts/external-kernels.sh` first.
import os
import sys

import torch

_EXTERNAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".external")
sys.path.insert(0, os.path.join(_EXTERNAL, "Liger-Kernel", "src"))
sys.path.append(os.path.join(_EXTERNAL, "fallback"))

BACKEND = "triton"
SOURCE = "../../../.external/Liger-Kernel/src/liger_kernel/ops/rms_norm.py"
KERNEL = "_rms_norm_forward_kernel"
# hidden sizes of Llama 3 8B / 70B and Qwen, a ragged token count, and a narrow row that takes the 16-row kernel
SHAPES = [
    {"rows": 4096, "cols": 4096},
    {"rows": 2048, "cols": 8192},
    {"rows": 1000, "cols": 5120},
    {"rows": 65536, "cols": 128},
]
EPS = 1e-6


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.bfloat16, generator=g)
    w = 1 + 0.1 * torch.randn(shape["cols"], device="cuda", dtype=torch.float32, generator=g)
    return x, w.to(torch.bfloat16)


def launch(k, x, w):
    y, _x, rstd, _block, _warps, _mode = k.rms_norm_forward(x, w, EPS, 0.0, "llama", None)
    return y, rstd


def reference(x, w):
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(dim=1) + EPS)
    y = (xf * rstd[:, None]).to(x.dtype) * w
    return y, rstd


def BYTES(shape):
    return 2.0 * 2 * shape["rows"] * shape["cols"] + 4.0 * shape["rows"]
