#!/usr/bin/env bash
# Side-by-side runs of scripts/gpu/bench.sh with this checkout's harness and with each variant made by
# scripts/gpu/variants.sh, one after the other in one GPU call (runs in one call share the machine's state):
#   OUT=DIR bash scripts/gpu/compare.sh [SLOTS] main timing-gate shared-reference
# "main" is this checkout's harness. PARTS (default throughput) and the other bench.sh variables apply to each
# run; THROUGHPUT_SPECS defaults to the softmax example, MINUTES to 1. Each run's summary is in OUT/<name>.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
SLOTS=${1:-12}
shift || true
OUT=${OUT:-.test-output/gpu-compare}
mkdir -p "$OUT"
keep=$(mktemp -d)
cp -r harness/kernelevolve_harness "$keep/"
restore() { rm -rf harness/kernelevolve_harness; cp -r "$keep/kernelevolve_harness" harness/; }
trap restore EXIT
for name in "$@"; do
  restore
  if [ "$name" != main ]; then
    if [ ! -d ".test-output/variants/$name/kernelevolve_harness" ]; then
      echo "no variant $name: run scripts/gpu/variants.sh $name first, and carry .test-output/variants"; continue
    fi
    rm -rf harness/kernelevolve_harness
    cp -r ".test-output/variants/$name/kernelevolve_harness" harness/
  fi
  OUT="$OUT/$name" PARTS=${PARTS:-throughput} THROUGHPUT_SPECS=${THROUGHPUT_SPECS:-examples/triton/softmax/spec.py} \
    MINUTES=${MINUTES:-1} EVOLVE_TIMEOUT=${EVOLVE_TIMEOUT:-95} bash scripts/gpu/bench.sh "$SLOTS" 300 > "$OUT/$name.log" 2>&1
  echo "== $name"
  sed -n '/^throughput/,$p' "$OUT/$name.log" | grep -v "^throughput" | head -12
done
