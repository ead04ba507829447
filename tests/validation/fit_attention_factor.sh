#!/usr/bin/env bash
# Reproduces the fit of attention_factor (models/data/frameworks.textproto,
# the megatron-core profile):
# the fraction of the H100 calibration's standalone attention-kernel rate that
# minimises the MAPE on the training split, the four NEMOLONG rows of
# published-runs.csv (NeMo long context, where attention is most of the work);
# then reports the held-out rows (every other row of the table; MCORE24 and
# NEMO2407 are the other H100 training runs) at the fitted value and at 1
# (the standalone kernel).
# Usage: tests/validation/fit_attention_factor.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-build}/cli/clustersim"
table=tests/validation/published-runs.csv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n 1 "$table" > "$work/train.csv"
grep '^NEMOLONG-' "$table" >> "$work/train.csv"
head -n 1 "$table" > "$work/heldout.csv"
grep -v '^NEMOLONG-' "$table" | tail -n +2 >> "$work/heldout.csv"
best="" best_mape=""
for f in 0.40 0.44 0.48 0.50 0.52 0.54 0.56 0.58 0.60 0.62 0.64 0.68 0.72 0.80 0.90 1.00; do
  mape=$("$bin" validate "$work/train.csv" --framework-attention-factor "$f" |
         sed -n 's/^overall MAPE \([0-9.]*\)%.*/\1/p')
  echo "training split (NEMOLONG), factor ${f}: MAPE ${mape}%"
  if [[ -z "$best" ]] || awk -v a="$mape" -v b="$best_mape" 'BEGIN { exit !(a < b) }'; then
    best=$f best_mape=$mape
  fi
done
echo "lowest training MAPE: ${best_mape}% at ${best}"
for f in "$best" 1.00; do
  echo "held-out rows at factor ${f}:"
  "$bin" validate "$work/heldout.csv" --framework-attention-factor "$f" |
    grep -E '^  (MCORE24|NEMO2407|KOR22|NAR21) +[0-9]|^overall'
done
