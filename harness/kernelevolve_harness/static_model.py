"""Static checks for ModelNew candidates of KernelBench-format problems, on the syntax tree.

Every check of static_py applies (no runtimes, streams, caches, files, string evaluation, library fallbacks),
but not differentially: the baseline is the problem's own PyTorch or numpy code, and what it calls is exactly
what the candidate must not. A module's plumbing is allowed: `import torch.nn as nn`, `class ModelNew(nn.Module)`,
`super().__init__()`, `nn.Parameter`, and layers made in `__init__` to hold weights (calling them is a
fallback: the op watch sees it on the GPU). numpy: allocation only (np.empty_like, np.zeros, ...).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from . import static_py

NN_MODULES = {"torch.nn", "torch.nn.functional"}
NN_ALLOWED = {"Module", "Parameter", "ParameterList", "ParameterDict", "ModuleList", "ModuleDict", "Identity"}
NUMPY_ALLOWED = {"empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
                 "ascontiguousarray", "dtype", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
                 "uint8", "bool_", "prod_shape", "ndarray", "intp", "copyto"}
NUMPY_CONSTANTS = {"newaxis", "pi", "e", "inf", "nan", "float32", "float64"}
CPP_SOURCE = "CPP_SOURCE"


class _ModelScan(static_py._Scan):
    def __init__(self) -> None:
        super().__init__()
        self.nn_names: Set[str] = set()  # local names of torch.nn
        self.functional_names: Set[str] = set()  # local names of torch.nn.functional
        self.numpy_names: Set[str] = set()
        self.in_init = 0

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            local = a.asname or a.name.split(".")[0]
            if a.name in NN_MODULES:
                (self.functional_names if a.name.endswith("functional") else self.nn_names).add(
                    a.asname or a.name)
                if a.asname is None:
                    self.modules.add("torch")
                continue
            if a.name == "numpy":
                self.numpy_names.add(local)
            self._check_module(a.name, node)
            self.modules.add(local)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == "torch" and all(a.name == "nn" for a in node.names):
            self.nn_names.update(a.asname or a.name for a in node.names)
            return
        if node.module == "torch.nn" and all(a.name == "functional" for a in node.names):
            self.functional_names.update(a.asname or a.name for a in node.names)
            return
        if node.module == "torch.nn":
            for a in node.names:
                if a.name not in NN_ALLOWED:
                    self.add(f"the library import torch.nn.{a.name}", node)
            return
        if (node.module or "").split(".")[0] == "numpy":
            for a in node.names:
                if a.name not in NUMPY_ALLOWED:
                    self.add(f"the numpy import {node.module}.{a.name} (numpy computes here; only allocation is "
                             f"allowed)", node)
        super().visit_ImportFrom(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        init = node.name == "__init__"
        self.in_init += init
        super().visit_FunctionDef(node)
        self.in_init -= init

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.chained.add(id(node.value))
        dotted = static_py._dotted(node)
        parts = dotted.split(".")
        # nn.Module / torch.nn.Parameter and friends, and super().__init__: a module's own plumbing
        if (parts[0] in self.nn_names and len(parts) == 2) or (dotted.startswith("torch.nn.") and len(parts) == 3):
            return
        if node.attr == "__init__" and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "super":
            self.generic_visit(node.value)
            return
        if (parts[0] in self.numpy_names and len(parts) == 2 and parts[1] not in NUMPY_ALLOWED | NUMPY_CONSTANTS
                and self.taken(node)):
            # f = np.maximum: numpy's computation reached later through another name
            self.add(f"{dotted} taken without a call (a numpy function bound to another name)", node)
            return
        super().visit_Attribute(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute):
            dotted = static_py._dotted(node.func)
            parts = dotted.split(".")
            root = parts[0]
            if root in self.functional_names or dotted.startswith("torch.nn.functional."):
                self.add(f"the library call {dotted} (the reference's own operators)", node)
            elif root in self.nn_names or dotted.startswith("torch.nn."):
                name = parts[-1]
                if name not in NN_ALLOWED and not (self.in_init and name[:1].isupper()):
                    self.add(f"the library call {dotted} (layers may hold weights, made in __init__; "
                             f"calling them is the reference's own operators)", node)
            elif root in self.numpy_names and len(parts) >= 2 and parts[1] not in NUMPY_ALLOWED:
                self.add(f"the numpy call {dotted} (numpy computes here; only allocation is allowed)", node)
        super().visit_Call(node)


def _scan(src: str) -> Tuple[List[Tuple[str, int]], ast.Module]:
    tree = ast.parse(src, filename="candidate")
    s = _ModelScan()
    s.scan(tree)
    return s.found, tree


def cpp_source(tree: ast.Module) -> Optional[str]:
    """The module-level CPP_SOURCE string literal, when the candidate has one."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == CPP_SOURCE for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
            return ""
    return None


def defines_model_new(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)


def check(candidate: str, baseline: str) -> Optional[str]:
    if candidate == baseline:
        return None  # the problem judged against itself: the reference, not a candidate
    try:
        found, tree = _scan(candidate)
    except SyntaxError as e:
        return f"The candidate is not valid Python: line {e.lineno}: {e.msg}."
    if not defines_model_new(tree):
        return None  # the build says so, as a compile error
    src = cpp_source(tree)
    if src == "":
        return f"{CPP_SOURCE} must be a plain string literal (r\"\"\"...\"\"\") holding the C++ source."
    lines = candidate.split("\n")
    for what, line in found:
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return f"The candidate uses {what} on line {line}: `{text[:160]}`; ModelNew's host code may not do that."
    return None
