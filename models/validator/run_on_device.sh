#!/usr/bin/env bash
# Builds models/validator on a fresh machine that has only CUDA and CMake, runs
# it on GPU 0 within a time budget, and leaves the measurement file in $OUT
# (default: ./validator-out). Resumes when $OUT already holds a partial file.
# Never changes clocks or power settings.
#
#   OUT=/tmp/out models/validator/run_on_device.sh h200-sxm-141gb [BUDGET_SECONDS]
set -euo pipefail
gpu="${1:?usage: run_on_device.sh GPU_CATALOG_NAME [BUDGET_SECONDS]}"
budget="${2:-420}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$PWD/validator-out}"
build="${VALIDATOR_BUILD_DIR:-/tmp/kernel-validator-build}"
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv \
  > "$out/nvidia-smi.csv" 2>&1 || true
# The validator folder is its own CMake project when built alone.
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release > "$out/cmake.log" 2>&1
cmake --build "$build" -j"$(nproc)" >> "$out/cmake.log" 2>&1
"$build/kernel_validator" --gpu "$gpu" --budget-seconds "$budget" \
  --output "$out/$gpu.measurements.textproto" 2>&1 | tee "$out/validator.log"
echo "measurements: $out/$gpu.measurements.textproto"
