# A small public project's Triton matmul (Nexxex-Aditya/T.HRM_OPT_ADV, kernels/kernels_t/matmul.py): tiles from
# its launcher's defaults, 128 x 128 x 32, passed to the kernel by position; Triton's default warps and stages.
# fp16. Its loop does not mask K, so every K here is a multiple of 256 (the largest BLOCK_K searched); M and N
# are masked and may be ragged. Held out: a public kernel no rule of the tuner was written after. The source
# lies outside the repository: run `bash scripts/external-kernels.sh` first.
import torch

BACKEND = "triton"
SOURCE = "../../../.external/nexxex/kernels/kernels_t/matmul.py"
KERNEL = "matmul_kernel"
SHAPES = [
    {"m": 4096, "n": 4096, "k": 4096},
    {"m": 1000, "n": 1537, "k": 1024},
    {"m": 8192, "n": 1024, "k": 2048},
]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(shape["m"], shape["k"], device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(shape["k"], shape["n"], device="cuda", dtype=torch.float16, generator=g)
    return a, b


def launch(k, a, b):
    return k.matmul_triton(a, b)


def reference(a, b):
    return (a.double() @ b.double()).half()


def FLOPS(shape):
    return 2.0 * shape["m"] * shape["n"] * shape["k"]
