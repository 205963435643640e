#!/usr/bin/env bash
# Issue 19 (and the last point of issue 16): specs drafted without an LLM, as the editor drafts them when a kernel
# has none, must run as drafted. For Triton kernels whose launcher computes the kernel's parameters (the examples'
# softmax and matmul, a bias + GELU whose bias is read broadcast, the public Liger/Unsloth kernels when .external/
# is carried), the spec is drafted by dist/draft-spec.js and the baseline judged against itself through the CLI.
# Prints per kernel: the drafted cost estimate, the verdict's status, reason and seconds. About 3 minutes on one H200.
# Needs, carried: dist/ (npm run build), .node/; .external/ for the public kernels (optional).
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/i19-drafted-specs.sh RAWDIR
set -uo pipefail
RAW=$1
mkdir -p "$RAW/specs"
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "i19-drafted-specs: needs a GPU with torch; skipped"; exit 0
fi
cat > "$RAW/specs/bias_gelu.py" <<'PY'
import torch
import triton
import triton.language as tl


@triton.jit
def bias_gelu_kernel(x_ptr, b_ptr, y_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs % n_cols, mask=mask).to(tl.float32)
    h = x + b
    y = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def bias_gelu(x, b):
    y = torch.empty_like(x)
    n_cols = x.shape[-1]
    bias_gelu_kernel[(triton.cdiv(x.numel(), 1024),)](x, b, y, x.numel(), n_cols, BLOCK=1024)
    return y
PY
targets=("examples/triton/softmax/softmax.py softmax_kernel" "examples/triton/matmul/matmul.py matmul_kernel" "$RAW/specs/bias_gelu.py bias_gelu_kernel")
for spec in scripts/public-kernels/*/spec.py; do
  [ -f "$spec" ] || continue
  src=$(dirname "$spec")/$(python3 -c "import re,sys; print(re.search(r'^SOURCE\s*=\s*[\"\\'](.+?)[\"\\']', open(sys.argv[1]).read(), re.M).group(1))" "$spec")
  kernel=$(python3 -c "import re,sys; print(re.search(r'^KERNEL\s*=\s*[\"\\'](.+?)[\"\\']', open(sys.argv[1]).read(), re.M).group(1))" "$spec")
  [ -f "$src" ] && targets+=("$src $kernel")
done
for t in "${targets[@]}"; do
  read -r src kernel <<< "$t"
  out="$RAW/specs/${kernel}_$(basename "$(dirname "$src")")_spec.py"
  est=$(node dist/draft-spec.js "$src" "$kernel" "$out" 2>>"$RAW/stderr.log") || { echo "$kernel ($src): NOT DRAFTED (see stderr.log)"; continue; }
  t0=$(date +%s.%N)
  v=$(timeout 150 node bin/kernelevolve.js evaluate --spec "$out" --candidate "$src" --json 2>>"$RAW/stderr.log")
  echo "$v" >> "$RAW/verdicts.jsonl"
  python3 - "$kernel" "$src" "$t0" "$est" "$v" <<'PY'
import json, sys, time
kernel, src, t0, est, v = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
try:
    d = json.loads(v)
except ValueError:
    print(f"{kernel:28s} NO VERDICT {v[:300]}"); sys.exit()
print(f"{kernel:28s} {d['status']:14s} {time.time()-t0:5.1f}s  drafted: {est}")
if d["status"] != "ok": print("   ", (d.get("reason") or "")[:400])
PY
done
