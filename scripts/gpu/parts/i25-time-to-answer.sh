#!/usr/bin/env bash
# Issue 25, time to the answer in the search, on the H200, in three steps (I25_STEPS, default all three, in this
# order; at most 9 + 4 + 4.5 minutes with the default limits, so two device calls of 10 minutes: I25_STEPS=evolve,
# then I25_STEPS=pershape,grid):
#  evolve   a 20-candidate `kernelevolve evolve --operators tune` of each public kernel in scripts/public-kernels,
#           one run at a time on one host of EVOLVE_SLOTS slots (20: the budget runs as one wave), timed in wall
#           seconds from the command's start to its JSON (baseline, search, the leaders' confirmation): the
#           candidates judged and cancelled (speculation made moot), the best and, for a per-shape table, its rows.
#           Goal: each within 60 s; a run still going at EVOLVE_TIMEOUT (90 s) is stopped and says so.
#           EVOLVE_SPECS names other specs (default: every scripts/public-kernels/*/spec.py).
#  pershape for two public kernels whose launch parameters the code computes (PERSHAPE_SPECS: Liger RMSNorm and
#           Liger softmax; the held-out scripts/heldout-kernels/cs336_softmax/spec.py on request), the tuner (budget 20, without the knowledge base's starts) against an exhaustive sweep of
#           the launch parameters it searches, judged in the same call: each shape's best launch, the reachable
#           per-shape speedup (their geometric mean) and the tuner's share of that gain, (tuner-1)/(reachable-1),
#           from paired judgements (each shape's best launch against the tuner's best, side by side; "strict": with
#           no shape's reachable below the tuner's there). Goal: >= 90%.
#  grid     the tuner against the uniform grid on a matmul launched with 16x16x16 tiles, the softmax example and a
#           quick GELU launched with 128-element blocks (part i16-tuner's grids), and on request (GRID_KERNELS) a
#           held-out public GELU, two matmuls, two log-softmaxes, a softmax and a cross-entropy (scripts/heldout-kernels:
#           cs336_gelu, nexxex_matmul, mng_xxt, tm_log_softmax, vibetensor_softmax, hv_log_softmax, mng_softcapped_ce), budget
#           20% of the grid's points,
#           without the knowledge base's starts: the Hopper starts are earlier H200 grids' winners (a start copied
#           from the answer proves nothing). Goal: >= 98% of the grid's best.
# The bench says where the kernel as written, or a tuner's start, is the grid's best ("AS WRITTEN = GRID BEST",
# "START c000N = GRID BEST"); the kernels' as-written launches (16x16x16 tiles and 1 warp; 1 row, the softmax
# example's own warps; 128-element blocks and 1 warp; the public kernels' computed settings) are not grid points
# the grids found best in the round of 2026-12-01.
# Needs, carried: dist/ with dist/knobs.cjs (npm run build && npx esbuild src/engine/knobs.ts --bundle
# --platform=node --format=cjs --outfile=dist/knobs.cjs), .node/, and .external/ (bash scripts/external-kernels.sh).
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/i25-time-to-answer.sh RAWDIR
set -uo pipefail
RAW=$1
STEPS=${I25_STEPS:-evolve,pershape,grid}
EVOLVE_SLOTS=${EVOLVE_SLOTS:-20}
SLOTS=${SLOTS:-12}
PERSHAPE_SPECS=${PERSHAPE_SPECS:-"scripts/public-kernels/liger_rms_norm/spec.py scripts/public-kernels/liger_softmax/spec.py"}
mkdir -p "$RAW/evolve" "$RAW/pershape" "$RAW/grid"
if ! command -v nvidia-smi >/dev/null || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "i25-time-to-answer: needs a GPU with torch; skipped"; exit 0
fi
if [ ! -f dist/knobs.cjs ]; then
  echo "i25-time-to-answer: dist/knobs.cjs is missing (here: npx esbuild src/engine/knobs.ts --bundle --platform=node --format=cjs --outfile=dist/knobs.cjs, then carry dist/); skipped"; exit 0
fi
if [ ! -d .external/Liger-Kernel ]; then echo "i25-time-to-answer: .external/ is missing (run bash scripts/external-kernels.sh here and carry it); the public kernels will fail"; fi
host() { echo "{\"hosts\": [{\"name\": \"h200\", \"type\": \"local\", \"slots\": $1, \"devices\": [0], \"hardware\": \"nvidia-h200\"}]}"; }
host "$EVOLVE_SLOTS" > "$RAW/hosts-evolve.json"
host "$SLOTS" > "$RAW/hosts.json"
has() { [[ ",$STEPS," == *",$1,"* ]]; }

if has evolve; then
  echo "== evolve: kernelevolve evolve --operators tune --budget 20, one run at a time, $EVOLVE_SLOTS slots"
  part_start=$(date +%s)
  # EVOLVE_NO_PRELOAD: specs run first with KERNELEVOLVE_PRELOAD=0 (workers that import the spec and the
  # baseline themselves, as before the fork points), as NAME-no-preload, then with the others: the same call's
  # A/B, each run the first of its spec on the host (the warm-worker server's start falls to the first run)
  for entry in ${EVOLVE_NO_PRELOAD:+$(printf '%s:off ' $EVOLVE_NO_PRELOAD)} ${EVOLVE_SPECS:-scripts/public-kernels/*/spec.py}; do
    spec=${entry%:off}
    name=$(basename "$(dirname "$spec")")
    preload=1
    if [ "$entry" != "$spec" ]; then name=$name-no-preload; preload=0; fi
    # a run takes its stop time and then confirms and saves (up to about 40 s more): one that would not finish
    # inside the part's limit is left out, so the table below is still printed
    if [ -n "${PART_LIMIT_S:-}" ] && [ $(( $(date +%s) - part_start + ${EVOLVE_TIMEOUT:-90} + 45 )) -gt "$PART_LIMIT_S" ]; then
      echo "evolve: $name left out (the part's ${PART_LIMIT_S} s would not hold it)"
      continue
    fi
    # each run starts from an empty store of compiled kernels, as a kernel's first tune on a host
    rm -rf "${KERNELEVOLVE_CACHE:-$HOME/.cache/kernelevolve}/triton-store"
    t0=$(date +%s.%N)
    KERNELEVOLVE_PRELOAD=$preload timeout "${EVOLVE_TIMEOUT:-90}" node bin/kernelevolve.js evolve --spec "$spec" --operators tune --budget 20 \
      --config "$RAW/hosts-evolve.json" --out "$RAW/evolve/$name" --json > "$RAW/evolve/$name.json" 2> "$RAW/evolve/$name.log"
    rc=$?
    echo "$name $rc $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")" >> "$RAW/evolve/wall.txt"
  done
  python3 - "$RAW/evolve" <<'PY'
import glob, json, os, sys
root = sys.argv[1]
walls = {}
for line in open(os.path.join(root, "wall.txt")):
    name, rc, wall = line.split()
    walls[name] = (int(rc), float(wall))
notes = []
print("| kernel | wall s | within 60 s | candidates (judged / cancelled) | started beside the baseline | search s | confirmation s (rounds) | best |")
print("|---|---:|---|---|---:|---:|---:|---|")
for name, (rc, wall) in sorted(walls.items()):
    run_dir = os.path.join(root, name)
    try:
        summary = json.load(open(os.path.join(root, name + ".json")))
    except ValueError:
        tail = open(os.path.join(root, name + ".log")).read()[-300:].replace("\n", " ")
        print(f"| {name} | {wall:.1f} | {'stopped by its time limit' if rc == 124 else 'no result'} | | | | {tail!r} |")
        continue
    metas = [json.load(open(f)) for f in glob.glob(os.path.join(run_dir, "candidates", "c*.json"))]
    judged = sum(1 for m in metas if m.get("state") == "done" and m["id"] != "c0000")
    cancelled = sum(1 for m in metas if m.get("state") == "cancelled")
    # the search ends with the last candidate's verdict; the confirmation of the leaders comes after
    finished = [m["timings"].get("finishedAt") for m in metas if m["timings"].get("finishedAt")]
    started = min(m["timings"]["proposedAt"] for m in metas)
    search_s = (max(finished) - started) / 1000 if finished else 0
    best = summary.get("best") or {}
    meta = next((m for m in metas if m["id"] == best.get("id")), {})
    what = f"{best.get('id')} {best.get('speedup', 0):.3f}x ({meta.get('mode') or meta.get('operator')})"
    if meta.get("mode") == "dispatch":
        what += "; table: " + "; ".join(f"{k} -> {v}" for k, v in (meta.get("knobs") or {}).items())
    elif best.get("id") == "c0000":
        what = "no faster variant on these shapes"
    base_verdict = summary.get("baseline") or {}
    if base_verdict.get("status") != "ok":
        what = f"the baseline is {base_verdict.get('status')}: {(base_verdict.get('reason') or '')[:160]}"
    within = "-" if base_verdict.get("status") != "ok" else "yes" if wall <= 60 else "NO"
    base_done = next((m["timings"].get("finishedAt") for m in metas if m["id"] == "c0000"), None) or 0
    beside = sum(1 for m in metas if m["id"] != "c0000" and 0 < (m["timings"].get("startedAt") or 0) < base_done)
    log_path = os.path.join(run_dir, "log.jsonl")
    rounds = sum(1 for line in open(log_path) if json.loads(line).get("message", "").startswith("Judging")) if os.path.exists(log_path) else 0
    print(f"| {name} | {wall:.1f} | {within} | {len(metas) - 1} ({judged} / {cancelled}) | {beside} | {search_s:.1f} | {max(0.0, wall - search_s):.1f} ({rounds}) | {what} |")
    # where a candidate's time went: the baseline's stages, and the candidates' medians (the verdicts' stages)
    def stages(m):
        return (m.get("verdict") or {}).get("stages") or {}
    keys = ("total_s", "worker_start_s", "preloaded_workers", "reference_ready_wait_s", "precompile_s", "correctness_s", "reference_wait_correctness_s", "lock_wait_s", "timing_s",
            "timing_rounds_s", "retimed_shapes", "reference_wait_timing_s", "verify_s")
    base = next((m for m in metas if m["id"] == "c0000"), {})
    others = [stages(m) for m in metas if m["id"] != "c0000" and stages(m)]
    def med(k):
        xs = sorted(x.get(k, 0) for x in others)
        return xs[len(xs) // 2] if xs else 0
    notes.append(f"{name}: baseline " + ", ".join(f"{k.removesuffix('_s')} {stages(base).get(k, 0):.2f}" for k in keys)
                 + f"; candidates (median of {len(others)}) " + ", ".join(f"{k.removesuffix('_s')} {med(k):.2f}" for k in keys))
    # every evaluation of the run (the confirmations' too): those whose workers were preloaded (a fork point's or a
    # spare's) against the others, by their totals
    totals = {True: [], False: []}
    vpath = os.path.join(run_dir, "verdicts.jsonl")
    def all_stages(x):
        if isinstance(x, dict):
            if isinstance(x.get("stages"), dict):
                yield x["stages"]
            for v in x.values():
                yield from all_stages(v)
        elif isinstance(x, list):
            for v in x:
                yield from all_stages(v)
    for line in open(vpath) if os.path.exists(vpath) else []:
        for st in all_stages(json.loads(line)):
            if "total_s" in st:
                totals[bool(st.get("preloaded_workers"))].append(st["total_s"])
    def med_of(xs):
        return f"{sorted(xs)[len(xs) // 2]:.1f} s" if xs else "-"
    notes.append(f"{name}: evaluations with preloaded workers {len(totals[True])} (median total {med_of(totals[True])}), "
                 f"without {len(totals[False])} (median total {med_of(totals[False])})")
    # the reference starts these evaluations waited for, phase by phase (the reference's own clock)
    for m in sorted(metas, key=lambda m: m["id"]):
        st = {k[len("reference_start_"):-2]: v for k, v in stages(m).items() if k.startswith("reference_start_")}
        if st:
            notes.append(f"{name} {m['id']}: started a reference: " + ", ".join(f"{k} {v:.2f}" for k, v in st.items())
                         + f" (its wait {stages(m).get('reference_ready_wait_s', 0):.2f})")
print("\nwhere the time went (s):")
for line in notes:
    print("  " + line)
PY
fi

bench() { # dir name timeout spec args... (REPEAT: the contenders' re-timings, 1 unless set; PAIRED: the paired share's rounds, none unless set)
  local dir=$1 name=$2 limit=$3 spec=$4
  shift 4
  # GRID_RESUME=DIR: an earlier call's grid folder (its raw.tgz's i25-time-to-answer/grid, carried under
  # .test-output/), whose DIR/NAME/NAME holds the bench's tuner run and grid.jsonl; or a folder whose DIR/NAME holds
  # them itself. The bench goes on where that call's time limit stopped it: bench-tuner.mjs keeps its work in
  # OUT/NAME, and OUT is RAW/grid/NAME here
  local kept=""
  if [ -n "${GRID_RESUME:-}" ] && [ ! -d "$RAW/$dir/$name" ]; then
    if [ -d "$GRID_RESUME/$name/$name" ]; then kept=$GRID_RESUME/$name/$name
    elif [ -f "$GRID_RESUME/$name/grid.jsonl" ] || [ -d "$GRID_RESUME/$name/tuner-run" ]; then kept=$GRID_RESUME/$name; fi
  fi
  if [ -n "$kept" ]; then
    mkdir -p "$RAW/$dir/$name" && cp -r "$kept" "$RAW/$dir/$name/$name"
    echo "$name: resumed from $kept ($(cat "$kept/grid.jsonl" 2>/dev/null | wc -l) grid points judged$([ -f "$kept/tuner-run/run.json" ] && echo ', its tuner run'))" >&2
  fi
  timeout "$limit" node scripts/bench-tuner.mjs --knobs dist/knobs.cjs --repeat "${REPEAT:-1}" --top 3 --final 2 --paired "${PAIRED:-0}" --parallel "$SLOTS" \
    --config "$RAW/hosts.json" --no-starts --out "$RAW/$dir/$name" "$@" "$spec" > "$RAW/$dir/$name.txt" 2> "$RAW/$dir/$name.log"
  if [ -s "$RAW/$dir/$name.txt" ]; then sed -n '3,$p' "$RAW/$dir/$name.txt" | grep -v '^| kernel\|^| ---' ; else echo "| $name | stopped by its time limit or failed: $(tail -c 300 "$RAW/$dir/$name.log")"; fi
}
header="| kernel | grid points | grid best (first / re-timed) | tuner best (first / re-timed) | tuner / grid | tuner evaluations | of the grid's | evaluations to 90% of grid | best per shape, reachable (first / re-timed / paired) | tuner's share of the reachable gain (paired; strict; same launches equal; re-timed) | tuner s | starts |"

if has pershape; then
  echo "== pershape: the tuner (budget 20, no knowledge-base starts) against an exhaustive per-shape sweep, same call"
  echo "$header"
  for spec in $PERSHAPE_SPECS; do
    # the share is read from paired judgements: each shape's best launch judged with the tuner's best as its
    # baseline, PERSHAPE_PAIRED rounds (the median), and the tuner's best against the kernel as written, paired in each
    # of its re-timings (PERSHAPE_REPEAT) and final rounds. The share from unpaired re-timed figures is printed beside
    # it: one such re-timing moved a share by 10-20 points on a 4-8% reachable gain, three by 30-50 between calls
    REPEAT=${PERSHAPE_REPEAT:-3} PAIRED=${PERSHAPE_PAIRED:-3} bench pershape "$(basename "$(dirname "$spec")")" "${PERSHAPE_TIMEOUT:-180}" "$spec" --budget 20
  done
fi

if has grid; then
  echo "== grid: the tuner (20% of the grid's points, no knowledge-base starts) against the uniform grid, same call"
  echo "$header"
  # GRID_KERNELS: which kernels, in this order (default the three; GRID_TIMEOUT: each one's limit, default 100 s, 200 s for
  # nexxex, whose 72 points ran past 100 s on a card's first compiles, and XXT_TIMEOUT 240 s for XXT)
  for k in ${GRID_KERNELS:-matmul_small softmax quick_gelu}; do
    case $k in
      matmul_small) bench grid matmul_small "${GRID_TIMEOUT:-100}" scripts/gpu/tuner-kernels/matmul_small/spec.py --budget-fraction 0.2 \
        --axis BLOCK_M=64,128,256 --axis BLOCK_N=64,128,256 --axis BLOCK_K=64 --axis num_warps=4,8 --axis num_stages=3,4 ;;
      softmax) bench grid softmax "${GRID_TIMEOUT:-100}" examples/triton/softmax/spec.py --budget-fraction 0.2 \
        --axis row_block=1,2,4,8 --axis num_warps=1,2,4,8,16 --axis num_stages=1,3 ;;
      quick_gelu) bench grid quick_gelu "${GELU_TIMEOUT:-70}" scripts/gpu/tuner-kernels/quick_gelu/spec.py --budget-fraction 0.2 \
        --axis BLOCK=256,512,1024,2048,4096,8192 --axis num_warps=1,2,4,8 ;;
      # held out: a public GELU (CS336 lecture 6, a literal 1024-element block on Triton's default 4 warps) that no
      # rule of the tuner was written after
      cs336_gelu) bench grid cs336_gelu "${GELU_TIMEOUT:-70}" scripts/heldout-kernels/cs336_gelu/spec.py --budget-fraction 0.2 \
        --axis block_size=256,512,1024,2048,4096,8192 --axis num_warps=1,2,4,8,16 ;;
      # held out: a public matmul (tiles 128 x 128 x 32 from its launcher's defaults, Triton's default warps and stages)
      nexxex_matmul) bench grid nexxex_matmul "${GRID_TIMEOUT:-200}" scripts/heldout-kernels/nexxex_matmul/spec.py --budget-fraction 0.2 \
        --axis BLOCK_M=64,128,256 --axis BLOCK_N=64,128,256 --axis BLOCK_K=32,64 --axis num_warps=4,8 --axis num_stages=3,4 ;;
      # held out: Thinking Machines' batch-invariant log-softmax on vocabulary-wide rows (a literal 1024-element block
      # on Triton's default 4 warps and 3 stages; num_warps@319 and num_stages@319: its launch's line at the pinned
      # commit), its block, warps and stages searched: 50 points
      tm_log_softmax) bench grid tm_log_softmax "${LOGSOFTMAX_TIMEOUT:-240}" scripts/heldout-kernels/tm_log_softmax/spec.py --budget-fraction 0.2 \
        --axis BLOCK_SIZE=512,1024,2048,4096,8192 --axis num_warps@319=2,4,8,16,32 --axis num_stages@319=1,3 ;;
      # held out: NVlabs VibeTensor's softmax on the same rows (a literal 128-element block in both its launchers, on
      # Triton's default 4 warps and 3 stages), block, warps and stages searched: 70 points. Chosen after the rule that
      # a draft is refined a step further along its line (written after tm_log_softmax's grid) and before any grid of it
      vibetensor_softmax) bench grid vibetensor_softmax "${VIBE_TIMEOUT:-300}" scripts/heldout-kernels/vibetensor_softmax/spec.py --budget-fraction 0.2 \
        --axis BLOCK_SIZE=128,256,512,1024,2048,4096,8192 --axis num_warps=2,4,8,16,32 --axis num_stages=1,3 ;;
      # held out: a log-softmax whose block, warps and stages are module constants (1024, 4 warps, 2 stages) passed by
      # name to its launches, on the same rows: 72 points. Chosen after the VibeTensor softmax's grid and before any
      # grid of it; no rule of the search was written after that grid (the knob fixes before it are detection's)
      hv_log_softmax) bench grid hv_log_softmax "${HV_TIMEOUT:-300}" scripts/heldout-kernels/hv_log_softmax/spec.py --budget-fraction 0.2 \
        --axis BLOCK_SIZE@13=256,512,1024,2048,4096,8192 --axis NUM_WARPS=2,4,8,16 --axis NUM_STAGES=1,2,3 ;;
      # held out: modded-nanogpt's fused softcapped cross-entropy (forward) on bf16 logits of vocabulary width (literal
      # BLOCK_SIZE=1024, num_warps=8, num_stages=4): 90 points. Chosen after the search's rules of 2d38e84 (the wide
      # block drafts, the refunds of moot candidates, warps to 32) and before any grid of it
      mng_softcapped_ce) bench grid mng_softcapped_ce "${MNG_TIMEOUT:-360}" scripts/heldout-kernels/mng_softcapped_ce/spec.py --budget-fraction 0.2 \
        --axis BLOCK_SIZE=256,512,1024,2048,4096,8192 --axis num_warps=2,4,8,16,32 --axis num_stages=1,2,4 ;;
      # held out: modded-nanogpt's symmetric product A @ A.T on stacks of bf16 matrices, its tiles, warps and stages
      # picked per shape by its launcher (H100-tuned: 128 x 128 x 64 where K is 768, else 64 x 128 x 128, on 8 warps
      # and 4 stages), searched as one launch for every shape: 108 points (its grouping of programs kept at 8).
      # Chosen after the rule that a matmul's K tile is drafted at the middle of its domain at most (written after
      # matmul_small's grid) and before any grid of it
      mng_xxt) bench grid mng_xxt "${XXT_TIMEOUT:-240}" scripts/heldout-kernels/mng_xxt/spec.py --budget-fraction 0.2 \
        --axis BLOCK_SIZE_M=64,128,256 --axis BLOCK_SIZE_N=64,128,256 --axis BLOCK_SIZE_K=32,64,128 --axis GROUP_SIZE_M=8 \
        --axis num_warps=4,8 --axis num_stages=3,4 ;;
      *) echo "grid: no kernel $k (matmul_small, softmax, quick_gelu, cs336_gelu, nexxex_matmul, tm_log_softmax, vibetensor_softmax, hv_log_softmax, mng_softcapped_ce, mng_xxt)" ;;
    esac
  done
fi
for f in "$RAW"/pershape/*/bench-tuner.json "$RAW"/grid/*/bench-tuner.json; do
  [ -f "$f" ] || continue
  python3 - "$f" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(f"{r['kernel']}: knobs {r['knobs']}; grid best {r['gridBest']['values']}; tuner best {r['tuner']['id']} ({r['tuner'].get('mode')}) {r['tuner'].get('values', 'as written')}")
PY
done
