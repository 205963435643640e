#!/usr/bin/env bash
# What running second in a timed round does to a kernel's time, varied one thing at a time (scripts/gpu/order_effect.py:
# the softmax example's shapes, the harness's event timer): the position, the buffers, the refill, the flush, the
# queue. About 20 s on one H200.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/order-effect.sh RAWDIR
set -uo pipefail
RAW=$1
if ! command -v nvidia-smi >/dev/null || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "order-effect: needs a GPU with torch; skipped"; exit 0
fi
python3 scripts/gpu/order_effect.py ${ORDER_SHAPES:-} | tee "$RAW/order-effect.md"
