#!/usr/bin/env bash
# What running second in a timed round does to a kernel's time, varied one thing at a time (scripts/gpu/order_effect.py:
# the softmax example's shapes, the harness's event timer): the position, the buffers, the refill, the flush, the
# queue, the instruction caches. About 40 s on one H200.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/order-effect.sh RAWDIR
set -uo pipefail
RAW=$1
if ! command -v nvidia-smi >/dev/null || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "order-effect: needs a GPU with torch; skipped"; exit 0
fi
python3 scripts/gpu/order_effect.py ${ORDER_SHAPES:-} | tee "$RAW/order-effect.md"
# the code flush's load in fresh processes (the driver compiles its PTX once and keeps the result in its cache)
for _ in 1 2; do
  python3 -c 'import sys, torch; sys.path.insert(0, "harness")
from kernelevolve_harness.code_flush import code_flush
f = code_flush(torch); print("code flush loaded in a fresh process:", f"{f.load_ms:.0f} ms" if f else "not loaded")'
done | tee -a "$RAW/order-effect.md"
