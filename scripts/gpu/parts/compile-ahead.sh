#!/usr/bin/env bash
# A candidate's compiles side by side (backends/triton.py `compile_ahead`), on the GPU:
#  (a) the harness's GPU tests of it (test_gpu_backends.py -k compile);
#  (b) `kernelevolve evaluate` of two Triton candidates, AHEAD_RUNS times each way, the two ways alternating
#      (KERNELEVOLVE_COMPILE_AHEAD=1, then =0) after one run not counted (the warm server's and reference's start), with no host store of compiled kernels (KERNELEVOLVE_KERNEL_STORE=0:
#      every evaluation compiles its candidate): Liger's GeGLU forward at one warp on its four shapes (the
#      straggler of the H100 tune of 2026-12-05: 37.8 s of first calls) and the softmax example's more_warps
#      candidate (three shapes, quick compiles). Per candidate and way: the medians of the first calls' seconds,
#      the correctness stage, the total and the wall, the compiles done side by side, and every verdict's status.
# Needs, carried: dist/, .node/, .external/ (bash scripts/external-kernels.sh). About 2.5 minutes on an H100.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/compile-ahead.sh RAWDIR
set -uo pipefail
RAW=$1
RUNS=${AHEAD_RUNS:-3}
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "compile-ahead: needs a GPU with torch; skipped"; exit 0
fi
echo "-- harness GPU tests (-k compile)"
PYTHONPATH=harness timeout 180 python3 -m pytest harness/tests/test_gpu_backends.py -q -rs -k compile 2>&1 | tail -8
GEGLU=scripts/public-kernels/liger_geglu
mkdir -p "$RAW/cands"
# the forward launch at one warp (the backward's launch too; the spec never calls it)
sed 's/num_warps=num_warps,/num_warps=1,/' .external/Liger-Kernel/src/liger_kernel/ops/geglu.py > "$RAW/cands/geglu_one_warp.py"
grep -q 'num_warps=1,' "$RAW/cands/geglu_one_warp.py" || { echo "compile-ahead: Liger's geglu.py has no 'num_warps=num_warps,' to change"; }
pairs="$GEGLU/spec.py:$RAW/cands/geglu_one_warp.py examples/triton/softmax/spec.py:examples/triton/softmax/candidates/more_warps.py"
# run 0 of each candidate starts the host's warm-worker server and the shared reference; it is not counted
for it in $(seq 0 "$RUNS"); do
  for pair in $pairs; do
    spec=${pair%%:*} cand=${pair#*:}
    for ahead in 1 0; do
      [ "$it" = 0 ] && [ "$ahead" = 0 ] && continue
      t0=$(date +%s.%N)
      v=$(KERNELEVOLVE_KERNEL_STORE=0 KERNELEVOLVE_COMPILE_AHEAD=$ahead timeout 300 node bin/kernelevolve.js evaluate \
        --spec "$spec" --candidate "$cand" --json 2>>"$RAW/stderr.log")
      [ "$it" = 0 ] || echo "{\"kernel\": \"$(basename "$(dirname "$spec")")\", \"ahead\": $ahead, \"wall\": $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$t0" "$(date +%s.%N)"), \"verdict\": ${v:-null}}" >> "$RAW/ab.jsonl"
    done
  done
done
python3 - "$RAW/ab.jsonl" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    rows.setdefault((r["kernel"], r["ahead"]), []).append(r)
print("| candidate | compiles side by side | runs (statuses) | first calls s | correctness s | total s | wall s | compiled side by side |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for (kernel, ahead), rs in sorted(rows.items(), key=lambda x: (x[0][0], -x[0][1])):
    st = [(r["verdict"] or {}).get("stages") or {} for r in rs]
    med = lambda k: statistics.median([s.get(k, 0) for s in st]) if st else 0
    statuses = ", ".join((r["verdict"] or {}).get("status", "none") for r in rs)
    print(f"| {kernel} | {'yes' if ahead else 'no (KERNELEVOLVE_COMPILE_AHEAD=0)'} | {len(rs)} ({statuses}) | "
          f"{med('precompile_s'):.2f} | {med('correctness_s'):.2f} | {med('total_s'):.2f} | "
          f"{statistics.median(r['wall'] for r in rs):.2f} | {med('precompile_ahead'):.0f} |")
PY
