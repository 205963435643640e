#!/usr/bin/env bash
# Issue 17, how far a self-judgement strays, and how fast a first answer comes, on the H200:
#  (a) the first and the second `kernelevolve evaluate` of the Triton softmax example on a host with no warm
#      server yet (a fresh KERNELEVOLVE_WARM_DIR), each from a CLI process of its own with the local host's default
#      (the server outlives the CLI until idle): the wall time of each (goal: the second <= 3 s), and where the
#      harness's time went;
#  (b) self-judgements (the baseline judged against itself) RUNS times each of the Triton examples (softmax,
#      matmul) and of the public Triton kernels (scripts/public-kernels/*/spec.py, sources in .external/): per
#      kernel each geometric mean, the worst shape of >= 10 us, whether every interval covers 1.00, the rounds set
#      aside because a launch was still queued when its timing began, and the table of docs/benchmarks.md
#      (scripts/gpu/fidelity_summary.py). By default the two examples and three public kernels (Liger RMSNorm,
#      Liger softmax, Unsloth RMS LayerNorm), their series side by side (PARALLEL=1; PARALLEL= for one after
#      another).
# At most 5 minutes on one H200: (a) ~0.3, (b) the rest, bounded by BUDGET_S (default 240 s; each series stops
# starting runs when it is spent, and the summary says how many runs each kernel got).
# Needs, carried: dist/, .node/, .external/ (bash scripts/external-kernels.sh). Without a GPU it runs the same
# steps on the C++ examples (RUNS 2), so the part and its summary are checked on any machine.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/i17-fidelity.sh RAWDIR
set -uo pipefail
RAW=$1
RUNS=${RUNS:-10}
BUDGET_S=${BUDGET_S:-240}
PARALLEL=${PARALLEL-1}
mkdir -p "$RAW/selfjudge"
# The local host's default: its warm-worker server has no owner and outlives each CLI process until idle
# (scripts/gpu/round.sh makes its own shell the owner for the other parts). A folder of its own, so the first
# evaluate finds no server; the part stops the servers it started when it ends.
unset KERNELEVOLVE_WARM_OWNER
export KERNELEVOLVE_WARM_DIR
KERNELEVOLVE_WARM_DIR=$(mktemp -d)
chmod 700 "$KERNELEVOLVE_WARM_DIR"
stop_servers() {
  for m in "$KERNELEVOLVE_WARM_DIR"/w-*.json; do
    [ -f "$m" ] || continue
    pid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' "$m" 2>/dev/null) && kill "$pid" 2>/dev/null
  done
  rm -rf "$KERNELEVOLVE_WARM_DIR"
}
trap stop_servers EXIT
if command -v nvidia-smi >/dev/null && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  first=examples/triton/softmax/spec.py
  specs=(examples/triton/softmax/spec.py examples/triton/matmul/spec.py scripts/public-kernels/liger_rms_norm/spec.py
         scripts/public-kernels/liger_softmax/spec.py scripts/public-kernels/unsloth_rms_layernorm/spec.py)
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
# COMPARE_AB=BYTES: a third, warm like the second, with outputs from BYTES a call on compared on the device
# (KERNELEVOLVE_DEVICE_COMPARE_BYTES, 4 MiB by default; with 67108864, the softmax's 17-34 MB outputs cross to the judge)
for k in first second ${COMPARE_AB:+compare-$COMPARE_AB}; do
  t0=$(now)
  if [[ $k == compare-* ]]; then
    KERNELEVOLVE_DEVICE_COMPARE_BYTES=$COMPARE_AB evaluate "$first" > "$RAW/$k.json" 2> "$RAW/$k.log"
  else
    evaluate "$first" > "$RAW/$k.json" 2> "$RAW/$k.log"
  fi
  t1=$(now)
  python3 - "$RAW/$k.json" "$k" "$t0" "$t1" <<'PY'
import json, sys
path, which, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    v = json.loads(open(path).read().strip().splitlines()[-1])
except (OSError, ValueError, IndexError):
    v = {"status": "no verdict"}
st = v.get("stages", {})
def s(k):
    x = st.get(k)
    return f"{x:.2f}" if isinstance(x, (int, float)) else "-"
print(f"{which} evaluate: {t1 - t0:.1f} s wall ({v.get('status')}; harness total {s('total_s')} s: compile "
      f"{s('compile_s')}, correctness {s('correctness_s')}, lock wait {s('lock_wait_s')}, timing {s('timing_s')}, "
      f"checking the timed calls {s('verify_s')}; workers {v.get('workers', {})})")
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
# KERNELEVOLVE_VERDICT_PASSES=1: what re-timing changed in these self-judgements (scripts/gpu/retime_study.py)
if [ "${KERNELEVOLVE_VERDICT_PASSES:-}" = 1 ]; then
  echo "== re-timing in these self-judgements"
  python3 scripts/gpu/retime_study.py --self "$RAW"/selfjudge/*/run*.json
fi
