"""The Triton and CUDA examples on an NVIDIA GPU (skipped where torch with CUDA, or nvcc, is absent)."""
import shutil
import subprocess

import pytest

from conftest import EXAMPLES, Harness
from kernelevolve_harness.code_flush import CODE_FLUSH_BYTES, INSTRUCTION_BYTES, code_flush, ptx

torch = pytest.importorskip("torch", reason="torch is not installed (the GPU backends need it)")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device here", allow_module_level=True)


SOFTMAX = EXAMPLES / "triton" / "softmax"
MATMUL = EXAMPLES / "triton" / "matmul"
AXPBY = EXAMPLES / "cuda" / "axpby"


def test_triton_softmax_baseline_is_ok_with_compile_stats(harness: Harness) -> None:
    pytest.importorskip("triton")
    v, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "softmax.py", timeout=600)
    assert v["status"] == "ok", v
    assert v["compile"]["n_regs"] > 0 and "n_spills" in v["compile"]
    assert v["workers"]["candidate"] == "warm", v["workers"]
    assert v["workers"]["reference"] in ("shared (started)", "shared (reused)"), v["workers"]


def test_one_shared_reference_serves_right_and_wrong_candidates(harness: Harness) -> None:
    # The second and third evaluations use the reference process the first one started (its CUDA context and
    # compiled baseline included), and a wrong candidate is still caught against it.
    pytest.importorskip("triton")
    first, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "more_warps.py", timeout=600)
    wrong, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "wrong_fixed_block.py", timeout=600)
    again, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "softmax.py", timeout=600)
    assert first["status"] == again["status"] == "ok", (first, again)
    assert wrong["status"] == "incorrect" and "cols=4097" in wrong["reason"], wrong
    assert first["workers"]["reference"] in ("shared (started)", "shared (reused)"), first["workers"]
    assert wrong["workers"]["reference"] == again["workers"]["reference"] == "shared (reused)", (wrong, again)


def test_triton_softmax_with_cold_workers_is_ok(harness: Harness) -> None:
    pytest.importorskip("triton")
    v, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "softmax.py", "--no-warm", timeout=600)
    assert v["status"] == "ok", v
    assert v["workers"] == {"reference": "cold", "candidate": "cold"}, v["workers"]


def test_a_warm_worker_compiles_into_its_own_triton_cache(tmp_path) -> None:
    # A warm worker imported triton before its judge chose TRITON_CACHE_DIR; Triton must still honour it, or
    # candidates would share compiled kernels through ~/.triton/cache.
    pytest.importorskip("triton")
    import subprocess
    import sys
    script = f"""
import os, torch, triton, triton.language as tl
os.environ["TRITON_CACHE_DIR"] = {str(tmp_path / "cache")!r}

@triton.jit
def k(x_ptr):
    tl.store(x_ptr + tl.arange(0, 16), tl.arange(0, 16).to(tl.float32))

x = torch.empty(16, device="cuda")
k[(1,)](x)
torch.cuda.synchronize()
print(float(x[5]))
"""
    path = tmp_path / "kernel.py"  # @triton.jit wants its function in a file
    path.write_text(script)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "5.0", r.stderr
    assert any((tmp_path / "cache").rglob("*")), "Triton did not compile into the TRITON_CACHE_DIR set after import"


def test_triton_softmax_with_more_warps_is_ok(harness: Harness) -> None:
    pytest.importorskip("triton")
    v, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "more_warps.py", timeout=600)
    assert v["status"] == "ok", v
    assert v["speedup"] > 0


def test_wrong_triton_softmax_is_incorrect(harness: Harness) -> None:
    pytest.importorskip("triton")
    v, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "wrong_fixed_block.py", timeout=600)
    assert v["status"] == "incorrect", v
    assert "cols=4097" in v["reason"]


def test_triton_matmul_big_tiles_is_ok_and_faster(harness: Harness) -> None:
    pytest.importorskip("triton")
    v, _ = harness.evaluate(MATMUL / "spec.py", MATMUL / "candidates" / "big_tiles.py", timeout=600)
    assert v["status"] == "ok", v
    assert v["speedup"] > 1.0, v
    # matmul's shapes take tens of microseconds: event-timed, each sample after the instruction caches' flush
    assert v["timing"]["code_flush_bytes"] == CODE_FLUSH_BYTES, v["timing"]


def test_the_code_flush_is_as_long_as_its_size_and_runs_on_the_device(tmp_path) -> None:
    """ptxas keeps every multiply-add of the flush (no folding: the code is as large as asked), and the loaded
    kernel runs on the device in microseconds."""
    if shutil.which("ptxas"):
        (tmp_path / "flush.ptx").write_text(ptx(CODE_FLUSH_BYTES // INSTRUCTION_BYTES))
        subprocess.run(["ptxas", "-arch=sm_90", str(tmp_path / "flush.ptx"), "-o", str(tmp_path / "flush.cubin")],
                       check=True)
        assert (tmp_path / "flush.cubin").stat().st_size >= CODE_FLUSH_BYTES
    f = code_flush(torch)
    assert f is not None and f.nbytes == CODE_FLUSH_BYTES
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    f()  # once, so its own code is not cold in what is timed: what is left is the work of every SM
    e0.record()
    f()
    e1.record()
    torch.cuda.synchronize()
    assert 0.0 < e0.elapsed_time(e1) < 5.0
    assert f.sink.item() == 0.0  # the store under the flag never ran


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_axpby_tuned_is_ok_with_ptxas_stats(harness: Harness) -> None:
    v, _ = harness.evaluate(AXPBY / "spec.py", AXPBY / "candidates" / "block256_items4.cu", timeout=600)
    assert v["status"] == "ok", v
    assert v["compile"]["n_regs"] > 0


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_axpby_skipping_the_tail_is_incorrect(harness: Harness) -> None:
    v, _ = harness.evaluate(AXPBY / "spec.py", AXPBY / "candidates" / "skips_tail.cu", timeout=600)
    assert v["status"] == "incorrect", v




def test_triton_candidate_that_skips_work_once_timed_is_incorrect(harness: Harness) -> None:
    pytest.importorskip("triton")
    v, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "skips_after_warmup.py", timeout=600)
    # caught at a timed call, the fresh call, or a robustness probe drawn after its 30th call (narrow_inputs)
    assert v["status"] in ("incorrect", "narrow_inputs"), v
    assert "Wrong result" in v["reason"], v


def test_microsecond_kernels_are_timed_as_cuda_graphs_and_still_checked(harness: Harness) -> None:
    pytest.importorskip("triton")
    from conftest import SPECS
    spec = SPECS / "tiny_softmax" / "spec.py"
    v, _ = harness.evaluate(spec, SOFTMAX / "candidates" / "more_warps.py", timeout=600)
    assert v["status"] == "ok", v
    assert v["timing"]["method"] == "cuda-graph", v
    assert all(s["batch"] > 1 for s in v["shapes"])
    cheat, _ = harness.evaluate(spec, SOFTMAX / "candidates" / "skips_after_warmup.py", timeout=600)
    assert cheat["status"] == "incorrect", cheat


def test_a_fallback_written_with_tensor_operators_is_rejected(harness: Harness) -> None:
    pytest.importorskip("triton")
    from conftest import SPECS
    v, _ = harness.evaluate(SPECS / "tiny_softmax" / "spec.py", SOFTMAX / "candidates" / "operator_fallback.py",
                            timeout=600)
    assert v["status"] == "static_rejected", v
    assert "torch pow" in v["reason"]


def test_device_fingerprints_see_every_byte() -> None:
    # Arguments that must come back unchanged are fingerprinted on the GPU (no copy to the host): equal bytes
    # give equal fingerprints, and a change to any single byte is always seen.
    from kernelevolve_harness.arrays import device_digest, digest
    x = torch.randn(1000, 37, device="cuda")
    assert digest(x) == device_digest(x) == device_digest(x.clone())
    for flat_index in (0, 1, 18_500, x.numel() - 1):
        for bit in (0, 31):
            y = x.clone()
            y.view(-1).view(torch.int32)[flat_index] ^= 1 << bit
            assert device_digest(y) != device_digest(x), (flat_index, bit)
    t = torch.randn(64, 48, device="cuda").t()  # not contiguous: fingerprinted as its values in order
    assert device_digest(t) == device_digest(t.contiguous())
    for odd in (torch.ones(7, dtype=torch.bool, device="cuda"), torch.arange(13, dtype=torch.int8, device="cuda"),
                torch.randn(5, device="cuda").bfloat16()):
        changed = odd.clone()
        changed.view(torch.uint8)[-1] ^= 1
        assert device_digest(odd) == device_digest(odd.clone()) != device_digest(changed)
    assert device_digest(x) != device_digest(x.reshape(37, 1000))  # the shape is part of it
    assert device_digest(torch.empty(0, 3, device="cuda")) == "float32(0, 3)"


def test_device_fingerprints_are_summed_a_slice_at_a_time(monkeypatch) -> None:
    # A 17 GB KernelBench input once took 96 GB of temporaries to fingerprint: the sums go a slice at a time, and
    # the slices change nothing about the fingerprint (also for a tail shorter than a word, and a view that does
    # not start on a word). The peak is a few slices, not the array's size times four.
    from kernelevolve_harness import arrays
    x = torch.randn(1000, 37, device="cuda")
    odd = torch.arange(1003, dtype=torch.int8, device="cuda")
    shifted = torch.randn(1001, device="cuda")[1:]
    whole = [arrays.device_digest(a) for a in (x, odd, shifted)]
    monkeypatch.setattr(arrays, "DIGEST_WORDS", 7)
    assert [arrays.device_digest(a) for a in (x, odd, shifted)] == whole
    monkeypatch.undo()
    big = torch.empty(1 << 31, dtype=torch.uint8, device="cuda")  # 2 GiB
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    arrays.device_digest(big)
    assert torch.cuda.max_memory_allocated() - before <= 5 * arrays.DIGEST_WORDS * 8


def test_a_triton_candidate_that_writes_one_element_of_its_input_is_incorrect(harness: Harness, tmp_path) -> None:
    pytest.importorskip("triton")
    src = (SOFTMAX / "softmax.py").read_text()
    store = "        tl.store(y_ptr + row * y_stride + offs, num / den, mask=mask)\n"
    assert store in src
    cand = tmp_path / "softmax.py"
    cand.write_text(src.replace(store, store + "        tl.store(x_ptr + row * x_stride, 0.0, mask=row == n_rows - 1)\n"))
    v, _ = harness.evaluate(SOFTMAX / "spec.py", cand, timeout=600)
    assert v["status"] == "incorrect", v
    assert "changed argument 0" in v["reason"], v


def test_the_baseline_is_compiled_once_for_all_evaluations(tmp_path, monkeypatch) -> None:
    # What the first evaluation's reference process compiles for the baseline is kept and handed to the next
    # evaluations' workers, which then compile nothing for it (a cache of its own: the session's already has it).
    pytest.importorskip("triton")
    monkeypatch.setenv("KERNELEVOLVE_TRACE", "1")
    monkeypatch.setenv("KERNELEVOLVE_SHARED_REFERENCE", "0")  # a reference process per evaluation, each compiling
    harness = Harness(tmp_path, tmp_path / "cache")
    compiled = []
    for _ in range(2):
        v, r = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "more_warps.py", timeout=600)
        assert v["status"] == "ok", v
        line = next(l for l in r.stderr.splitlines() if "new cache entries for the baseline" in l)
        compiled.append(int(line.split("compiled ")[1].split()[0]))
        # the candidate's worker gets a copy of the reference's cache before it first calls the baseline
        assert v["compile"]["baseline_compiled"] == 0, v["compile"]
    # (counted as files written: a lookup that misses compiles into the entry it found, so new entries miss it)
    assert compiled[0] > 0, compiled  # a fresh cache: the first evaluation compiles the baseline's shapes
    assert compiled[1] == 0, compiled  # the second finds them all, though the first one's folder is gone


def test_a_shared_reference_cache_serves_later_workers(tmp_path, monkeypatch) -> None:
    # With one reference process for all evaluations, the cache it compiled the baseline into belongs to the
    # first evaluation's folder, which goes with it; the kept copy must still serve every later worker.
    pytest.importorskip("triton")
    harness = Harness(tmp_path, tmp_path / "cache")
    for _ in range(2):
        v, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "more_warps.py", timeout=600)
        assert v["status"] == "ok", v
        assert v["compile"]["baseline_compiled"] == 0, v["compile"]


def test_torch_argument_kinds_reach_a_timed_call_as_the_reference_sees_them(tmp_path) -> None:
    # The torch counterpart of test_argument_kinds.py: bfloat16 and float16 tensors, a non-contiguous view, a
    # 0-dim tensor, a list of tensors and Python scalars drawn from the seed, moved into the guarded buffers and
    # scaled as a timed call gets them, equal what the reference computes with for the same seed and scale.
    from kernelevolve_harness import _worker as W
    from kernelevolve_harness import arrays as A
    spec = tmp_path / "spec.py"
    (tmp_path / "k.py").write_text("def k():\n    pass\n")
    spec.write_text('''import torch
BACKEND = "triton"
SOURCE = "k.py"
KERNEL = "k"
SHAPES = [{"n": 4096}]
OUTPUTS = [5]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    n = shape["n"]
    r = lambda *s, dtype=torch.float32: torch.randn(*s, generator=g, device="cuda", dtype=dtype)
    scale = float(torch.rand(1, generator=g, device="cuda").item())
    return (r(n, dtype=torch.bfloat16), r(n, dtype=torch.float16), r(64, 2 * (n // 64))[:, ::2],
            r((), dtype=torch.float32), [r(n), r(n, dtype=torch.bfloat16)], torch.empty(n, device="cuda"),
            scale, int(seed % 7), None)


def launch(k, *args):
    return args[5]
''')
    cfg = {"nonce": "n", "backend": "triton", "spec": str(spec)}
    cand, ref = W.CandidateWorker(None, cfg), W.ReferenceWorker(None, cfg)
    for w in (cand, ref):
        w.load_spec()
        w.outputs = [5]
    seeds = [11, 22, 33]
    pool = [cand.make_inputs(0, s, 1.0) for s in seeds]
    gargs, guards = cand.guarded_args(pool[0])
    assert len(guards) == 7
    for p, factor in [(1, 0.625), (2, 1.75), (0, 1.0)]:
        cand.refill(gargs, pool, p, factor, seeds[p])
        want = ref.make_inputs(0, seeds[p], factor)
        for j, (g, w) in enumerate(zip(gargs, want)):
            assert A.layout(g) == A.layout(w), j
            if j == 5:
                assert torch.isnan(g).all()
                continue
            for x, y in zip(A.leaves(g), A.leaves(w)):
                assert x.dtype == y.dtype and torch.equal(x, y), (j, p, factor)
            if not A.leaves(w):
                assert g == w and type(g) is type(w), (j, g, w)
    assert cand.guard_damage(guards) is None


def test_a_launcher_slow_on_the_host_is_timed_on_the_device_alone(harness: Harness, tmp_path) -> None:
    # A launch whose Python costs longer than the L2 flush covers (a wrapper's checks and allocations: here a
    # 150 us spin before the kernel): samples whose launch was still being queued when their timing began are set
    # aside and taken again, with a longer cover, and the kernel judged against itself reads 1.00 on every shape.
    pytest.importorskip("triton")
    shutil.copy(SOFTMAX / "softmax.py", tmp_path / "softmax.py")
    spec = (SOFTMAX / "spec.py").read_text().replace("def launch(k, x, y):\n", '''import time


def launch(k, x, y):
    t = time.perf_counter()
    while time.perf_counter() - t < 150e-6:
        pass
''')
    assert "150e-6" in spec
    (tmp_path / "spec.py").write_text(spec)
    v, _ = harness.evaluate(tmp_path / "spec.py", tmp_path / "softmax.py", timeout=600)
    assert v["status"] == "ok", v
    assert v["stages"].get("host_waits", 0) > 0 and "host_bound_shapes" not in v["stages"], v["stages"]
    for s in v["shapes"]:
        assert 0.97 <= s["speedup"] <= 1.03 and s["interval"][0] <= 1.0 <= s["interval"][1], s


def test_a_candidate_s_compiles_run_side_by_side_before_its_checks(harness: Harness, monkeypatch) -> None:
    # the softmax example's three shapes each compile a kernel of their own (BLOCK is the row's next power of two):
    # while the reference starts, the worker hands them to threads instead of compiling them one after another
    pytest.importorskip("triton")
    v, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "more_warps.py", timeout=600)
    assert v["status"] == "ok", v
    assert v["stages"]["precompile_ahead"] == 3, v["stages"]
    monkeypatch.setenv("KERNELEVOLVE_COMPILE_AHEAD", "0")
    off, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "more_warps.py", timeout=600)
    assert off["status"] == "ok" and "precompile_ahead" not in off["stages"], off
    wrong, _ = harness.evaluate(SOFTMAX / "spec.py", SOFTMAX / "candidates" / "wrong_fixed_block.py", timeout=600)
    assert wrong["status"] == "incorrect", wrong


def test_an_autotuned_candidate_s_first_calls_run_as_they_are(harness: Harness, tmp_path) -> None:
    # no compile is handed to the pool for a candidate with an autotuner: the autotuner times each configuration to
    # choose the one the checks and the timing then use. Its compiled kernels are read through the autotuner (whose
    # own `cache` maps keys to configurations: read as the JIT's, it was a runtime error on the H200 and the H100)
    pytest.importorskip("triton")
    src = (SOFTMAX / "softmax.py").read_text()
    tuned = src.replace("@triton.jit\n", "@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 4)],"
                                         " key=['n_cols'])\n@triton.jit\n", 1)
    tuned = tuned.replace(",\n                         num_warps=1, num_stages=1)", ")")
    assert tuned.count("num_warps=1, num_stages=1") == 0 and "@triton.autotune" in tuned
    cand = tmp_path / "softmax.py"
    cand.write_text(tuned)
    v, _ = harness.evaluate(SOFTMAX / "spec.py", cand, timeout=600)
    assert v["status"] == "ok", v
    assert "precompile_s" in v["stages"] and "precompile_ahead" not in v["stages"], v
    assert v["compile"]["variants"] >= 1 and v["compile"]["num_warps"] in (1, 4), v["compile"]
