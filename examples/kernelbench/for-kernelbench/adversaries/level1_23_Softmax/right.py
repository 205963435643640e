"""Right: softmax over each row (dim 1) in two passes: an online max and sum in per-lane registers, then the write."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, length, stride_line, stride_elem, BLOCK: tl.constexpr):
    # one program per line of `length` elements: a row when (stride_line, stride_elem) = (n_cols, 1), a column
    # when (1, n_cols)
    line = tl.program_id(0).to(tl.int64)
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, length, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + line * stride_line + offs * stride_elem, mask=offs < length, other=-float("inf"))
        m_new = tl.maximum(m, x)
        # lanes still at -inf (masked) keep s = 0 rather than exp(-inf - -inf) = NaN
        alpha = tl.where(m == m_new, 1.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    for start in range(0, length, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < length
        x = tl.load(x_ptr + line * stride_line + offs * stride_elem, mask=mask, other=0.0)
        tl.store(out_ptr + line * stride_line + offs * stride_elem, tl.exp(x - row_max) / total, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        softmax_kernel[(rows,)](x, out, cols, cols, 1, BLOCK=4096, num_warps=8)
        return out
