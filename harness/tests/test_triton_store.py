"""The host's store of what candidates compiled (backends/triton.py: publish, prune; triton_store.py):
a candidate's worker takes from it what an earlier candidate compiled instead of compiling it again, and the
store holds only whole entries that a judge published. The last test compiles with the real Triton for an
NVIDIA target (no GPU needed: Triton compiles ahead of a launch), in child processes as workers do."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import HARNESS, REPO
from test_triton_cache_copy import _entry
from kernelevolve_harness.backends.triton import TritonBackend, prune, publish


def test_publish_adds_whole_kernels_binary_only_pointing_into_the_store(tmp_path):
    worker, store = tmp_path / "worker", tmp_path / "store"
    store.mkdir()
    _entry(worker, "KERNEL", "softmax_kernel")
    launcher = worker / "LAUNCHER"
    launcher.mkdir()
    (launcher / "__triton_launcher.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    half = worker / "HALF"  # a compile that died before its group file: never published
    half.mkdir()
    (half / "k.ttir").write_text("k ttir")
    assert publish(str(worker), str(store)) == 1  # nor a host library: only kernels, whole
    assert sorted(p.name for p in store.iterdir()) == ["KERNEL"]
    group = json.loads((store / "KERNEL" / "__grp__softmax_kernel.json").read_text())
    assert group["child_paths"] == {n: str(store / "KERNEL" / n) for n in ("softmax_kernel.json", "softmax_kernel.cubin")}
    assert sorted(p.name for p in (store / "KERNEL").iterdir()) == [
        "__grp__softmax_kernel.json", "softmax_kernel.cubin", "softmax_kernel.json"]
    assert publish(str(worker), str(store)) == 0  # what the store has stays as it is


def test_the_first_published_entry_of_a_key_stays(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    _entry(tmp_path / "a", "KEY", "k")
    _entry(tmp_path / "b", "KEY", "k", exts=("json", "cubin"))
    (tmp_path / "b" / "KEY" / "k.cubin").write_text("another compile")
    assert publish(str(tmp_path / "a"), str(store)) == 1
    assert publish(str(tmp_path / "b"), str(store)) == 0
    assert (store / "KEY" / "k.cubin").read_text() == "k cubin"
    assert not [p for p in store.iterdir() if p.name.startswith(".")]


def test_prune_keeps_the_newest_entries(tmp_path):
    store = tmp_path / "store"
    for i in range(10):
        folder = _entry(store, f"K{i}", "k")
        os.utime(folder, (1000 + i, 1000 + i))
    assert prune(str(store), 12) == 0
    assert prune(str(store), 8) == 4  # down to three quarters of the room
    assert sorted(p.name for p in store.iterdir()) == [f"K{i}" for i in range(4, 10)]


def test_only_the_candidates_worker_uses_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELEVOLVE_CACHE", str(tmp_path))
    b = TritonBackend()
    b.workdir = str(tmp_path / "eval")
    assert b.worker_settings("candidate")["triton_store"] == str(tmp_path / "triton-store")
    assert "triton_store" not in b.worker_settings("reference")
    from kernelevolve_harness.backends.model import ModelBackend
    cpu, cuda = ModelBackend("cpu"), ModelBackend("cuda")  # a CPU problem's candidate is native code
    assert "triton_store" not in cpu.worker_settings("candidate") and "triton_store" in cuda.worker_settings("candidate")
    monkeypatch.setenv("KERNELEVOLVE_KERNEL_STORE", "0")
    assert "triton_store" not in b.worker_settings("candidate")


def _triton_path():
    """Where Triton is importable from: this Python, or the folder .ci/run installs it into (KERNELEVOLVE_TEST_TRITON
    or .cache/triton-py) beside a Python without it."""
    try:
        import triton  # noqa: F401
        return ""
    except ImportError:
        pass
    folder = os.environ.get("KERNELEVOLVE_TEST_TRITON") or str(REPO / ".cache" / "triton-py")
    if not (Path(folder) / "triton" / "__init__.py").exists():
        pytest.skip(f"Triton is not installed here (no Debian package; where pip's index is reachable: pip install "
                    f"--target {folder} --no-deps triton); scripts/gpu/parts/smoke.sh runs this test on the GPU machine")
    return folder


WORKER = textwrap.dedent('''
    import json, os, sys
    import triton  # before the worker's settings, as the warm-worker server imports it for every worker it forks
    from kernelevolve_harness.backends.triton import TritonBackend
    TritonBackend().enter_worker(json.loads(sys.argv[1]))  # as the candidate's worker starts
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from kernelevolve_harness import triton_store

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

    out = {}
    for block, warps in json.loads(sys.argv[2]):
        src = ASTSource(scale_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                        constexprs={"BLOCK": block})
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
        out[f"{block}/{warps}"] = {"cubin": k.asm["cubin"].hex(), "hash": k.hash}
    print(json.dumps({"kernels": out, "taken": triton_store.TAKEN[0]}))
''')


def _compile(folder, store, settings):
    path = _triton_path()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (path, str(HARNESS)) if p)}
    config = {"triton_cache_dir": str(folder), "triton_store": str(store)}
    script = folder.parent / "worker.py"  # Triton reads a kernel's source from its file
    script.write_text(WORKER)
    r = subprocess.run([sys.executable, str(script), json.dumps(config), json.dumps(settings)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_later_worker_takes_what_an_earlier_one_compiled_instead_of_compiling_it(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    first = _compile(tmp_path / "first", store, [[1024, 4], [512, 2]])
    assert first["taken"] == 0  # an empty store: both compiled
    assert publish(str(tmp_path / "first"), str(store)) == 2  # by the first candidate's judge
    second = _compile(tmp_path / "second", store, [[1024, 4], [2048, 8]])
    assert second["taken"] == 1
    assert second["kernels"]["1024/4"] == first["kernels"]["1024/4"]  # the same binary, found under the same key
    entries = [p for p in (tmp_path / "second").iterdir() if list(p.glob("*.cubin"))]
    taken = [p for p in entries if not list(p.glob("*.ptx"))]  # published binary-only: taken, not compiled
    assert len(entries) == 2 and len(taken) == 1, [sorted(q.name for q in p.iterdir()) for p in entries]
    # the entry in the worker's folder serves lookups on its own: its group names files in that folder
    group = json.loads(next(taken[0].glob("__grp__*.json")).read_text())
    assert all(Path(p).parent == taken[0] and Path(p).exists() for p in group["child_paths"].values()), group
