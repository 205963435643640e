#!/usr/bin/env bash
# Issue: judged candidates per minute on the H200 (softmax for 2 minutes, matmul for 1), the GPU's busy share,
# where the time per candidate goes; on a host with two or more GPUs, the same softmax run on GPU 0 alone and on
# GPUs 0 and 1 (twice the slots), in this one call. About 4 minutes on one GPU, 6.5 on two.
# Usage (by scripts/gpu/round.sh): bash scripts/gpu/parts/throughput.sh RAWDIR
set -uo pipefail
RAW=$1
SLOTS=${SLOTS:-12}
if ! command -v nvidia-smi >/dev/null || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "throughput: needs a GPU with torch; skipped"; exit 0
fi
ngpu=$(nvidia-smi -L | wc -l)
run() { # name devices slots minutes specs
  echo "-- $1: devices [$2], $3 slots, $4 min"
  OUT=$RAW/$1 DEVICES=$2 PARTS=throughput MINUTES=$4 EVOLVE_TIMEOUT=$(python3 -c "print(int($4*60+45))") \
    THROUGHPUT_SPECS="$5" bash scripts/gpu/bench.sh "$3" 2000 >/dev/null 2>&1
  python3 scripts/gpu/summarize.py "$RAW/$1" | sed -n '/^throughput/,$p'
  # KERNELEVOLVE_VERDICT_PASSES=1: which shapes were timed again, and why (scripts/gpu/retime_study.py)
  if [ "${KERNELEVOLVE_VERDICT_PASSES:-}" = 1 ]; then
    python3 scripts/gpu/retime_study.py "$RAW/$1"/run-*/verdicts.jsonl | sed 's/^/    re-timing: /'
  fi
}
# SOFTMAX_MINUTES (2) and MATMUL_MINUTES (1): shorter runs where device time is short (0 leaves the run out)
[ "${SOFTMAX_MINUTES:-2}" != 0 ] && run one-gpu 0 "$SLOTS" "${SOFTMAX_MINUTES:-2}" examples/triton/softmax/spec.py
[ "${MATMUL_MINUTES:-1}" != 0 ] && run one-gpu-matmul 0 "$SLOTS" "${MATMUL_MINUTES:-1}" examples/triton/matmul/spec.py
# AB_ENVS="NAME=VALUE[ NAME=VALUE];...": the softmax again (SOFTMAX_MINUTES), once with each environment, after the
# runs above in the same call (e.g. AB_ENVS="KERNELEVOLVE_RETIME_SHAPES=0;KERNELEVOLVE_RETIME_REACH=1.41"); and
# the matmul (MATMUL_MINUTES) with each of AB_MATMUL_ENVS
ab() { # spec minutes envs
  local spec=$1 minutes=$2 envs=$3 e name
  IFS=';' read -ra sets <<< "$envs"
  for e in "${sets[@]}"; do
    [ -z "$e" ] && continue
    name="ab-$(basename "$(dirname "$spec")")-$(echo "$e" | tr -c 'A-Za-z0-9=\n' '_' | cut -c1-60)"
    ( export $e; run "$name" 0 "$SLOTS" "$minutes" "$spec" )
  done
}
# COMPARE_AB=BYTES: one of them, KERNELEVOLVE_DEVICE_COMPARE_BYTES=BYTES: outputs from BYTES a call on compared on
# the device (4 MiB by default, below every softmax output here; 67108864, the default before 2026-12-03, compares
# them all on the host: a device-to-host copy, a pipe, numpy): the CPU a candidate costs, and the rate, each way.
[ -n "${COMPARE_AB:-}" ] && ab examples/triton/softmax/spec.py "${SOFTMAX_MINUTES:-2}" "KERNELEVOLVE_DEVICE_COMPARE_BYTES=$COMPARE_AB"
# MORE_SLOTS=N: the softmax again with N slots (the same GPU), for MORE_SLOTS_MINUTES (default SOFTMAX_MINUTES, or
# 1 where that is 0): whether the rate is bound by the slots (each candidate's own latency) or by what the host
# shares (the timing lock, the cores, the reference processes)
if [ -n "${MORE_SLOTS:-}" ]; then
  more_min=${MORE_SLOTS_MINUTES:-${SOFTMAX_MINUTES:-2}}
  [ "$more_min" = 0 ] && more_min=1
  run "one-gpu-$MORE_SLOTS-slots" 0 "$MORE_SLOTS" "$more_min" examples/triton/softmax/spec.py
fi
[ -n "${AB_ENVS:-}" ] && ab examples/triton/softmax/spec.py "${SOFTMAX_MINUTES:-2}" "$AB_ENVS"
[ -n "${AB_MATMUL_ENVS:-}" ] && ab examples/triton/matmul/spec.py "${MATMUL_MINUTES:-1}" "$AB_MATMUL_ENVS"
if [ "$ngpu" -ge 2 ]; then
  run two-gpus 0,1 $((2 * SLOTS)) "${SOFTMAX_MINUTES:-2}" examples/triton/softmax/spec.py
fi
