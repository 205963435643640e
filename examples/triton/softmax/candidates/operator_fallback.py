# CHEATS on purpose: exponentiates with torch operators in host code (math.e ** x runs aten.pow on the GPU) and
# leaves only the normalisation to the kernel. Static checks cannot see tensor operators; the worker's
# operator watch does.
import math

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    e = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * y_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    e = math.e ** x
    softmax_kernel[(rows,)](e, y, cols, e.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(cols), num_warps=8)
    return y
