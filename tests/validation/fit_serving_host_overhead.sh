#!/usr/bin/env bash
# Reproduces the fit of serving_host_us_per_iteration
# (models/data/fitted_constants.textproto): the host time per
# serving iteration that minimises the MAPE on the training split (even rows,
# 0-based, file order) of the inference table, then reports the held-out split
# (odd rows) at each grid value and at the default.
# Usage: tests/validation/fit_serving_host_overhead.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-build}/cli/clustersim"
table=tests/validation/inference-runs.csv
mape() { sed -n 's/^MAPE \([0-9.]*\)%.*/\1/p'; }
for us in 0 250 500 750 1000 1250 1500 1750 2000 2500 3000; do
  train=$("$bin" validate "$table" --stride 2 --offset 0 --serving-host-us "$us" | mape)
  held=$("$bin" validate "$table" --stride 2 --offset 1 --serving-host-us "$us" | mape)
  echo "${us} us/iteration: training MAPE ${train}%, held-out ${held}%"
done
echo "held-out split at the default:"
"$bin" validate "$table" --stride 2 --offset 1 | grep '^MAPE'
