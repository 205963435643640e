"""`npm run bench:harness`: where the judge's own time goes, measured side by side in one run.

1. Warm against cold workers: the same evaluation (a baseline judged against itself) alternately with workers
   forked from the warm-worker server and with workers started as new Pythons; the median wall time of each.
2. The judge's comparison of one large output: the full comparison against a reference prepared once and
   checked many times (what the judge now does), on a softmax-sized float32 output.
3. One 32 MiB output from a worker to the judge over a pipe: the channel as it is (the array's header and data
   written as they are into a 1 MiB pipe, read into one buffer, viewed without a copy) against the same transfer
   written plainly (one bytes object per array, a 64 KiB pipe, 1 MiB reads joined, np.load).

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
    from kernelevolve_harness.compare import Expected
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4096, 1024)).astype(np.float32)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    outs = [ref * (1 + 1e-6 * rng.standard_normal(ref.shape)).astype(np.float32) for _ in range(repeat)]
    full, prepared = [], []
    for c in outs:
        t = time.perf_counter()
        assert Expected(ref, "float32", {}).check(0, c, "float32") is None  # prepared for each call
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


def _transfer(array, plain: bool) -> float:
    """Seconds to move one array through a fresh pipe pair, from serialization to an array in the reader."""
    import threading
    import numpy as np
    from kernelevolve_harness.arrays import from_npy, npy_parts
    from kernelevolve_harness.protocol import Channel
    r, w = os.pipe()
    if plain:
        import io

        def to_npy(a) -> bytes:
            f = io.BytesIO()
            np.save(f, a, allow_pickle=False)
            return f.getvalue()

        def send() -> None:
            blob = to_npy(np.array(array, copy=True))
            view = memoryview(blob)
            while view:
                view = view[os.write(w, view):]

        def receive() -> "np.ndarray":
            chunks, n = [], len(to_npy(array[:0])) + array.nbytes  # the header's size does not depend on the data
            while n > 0:
                chunk = os.read(r, min(n, 1 << 20))
                chunks.append(chunk)
                n -= len(chunk)
            return np.load(io.BytesIO(b"".join(chunks)), allow_pickle=False)
    else:
        out, inp = Channel(r, w), Channel(r, w)

        def send() -> None:
            out.send({"type": "call"}, [npy_parts(array)])

        def receive() -> "np.ndarray":
            return from_npy(inp.recv(60)[1][0])
    t = time.perf_counter()
    sender = threading.Thread(target=send)
    sender.start()
    got = receive()
    sender.join()
    elapsed = time.perf_counter() - t
    os.close(r)
    os.close(w)
    assert got.shape == array.shape and np.array_equal(got[-1], array[-1])
    return elapsed


def transfer(repeat: int) -> None:
    import numpy as np
    array = np.random.default_rng(0).standard_normal((2048, 4097)).astype(np.float32)  # 32 MiB
    times = {True: [], False: []}
    for _ in range(repeat):
        for plain in (True, False):
            times[plain].append(_transfer(array, plain))
    a, b = statistics.median(times[True]), statistics.median(times[False])
    print(f"| 2048 x 4097 float32 (32 MiB) | {repeat} + {repeat} | {1000 * a:.1f} ms | {1000 * b:.1f} ms | {a / b:.1f}x |")


def second_run(repeat: int) -> None:
    """A correct candidate's second run on the same inputs is compared bitwise with its first (the determinism
    check): as two bytes objects (what the judge did) against the arrays' own memory."""
    import numpy as np
    from kernelevolve_harness.compare import same_bytes
    first = np.random.default_rng(1).standard_normal((2048, 4097)).astype(np.float32)
    second = first.copy()
    copies, views = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        assert first.tobytes() == second.tobytes()
        copies.append(time.perf_counter() - t)
        t = time.perf_counter()
        assert same_bytes(first, second)
        views.append(time.perf_counter() - t)
    a, b = statistics.median(copies), statistics.median(views)
    print(f"| 2048 x 4097 float32 (32 MiB) | {repeat} + {repeat} | {1000 * a:.1f} ms | {1000 * b:.1f} ms | {a / b:.1f}x |")


def _norm(x) -> float:
    """A real array's 2-norm in one pass with no temporaries (einsum), in float64: how Expected sums a reference's
    squares."""
    import numpy as np
    flat = x.reshape(-1)
    return float(np.sqrt(np.einsum("i,i->", flat, flat, dtype=np.float64)))


def norm(repeat: int) -> None:
    """The 2-norm every prepared reference needs: squares of an absolute copy, summed (what the judge did),
    against one pass with no temporaries."""
    import numpy as np
    x = np.random.default_rng(2).standard_normal(2048 * 4097).astype(np.float32)
    plain, one_pass = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        a = float(np.sqrt(np.sum(np.square(np.abs(x)), dtype=np.float64)))
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = _norm(x)
        one_pass.append(time.perf_counter() - t)
        assert abs(a - b) <= 1e-6 * a  # the copy squares in float32, the one pass in float64
    p, o = statistics.median(plain), statistics.median(one_pass)
    print(f"| 2048 x 4097 float32 (32 MiB) | {repeat} + {repeat} | {1000 * p:.1f} ms | {1000 * o:.1f} ms | {p / o:.1f}x |")


def chunks(repeat: int) -> None:
    """One reference prepared and checked once (each timed call has its own seed and scale): whole-array passes
    with the allowed errors kept per reference (what the judge did) against Expected's passes a chunk at a time."""
    import numpy as np
    from kernelevolve_harness.compare import Expected
    rng = np.random.default_rng(3)
    ref = rng.standard_normal(2048 * 4097).astype(np.float32)
    cand = ref * np.float32(1 + 1e-6)

    def whole_arrays() -> bool:
        rtol = 1e-4
        norm_r = _norm(ref)
        atol = rtol * max(norm_r / float(np.sqrt(ref.size)), 1e-30)
        allowed = np.abs(ref)
        allowed *= rtol
        allowed += atol
        diff = np.subtract(cand, ref)
        np.abs(diff, out=diff)
        return bool(np.less_equal(diff, allowed).all()) and _norm(diff) / norm_r <= rtol

    whole, chunked = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        assert whole_arrays()
        whole.append(time.perf_counter() - t)
        t = time.perf_counter()
        assert Expected(ref, "float32", {}).check(0, cand, "float32") is None
        chunked.append(time.perf_counter() - t)
    a, b = statistics.median(whole), statistics.median(chunked)
    print(f"| 2048 x 4097 float32 (32 MiB) | {repeat} + {repeat} | {1000 * a:.1f} ms | {1000 * b:.1f} ms | {a / b:.1f}x |")


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
    print("\n| one output, worker to judge | plain + channel runs | plain | channel | plain / channel |")
    print("|---|---:|---:|---:|---:|")
    transfer(a.repeat)
    print("\n| second run compared bitwise | runs | as bytes objects | in place (same_bytes) | bytes / in place |")
    print("|---|---:|---:|---:|---:|")
    second_run(a.repeat)
    print("\n| a reference's norm | runs | squares of a copy | one pass (einsum) | copy / one pass |")
    print("|---|---:|---:|---:|---:|")
    norm(a.repeat)
    print("\n| a reference prepared and checked once | runs | whole-array passes | in chunks (Expected) | whole / chunks |")
    print("|---|---:|---:|---:|---:|")
    chunks(a.repeat)


if __name__ == "__main__":
    main()
