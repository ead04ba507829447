#!/usr/bin/env bash
# Reproduces the fit of decode_attention_flops_per_sm_cycle
# (models/data/fitted_constants.textproto): the rate per SM and clock cycle of
# decode attention's CUDA-core arithmetic. Fitted
# on tests/validation/trtllm-v08-fit-runs.csv (TensorRT-LLM v0.8 rows that are
# not in the validation table); the validation table is the held-out set.
# Usage: tests/validation/fit_serving_decode_attention.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-build}/cli/clustersim"
fit=tests/validation/trtllm-v08-fit-runs.csv
held=tests/validation/inference-runs.csv
mape() { sed -n 's/^MAPE \([0-9.]*\)%.*/\1/p'; }
for eff in 0 8 16 24 28 32 36 40 48 64; do
  f=$("$bin" validate "$fit" --serving-decode-attention-flops "$eff" | mape)
  h=$("$bin" validate "$held" --serving-decode-attention-flops "$eff" | mape)
  echo "${eff} FLOPs per SM per clock: fit MAPE ${f}%, held-out (validation table) ${h}%"
done
echo "validation table at the default:"
"$bin" validate "$held" | grep '^MAPE'
