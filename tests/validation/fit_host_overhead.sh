#!/usr/bin/env bash
# Reproduces the fit of host_us_per_op (models/data/frameworks.textproto, the
# megatron-deepspeed profile; megatron-core and others borrow it):
# the host launch time per op
# that minimises the MAPE on the training split (even rows) of vTrain's
# single-node table, then reports the held-out split (odd rows).
# Usage: tests/validation/fit_host_overhead.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-build}/cli/clustersim"
table=tests/validation/vtrain/ground_truth_single.csv
for us in 0 20 40 60 65 70 75 80 90 100 110 130; do
  mape=$("$bin" validate "$table" --stride 2 --offset 0 --host-overhead-us "$us" |
         sed -n 's/^overall MAPE \([0-9.]*\)%.*/\1/p')
  echo "training split, ${us} us/op: MAPE ${mape}%"
done
echo "held-out split at the default:"
"$bin" validate "$table" --stride 2 --offset 1 | grep '^overall'
