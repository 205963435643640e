"""Wrong: an exclusive scan (each element the sum of those before it), off by one element per row."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_scan_kernel(x_ptr, out_ptr, n_cols, stride, EXCLUSIVE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = 0.0
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
        scan = tl.cumsum(x, axis=0) + carry
        if EXCLUSIVE:
            scan = scan - x
        tl.store(out_ptr + row * stride + offs, scan, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        row_scan_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), EXCLUSIVE=True, BLOCK=1024, num_warps=4)
        return out
