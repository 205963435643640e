"""Wrong: normalises in a kernel but applies the weight and bias with torch arithmetic in forward (host code
that computes: a library fallback, seen by the op watch)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def normalize_kernel(x_ptr, out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    tl.store(out_ptr + row * stride + offs, d * tl.rsqrt(var + eps), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        normalize_kernel[(rows,)](x, out, cols, x.stride(0), self.ln.eps, BLOCK=triton.next_power_of_2(cols), num_warps=8)
        return out * self.ln.weight + self.ln.bias
