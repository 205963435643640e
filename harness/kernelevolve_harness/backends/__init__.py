"""Backends: how a kernel source is checked, built, loaded and synchronised. One small interface, three kinds."""
from __future__ import annotations

from .base import Backend, Build


def get_backend(name: str) -> Backend:
    if name == "cpp":
        from .cpp import CppBackend
        return CppBackend()
    if name == "triton":
        from .triton import TritonBackend
        return TritonBackend()
    if name == "cuda":
        from .cuda import CudaBackend
        return CudaBackend()
    if name in ("model-cpu", "model-cuda"):  # ModelNew candidates of KernelBench-format problems
        from .model import ModelBackend
        return ModelBackend(name.split("-", 1)[1])
    raise ValueError(f"unknown backend {name!r}")


__all__ = ["Backend", "Build", "get_backend"]
