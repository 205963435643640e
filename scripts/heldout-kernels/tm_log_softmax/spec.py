# Thinking Machines Lab's batch-invariant log-softmax (batch_invariant_ops.log_softmax): one program a row, the
# row read in 1024-element steps three times (its maximum, its sum of exponentials, the output), launched with the
# literal `BLOCK_SIZE = 1024` on Triton's default warps and stages. fp32 rows of vocabulary width (Llama 3, Qwen 2,
# Gemma, Llama 2), as a sampler's log-probabilities see them: few long rows, where one program a row leaves most
# of the GPU idle unless its block and warps are larger. Held out: a public softmax whose block, warps and stages
# are all searched, and no rule of the tuner was written after a grid of it. The source lies outside the
# repository: run `bash scripts/external-kernels.sh` first.
import torch

BACKEND = "triton"
SOURCE = "../../../.external/batch-invariant-ops/batch_invariant_ops/batch_invariant_ops.py"
KERNEL = "_log_softmax_kernel"
SHAPES = [
    {"rows": 512, "cols": 128256},
    {"rows": 256, "cols": 151936},
    {"rows": 128, "cols": 256000},
    {"rows": 2048, "cols": 32000},
]


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape["rows"], shape["cols"], device="cuda", dtype=torch.float32, generator=g) * 3,)


def launch(k, x):
    return k.log_softmax(x)


def reference(x):
    return torch.log_softmax(x.double(), dim=-1).float()


def BYTES(shape):
    # the least a log-softmax moves: the row read once and written once (this kernel reads it three times)
    return 8.0 * shape["rows"] * shape["cols"]
