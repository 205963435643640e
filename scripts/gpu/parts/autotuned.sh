#!/usr/bin/env bash
# The verdict of a candidate whose kernel holds a Triton autotuner (the softmax example's kernel under
# `@triton.autotune` over 1 and 4 warps, keyed on n_cols: the candidate of test_gpu_backends.py's autotuned test),
# with the compiles side by side and without (KERNELEVOLVE_COMPILE_AHEAD=0): each verdict's status, reason, log and
# stages in full (the H200's verdict on 2026-12-05 was a runtime error in the correctness stage, its message cut
# off by the device tool's output). About 1 minute on one GPU.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/autotuned.sh RAWDIR
set -uo pipefail
RAW=$1
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "autotuned: needs a GPU with torch; skipped"; exit 0
fi
SOFTMAX=examples/triton/softmax
mkdir -p "$RAW/cand"
python3 - "$SOFTMAX/softmax.py" "$RAW/cand/softmax.py" <<'PY'
import sys
src = open(sys.argv[1]).read()
tuned = src.replace("@triton.jit\n", "@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 4)],"
                                     " key=['n_cols'])\n@triton.jit\n", 1)
tuned = tuned.replace(",\n                         num_warps=1, num_stages=1)", ")")
assert "@triton.autotune" in tuned and "num_warps=1, num_stages=1" not in tuned, "the example's launch changed"
open(sys.argv[2], "w").write(tuned)
PY
for ahead in 1 0; do
  KERNELEVOLVE_COMPILE_AHEAD=$ahead timeout 120 node bin/kernelevolve.js evaluate --spec "$SOFTMAX/spec.py" \
    --candidate "$RAW/cand/softmax.py" --json > "$RAW/verdict-$ahead.json" 2> "$RAW/stderr-$ahead.log"
  echo "-- KERNELEVOLVE_COMPILE_AHEAD=$ahead (exit $?)"
  python3 - "$RAW/verdict-$ahead.json" <<'PY'
import json, sys
try:
    v = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
except (ValueError, IndexError, OSError) as e:
    print("no verdict:", e)
    raise SystemExit
print("status:", v.get("status"))
print("reason:", v.get("reason") or v.get("message"))  # a verdict's reason; a harness error's message
if v.get("log"):  # the worker's trace and log, where the candidate raised
    print("log:", str(v["log"])[-3000:])
print("stages:", json.dumps(v.get("stages", {})))
print("speedups:", [s.get("speedup") for s in v.get("shapes", [])])
PY
  tail -20 "$RAW/stderr-$ahead.log"
done
