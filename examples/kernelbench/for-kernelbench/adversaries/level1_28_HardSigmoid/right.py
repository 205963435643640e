"""Right: (x + 3) / 6 clamped to [0, 1], one pass."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardsigmoid_kernel(x_ptr, out_ptr, n, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = (x + 3.0) / 6.0
    if CLAMP:
        y = tl.minimum(tl.maximum(y, 0.0), 1.0)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        hardsigmoid_kernel[(triton.cdiv(n, 4096),)](x, out, n, CLAMP=True, BLOCK=4096, num_warps=8)
        return out
