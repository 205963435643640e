"""What importing a spec and the modules its baseline imports does to a process: seconds, threads, and whether
the CUDA driver was initialized (warm.py's fork-point checks), module by module.

Usage, on the GPU machine from the repository root:
  python3 scripts/gpu/import_probe.py SPEC MODULE...
  e.g. python3 scripts/gpu/import_probe.py scripts/public-kernels/liger_swiglu/spec.py peft liger_kernel.utils
"""
import importlib
import os
import sys
import time

os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"  # as in a fork point
sys.path.insert(0, "harness")


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def main() -> None:
    t = time.monotonic()
    import torch  # noqa: F401
    import triton  # noqa: F401

    from kernelevolve_harness import warm
    from kernelevolve_harness.spec import import_spec
    print(f"torch and triton: {time.monotonic() - t:.2f} s, {threads()} threads")
    t = time.monotonic()
    import_spec(os.path.abspath(sys.argv[1]))
    print(f"the spec: {time.monotonic() - t:.2f} s, {threads()} threads; {warm._fork_hazard() or 'forkable'}")
    for name in sys.argv[2:]:
        t = time.monotonic()
        importlib.import_module(name)
        print(f"{name}: {time.monotonic() - t:.2f} s, {threads()} threads; {warm._fork_hazard() or 'forkable'}")
    names = {}
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/comm") as f:
            comm = f.read().strip()
        names[comm] = names.get(comm, 0) + 1
    print("threads by name:", ", ".join(f"{k} x{v}" for k, v in sorted(names.items())))


if __name__ == "__main__":
    main()
