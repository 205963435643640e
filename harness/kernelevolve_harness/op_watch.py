"""Which torch operators a Triton candidate's host code runs on the GPU (a library fallback written with
operators, `a * x + b * y`, hides from the syntax-tree checks). Runs in the worker, around one call per shape,
under a TorchDispatchMode; anything unexpected in that machinery turns the watch off rather than the verdict."""
from __future__ import annotations

import os
from typing import Any, Callable, Optional, Set, Tuple

# aten operators that compute (arithmetic, reductions, linear algebra, activations); allocation, copies, views,
# fills and conversions are host plumbing and stay allowed.
COMPUTE_OPS = {
    "add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder", "pow", "exp", "exp2", "expm1",
    "log", "log2", "log1p", "sqrt", "rsqrt", "reciprocal", "neg", "abs", "sin", "cos", "tanh", "sigmoid", "erf",
    "relu", "gelu", "silu", "softplus", "clamp", "clamp_min", "clamp_max", "maximum", "minimum", "where",
    "sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp", "var", "std", "norm",
    "linalg_vector_norm", "cumsum", "cumprod", "sort", "topk", "_softmax", "softmax", "_log_softmax", "log_softmax",
    "mm", "bmm", "addmm", "baddbmm", "matmul", "mv", "dot", "addmv", "einsum", "linear", "convolution",
    "_scaled_mm", "native_layer_norm", "native_batch_norm", "layer_norm", "group_norm", "embedding", "index_select",
    "gather", "scatter", "scatter_add", "index_add", "lerp", "addcmul", "addcdiv", "fma", "square", "sign",
}


def watch(call: Callable[[], Any]) -> Tuple[Any, Optional[Set[str]]]:
    """(call's result, names of compute ops it ran on CUDA tensors), or (result, None) when not watchable."""
    if os.environ.get("KERNELEVOLVE_NO_OP_WATCH"):
        return call(), None
    try:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
    except Exception:
        return call(), None
    seen: Set[str] = set()

    def on_cuda(x: Any) -> bool:
        return isinstance(x, torch.Tensor) and x.is_cuda

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}
            name = getattr(getattr(func, "overloadpacket", None), "__name__", str(func)).rstrip("_")
            if name in COMPUTE_OPS and any(on_cuda(a) for a in list(args) + list(kwargs.values())):
                seen.add(name)
            return func(*args, **kwargs)

    try:
        with Watch():
            result = call()
    except Exception:
        # The watch itself may be what failed; run the call plainly and leave the verdict to the other guards.
        return call(), None
    return result, seen
