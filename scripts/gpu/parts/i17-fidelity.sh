#!/usr/bin/env bash
# Issue 17, how far a self-judgement strays, and how fast a first answer comes, on the H200:
#  (a) the first and the second `kernelevolve evaluate` of the Triton softmax example on a host with no warm
#      server yet (a fresh KERNELEVOLVE_WARM_DIR): the wall time of each (goal: the second <= 3 s);
#  (b) self-judgements (the baseline judged against itself) RUNS times each of the Triton examples (softmax,
#      matmul) and of the public Triton kernels (scripts/public-kernels/*/spec.py, sources in .external/): per
#      kernel each geometric mean, the worst shape of >= 10 us, and whether every interval covers 1.00
#      (scripts/gpu/fidelity_summary.py).
# About 4 minutes on one H200: (a) ~0.5, (b) the rest, bounded by BUDGET_S (default 200 s) shared evenly by the
# kernels: a kernel whose share runs out stops early and the summary says how many runs it got.
# Needs, carried: dist/, .node/, .external/ (bash scripts/external-kernels.sh). Without a GPU it runs the same
# steps on the C++ examples (RUNS 2), so the part and its summary are checked on any machine.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/i17-fidelity.sh RAWDIR
set -uo pipefail
RAW=$1
RUNS=${RUNS:-10}
BUDGET_S=${BUDGET_S:-200}
mkdir -p "$RAW/selfjudge"
# one warm-worker server for every evaluation of the part (scripts/gpu/round.sh sets its own shell as the owner)
export KERNELEVOLVE_WARM_OWNER=${KERNELEVOLVE_WARM_OWNER:-$$}
export KERNELEVOLVE_WARM_DIR
KERNELEVOLVE_WARM_DIR=$(mktemp -d)
chmod 700 "$KERNELEVOLVE_WARM_DIR"
if command -v nvidia-smi >/dev/null && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  first=examples/triton/softmax/spec.py
  specs=(examples/triton/softmax/spec.py examples/triton/matmul/spec.py)
  for s in scripts/public-kernels/*/spec.py; do specs+=("$s"); done
  # FIDELITY_SPECS: the specs to judge (space-separated), instead of every example and public kernel
  [ -n "${FIDELITY_SPECS:-}" ] && read -ra specs <<< "$FIDELITY_SPECS"
  [ -d .external/Liger-Kernel ] || echo "i17-fidelity: .external/ is missing (run bash scripts/external-kernels.sh and carry it); the public kernels will fail"
else
  echo "i17-fidelity: no GPU here; the same steps on the C++ examples"
  RUNS=${CPU_RUNS:-2}
  first=examples/cpp/softmax_rows/spec.py
  specs=(examples/cpp/softmax_rows/spec.py examples/cpp/matmul_blocked/spec.py)
fi
# the baseline's source from the spec's header (read without importing the spec, which would import torch)
baseline() { PYTHONPATH=harness python3 -c 'import sys; from kernelevolve_harness.spec import read_header; print(read_header(sys.argv[1]).source)' "$1"; }
evaluate() { node bin/kernelevolve.js evaluate --spec "$1" --candidate "$(baseline "$1")" --json; }
now() { date +%s.%N; }

echo "== (a) first and second evaluate of $(dirname "$first") on a host with no warm server"
for k in first second; do
  t0=$(now)
  evaluate "$first" > "$RAW/$k.json" 2> "$RAW/$k.log"
  t1=$(now)
  python3 - "$RAW/$k.json" "$k" "$t0" "$t1" <<'PY'
import json, sys
path, which, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    v = json.loads(open(path).read().strip().splitlines()[-1])
except (OSError, ValueError, IndexError):
    v = {"status": "no verdict"}
st = v.get("stages", {})
print(f"{which} evaluate: {t1 - t0:.1f} s wall ({v.get('status')}; harness total {st.get('total_s', '-')} s, "
      f"workers {v.get('workers', {})})")
PY
done

# PARALLEL=1: the kernels' series run side by side (each kernel's runs one after another; the timing lock
# keeps timed sections apart, the other evaluations' checks run beside them, as in a search), each with the
# whole budget; else one kernel after another, each with an even share.
echo "== (b) self-judgements, $RUNS runs each (budget ${BUDGET_S} s$([ -n "${PARALLEL:-}" ] && echo ', kernels side by side'))"
share=$(( BUDGET_S / ${#specs[@]} ))
[ -n "${PARALLEL:-}" ] && share=$BUDGET_S
series() {
  local s=$1 name t0 r
  name=$(basename "$(dirname "$s")")
  mkdir -p "$RAW/selfjudge/$name"
  t0=$(date +%s)
  for ((r = 1; r <= RUNS; r++)); do
    (( $(date +%s) - t0 >= share )) && { echo "$name: its ${share} s share ran out after $((r - 1)) runs"; break; }
    evaluate "$s" > "$RAW/selfjudge/$name/run$(printf %02d "$r").json" 2> "$RAW/selfjudge/$name/run$r.log"
  done
}
for s in "${specs[@]}"; do
  if [ -n "${PARALLEL:-}" ]; then series "$s" & else series "$s"; fi
done
wait
python3 scripts/gpu/fidelity_summary.py "$RAW/selfjudge"
rm -rf "$KERNELEVOLVE_WARM_DIR"
