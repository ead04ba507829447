#!/usr/bin/env bash
# Reproduces the fit of pipeline_p2p_host_us (models/data/frameworks.textproto,
# the megatron-deepspeed profile):
# the pipeline-engine host time per stage-to-stage send that minimises the MAPE
# on the training split (even rows) of vTrain's single-node table, with the
# per-op launch time at its default; then reports the held-out split (odd
# rows) and the multi-node table (not used by the fit) at the default.
# Usage: tests/validation/fit_pipeline_overhead.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-build}/cli/clustersim"
single=tests/validation/vtrain/ground_truth_single.csv
multi=tests/validation/vtrain/ground_truth_multi.csv
for us in 0 500 1000 1500 2000 2500 3000 4000; do
  mape=$("$bin" validate "$single" --stride 2 --offset 0 --pipeline-p2p-host-us "$us" |
         sed -n 's/^overall MAPE \([0-9.]*\)%.*/\1/p')
  echo "training split, ${us} us/send: MAPE ${mape}%"
done
echo "held-out split at the default:"
"$bin" validate "$single" --stride 2 --offset 1 | grep '^overall'
echo "multi-node table at the default:"
"$bin" validate "$multi" | grep '^overall'
