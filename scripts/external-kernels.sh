#!/usr/bin/env bash
# Public Triton kernels for tests and benchmarks, fetched at pinned commits into the ignored folder .external/
# (their code is never committed here). Each file comes from a local mirror when KERNELEVOLVE_MIRRORS names a
# folder holding <owner>+<name>/repo (a bare git directory), else from GitHub (one shallow fetch of the commit).
# Where a package's __init__ or helper module imports far more than the kernels need (model patching,
# bitsandbytes, transformers), a minimal stand-in is written here, at extraction time; the kernel files
# themselves are kept as published, except unsloth's relative import, which is made absolute.
# The specs in scripts/public-kernels/*/spec.py point into the folders made here.
# Usage: [KERNELEVOLVE_MIRRORS=DIR] bash scripts/external-kernels.sh [DEST]   (DEST defaults to .external)
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-.external}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)

LIGER_REPO=linkedin/Liger-Kernel
LIGER_COMMIT=ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c
LIGER_FILES=(
  src/liger_kernel/utils.py
  src/liger_kernel/ops/utils.py
  src/liger_kernel/ops/rms_norm.py
  src/liger_kernel/ops/layer_norm.py
  src/liger_kernel/ops/softmax.py
  src/liger_kernel/ops/swiglu.py
  src/liger_kernel/ops/geglu.py
  LICENSE
)
UNSLOTH_REPO=unslothai/unsloth
UNSLOTH_COMMIT=015bdef0d94a241bcd94eec7a405b1700632180d
UNSLOTH_FILES=(
  unsloth/kernels/rms_layernorm.py
  unsloth/kernels/utils.py
  LICENSE
)

# Stanford CS336 (spring 2025), lecture 6: a GELU launched with a literal block and a row softmax whose block is
# the row, both on Triton's default warps. Held out: no rule of the tuner was written after a grid of these.
CS336_REPO=stanford-cs336/spring2025-lectures
CS336_COMMIT=bbdbc9c511c11310efc2f9600f4f6e5dcf1c9066
CS336_FILES=(
  lecture_06.py
)

# A matmul from a small public project (MIT): tiles as its launcher's defaults (128 x 128 x 32), handed to the
# kernel by position, Triton's default warps and stages. Held out like the CS336 kernels.
NEXXEX_REPO=Nexxex-Aditya/T.HRM_OPT_ADV
NEXXEX_COMMIT=2513cd5f4186e2c8308da738d7f4b41e957bf215
NEXXEX_FILES=(
  kernels/kernels_t/matmul.py
  LICENSE
)

# Thinking Machines Lab's batch-invariant ops (MIT): a log-softmax over rows in 1024-element steps (three passes:
# the row's maximum, its sum of exponentials, the output), launched with a literal block on Triton's default warps
# and stages. Held out like the CS336 kernels; the module imports torch and triton alone, and is kept as published.
TM_REPO=thinking-machines-lab/batch_invariant_ops
TM_COMMIT=f22b1fbe534b1fe045080f44a970a441caaf3c4f
TM_FILES=(
  batch_invariant_ops/batch_invariant_ops.py
  LICENSE
)

# NVlabs VibeTensor's Triton softmax (Apache-2.0): one program a row, the row read in BLOCK_SIZE steps three times
# (its maximum, its sum of exponentials, the output; OUTPUT_LOG picks softmax or log-softmax), launched by
# softmax / log_softmax with the literal `BLOCK_SIZE=128` on Triton's default warps and stages. Held out like the
# CS336 kernels. The kernel module imports vibe_kernels.common (alloc, tensor_types, utils: plain Python) and
# alloc imports the compiled vibetensor._C, which it uses only for VibeTensor tensors (torch tensors take
# new_empty); a stand-in vibetensor package is written under fallback below. All files are kept as published.
VT_REPO=NVlabs/vibetensor
VT_COMMIT=fe85461faca02ba95d7bf1f8289002ff8cf91652
VT_FILES=(
  vibe_kernels/__init__.py
  vibe_kernels/common/__init__.py
  vibe_kernels/common/alloc.py
  vibe_kernels/common/tensor_types.py
  vibe_kernels/common/utils.py
  vibe_kernels/softmax/impl/triton_impl.py
  LICENSE
)

# A small public collection of Triton kernels (harsh-vsingh/triton-kernels; the repository states no license, like
# the CS336 lectures: read here, never copied into this one): a log-softmax whose block, warps and stages are module
# constants (BLOCK_SIZE = 1024, NUM_WARPS = 4, NUM_STAGES = 2) passed by name to every launch: a row walked in
# BLOCK_SIZE steps by one program where rows are many or short, else split over several programs (partial sums,
# a merge, the output) with the same constants. The module imports its repository's `utils` package (plain
# Python on torch and triton). Held out like the CS336 kernels.
HV_REPO=harsh-vsingh/triton-kernels
HV_COMMIT=f1cfe14931b2bf0bd01a7c2bcb1da35f45a4ccc3
HV_FILES=(
  kernels/softmax.py
  utils/__init__.py
  utils/launch_config.py
  utils/validation.py
)

# modded-nanogpt's fused softcapped cross-entropy (KellerJordan/modded-nanogpt, MIT; the Triton version before it
# became CUDA): one program a row, the logits' row read in BLOCK_SIZE steps once (a running maximum and sum of
# exponentials of the softcapped logits), then the loss at the targets; launched with the literals
# `BLOCK_SIZE=1024, num_warps=8, num_stages=4`. Its section of triton_kernels.py (the two kernels and their
# autograd Function) is cut out by the syntax tree, as published, into a module of its own: the rest of the file is
# other kernels (autotuned matmuls). Held out like the CS336 kernels.
MNG_REPO=KellerJordan/modded-nanogpt
MNG_COMMIT=71af6208373d6065da641eb3cf9cc0acb1ce6b93
MNG_FILES=(
  triton_kernels.py
  LICENSE
)

# modded-nanogpt's symmetric product C = A @ A.T (XXT, by @byronxu99; KellerJordan/modded-nanogpt, MIT), a later
# commit than the cross-entropy above: one program an output tile above the diagonal, the tile stored twice (itself
# and its mirror); its launcher picks the tiles per shape from "hardcoded configs based on H100 autotuning"
# (K == 768: 128 x 128 x 64, else 64 x 128 x 128; 8 warps and 4 stages both). The kernel, its launcher and the
# tile-to-program helper are cut out as published. Held out: chosen after the rule that a matmul's K tile is drafted
# at the middle of its domain at most, and before any grid of it.
MNG_XXT_COMMIT=f411b3d346aa52d3504324ca93c230fd84c6c07f
MNG_XXT_FILES=(
  triton_kernels.py
  LICENSE
)

# A git directory holding COMMIT of REPO: the local mirror, or a bare repository under $DEST/.git-cache
# filled by one shallow fetch from GitHub.
git_dir() {
  local repo=$1 commit=$2
  local mirror=${KERNELEVOLVE_MIRRORS:-}/${repo/\//+}/repo
  if [ -n "${KERNELEVOLVE_MIRRORS:-}" ] && git --git-dir="$mirror" cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "$mirror"
    return
  fi
  [ -z "${KERNELEVOLVE_MIRRORS:-}" ] || echo "note: $mirror lacks $commit; fetching $repo from GitHub" >&2
  local cache=$DEST/.git-cache/${repo/\//+}.git
  if ! git --git-dir="$cache" cat-file -e "$commit^{commit}" 2>/dev/null; then
    git init -q --bare "$cache"
    if ! git --git-dir="$cache" fetch -q --depth 1 "https://github.com/$repo.git" "$commit"; then
      echo "Cannot fetch $repo at $commit from GitHub; give a folder of mirrors with KERNELEVOLVE_MIRRORS=DIR" \
           "(DIR/${repo/\//+}/repo a git directory holding that commit)." >&2
      exit 1
    fi
  fi
  echo "$cache"
}

# extract REPO COMMIT TARGET FILES...: each file at COMMIT into $DEST/TARGET/<its path>
extract() {
  local repo=$1 commit=$2 target=$3
  shift 3
  local gd
  gd=$(git_dir "$repo" "$commit")
  for f in "$@"; do
    mkdir -p "$DEST/$target/$(dirname "$f")"
    git --git-dir="$gd" show "$commit:$f" > "$DEST/$target/$f"
  done
  printf '%s %s\n' "$repo" "$commit" > "$DEST/$target/PINNED"
}

# cut_out FOLDER FILE MODULE SOURCE NAME...: the top-level functions and classes NAME of FOLDER/FILE (a file that is
# more than its kernels: a lecture, a module of other kernels), each with its decorators and as published, cut out by
# the syntax tree into FOLDER/MODULE after a header naming SOURCE; FILE is removed.
cut_out() {
  python3 - "$@" <<'PY'
import ast, os, sys
folder, name, module, source, *wanted = sys.argv[1:]
path = os.path.join(folder, name)
text = open(path, encoding="utf-8").read()
lines = text.splitlines()
found = {n.name: n for n in ast.parse(text).body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in wanted}
missing = [w for w in wanted if w not in found]
if missing:
    sys.exit(f"{path}: no {', '.join(missing)}; update scripts/external-kernels.sh.")
parts = []
for w in wanted:
    node = found[w]
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    parts.append("\n".join(lines[start - 1:node.end_lineno]))
out = (f"# {', '.join(wanted)}, as published in {source} {name}\n# (cut out by scripts/external-kernels.sh)\n"
       "import torch\nimport triton\nimport triton.language as tl\n\n\n" + "\n\n\n".join(parts) + "\n")
ast.parse(out)
with open(os.path.join(folder, module), "w", encoding="utf-8") as f:
    f.write(out)
os.remove(path)
PY
}

extract "$LIGER_REPO" "$LIGER_COMMIT" Liger-Kernel "${LIGER_FILES[@]}"
# liger_kernel/__init__.py and liger_kernel/ops/__init__.py import every operator and every backend
# (CuTe DSL, Ascend, transformers patches); the kernels import their modules directly, so empty packages do.
: > "$DEST/Liger-Kernel/src/liger_kernel/__init__.py"
: > "$DEST/Liger-Kernel/src/liger_kernel/ops/__init__.py"

extract "$UNSLOTH_REPO" "$UNSLOTH_COMMIT" unsloth "${UNSLOTH_FILES[@]}"
# unsloth.kernels.utils pulls in bitsandbytes, unsloth_zoo and the device probes of the whole package, and
# rms_layernorm.py ends with transformers model patching. The kernel module keeps its kernels and launchers
# (everything before the patching), imports calculate_settings absolutely from a module made of the published
# function itself (cut out of utils.py by its syntax tree), and torch_gpu_device is torch.cuda.device as
# utils.py sets it on CUDA.
python3 - "$DEST/unsloth/unsloth/kernels" <<'PY'
import ast, os, sys
folder = sys.argv[1]
utils = open(os.path.join(folder, "utils.py"), encoding="utf-8").read()
tree = ast.parse(utils)
fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "calculate_settings")
lines = utils.splitlines()
settings = "\n".join(lines[fn.lineno - 1:fn.end_lineno])
with open(os.path.join(folder, "unsloth_kernel_settings.py"), "w", encoding="utf-8") as f:
    f.write("# calculate_settings as published in unsloth/kernels/utils.py (extracted by scripts/external-kernels.sh)\n"
            "import torch\nimport triton\n\nMAX_FUSED_SIZE: int = 65536\nnext_power_of_2 = triton.next_power_of_2\n"
            "torch_gpu_device = torch.cuda.device\n\n\n" + settings + "\n")
path = os.path.join(folder, "rms_layernorm.py")
text = open(path, encoding="utf-8").read()
relative = "from .utils import calculate_settings, torch_gpu_device"
if relative not in text:
    sys.exit(f"{path}: the import line changed ({relative!r} not found); update scripts/external-kernels.sh.")
text = text.replace(relative, "from unsloth_kernel_settings import calculate_settings, torch_gpu_device")
cut = text.find("from transformers")
if cut > 0:
    text = text[:cut].rstrip() + "\n"
ast.parse(text)
with open(path, "w", encoding="utf-8") as f:
    f.write(text)
os.remove(os.path.join(folder, "utils.py"))
PY

extract "$CS336_REPO" "$CS336_COMMIT" cs336 "${CS336_FILES[@]}"
# lecture_06.py is a lecture (it imports the course's page-rendering helpers and runs benchmarks); its Triton
# kernels and their launchers are cut out by the syntax tree, as published, into a module of their own.
cut_out "$DEST/cs336" lecture_06.py cs336_kernels.py "$CS336_REPO" triton_gelu triton_gelu_kernel triton_softmax triton_softmax_kernel

extract "$NEXXEX_REPO" "$NEXXEX_COMMIT" nexxex "${NEXXEX_FILES[@]}"
extract "$TM_REPO" "$TM_COMMIT" batch-invariant-ops "${TM_FILES[@]}"
extract "$VT_REPO" "$VT_COMMIT" vibetensor "${VT_FILES[@]}"
extract "$HV_REPO" "$HV_COMMIT" hv-triton-kernels "${HV_FILES[@]}"
extract "$MNG_REPO" "$MNG_COMMIT" modded-nanogpt "${MNG_FILES[@]}"
cut_out "$DEST/modded-nanogpt" triton_kernels.py softcapped_ce.py "$MNG_REPO" \
  fused_softcapped_entropy_fwd_kernel fused_softcapped_entropy_bwd_kernel FusedSoftcappedCrossEntropy
extract "$MNG_REPO" "$MNG_XXT_COMMIT" modded-nanogpt-xxt "${MNG_XXT_FILES[@]}"
cut_out "$DEST/modded-nanogpt-xxt" triton_kernels.py xxt.py "$MNG_REPO" _pid_to_block XXT_kernel XXT

# packaging (Version) is imported by liger_kernel.ops.utils; a bare GPU box may lack it. This stand-in is found
# only when the real one is missing (the specs put $DEST/fallback last on sys.path).
mkdir -p "$DEST/fallback/packaging"
: > "$DEST/fallback/packaging/__init__.py"
cat > "$DEST/fallback/packaging/version.py" <<'PY'
# Stand-in for packaging.version.Version: release numbers compared as integer tuples (local and pre-release
# tags ignored), which is all liger_kernel's version checks need.
import re


class Version:
    def __init__(self, text):
        self.release = tuple(int(p) for p in re.findall(r"\d+", str(text).split("+")[0])[:3])

    def _cmp(self, other):
        a, b = self.release, other.release
        n = max(len(a), len(b))
        a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
        return (a > b) - (a < b)

    def __lt__(self, other): return self._cmp(other) < 0
    def __le__(self, other): return self._cmp(other) <= 0
    def __gt__(self, other): return self._cmp(other) > 0
    def __ge__(self, other): return self._cmp(other) >= 0
    def __eq__(self, other): return self._cmp(other) == 0
PY

# vibetensor._C (VibeTensor's compiled extension) is imported by vibe_kernels.common.alloc, which calls it only
# for VibeTensor tensors; torch tensors are allocated with new_empty. Found only when the real one is missing.
mkdir -p "$DEST/fallback/vibetensor"
cat > "$DEST/fallback/vibetensor/__init__.py" <<'PY'
# Stand-in for the vibetensor package: vibe_kernels.common.alloc does `from vibetensor import _C` and uses _C
# only for VibeTensor tensors, never for the torch tensors the benchmarks pass.
_C = None
PY

for f in "$DEST"/Liger-Kernel/src/liger_kernel/ops/*.py "$DEST"/unsloth/unsloth/kernels/*.py "$DEST"/cs336/*.py "$DEST"/nexxex/kernels/kernels_t/*.py \
         "$DEST"/batch-invariant-ops/batch_invariant_ops/*.py "$DEST"/vibetensor/vibe_kernels/common/*.py \
         "$DEST"/vibetensor/vibe_kernels/softmax/impl/*.py "$DEST"/hv-triton-kernels/kernels/*.py "$DEST"/hv-triton-kernels/utils/*.py \
         "$DEST"/modded-nanogpt/*.py "$DEST"/modded-nanogpt-xxt/*.py; do
  python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$f"
done
echo "public kernels in $DEST: Liger-Kernel@${LIGER_COMMIT:0:10} (${#LIGER_FILES[@]} files), unsloth@${UNSLOTH_COMMIT:0:10}, cs336@${CS336_COMMIT:0:10}, nexxex@${NEXXEX_COMMIT:0:10}, batch-invariant-ops@${TM_COMMIT:0:10}, vibetensor@${VT_COMMIT:0:10}, hv-triton-kernels@${HV_COMMIT:0:10}, modded-nanogpt@${MNG_COMMIT:0:10} and @${MNG_XXT_COMMIT:0:10}"
