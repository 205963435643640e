#!/usr/bin/env bash
# A handful of KernelBench's own problem files (ScalingIntelligence/KernelBench, pinned), extracted as they are
# into the ignored folder .external/kernelbench/ for scripts/gpu/parts/i20-suite.sh: never committed here.
# Chosen for sizes that fit one GPU's evaluation comfortably (several of level 1's inputs are 6-8 GB).
# From a local mirror when KERNELEVOLVE_MIRRORS names a folder holding ScalingIntelligence+KernelBench/repo (a
# bare git directory), else one shallow fetch from GitHub.
# With --all-levels: every file of KernelBench/level1..3 as published, into .external/kernelbench-all/levelN/ (for
# scripts/gpu/parts/i24-level1.sh, which judges all 100 of level 1).
# Usage: [KERNELEVOLVE_MIRRORS=DIR] bash scripts/kernelbench-problems.sh [--all-levels] [DEST]   (DEST: .external)
set -euo pipefail
cd "$(dirname "$0")/.."
ALL=
if [ "${1:-}" = --all-levels ]; then ALL=1; shift; fi
DEST=${1:-.external}/kernelbench${ALL:+-all}
REPO=ScalingIntelligence/KernelBench
COMMIT=423217d9fda91e0c2d67e4a43bf62f96f6d104f1
FILES=(
  KernelBench/level1/12_Matmul_with_diagonal_matrices_.py
  KernelBench/level1/88_MinGPTNewGelu.py
  KernelBench/level2/12_Gemm_Multiply_LeakyReLU.py
)
mkdir -p "$DEST"
gd=${KERNELEVOLVE_MIRRORS:-/nonexistent}/ScalingIntelligence+KernelBench/repo
if ! git --git-dir="$gd" cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
  gd=$DEST/.git-cache
  if ! git --git-dir="$gd" cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
    git init -q --bare "$gd"
    git --git-dir="$gd" fetch -q --depth 1 "https://github.com/$REPO.git" "$COMMIT" || {
      echo "Cannot fetch $REPO at $COMMIT; give KERNELEVOLVE_MIRRORS=DIR holding ScalingIntelligence+KernelBench/repo." >&2
      exit 1
    }
  fi
fi
if [ -n "$ALL" ]; then
  for level in level1 level2 level3; do
    mkdir -p "$DEST/$level"
    n=0
    while IFS= read -r f; do
      git --git-dir="$gd" show "$COMMIT:$f" > "$DEST/$level/$(basename "$f")"
      n=$((n + 1))
    done < <(git --git-dir="$gd" ls-tree --name-only "$COMMIT" "KernelBench/$level/" | grep '\.py$')
    echo "$level: $n problem files in $DEST/$level"
  done
  printf '%s %s\n' "$REPO" "$COMMIT" > "$DEST/PINNED"
  exit 0
fi
for f in "${FILES[@]}"; do
  level=$(basename "$(dirname "$f")")
  git --git-dir="$gd" show "$COMMIT:$f" > "$DEST/${level}_$(basename "$f")"
done
printf '%s %s\n' "$REPO" "$COMMIT" > "$DEST/PINNED"
ls "$DEST"
