#!/usr/bin/env bash
# Issue 24: every level-1 problem of KernelBench at the pinned commit, as published (its own sizes: inputs up to
# 8.6 GB), self-judged by the harness: each problem's own Model as the candidate against itself, through
# `python3 -m kernelevolve_harness evaluate` (no Node). Problems run side by side where GPU and host memory hold
# them (scripts/gpu/kernelbench_selfjudge.py: each evaluation told its share of the GPU through
# KERNELEVOLVE_DEVICE_MEMORY_BYTES, timing stages one at a time under one lock); one that ran out of memory or was
# refused beside others is judged again alone. Per problem: name, status, speedup (should be 1.00 +- 0.03), wall
# seconds; then counts by status, out-of-memory and "problem itself failed" lists, total wall time, slowest ten.
# Needs: .external/kernelbench-all/level1 (bash scripts/kernelbench-problems.sh --all-levels, before the round).
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/i24-level1.sh RAWDIR
#   LEVEL_DIR (default .external/kernelbench-all/level1), JOBS (6), DEADLINE (seconds in which problems are started:
#   330) and PER_PROBLEM (seconds before one is killed: 240), so the part ends inside a 10-minute device call;
#   SHARD (K/N: every Nth problem from the Kth, for a level split over N device calls; the summary of all of them:
#   python3 scripts/gpu/kernelbench_selfjudge.py --summary RAW1/results.jsonl RAW2/results.jsonl ...); REST (a
#   results.jsonl of an earlier call, carried in: only its problems left "not run"); ONLY (names, comma-separated)
#   SUITE=1: through the product instead, as a user runs it: `kernelevolve suite DIR --self-judge --jobs JOBS` over
#   the shard's problems (a folder of links to them; ONLY's where given), with its table and the session's wall
#   time; the level's summary over the shards: python3 scripts/gpu/suite_summary.py RAW1/suite/suite.json ...
#   SUITE_OUT: the suite's folder (default RAW/suite); where it holds a suite an earlier call left unfinished
#   (carried in), that suite is resumed: a level over two calls as one suite
set -uo pipefail
RAW=$1
mkdir -p "$RAW"
if ! command -v nvidia-smi >/dev/null || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "i24-level1: needs a GPU with torch; skipped"; exit 0
fi
DIR=${LEVEL_DIR:-.external/kernelbench-all/level1}
if ! ls "$DIR"/*.py >/dev/null 2>&1; then
  echo "i24-level1: no problems in $DIR; run bash scripts/kernelbench-problems.sh --all-levels before the round"; exit 0
fi
echo "-- self-judgement of $(ls "$DIR"/*.py | wc -l) problems in $DIR ($(cat "$(dirname "$DIR")/PINNED" 2>/dev/null))"
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader
if [ -n "${SUITE:-}" ]; then
  IFS=/ read -r k n <<< "${SHARD:-0/1}"
  PROBLEMS=$(realpath "$DIR")
  if [ -n "${ONLY:-}" ] || [ "$n" != 1 ]; then
    PROBLEMS=$RAW/problems/level1
    mkdir -p "$PROBLEMS"
    i=0
    for f in $(ls "$DIR" | grep '\.py$' | sort -n); do
      if [ -n "${ONLY:-}" ]; then
        [[ ",$ONLY," == *",${f%.py},"* ]] && ln -s "$(realpath "$DIR/$f")" "$PROBLEMS/$f"
      elif [ $(( i % n )) -eq "$k" ]; then
        ln -s "$(realpath "$DIR/$f")" "$PROBLEMS/$f"
      fi
      i=$((i + 1))
    done
  fi
  SUITE_OUT=${SUITE_OUT:-$RAW/suite}
  # stopped with Ctrl-C's signal before the part's limit, so that it stops its evaluations and prints its table
  stop=$(( ${PART_LIMIT_S:-900} - 30 ))
  if [ -f "$SUITE_OUT/suite-args.json" ]; then
    # a suite an earlier call left unfinished, carried in: resumed (its problems' folder is this machine's copy)
    python3 -c 'import json, sys; p = sys.argv[1] + "/suite-args.json"; a = json.load(open(p)); a["dir"] = sys.argv[2]; json.dump(a, open(p, "w"))' "$SUITE_OUT" "$PROBLEMS"
    echo "-- kernelevolve suite --resume (at most $stop s): $(ls -d "$SUITE_OUT"/*/ 2>/dev/null | wc -l) problem folders there before"
    timeout -s INT -k 20 "$stop" node bin/kernelevolve.js suite --resume "$SUITE_OUT" --jobs "${JOBS:-6}" 2> "$RAW/suite.log"
  else
    echo "-- kernelevolve suite --self-judge --jobs ${JOBS:-6} over $(ls "$PROBLEMS" | grep -c '\.py$') problems (shard ${SHARD:-0/1}; at most $stop s)"
    timeout -s INT -k 20 "$stop" node bin/kernelevolve.js suite "$PROBLEMS" --self-judge --jobs "${JOBS:-6}" --out "$SUITE_OUT" 2> "$RAW/suite.log"
  fi
  echo "exit $?"
  tail -5 "$RAW/suite.log"
  [ "$SUITE_OUT" = "$RAW/suite" ] || cp -r "$SUITE_OUT" "$RAW/suite"
  python3 scripts/gpu/suite_summary.py "$RAW/suite/suite.json"
  exit 0
fi
python3 scripts/gpu/kernelbench_selfjudge.py "$DIR" "$RAW" --jobs "${JOBS:-6}" --deadline "${DEADLINE:-330}" \
  --per-problem "${PER_PROBLEM:-240}" --shard "${SHARD:-0/1}" ${REST:+--rest "$REST"} ${ONLY:+--only "$ONLY"}
echo "exit $?"
