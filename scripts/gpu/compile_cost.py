"""What compiling one Triton softmax candidate costs on this machine: for a few settings of the example's knobs,
the wall time, this process's CPU and its children's (ptxas) CPU to compile and run each of the spec's three
shapes, one after the other (each settings a new kernel, compiled for each shape).

    python3 scripts/gpu/compile_cost.py
"""
from __future__ import annotations

import importlib.util
import os
import resource
import sys
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="compile-cost-"))
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = open(os.path.join(ROOT, "examples/triton/softmax/softmax.py")).read()
SHAPES = [(4096, 1024), (2048, 4097), (8192, 511)]


def variant(tag, warps, stages, rows):
    text = (SRC.replace("row_block = 1", f"row_block = {rows}").replace("num_warps=1", f"num_warps={warps}")
            .replace("num_stages=1", f"num_stages={stages}"))
    d = tempfile.mkdtemp()
    path = os.path.join(d, f"cc_{tag}.py")
    open(path, "w").write(text)
    spec = importlib.util.spec_from_file_location(f"cc_{tag}", path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[f"cc_{tag}"] = m
    spec.loader.exec_module(m)
    return m


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(m, shape):
    x = torch.randn(*shape, device="cuda")
    y = torch.empty_like(x)
    m.softmax(x, y)
    torch.cuda.synchronize()


torch.zeros(1, device="cuda")
run(variant("warm", 4, 2, 1), SHAPES[0])  # first-use costs (imports of the compiler) out of the way
print("| warps | stages | rows | shape | wall s | own CPU s | ptxas CPU s |")
print("|---:|---:|---:|---|---:|---:|---:|")
for n, (w, s, r) in enumerate([(1, 1, 1), (4, 3, 1), (8, 2, 4), (16, 4, 8), (2, 1, 2)]):
    m = variant(f"s{n}", w, s, r)
    for shape in SHAPES:
        t, c, k = time.perf_counter(), time.process_time(), children_cpu()
        run(m, shape)
        print(f"| {w} | {s} | {r} | {shape[0]}x{shape[1]} | {time.perf_counter() - t:.3f} | "
              f"{time.process_time() - c:.3f} | {children_cpu() - k:.3f} |")
