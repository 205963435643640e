# A cheat: calls torch.softmax instead of a kernel (static checks reject it).
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    pass


def softmax(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    y.copy_(torch.softmax(x, dim=1))
    return y
