#!/usr/bin/env bash
# A handful of KernelBench's own problem files (ScalingIntelligence/KernelBench, pinned), extracted as they are
# into the ignored folder .external/kernelbench/ for scripts/gpu/parts/i20-suite.sh: never committed here.
# Chosen for sizes that fit one GPU's evaluation comfortably (several of level 1's inputs are 6-8 GB).
# From a local mirror when KERNELEVOLVE_MIRRORS names a folder holding ScalingIntelligence+KernelBench/repo (a
# bare git directory), else one shallow fetch from GitHub.
# Usage: [KERNELEVOLVE_MIRRORS=DIR] bash scripts/kernelbench-problems.sh [DEST]   (DEST defaults to .external)
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-.external}/kernelbench
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
for f in "${FILES[@]}"; do
  level=$(basename "$(dirname "$f")")
  git --git-dir="$gd" show "$COMMIT:$f" > "$DEST/${level}_$(basename "$f")"
done
printf '%s %s\n' "$REPO" "$COMMIT" > "$DEST/PINNED"
ls "$DEST"
