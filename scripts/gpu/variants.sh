#!/usr/bin/env bash
# Exports the harness of each given branch (or commit) for scripts/gpu/compare.sh, here, before a GPU call:
#   bash scripts/gpu/variants.sh timing-gate shared-reference
# writes .test-output/variants/<name>/kernelevolve_harness; carry .test-output/variants to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
for rev in "$@"; do
  name=${rev//\//-}
  rm -rf ".test-output/variants/$name"
  mkdir -p ".test-output/variants/$name"
  git archive "$rev" harness/kernelevolve_harness | tar x -C ".test-output/variants/$name" --strip-components=1
  echo "$name: $(git rev-parse --short "$rev")"
done
