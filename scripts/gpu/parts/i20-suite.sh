#!/usr/bin/env bash
# Issue: KernelBench-format problems. (1) `kernelevolve suite examples/kernelbench`: ten problems of our own
# (level 1 and 2 style), each drafted by the scripted OpenAI-compatible server (dist/scripted-llm-server.js)
# with one wrong and one right hand-written Triton ModelNew, judged by the real harness: verdicts, speedups over
# eager and (for the first COMPILE problems) over torch.compile, fast_p. (2) A few of KernelBench's own problem
# files (.external/kernelbench/, from scripts/kernelbench-problems.sh) through `kernelevolve evaluate` as they
# are, with the problem's own Model renamed ModelNew and with our Triton ModelNew, next to KernelBench's rule
# (scripts/gpu/kernelbench_rule.py): where the verdicts differ. Also the model-cuda GPU tests. About 6 minutes on
# one H200.
# Needs: dist/ (npm run build: cli.js and scripted-llm-server.js), node (round.sh unpacks .node/), .external/.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/i20-suite.sh RAWDIR
set -uo pipefail
RAW=$1
mkdir -p "$RAW"
# PROBLEMS and CANDIDATES name other folders (a dry run of this script on a CPU: the numpy problems, DRY=1)
PROBLEMS=${PROBLEMS:-examples/kernelbench}
CANDIDATES=${CANDIDATES:-examples/kernelbench/candidates}
if [ -z "${DRY:-}" ] && { ! command -v nvidia-smi >/dev/null || ! python3 -c 'import torch, triton; assert torch.cuda.is_available()' 2>/dev/null; }; then
  echo "i20-suite: needs a GPU with torch and triton; skipped"; exit 0
fi
for f in dist/cli.js dist/scripted-llm-server.js; do
  [ -f "$f" ] || { echo "i20-suite: $f is missing; run npm run build before the round"; exit 0; }
done

if [ -z "${DRY:-}" ] && [ "${I20_TESTS:-1}" != 0 ]; then  # I20_TESTS=0 where another part of the round runs them
  echo "-- harness GPU tests of model-cuda (harness/tests/test_kernelbench_gpu.py)"
  PYTHONPATH=harness timeout 240 python3 -m pytest harness/tests/test_kernelbench_gpu.py -q -rs 2>&1 | tail -12
fi
node dist/scripted-llm-server.js "$CANDIDATES" > "$RAW/server.json" 2> "$RAW/server.log" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do [ -s "$RAW/server.json" ] && break; sleep 0.1; done
base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["baseURL"])' "$RAW/server.json") || {
  echo "i20-suite: the scripted server did not start"; cat "$RAW/server.log"; exit 0; }

echo "-- kernelevolve suite $PROBLEMS (budget 2 per problem: one wrong, one right ModelNew)"
t0=$(date +%s)
OPENAI_BASE_URL=$base OPENAI_API_KEY=scripted node bin/kernelevolve.js suite "$PROBLEMS" --operators llm \
  --model scripted --budget 2 --compile "${COMPILE:-2}" --json --out "$RAW/suite" > "$RAW/suite.json" 2> "$RAW/suite.log"
echo "exit $?, $(( $(date +%s) - t0 )) s"
cat "$RAW/suite/suite.txt" 2>/dev/null || tail -20 "$RAW/suite.log"
echo
echo "-- every judged candidate (its docstring says what it is)"
python3 - "$RAW/suite" <<'PY'
import glob, json, os, re, sys
for run in sorted(glob.glob(os.path.join(sys.argv[1], "*", "run"))):
    problem = os.path.basename(os.path.dirname(run))
    for line in open(os.path.join(run, "verdicts.jsonl")):
        rec = json.loads(line)
        v = rec.get("verdict") or rec.get("confirmation") or {}
        src = open(os.path.join(run, "candidates", rec["id"] + ".py")).read()
        doc = re.match(r'"""(.*?)[.:\n]', src, re.S)
        what = "the problem itself" if rec["id"] == "c0000" else (doc.group(1).strip()[:40] if doc else "?")
        x = f'{v["speedup"]:.2f}x' if isinstance(v.get("speedup"), (int, float)) else "-"
        print(f'{problem:<18} {rec["id"]} {what:<40} {v.get("status", "?"):<16} {x:>7}  {(v.get("reason") or "")[:110]}')
PY

echo
echo "-- KernelBench's own problem files, as they are (.external/kernelbench)"
python3 -c 'import torch' 2>/dev/null || { echo "no torch here: skipped"; exit 0; }
ls .external/kernelbench/*.py >/dev/null 2>&1 || { echo "none carried: run scripts/kernelbench-problems.sh first"; exit 0; }
mkdir -p "$RAW/kernelbench"
pairs=()
for p in .external/kernelbench/*.py; do
  name=$(basename "$p" .py)
  sed -E 's/\bModel\b/ModelNew/g' "$p" > "$RAW/kernelbench/${name}_model_renamed.py"
  pairs+=("$p" "$RAW/kernelbench/${name}_model_renamed.py")
  [ -f "examples/kernelbench/for-kernelbench/$name.py" ] && pairs+=("$p" "examples/kernelbench/for-kernelbench/$name.py")
done
python3 scripts/gpu/kernelbench_rule.py "${pairs[@]}" > "$RAW/kernelbench/rule.jsonl" 2> "$RAW/kernelbench/rule.log"
for ((i = 0; i < ${#pairs[@]}; i += 2)); do
  node bin/kernelevolve.js evaluate --spec "${pairs[i]}" --candidate "${pairs[i+1]}" --json >> "$RAW/kernelbench/ours.jsonl" 2>> "$RAW/kernelbench/ours.log" \
    || [ $? -eq 1 ] || echo '{"status": "error", "reason": "evaluate failed (see ours.log)"}' >> "$RAW/kernelbench/ours.jsonl"
done
python3 - "$RAW/kernelbench" <<'PY'
import json, os, sys
d = sys.argv[1]
rule = [json.loads(l) for l in open(os.path.join(d, "rule.jsonl")) if l.strip()]
ours = [json.loads(l) for l in open(os.path.join(d, "ours.jsonl")) if l.strip()]
print(f'{"problem":<42} {"candidate":<14} {"ours":<16} {"speedup":>7}  {"KB@1e-2":<8} {"KB@1e-4":<8} differ')
for r, o in zip(rule, ours):
    kind = "Model renamed" if r["candidate"].endswith("_model_renamed.py") else "our Triton"
    ok = o.get("status") == "ok"
    x = f'{o["speedup"]:.2f}x' if isinstance(o.get("speedup"), (int, float)) else "-"
    differ = [t for t in ("1e-2", "1e-4") if r.get(f"correct_{t}") != ok]
    print(f'{os.path.basename(r["problem"]):<42} {kind:<14} {o.get("status", "?"):<16} {x:>7}  '
          f'{str(r.get("correct_1e-2")):<8} {str(r.get("correct_1e-4")):<8} {",".join(differ) or "no"}'
          f'  (max |diff| {r.get("max_abs_diff", float("nan")):.2e}{"; " + r["error"] if r.get("error") else ""})')
    print(f'    ours: {(o.get("reason") or "")[:150]}')
PY
