#!/usr/bin/env bash
# Where the CPU goes, by Python function: a softmax throughput run (scripts/gpu/bench.sh, part throughput) sampled
# by py-spy, the judges through the engine's process and the workers through the warm-worker server that forks
# them. Here, before the GPU call: `pip download py-spy --no-deps -d .whl` and carry .whl with dist and .node.
#   OUT=DIR bash scripts/gpu/pyspy.sh [SLOTS] [SECONDS]
# writes DIR/judges.txt and DIR/workers.txt (py-spy's raw collapsed stacks) and prints
# scripts/gpu/pyspy_summary.py's table of both.
set -uo pipefail
cd "$(dirname "$0")/../.."
SLOTS=${1:-12}
SECONDS_SAMPLED=${2:-40}
OUT=${OUT:-.test-output/gpu-pyspy}
mkdir -p "$OUT"
command -v py-spy >/dev/null || pip install -q --no-index --find-links .whl py-spy || exit 1
OUT="$OUT/run" PARTS=throughput THROUGHPUT_SPECS=examples/triton/softmax/spec.py MINUTES=${MINUTES:-1} \
  EVOLVE_TIMEOUT=${EVOLVE_TIMEOUT:-95} bash scripts/gpu/bench.sh "$SLOTS" 300 > "$OUT/bench.log" 2>&1 &
bench=$!
# the engine's process (its judges are its children) and the server (its workers are its children), once busy
for _ in $(seq 60); do
  sleep 1
  engine=$(pgrep -f "bin/kernelevolve.js evolve" | head -1)
  server=$(pgrep -f "kernelevolve_harness warm" | head -1)
  [ -n "$engine" ] && [ -n "$server" ] && break
done
sleep "${SETTLE:-10}"
echo "engine $engine, server $server"
py-spy record --subprocesses --nonblocking -r "${RATE:-50}" -d "$SECONDS_SAMPLED" -f raw -o "$OUT/judges.txt" \
  --pid "$engine" > "$OUT/pyspy-judges.log" 2>&1 &
a=$!
py-spy record --subprocesses --nonblocking -r "${RATE:-50}" -d "$SECONDS_SAMPLED" -f raw -o "$OUT/workers.txt" \
  --pid "$server" > "$OUT/pyspy-workers.log" 2>&1 &
b=$!
wait $a $b
tail -3 "$OUT/pyspy-judges.log" "$OUT/pyspy-workers.log"
wait $bench
sed -n '/^throughput/,$p' "$OUT/bench.log" | head -14
python3 scripts/gpu/pyspy_summary.py "$OUT/judges.txt" "$OUT/workers.txt" --rate "${RATE:-50}"
