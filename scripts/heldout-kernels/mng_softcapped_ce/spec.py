# modded-nanogpt's fused softcapped cross-entropy, forward (KellerJordan/modded-nanogpt triton_kernels.py, MIT): one
# program a row, the row of bf16 logits read once in BLOCK_SIZE steps (a running maximum and sum of exponentials of
# the softcapped logits z = 23 sigmoid((x + 5) / 7.5)), then each row's loss at the targets of the next n_predict
# positions (multi-token prediction weights); launched with the literals `BLOCK_SIZE=1024, num_warps=8,
# num_stages=4`. bf16 logits of vocabulary width: modded-nanogpt's own 50304, and Llama 3, Qwen 2 and Gemma's, with
# fewer rows as the vocabulary grows. Held out: a public row reduction over the vocabulary whose block, warps and
# stages are all searched, chosen after the search's rules of 2d38e84 were written and before any grid of it (the
# closing unit's return to the search, 9134826, came after its grid). The source lies outside the repository: run
# `bash scripts/external-kernels.sh` first.
import torch

BACKEND = "triton"
SOURCE = "../../../.external/modded-nanogpt/softcapped_ce.py"
KERNEL = "fused_softcapped_entropy_fwd_kernel"
SHAPES = [
    {"rows": 8192, "cols": 50304},
    {"rows": 4096, "cols": 128256},
    {"rows": 1024, "cols": 151936},
    {"rows": 512, "cols": 256000},
]
# the softcap's constants, as the autograd Function's defaults
A, B, C = 23.0, 5.0, 7.5


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    rows, cols = shape["rows"], shape["cols"]
    logits = (torch.randn(rows, cols, device="cuda", dtype=torch.float32, generator=g) * 3).to(torch.bfloat16)
    targets = torch.randint(0, cols, (rows,), device="cuda", dtype=torch.int64, generator=g)
    mtp_weights = torch.tensor([1.0, 0.5, 0.25], device="cuda", dtype=torch.float32)
    return logits, targets, mtp_weights


def launch(k, logits, targets, mtp_weights):
    return k.FusedSoftcappedCrossEntropy.apply(logits, targets, mtp_weights)


def reference(logits, targets, mtp_weights):
    # as the kernel defines the loss for any weights and targets: a weight that is not positive, and a target
    # outside the vocabulary (an ignored position), add nothing
    z = A * torch.sigmoid((logits.double() + B) / C)
    lse = torch.logsumexp(z, dim=-1)
    n, cols = logits.shape
    loss = torch.zeros(n, dtype=torch.float64, device=logits.device)
    weights = mtp_weights.double().clamp(min=0)
    for k in range(mtp_weights.shape[0]):
        t = targets[k:]
        kept = (t >= 0) & (t < cols)
        z_target = z[torch.arange(n - k, device=logits.device), t.clamp(0, cols - 1)]
        loss[: n - k] += torch.where(kept, weights[k] * (lse[: n - k] - z_target), 0.0)
    return loss.float()


def BYTES(shape):
    # the least the loss moves: the logits read once (bf16) and the losses written
    return 2.0 * shape["rows"] * shape["cols"] + 4.0 * shape["rows"]
