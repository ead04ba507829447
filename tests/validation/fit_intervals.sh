#!/usr/bin/env bash
# Remakes models/data/prediction_intervals.textproto: the 80% bands of measured /
# predicted step time by stack x GPU generation x scale, from the
# leave-one-source-out residuals of every training table, and prints the
# stacks' GEMM-factor fits beside them (clustersim fit). Rebuild afterwards: the
# file is embedded into the binary.
# Usage: tests/validation/fit_intervals.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-build}/cli/clustersim"
v=tests/validation
"$bin" fit --threads 2 --write-intervals models/data/prediction_intervals.textproto \
  $v/published-runs.csv $v/vtrain/ground_truth_single.csv $v/vtrain/ground_truth_multi.csv \
  $v/unseen/training-runs.csv
