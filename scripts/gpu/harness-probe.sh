#!/usr/bin/env bash
# The harness alone on a GPU host (no Node, no tuner): three evaluations of the Triton softmax example against
# itself on a warm host (wall, stages, the trace of the last: each pass's rounds, rule and lock hold), then for the
# softmax and matmul examples N parallel evaluation loops sharing one timing lock for SECONDS: verdicts a minute,
# GPU busy (nvidia-smi), the lock's share, mean stages, and each shape's self-judgements (within the fidelity goal,
# intervals covering 1.00). A quick check of a harness change; the figures of record come from scripts/gpu/round.sh.
# usage: bash scripts/gpu/harness-probe.sh OUT [SECONDS] [N]     (about 30 s + 2 x SECONDS)
set -uo pipefail
if ! command -v nvidia-smi >/dev/null || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "harness-probe: needs a GPU with torch; skipped"; exit 0
fi
OUT=${1:-/tmp/probe}; SECS=${2:-40}; N=${3:-12}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/harness KERNELEVOLVE_WARM_OWNER=$$ KERNELEVOLVE_CACHE=$OUT/cache
export KERNELEVOLVE_WARM_DIR=$(mktemp -d); chmod 700 $KERNELEVOLVE_WARM_DIR
LOCK=$OUT/gpu.lock
ev() { python3 -m kernelevolve_harness evaluate --spec "$1" --candidate "$2" --json --lock $LOCK; }
S=examples/triton/softmax
for k in 1 2 3; do
  t0=$(date +%s.%N); KERNELEVOLVE_TRACE=1 ev $S/spec.py $S/softmax.py > $OUT/warm$k.json 2> $OUT/warm$k.trace; t1=$(date +%s.%N)
  python3 - $OUT/warm$k.json $t0 $t1 <<'PY'
import json,sys
v=json.load(open(sys.argv[1])); print(f"evaluate wall {float(sys.argv[3])-float(sys.argv[2]):.2f}s", v["status"], round(v.get("speedup",0),3), v.get("reason","")[:200]); print("  ", json.dumps(v.get("stages")))
for s in v.get("shapes",[]): print("  ", s["shape"], round(s["speedup"],4), [round(x,4) for x in s.get("interval",[])], s["method"], s["samples"], s.get("passes"))
PY
done
grep -E "timed shape|pass of shape|final|verify|correct_done" $OUT/warm3.trace | cut -c1-220
tp() { # name spec candidate
  local name=$1 spec=$2 cand=$3 d=$OUT/$1; mkdir -p $d
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > $d/util.txt & local smi=$!
  local end=$(( $(date +%s) + SECS ))
  for ((w=0; w<N; w++)); do ( n=0; while [ $(date +%s) -lt $end ]; do ev $spec $cand > $d/v$w-$n.json 2>/dev/null; n=$((n+1)); done ) & done
  for j in $(jobs -p); do [ "$j" = "$smi" ] || wait $j; done; kill $smi
  python3 - $d <<'PY'
import glob, json, os, statistics, sys
d = sys.argv[1]; vs = []
for p in glob.glob(d + "/v*.json"):
    try: vs.append((os.path.getmtime(p), json.load(open(p))))
    except Exception: pass
vs.sort(key=lambda x: x[0]); ts = [t for t, _ in vs]
st = [v.get("stages", {}) for _, v in vs]
m = lambda k: statistics.mean([s[k] for s in st if k in s]) if any(k in s for s in st) else float("nan")
u = [float(x) for x in open(d + "/util.txt").read().split() if x.strip()]
span = ts[-1] - ts[0]
print(f"{os.path.basename(d)}: {len(vs)} verdicts, {(len(vs)-1)/span*60:.1f}/min steady; statuses {sorted(set(v['status'] for _, v in vs))};"
      f" GPU util mean {statistics.mean(u):.0f}%; lock held {sum(s.get('timing_s',0) for s in st)/span:.0%}")
print("  mean s: " + ", ".join(f"{k} {m(k):.3f}" for k in ["correctness_s","lock_wait_s","timing_s","verify_s","total_s","timing_setup_s","timing_capture_s","timing_rounds_s","timing_evidence_s","retimed_shapes","host_waits"]))
ok = [v for _, v in vs if v.get("status") == "ok"]
by = {}
for v in ok:
    for s in v["shapes"]: by.setdefault(json.dumps(s["shape"]), []).append(s)
for k, rows in by.items():
    us = statistics.median(r["baseline_ms"] for r in rows) * 1000; tol = 0.02 if us >= 10 else 0.05
    r = [x["speedup"] for x in rows]
    print(f"  {k:40s} {us:7.1f} us {rows[0]['method']:11s} within +-{tol:.0%}: {sum(abs(x-1)<=tol for x in r)}/{len(r)}"
          f" covers 1: {sum(x['interval'][0]<=1<=x['interval'][1] for x in rows)}/{len(r)} min {min(r):.3f} max {max(r):.3f} samples {statistics.median(x['samples'] for x in rows)}")
PY
}
tp softmax $S/spec.py $S/softmax.py
M=examples/triton/matmul; tp matmul $M/spec.py $M/matmul.py
for m in $KERNELEVOLVE_WARM_DIR/w-*.json; do pid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["pid"])' $m) && kill $pid; done 2>/dev/null
