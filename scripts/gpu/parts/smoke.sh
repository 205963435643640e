#!/usr/bin/env bash
# A quick check that the harness as it stands works on the GPU: the harness's GPU test files (and the Triton
# compile test, which CI cannot run: no Triton there), and each public
# Triton kernel's baseline judged once against itself through the CLI (needs .external/, carried). ~4 minutes.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/smoke.sh RAWDIR
set -uo pipefail
RAW=$1
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "smoke: needs a GPU with torch; skipped"; exit 0
fi
echo "-- harness GPU tests"
# SMOKE_K: only the tests whose names match (pytest -k)
PYTHONPATH=harness timeout 240 python3 -m pytest harness/tests/test_gpu_backends.py harness/tests/test_kernelbench_gpu.py \
  harness/tests/test_triton_store.py -q -rs \
  ${SMOKE_K:+-k "$SMOKE_K"} 2>&1 | tail -25
[ "${SMOKE_PUBLIC:-1}" = 0 ] && exit 0
echo "-- public kernels, baseline against itself"
for spec in scripts/public-kernels/*/spec.py; do
  src=$(dirname "$spec")/$(python3 -c "import re,sys; print(re.search(r'^SOURCE\s*=\s*[\"\\'](.+?)[\"\\']', open(sys.argv[1]).read(), re.M).group(1))" "$spec")
  t0=$(date +%s.%N)
  v=$(timeout 120 node bin/kernelevolve.js evaluate --spec "$spec" --candidate "$src" --json 2>>"$RAW/stderr.log")
  echo "$v" >> "$RAW/self.jsonl"
  python3 - "$spec" "$t0" "$v" <<'PY'
import json, sys, time
spec, t0, v = sys.argv[1], float(sys.argv[2]), sys.argv[3]
try:
    d = json.loads(v)
except ValueError:
    print(f"{spec:55s} NO VERDICT {v[:300]}"); sys.exit()
shapes = " ".join(f"{s['speedup']:.3f}@{s['baseline_ms']*1000:.0f}us" for s in d.get("shapes") or [])
print(f"{spec:55s} {d['status']:14s} {d.get('speedup') or 0:.3f}x {time.time()-t0:5.1f}s {shapes}")
if d["status"] != "ok": print("   ", d.get("reason", "")[:400])
PY
done
