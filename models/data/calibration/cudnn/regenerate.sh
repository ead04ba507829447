#!/usr/bin/env bash
# Remakes the GB200 measurement and calibration files from sdpa_bf16_gb200.csv
# (cudnn-frontend's SDPA training benchmark on a GB200; SOURCE.md). The B200
# file, which adds these points to OpenXLA's GEMM table, is remade by
# ../xla/regenerate.sh. Rebuild afterwards: calibrations are embedded in the
# binary. Usage: models/data/calibration/cudnn/regenerate.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../../../.."
bin="${1:-build}/cli/clustersim"
d=models/data/calibration
py="python3 $d/extract_xla_matmul.py"
$py check-sdpa $d/cudnn/sdpa_bf16_gb200.csv
$py sdpa-measurements $d/cudnn/sdpa_bf16_gb200.csv --gpu gb200-186gb \
  --device-name "NVIDIA GB200" --sm-count 148 --attention-backend cudnn_fe \
  --fixed-parameter kernel_overhead_us -o $d/gb200-186gb.measurements.textproto \
  --source "[CUDNN-SDPA] NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/artifacts/sdpa_bf16_benchmark_results_NVIDIA_GB200.csv at commit d48a60eb146eada7aee2e00b8f8c1d6ddcf96c51 (MIT): cuDNN 9.17.0 SDPA through cudnn-frontend 1.16.0 on an NVIDIA GB200, torch 2.10.0a0 nv25.11, CUDA 13.0 (sample_gb200_bf16_run.txt), causal, 128 query and 8 key/value heads of dim 128, batch 1, bf16; forward and backward time per call" \
  --comment "Attention only: no GEMM measurement of a GB200 is published in a form this project" \
  --comment "has, so GEMMs keep the catalog's MAMF ceilings. The kernel overhead is held at the" \
  --comment "fallback (fixed_parameters): kernels of 0.4 ms and more cannot separate it from the" \
  --comment "efficiencies' rise with sequence length (fitted free, it runs to its 50 us bound)."
"$bin" calibrate $d/gb200-186gb.measurements.textproto \
  --output $d/gb200-186gb.calibration.textproto
