"""Does a kernel's time depend on where its buffers lie in device memory? The softmax example, compiled twice
(as the harness loads a baseline and a candidate), each timed in six pairs of guarded buffers allocated with
other allocations between them; an L2 flush and CUDA events around each call, round-robin over copies and pairs,
60 rounds; the median per (copy, pair). Run from the repository root on the GPU machine:
    python3 scripts/gpu/placement.py
(docs/benchmarks.md: why the harness times both kernels in the same buffers)"""
import os, random, statistics, sys, tempfile
sys.path.insert(0, "harness")
import torch
from kernelevolve_harness.spec import import_spec
from kernelevolve_harness.backends.triton import TritonBackend
from kernelevolve_harness import arrays as A
spec = import_spec("examples/triton/softmax/spec.py")
be = TritonBackend()
d = tempfile.mkdtemp()
mods = []
for n in range(2):
    b = be.build("examples/triton/softmax/softmax.py", d, 60, "softmax_kernel")
    mods.append(be.load(b.artifact, "softmax_kernel"))
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
canary = os.urandom(4096)
random.seed(1)
for si, shape in enumerate(spec.SHAPES):
    x, y = spec.inputs(shape, 7)
    pairs = []
    junk = []
    for p in range(6):
        junk.append(torch.empty(random.randrange(1, 64) << 20, dtype=torch.uint8, device="cuda"))
        gx, _ = A.guarded_copy(x, canary)
        junk.append(torch.empty(random.randrange(1, 64) << 20, dtype=torch.uint8, device="cuda"))
        gy, _ = A.guarded_copy(y, canary)
        pairs.append((gx, gy))
    res = {}
    for m in mods:
        for p in pairs:
            spec.launch(m, *p)
    torch.cuda.synchronize()
    for r in range(60):
        for mi, m in enumerate(mods):
            for pi, (gx, gy) in enumerate(pairs):
                flush.zero_()
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(); spec.launch(m, gx, gy); e1.record()
                res.setdefault((mi, pi), []).append((e0, e1))
        torch.cuda.synchronize()
    print(shape)
    for mi in range(2):
        meds = []
        for pi in range(len(pairs)):
            ts = [a.elapsed_time(b) * 1000 for a, b in res[(mi, pi)]]
            meds.append(statistics.median(ts))
        print(f"  copy {mi}: per buffer pair (median us) " + " ".join(f"{t:6.1f}" for t in meds)
              + "   addrs in%2MiB " + " ".join(str((p[0].data_ptr() % (2 << 20)) >> 10) for p in pairs))
