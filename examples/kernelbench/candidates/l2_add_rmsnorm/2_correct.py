"""Residual add and RMSNorm fused: each row is read once from each input, the sum kept in registers."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    h = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0) + \
        tl.load(r_ptr + row * stride + offs, mask=mask, other=0.0)
    r = tl.rsqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + offs, h * r * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x, residual):
        x = x.contiguous()
        residual = residual.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        add_rmsnorm_kernel[(rows,)](x, residual, self.weight, out, cols, x.stride(0), self.eps,
                                    BLOCK=triton.next_power_of_2(cols), num_warps=8)
        return out
