#!/usr/bin/env bash
# The harness of a pending change measured beside main's in one call: the harness's GPU tests with the variant's
# harness, then scripts/gpu/compare.sh (softmax example, MINUTES each) for main and the variant.
# Needs the variant exported here first: bash scripts/gpu/variants.sh NAME (carry .test-output/variants).
# Usage (by scripts/gpu/round.sh): VARIANT=NAME bash scripts/gpu/parts/i21-compare.sh RAWDIR   (~6 minutes)
set -uo pipefail
RAW=$1
VARIANT=${VARIANT:-i21}
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "i21-compare: needs a GPU with torch; skipped"; exit 0
fi
[ -d ".test-output/variants/$VARIANT/kernelevolve_harness" ] || { echo "no variant $VARIANT carried"; exit 0; }
keep=$(mktemp -d)
cp -r harness/kernelevolve_harness "$keep/"
restore() { rm -rf harness/kernelevolve_harness; cp -r "$keep/kernelevolve_harness" harness/; }
trap restore EXIT
rm -rf harness/kernelevolve_harness
cp -r ".test-output/variants/$VARIANT/kernelevolve_harness" harness/
echo "-- harness GPU tests, $VARIANT's harness"
tests=harness/tests
[ -d ".test-output/variants/$VARIANT/tests" ] && tests=.test-output/variants/$VARIANT/tests  # the variant's own tests, when exported
PYTHONPATH=harness timeout 240 python3 -m pytest "$tests/test_gpu_backends.py" "$tests/test_kernelbench_gpu.py" \
  $(ls "$tests"/test_prepare_before_lock.py 2>/dev/null) -q -rs -p no:cacheprovider 2>&1 | tail -8
restore
echo "-- throughput side by side (softmax example, ${MINUTES:-1} min each, ${SLOTS:-12} slots)"
OUT=$RAW/compare MINUTES=${MINUTES:-1} bash scripts/gpu/compare.sh "${SLOTS:-12}" main "$VARIANT" 2>&1
for n in main "$VARIANT"; do
  echo "-- $n: where the time goes"
  python3 scripts/gpu/summarize.py "$RAW/compare/$n" 2>&1 | tail -25
done
