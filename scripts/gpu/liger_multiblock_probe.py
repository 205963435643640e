"""Why the held-out softmax on vocabulary-wide rows was withdrawn: what Liger's two-pass softmax path does on this
machine's Triton. Its launcher refuses rows over 65536 columns before the launch (calculate_settings), so the path
is never taken; launched directly, the kernel is compiled here and the outcome printed.

Usage, on the GPU machine from the repository root, after bash scripts/external-kernels.sh:
  python3 scripts/gpu/liger_multiblock_probe.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(".external", "Liger-Kernel", "src"))
sys.path.append(os.path.join(".external", "fallback"))
from liger_kernel.ops import softmax as liger  # noqa: E402

x = torch.randn(4, 128256, device="cuda")
try:
    liger._softmax_forward(x)
    print("launcher, 128256 columns: ran")
except Exception as e:  # the launcher's own refusal is the finding
    print(f"launcher, 128256 columns: {type(e).__name__}: {str(e).splitlines()[0]}")

y = torch.empty_like(x)
try:
    liger._softmax_multi_block_forward_kernel[(x.shape[0],)](y, y.stride(0), x, x.stride(0), x.shape[1], BLOCK_SIZE=4096, num_warps=8)
    torch.cuda.synchronize()
    err = (y - torch.softmax(x.double(), -1).float()).abs().max().item()
    print(f"two-pass kernel launched directly (4096, 8 warps): compiled and ran, max error {err:.3g}")
except Exception as e:
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    print(f"two-pass kernel launched directly (4096, 8 warps): {type(e).__name__}: {lines[-1] if lines else ''}")
