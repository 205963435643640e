"""Static checks for Python (Triton) candidates, on the syntax tree.

Differential like the C checks: a construct the baseline itself uses (the same import, the same torch call)
is allowed in the candidate.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

ALLOWED_IMPORTS = {"triton", "triton.language", "torch", "math", "functools", "typing", "numpy", "__future__",
                   "itertools"}
FORBIDDEN_IMPORT_PARTS = {"testing", "runtime", "compiler", "backends", "_C", "utils", "cuda", "library", "ops",
                          "_dynamo", "_inductor", "compile", "jit", "hub", "distributed", "multiprocessing", "nn", "fft",
                          "linalg", "sparse", "special", "func", "autograd", "fx", "export", "profiler"}
TORCH_IMPORTABLE = {"Tensor", "float16", "float32", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8",
                    "bool", "float8_e4m3fn", "float8_e5m2"}
FORBIDDEN_NAMES = {"exec", "eval", "compile", "open", "__import__", "getattr", "setattr", "delattr", "globals",
                   "vars", "locals", "input", "breakpoint", "memoryview", "id", "exit", "quit", "help", "print_function"}
# torch.X calls a kernel may make outside @triton.jit code: allocation and device plumbing only.
TORCH_ALLOWED = {"empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "empty_strided",
                 "device", "Size", "finfo", "iinfo", "is_tensor", "dtype", "get_default_dtype"}
# Tensor methods that do the op's work in a library (a fallback), checked outside @triton.jit code.
FALLBACK_METHODS = {"matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "softmax", "log_softmax", "sum", "mean",
                    "exp", "max", "min", "amax", "amin", "cumsum", "sort", "topk", "norm", "layer_norm", "relu",
                    "gelu", "sigmoid", "tanh", "conv1d", "conv2d", "linear", "var", "std", "logsumexp", "prod",
                    "argmax", "argmin", "div", "mul", "add", "sub", "pow", "sqrt", "rsqrt", "dot", "outer", "copy_",
                    "record_stream", "synchronize", "wait_stream", "numpy", "tolist", "item"}
FORBIDDEN_ATTRS = {"Stream", "stream", "current_stream", "set_stream", "synchronize", "Event", "graph", "CUDAGraph",
                   "lru_cache", "cache", "cached_property", "do_bench", "do_bench_cudagraph", "data_ptr_cache"}
JIT_DECORATORS = {"jit", "autotune", "heuristics"}
# Attribute chains into these parts of torch/triton reach runtimes, benchmarks, streams or library ops.
FORBIDDEN_CHAIN_PARTS = {"testing", "runtime", "compiler", "backends", "utils", "cuda", "library", "ops", "nn",
                         "distributed", "multiprocessing", "fft", "linalg", "autograd", "profiler", "hub", "fx",
                         "export", "sparse", "special", "func", "jit_utils", "driver"}
TORCH_ONLY_PARTS = {"jit", "classes", "package", "serialization", "storage", "onnx", "overrides"}
# Attribute names that reach files, pickles, raw pointers' modules or evaluators of strings, anywhere outside
# Triton's kernel language (where `tl.load` is the kernel's own load).
DANGEROUS_ATTRS = {"ctypes", "ctypeslib", "tofile", "fromfile", "from_file", "memmap", "load", "save", "savez",
                   "loadtxt", "savetxt", "genfromtxt", "DataSource", "f2py", "distutils", "system", "popen", "lib",
                   "load_library", "get_type_hints", "singledispatch", "singledispatchmethod", "ForwardRef",
                   "attrgetter", "methodcaller", "reload", "modules"}
DEVICE_QUERIES = {"torch.cuda.get_device_properties", "torch.cuda.current_device", "torch.cuda.get_device_capability",
                  "torch.cuda.device_count", "torch.cuda.is_available"}


def _root(node: ast.AST) -> Optional[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _is_jit(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in JIT_DECORATORS:
            return True
    return False


# Roots whose methods are the candidate's own code whatever they are called (a ModelNew's C++ library: cpp.relu(...)
# is the user's function named relu)
OWN_ROOTS = {"cpp"}


class _Scan(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: List[Tuple[str, int]] = []
        self.modules: Set[str] = set()  # local names bound to imported modules
        self.tl_names: Set[str] = {"tl"}  # local names bound to triton.language
        self.in_jit = 0
        self.own: Set[str] = set()  # functions and methods the candidate defines (a name alone never rejects)
        self.called: Set[int] = set()  # ids of the Attribute nodes that are a call's function
        self.chained: Set[int] = set()  # ids of the nodes an attribute is read from (self.linear in self.linear.weight)

    def scan(self, tree: ast.AST) -> None:
        self.own = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.visit(tree)

    def own_method(self, root: Optional[str], attr: str) -> bool:
        """cpp.relu(...), self.relu(...) where the candidate defines relu: its own code, not a library's."""
        return root in OWN_ROOTS or (root == "self" and attr in self.own)

    def add(self, what: str, node: ast.AST) -> None:
        self.found.append((what, getattr(node, "lineno", 0)))

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._check_module(a.name, node)
            self.modules.add((a.asname or a.name).split(".")[0])
            if a.name == "triton.language" and a.asname:
                self.tl_names.add(a.asname)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level:
            self.add("a relative import", node)
            return
        self._check_module(mod, node)
        for a in node.names:
            if a.name == "*":
                self.add(f"a star import (from {mod} import *)", node)
            elif mod.split(".")[0] == "torch" and a.name not in TORCH_ALLOWED | TORCH_IMPORTABLE:
                self.add(f"the library function {mod}.{a.name} (a fallback)", node)
            elif mod.split(".")[0] == "numpy" and a.name in FALLBACK_METHODS:
                self.add(f"the library function {mod}.{a.name} (a fallback bound to a name)", node)
            else:
                self._check_module(f"{mod}.{a.name}", node, leaf=True)
                self.modules.add(a.asname or a.name)
                if mod == "triton" and a.name == "language":
                    self.tl_names.add(a.asname or a.name)
                if a.name in DANGEROUS_ATTRS:
                    self.add(f"the import of {mod}.{a.name} (files, pickles, ctypes or string evaluation)", node)

    def _check_module(self, name: str, node: ast.AST, leaf: bool = False) -> None:
        parts = name.split(".")
        ok = parts[0] in {m.split(".")[0] for m in ALLOWED_IMPORTS}
        if name.startswith("triton.language"):
            return  # the kernel language itself, including tl.extra libdevice
        bad = [p for p in parts[1:] if p in FORBIDDEN_IMPORT_PARTS or p.startswith("_")]
        if leaf and parts[-1] in TORCH_ALLOWED | {"language", "jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "constexpr"}:  # noqa: E501
            bad = [p for p in bad if p != parts[-1]]
        if not ok or bad:
            self.add(f"an import outside the allowed modules ({name})", node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        jit = _is_jit(node)
        self.in_jit += jit
        self.generic_visit(node)
        self.in_jit -= jit

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES or (node.id.startswith("__") and node.id.endswith("__")):
            self.add(f"the builtin {node.id}", node)
        elif node.id in DANGEROUS_ATTRS and not self.in_jit:
            self.add(f"{node.id} (files, pickles, ctypes or string evaluation)", node)

    def taken(self, node: ast.Attribute) -> bool:
        """node names a function that is neither called nor read further: bound or passed (f = torch.softmax)."""
        return isinstance(node.ctx, ast.Load) and id(node) not in self.called and id(node) not in self.chained

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.chained.add(id(node.value))
        if node.attr.startswith("_"):
            self.add(f"a private or dunder attribute ({node.attr})", node)
        elif node.attr in FORBIDDEN_ATTRS:
            self.add(f"{_dotted(node) or node.attr} (streams, synchronisation, caches or benchmark helpers)", node)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and _root(node) in self.modules:
            self.add(f"an assignment to {_dotted(node)}, which monkeypatches an imported module", node)
        dotted = _dotted(node)
        parts = dotted.split(".")
        kernel_language = self.in_jit or parts[0] in self.tl_names or dotted.startswith("triton.language")
        if (self.taken(node) and node.attr in FALLBACK_METHODS and not kernel_language
                and not self.own_method(_root(node), node.attr)):
            # f = torch.softmax, f = x.sum, fn(torch.exp): a library function reached later through another name
            self.add(f"{dotted or node.attr} taken without a call (a library function bound to another name)", node)
            return
        if node.attr in DANGEROUS_ATTRS and not kernel_language:
            self.add(f"{dotted or node.attr} (files, pickles, ctypes or string evaluation)", node)
            return
        if parts[0] == "torch" and any(p in TORCH_ONLY_PARTS for p in parts[1:]):
            self.add(f"{dotted} (a runtime, benchmark, stream or library module)", node)
            return
        if (len(parts) > 1 and parts[0] in ("torch", "triton") and not dotted.startswith("triton.language")
                and not any(dotted == q or q.startswith(dotted + ".") for q in DEVICE_QUERIES)
                and any(p in FORBIDDEN_CHAIN_PARTS for p in parts[1:])):
            self.add(f"{dotted} (a runtime, benchmark, stream or library module)", node)
            return
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.modules:
            self.add(f"the module {node.value.id} bound to another name (its functions reached through it)", node)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.add("a global statement (state kept across calls)", node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self.in_jit:
            self.add("the @ operator (a library matmul)", node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute):
            self.called.add(id(node.func))
        if not self.in_jit:
            for a in list(node.args) + [k.value for k in node.keywords]:
                if isinstance(a, ast.Name) and a.id in self.modules and a.id not in self.tl_names:
                    self.add(f"the module {a.id} passed as an argument (its functions reached through another name)",
                             node)
        if not self.in_jit and isinstance(node.func, ast.Attribute):
            dotted = _dotted(node.func)
            root = _root(node.func)
            if dotted in DEVICE_QUERIES:
                pass
            elif dotted.startswith("torch.") and node.func.attr not in TORCH_ALLOWED:
                self.add(f"the library call {dotted} (a fallback)", node)
            elif root not in self.modules and node.func.attr in FALLBACK_METHODS and not self.own_method(
                    root, node.func.attr):
                self.add(f"the tensor method .{node.func.attr}() (a library fallback)", node)
            elif root in self.modules and root not in ("triton", "tl", "math", "functools", "typing", "torch"):
                if node.func.attr in FALLBACK_METHODS:
                    self.add(f"the library call {dotted} (a fallback)", node)
        self.generic_visit(node)


def _scan(src: str, where: str) -> List[Tuple[str, int]]:
    tree = ast.parse(src, filename=where)
    s = _Scan()
    s.scan(tree)
    return s.found


def check(candidate: str, baseline: str) -> Optional[str]:
    try:
        found = _scan(candidate, "candidate")
    except SyntaxError as e:
        return f"The candidate is not valid Python: line {e.lineno}: {e.msg}."
    try:
        base = {w for w, _ in _scan(baseline, "baseline")}
    except SyntaxError:
        base = set()
    lines = candidate.split("\n")
    for what, line in found:
        if what in base:
            continue
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return f"The candidate uses {what} on line {line}: `{text[:160]}`; kernels may not do that."
    return None
