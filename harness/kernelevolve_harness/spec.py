"""Loading and validating a kernel spec (the contract in docs/harness.md).

The judge only reads the spec's header (BACKEND, SOURCE, KERNEL) from its syntax tree, so it never runs the
spec's imports (torch costs seconds); the whole module is imported and validated in the reference process,
which reports problems back as a SpecError message.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import sys
import uuid
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Dict, List, Optional, Tuple

from .backends import BackendError, get_backend
from .backends import names as backend_names


class SpecError(Exception):
    """The spec is wrong: the user's error, reported on stderr with exit code 2."""


@dataclass
class SpecHeader:
    path: str
    backend: str
    source: str  # absolute path
    kernel: str


def read_header(spec_path: str) -> SpecHeader:
    """BACKEND, SOURCE and KERNEL as plain strings, without importing the spec."""
    name = os.path.basename(spec_path)
    try:
        with open(spec_path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SpecError(f"Cannot read the spec {spec_path} ({e.strerror}); check the path given to --spec.")
    try:
        tree = ast.parse(text, filename=spec_path)
    except SyntaxError as e:
        raise SpecError(f"{name} line {e.lineno}: {e.msg}; the spec must be valid Python.")
    values: Dict[str, Any] = {}
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for t in targets:
            if isinstance(t, ast.Name) and t.id in ("BACKEND", "SOURCE", "KERNEL"):
                try:
                    values[t.id] = ast.literal_eval(value)
                except ValueError:
                    values[t.id] = None
    missing = [n for n in ("BACKEND", "SOURCE", "KERNEL") if not isinstance(values.get(n), str)]
    if missing:
        raise SpecError(
            f"{name} does not define {', '.join(missing)} as a plain string at module level; write e.g. "
            f'BACKEND = "cpp", SOURCE = "kernel.cpp", KERNEL = "my_kernel".'
        )
    backend = values["BACKEND"]
    if backend not in backend_names():
        raise SpecError(f'{name}: BACKEND is "{backend}"; this harness supports {", ".join(backend_names())}.')
    source = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(spec_path)), values["SOURCE"]))
    if not os.path.isfile(source):
        raise SpecError(f'{name}: SOURCE = "{values["SOURCE"]}" does not exist next to the spec ({source}).')
    for fn in ("inputs", "launch"):
        if not any(isinstance(n, ast.FunctionDef) and n.name == fn for n in tree.body):
            raise SpecError(
                f"{name} does not define {fn}(...) at module level; a spec needs inputs(shape, seed) "
                f"returning the arguments of one call, and launch(k, *args) running the kernel."
            )
    return SpecHeader(path=os.path.abspath(spec_path), backend=backend, source=source, kernel=values["KERNEL"])


def import_spec(spec_path: str) -> ModuleType:
    """Imports the spec under a unique module name (two specs named spec.py never collide)."""
    name = f"kernelevolve_spec_{uuid.uuid4().hex}"
    spec_dir = os.path.dirname(os.path.abspath(spec_path))
    if spec_dir not in sys.path:
        sys.path.insert(0, spec_dir)  # lets a spec import helpers that sit next to it
    loader_spec = importlib.util.spec_from_file_location(name, spec_path)
    if loader_spec is None or loader_spec.loader is None:
        raise SpecError(f"Cannot import the spec {spec_path}.")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except SpecError:
        raise
    except Exception as e:  # the spec's own code failed
        raise SpecError(f"Importing {os.path.basename(spec_path)} failed: {type(e).__name__}: {e}")
    return module


@dataclass
class SpecInfo:
    """The validated, JSON-friendly facts of a spec (the callables stay in the module)."""
    backend: str
    source: str
    kernel: str
    shapes: List[Dict[str, Any]]
    outputs: Optional[List[int]]
    inplace: List[int]
    tolerance: Dict[str, Any]
    has_reference: bool
    flops: List[Optional[float]] = field(default_factory=list)
    bytes: List[Optional[float]] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return dict(self.__dict__)


def _index_list(module: ModuleType, name: str, where: str) -> Optional[List[int]]:
    value = getattr(module, name, None)
    if value is None:
        return None
    if isinstance(value, int):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise SpecError(f"{where}: {name} must be a list of argument indices (ints), e.g. {name} = [2]; got {value!r}.")
    return list(value)


def validate(module: ModuleType, spec_path: str) -> SpecInfo:
    where = os.path.basename(spec_path)
    header = read_header(spec_path)
    if getattr(module, "KERNEL", None) != header.kernel:
        raise SpecError(f"{where}: KERNEL must be a plain string constant.")
    shapes = _shapes(getattr(module, "SHAPES", None), where)
    for fn in ("inputs", "launch"):
        if not callable(getattr(module, fn, None)):
            raise SpecError(f"{where}: {fn} must be a function.")
    ref = getattr(module, "reference", None)
    if ref is not None and not callable(ref):
        raise SpecError(f"{where}: reference must be a function reference(*args) returning the expected output(s).")
    tol = _tolerance(getattr(module, "TOLERANCE", None), where)
    outputs = _index_list(module, "OUTPUTS", where)
    inplace = _index_list(module, "INPLACE", where) or []
    flops, nbytes = [], []
    for name, acc in (("FLOPS", flops), ("BYTES", nbytes)):
        fn = getattr(module, name, None)
        for s in shapes:
            if fn is None:
                acc.append(None)
                continue
            try:
                acc.append(float(fn(s)))
            except Exception as e:
                raise SpecError(f"{where}: {name}({s}) failed: {type(e).__name__}: {e}.")
    return SpecInfo(
        backend=header.backend, source=header.source, kernel=header.kernel, shapes=shapes,
        outputs=outputs, inplace=inplace, tolerance=tol,
        has_reference=ref is not None, flops=flops, bytes=nbytes,
    )


class _Computed:
    """A header name whose value is computed when the spec is imported (not a literal in its text)."""


_COMPUTED = _Computed()


def _literal_names(tree: ast.Module, names: Tuple[str, ...]) -> Dict[str, Any]:
    values: Dict[str, Any] = {}
    for node in tree.body:
        targets: List[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for t in targets:
            if isinstance(t, ast.Name) and t.id in names:
                try:
                    values[t.id] = ast.literal_eval(value)
                except ValueError:
                    values[t.id] = _COMPUTED
    return values


def describe(spec_path: str) -> Dict[str, Any]:
    """What `describe-spec` answers: the spec's header as the harness reads it, without importing the spec (a
    Triton spec imports torch, which the machine starting a run may not have). Names whose values are computed
    at import are null here and checked when the spec is imported on the host. `error` says what is wrong."""
    facts: Dict[str, Any] = {"ok": False, "spec": os.path.abspath(spec_path), "backends": backend_names(),
                             "backend": None, "source": None, "kernel": None, "shapes": None, "outputs": None,
                             "inplace": None, "tolerance": None, "has_reference": None, "computed": []}
    try:
        header = read_header(spec_path)
        facts.update(backend=header.backend, source=header.source, kernel=header.kernel)
        try:
            facts.update(get_backend(header.backend).describe(spec_path))
        except BackendError as e:
            raise SpecError(str(e))
        with open(spec_path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=spec_path)
        facts["has_reference"] = any(isinstance(n, ast.FunctionDef) and n.name == "reference" for n in tree.body)
        values = _literal_names(tree, ("SHAPES", "OUTPUTS", "INPLACE", "TOLERANCE"))
        where = os.path.basename(spec_path)
        if "SHAPES" not in values:
            raise SpecError(f"{where} does not define SHAPES, the list of problem sizes (one dict per size), "
                            f'e.g. SHAPES = [{{"n": 1024}}].')
        facts["computed"] = sorted(k for k, v in values.items() if v is _COMPUTED)
        literal = _Namespace({k: v for k, v in values.items() if v is not _COMPUTED})
        if "SHAPES" in literal.__dict__:
            facts["shapes"] = _shapes(literal.SHAPES, where)
        facts["outputs"] = _index_list(literal, "OUTPUTS", where)  # type: ignore[arg-type]
        if "INPLACE" not in facts["computed"]:
            facts["inplace"] = _index_list(literal, "INPLACE", where) or []  # type: ignore[arg-type]
        if "TOLERANCE" not in facts["computed"]:
            facts["tolerance"] = _tolerance(getattr(literal, "TOLERANCE", None), where)
            from .tolerances import judged_tolerance
            facts["judged_tolerance"] = judged_tolerance(facts["tolerance"])
    except SpecError as e:
        facts["error"] = str(e)
        return facts
    facts["ok"] = True
    return facts


class _Namespace:
    def __init__(self, values: Dict[str, Any]) -> None:
        self.__dict__.update(values)


def _shapes(shapes: Any, where: str) -> List[Dict[str, Any]]:
    if not isinstance(shapes, (list, tuple)) or not shapes:
        raise SpecError(f"{where}: SHAPES must be a non-empty list of dicts, one per problem size, e.g. "
                        f'SHAPES = [{{"n": 1024}}].')
    for i, s in enumerate(shapes):
        if not isinstance(s, dict):
            raise SpecError(f"{where}: SHAPES[{i}] is {type(s).__name__}; each shape must be a dict such as "
                            f'{{"n": 1024}}.')
    return [dict(s) for s in shapes]


def _tolerance(tol: Any, where: str) -> Dict[str, Any]:
    """{"rtol": .., "atol": ..}, with entries per dtype where outputs of several dtypes need their own
    ({"float16": {"rtol": .., "atol": ..}}, over the plain pair for that dtype)."""
    tol = tol or {}
    example = '{"rtol": 1e-3, "atol": 1e-5} (or per dtype: {"float16": {"rtol": 1e-2, "atol": 1e-3}})'

    def pair(d: Any) -> bool:
        return isinstance(d, dict) and all(k in ("rtol", "atol") and isinstance(v, (int, float))
                                           and not isinstance(v, bool) and v >= 0 for k, v in d.items())

    if not isinstance(tol, dict) or not pair({k: v for k, v in tol.items() if k in ("rtol", "atol")}) or any(
            k not in ("rtol", "atol") and not (isinstance(k, str) and pair(v)) for k, v in tol.items()):
        raise SpecError(f"{where}: TOLERANCE must be a dict like {example}; got {tol!r}.")
    return {k: ({kk: float(vv) for kk, vv in v.items()} if isinstance(v, dict) else float(v)) for k, v in tol.items()}
