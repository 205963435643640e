"""Wrong: normalises but forgets the learned scale (right only where the weight is all ones)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
    r = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(out_ptr + row * stride + offs, x * r, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        rmsnorm_kernel[(rows,)](x, out, cols, x.stride(0), self.eps, BLOCK=triton.next_power_of_2(cols), num_warps=8)
        return out
