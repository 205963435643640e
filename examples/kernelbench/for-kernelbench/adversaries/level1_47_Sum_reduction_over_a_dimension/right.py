"""Right: sum over dim 1 of (B, D1, D2): a program per (batch, 128 columns) walking D1 in 32-row tiles."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim1_kernel(x_ptr, out_ptr, d1, d2, stride_b, stride_r, ROWS_SKIPPED: tl.constexpr,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for r0 in range(0, d1 - ROWS_SKIPPED, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        ptrs = x_ptr + b * stride_b + rows[:, None] * stride_r + cols[None, :]
        tile = tl.load(ptrs, mask=(rows[:, None] < d1) & (cols[None, :] < d2), other=0.0)
        acc += tl.sum(tile, axis=0)
    tl.store(out_ptr + b * d2 + cols, acc, mask=cols < d2)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        b, d1, d2 = x.shape
        out = torch.empty((b, 1, d2), device=x.device, dtype=x.dtype)
        grid = (b, triton.cdiv(d2, 128))
        sum_dim1_kernel[grid](x, out, d1, d2, x.stride(0), x.stride(1), ROWS_SKIPPED=0, BLOCK_R=32, BLOCK_C=128,
                              num_warps=4)
        return out
