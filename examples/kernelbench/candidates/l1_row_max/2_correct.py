"""One program per row, a masked loop over 1024-wide blocks keeping a running maximum per lane."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.full([BLOCK], -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf"))
        acc = tl.maximum(acc, x)
    tl.store(out_ptr + row, tl.max(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty((x.shape[0],), device=x.device, dtype=x.dtype)
        row_max_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=1024, num_warps=4)
        return out
