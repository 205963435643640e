#!/usr/bin/env bash
# The red team's GPU classes: harness/tests/test_red_team_gpu.py (graph-capture, stream and device-state detection,
# work left on a side stream, a lazy tensor subclass, torch.empty reading freed memory, TF32 and fp16 downgrades,
# L2 persistence windows), each hack beside its honest twin, then one line per case: its verdict and the start of
# its reason. An xfail is a hack the judge does not catch yet. ~2 minutes on an H100.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/red-team.sh RAWDIR
set -uo pipefail
RAW=${1:-$(mktemp -d)}
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "red-team: needs a GPU; skipped"; exit 0
fi
mkdir -p "$RAW"
VERDICTS="$RAW/red-team-verdicts.jsonl"
: > "$VERDICTS"
echo "-- harness/tests/test_red_team_gpu.py"
KERNELEVOLVE_RED_TEAM_VERDICTS="$VERDICTS" PYTHONPATH=harness timeout 540 python3 -m pytest \
  harness/tests/test_red_team_gpu.py -q -rsxX -p no:cacheprovider 2>&1 | tee "$RAW/red-team-pytest.log" | tail -20
echo "-- one line per case: verdict, speedup, the baseline's worker/clean-process ratio per shape, reason"
python3 - "$VERDICTS" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    d = json.loads(line)
    speedup = f"{d['speedup']:.2f}x" if d.get("speedup") else "-"
    clean = ",".join(f"{r:.2f}" for r in d.get("clean") or [] if r is not None) or "-"
    print(f"{d['case'][:62]:62s} {d['status']:15s} {speedup:>7s} clean {clean:>5s}  {' '.join(d['reason'].split())[:100]}")
PY
