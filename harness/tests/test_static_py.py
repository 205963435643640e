"""Static checks on Python (Triton) candidates; they run before anything needs a GPU."""
import pytest

from conftest import EXAMPLES, Harness
from kernelevolve_harness import static_py

BASE = (EXAMPLES / "triton" / "softmax" / "softmax.py").read_text()
HOST = "\n\ndef softmax(x, y):\n{body}\n    return y\n"

CASES = [
    ("import os", "import os\n", "    pass"),
    ("import sys", "import sys\n", "    pass"),
    ("subprocess", "import subprocess\n", "    pass"),
    ("threading", "import threading\n", "    pass"),
    ("time", "import time\n", "    pass"),
    ("ctypes", "import ctypes\n", "    pass"),
    ("importlib", "import importlib\n", "    pass"),
    ("from-import os", "from os import system\n", "    pass"),
    ("triton.testing", "import triton.testing\n", "    pass"),
    ("exec", "", "    exec('y.zero_()')"),
    ("eval", "", "    eval('1')"),
    ("open", "", "    open('/tmp/x', 'w')"),
    ("__import__", "", "    __import__('os')"),
    ("getattr", "", "    getattr(torch, 'softmax')(x, 1)"),
    ("globals", "", "    globals()['x'] = 1"),
    ("dunder", "", "    x.__class__"),
    ("monkeypatch numpy", "import numpy\n", "    numpy.allclose = lambda *a, **k: True"),
    ("monkeypatch torch", "", "    torch.allclose = lambda *a, **k: True"),
    ("monkeypatch timer", "", "    triton.testing = None"),
    ("torch.matmul", "", "    y.copy_(torch.matmul(x, x))"),
    ("torch.softmax", "", "    torch.softmax(x, dim=1)"),
    ("F.softmax", "import torch.nn.functional as F\n", "    F.softmax(x, 1)"),
    ("matmul operator", "", "    z = x @ x"),
    ("tensor method", "", "    y[:] = x.softmax(1)"),
    ("from torch import", "from torch import softmax\n", "    softmax(x, 1)"),
    ("streams", "", "    s = torch.cuda.Stream()"),
    ("synchronize", "", "    torch.cuda.synchronize()"),
    ("lru_cache", "import functools\n", "    f = functools.lru_cache(None)"),
    ("global", "", "    global CACHE"),
    ("torch.compile", "", "    torch.compile(softmax)"),
    ("triton runtime chain", "", "    s = triton.runtime.driver.active.get_current_stream()"),
    ("benchmark helper", "", "    triton.testing.do_bench(lambda: None)"),
    ("numpy ctypes", "import numpy as np\n", "    lib = np.ctypeslib.ctypes.CDLL(None)"),
    ("pickle load", "", "    w = torch.load('weights.pt')"),
    ("string evaluation", "import typing\n", "    typing.get_type_hints(softmax)"),
    ("singledispatch", "from functools import singledispatch\n", "    pass"),
    ("operator.attrgetter", "import operator\n", "    operator.attrgetter('x')(x)"),
    ("torch.jit", "", "    torch.jit.script(softmax)"),
    # a library function reached through another name
    ("library function bound to a name", "", "    f = torch.softmax\n    y[:] = f(x, 1)"),
    ("tensor method bound to a name", "", "    f = x.softmax\n    y[:] = f(1)"),
    ("library function passed along", "", "    y[:] = apply(torch.exp, x)"),
    ("module passed as an argument", "", "    y[:] = apply(torch, x)"),
    ("module bound to another name", "", "    m = torch\n    y[:] = m.zeros_like(x)"),
    ("numpy function imported under another name", "from numpy import exp as e\n", "    pass"),
]


def test_device_queries_and_libdevice_are_allowed() -> None:
    src = ("import triton.language.extra.cuda.libdevice as libdevice\n" + BASE
           + "\nSMS = torch.cuda.get_device_properties(0).multi_processor_count\n")
    assert static_py.check(src, BASE) is None


@pytest.mark.parametrize("name,imports,body", CASES, ids=[c[0] for c in CASES])
def test_forbidden_python_is_rejected(name: str, imports: str, body: str) -> None:
    reason = static_py.check(imports + BASE + HOST.format(body=body), BASE)
    assert reason is not None, name
    assert "line" in reason


def test_the_example_kernels_pass() -> None:
    for name in ("softmax", "matmul"):
        src = (EXAMPLES / "triton" / name / f"{name}.py").read_text()
        assert static_py.check(src, src) is None


def test_a_call_the_baseline_makes_is_allowed() -> None:
    base = BASE + "\n\ndef ref(x):\n    return torch.softmax(x, 1)\n"
    cand = BASE + "\n\ndef ref(x):\n    return torch.softmax(x, 1)\n"
    assert static_py.check(cand, base) is None
    assert static_py.check(cand, BASE) is not None


def test_triton_fallback_candidate_is_rejected_by_the_cli_without_a_gpu(harness: Harness) -> None:
    spec = EXAMPLES / "triton" / "softmax" / "spec.py"
    v, _ = harness.evaluate(spec, EXAMPLES / "triton" / "softmax" / "candidates" / "torch_fallback.py")
    assert v["status"] == "static_rejected", v
    assert "fallback" in v["reason"]


def test_monkeypatching_numpy_is_rejected_by_the_cli(harness: Harness) -> None:
    spec = EXAMPLES / "triton" / "softmax" / "spec.py"
    src = "import numpy as np\n" + BASE + "\nnp.testing.assert_allclose = print\n"
    v, _ = harness.evaluate(spec, src, suffix=".py")
    assert v["status"] == "static_rejected", v
    assert "monkeypatches" in v["reason"]
