"""`npm run bench:harness`: where the judge's own time goes, measured side by side in one run.

1. Warm against cold workers: the same evaluation (a baseline judged against itself) alternately with workers
   forked from the warm-worker server and with workers started as new Pythons; the median wall time of each.
2. The judge's comparison of one large output: the full comparison against a reference prepared once and
   checked many times (what the judge now does), on a softmax-sized float32 output.

usage: python3 scripts/bench-harness.py [--repeat 6] [SPEC.py ...]   (default: the C++ softmax example; on a
machine with a GPU, pass examples/triton/softmax/spec.py)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "harness")
sys.path.insert(0, HARNESS)


def source_of(spec: str) -> str:
    import re
    text = open(spec).read()
    return os.path.join(os.path.dirname(spec), re.search(r"^SOURCE\s*=\s*[\"'](.+?)[\"']", text, re.M).group(1))


def judge(spec: str, warm: bool) -> float:
    env = dict(os.environ, PYTHONPATH=HARNESS, KERNELEVOLVE_WARM_OWNER=str(os.getpid()))
    args = [sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", spec, "--candidate", source_of(spec),
            "--json"] + ([] if warm else ["--no-warm"])
    t = time.perf_counter()
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - t
    v = json.loads(r.stdout)
    want = "warm" if warm else "cold"
    if v["status"] != "ok" or v.get("workers", {}).get("candidate") != want:
        raise SystemExit(f"unexpected verdict: {v['status']} {v.get('workers')} {v['reason']}")
    return wall


def warm_vs_cold(spec: str, repeat: int) -> None:
    judge(spec, True)  # starts the server (its start-up is paid once per host process, not per evaluation)
    walls = {True: [], False: []}
    for _ in range(repeat):
        for warm in (False, True):
            walls[warm].append(judge(spec, warm))
    cold, warm = statistics.median(walls[False]), statistics.median(walls[True])
    name = os.path.relpath(spec, ROOT)
    print(f"| {name} | {repeat} + {repeat} | {cold:.2f} s | {warm:.2f} s | {cold / warm:.2f}x |")


def comparison(repeat: int) -> None:
    import numpy as np
    from kernelevolve_harness.compare import Expected, compare
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4096, 1024)).astype(np.float32)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    outs = [ref * (1 + 1e-6 * rng.standard_normal(ref.shape)).astype(np.float32) for _ in range(repeat)]
    full, prepared = [], []
    for c in outs:
        t = time.perf_counter()
        assert compare(0, c, "float32", ref, "float32", {}) is None
        full.append(time.perf_counter() - t)
    t = time.perf_counter()
    expected = Expected(ref, "float32", {})
    prepare = time.perf_counter() - t
    for c in outs:
        t = time.perf_counter()
        assert expected.check(0, c, "float32") is None
        prepared.append(time.perf_counter() - t)
    a, b = statistics.median(full), statistics.median(prepared)
    print(f"| 4096 x 1024 float32 | {repeat} | {1000 * a:.1f} ms | {1000 * b:.1f} ms (+ {1000 * prepare:.1f} ms once) "
          f"| {a / b:.1f}x |")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=6)
    p.add_argument("specs", nargs="*", default=[os.path.join(ROOT, "examples", "cpp", "softmax_rows", "spec.py")])
    a = p.parse_args()
    print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}\n")
    print("| evaluation (baseline vs itself) | cold + warm runs | cold median | warm median | cold / warm |")
    print("|---|---:|---:|---:|---:|")
    for spec in a.specs:
        warm_vs_cold(os.path.abspath(spec), a.repeat)
    print("\n| one output compared | runs | full comparison | prepared reference | full / prepared |")
    print("|---|---:|---:|---:|---:|")
    comparison(a.repeat)


if __name__ == "__main__":
    main()
