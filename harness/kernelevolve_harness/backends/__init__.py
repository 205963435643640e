"""Backends: how a kernel source is checked, built, loaded, timed and profiled, behind one interface (base.py).

Each backend is one module here defining NAMES (the BACKEND values of a spec it judges) and make(name); the
registry finds them by listing this folder, so a new kind of kernel is one file (plus its tests)."""
from __future__ import annotations

import importlib
import os
from typing import Dict, List

from .base import Backend, BackendError, Build

_HERE = os.path.dirname(os.path.abspath(__file__))
# the order describe-spec lists them in (first the kinds a newcomer meets); others follow by name
_FIRST = ("cpp", "triton", "cuda", "model")
_modules: Dict[str, str] = {}


def _registry() -> Dict[str, str]:
    """BACKEND value -> module name, read once from the modules' NAMES."""
    if not _modules:
        found = sorted(f[:-3] for f in os.listdir(_HERE) if f.endswith(".py") and f not in ("__init__.py", "base.py"))
        for mod in [m for m in _FIRST if m in found] + [m for m in found if m not in _FIRST]:
            for name in getattr(importlib.import_module(f"{__name__}.{mod}"), "NAMES", ()):
                _modules.setdefault(name, mod)
    return _modules


def names() -> List[str]:
    return list(_registry())


def get_backend(name: str) -> Backend:
    mod = _registry().get(name)
    if mod is None:
        raise ValueError(f"unknown backend {name!r}")
    return importlib.import_module(f"{__name__}.{mod}").make(name)  # type: ignore[no-any-return]


__all__ = ["Backend", "BackendError", "Build", "get_backend", "names"]
