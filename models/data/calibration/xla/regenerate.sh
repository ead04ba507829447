#!/usr/bin/env bash
# Remakes the B200 measurement and calibration files (GEMMs from OpenXLA's table,
# attention from cudnn/sdpa_bf16_b200.csv), and the H100 cross-check
# measurement file, from matmul_interpolator_b1.csv (OpenXLA's measured matmul
# table, see SOURCE.md), then prints the H100 cross-check against the shipped
# H100 calibration. Rebuild afterwards: calibrations are embedded in the binary.
# Usage: models/data/calibration/xla/regenerate.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../../../.."
bin="${1:-build}/cli/clustersim"
d=models/data/calibration
py="python3 $d/extract_xla_matmul.py"
csv=$d/xla/matmul_interpolator_b1.csv
$py check "$csv"
$py measurements "$csv" --key sm_100 --min-mn 2048 --method-parameter kernel_overhead_us \
  --gpu b200-sxm-180gb --device-name "sm_100 (the source does not name the board: B200 or GB200)" \
  --sm-count 148 -o $d/b200-sxm-180gb.measurements.textproto \
  --attention-csv $d/cudnn/sdpa_bf16_b200.csv \
  --source "[CUDNN-SDPA] NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/artifacts/sdpa_bf16_benchmark_results_NVIDIA_B200.csv at commit bb37575d103b9974bc619a193dc1a96d835dc117 (MIT): cuDNN 9.13.0 SDPA on a B200, torch 2.9.0a0 nv25.09 (sample_b200_bf16_run.txt), causal, 128 query and 8 key/value heads of dim 128, batch 1, bf16; cuDNN's forward and backward time per call" \
  --comment "Points: b = 1 and m, n >= 2048, the training-sized end of the table (128 to 512 output" \
  --comment "tiles of 128x256, about one to four waves on 148 SMs). Smaller outputs leave SMs idle;" \
  --comment "there cuBLAS runs kernels the wave model does not describe, and a fit to all 125" \
  --comment "shapes puts the BF16 ceiling at its bound of 1.0 (held-out median 7.3%, p90 22.3%)." \
  --comment "kernel_overhead_us is a property of the timing method here: on H100 the same table" \
  --comment "(key sm_90, same shapes) fits 7.1 us per kernel where the shipped H100 calibration" \
  --comment "has 2.65 us, while its GEMM ceiling agrees (0.848 vs 0.844); see docs/calibration.md." \
  --comment "FP8: the table's sm_90 FP8 points exceed H100's dense FP8 peak (up to 2424 vs 1979" \
  --comment "TFLOP/s), so its FP8 timing is unverified; the sm_100 FP8 points stay below B200's peak." \
  --comment "Attention: cuDNN's fused attention (Transformer Engine's backend on Blackwell) from" \
  --comment "cudnn-frontend's SDPA benchmark (cudnn/SOURCE.md), seq 4K-16K, after the GEMM points."
$py measurements "$csv" --key sm_90 --min-mn 2048 --dtype bf16 \
  --gpu h100-sxm5-80gb --device-name "sm_90 (the source does not name the board)" \
  --sm-count 132 -o $d/xla/h100-sxm5-80gb.xla-sm90.measurements.textproto \
  --comment "Cross-check only, not a shipped calibration: the same selection as the B200 file, on" \
  --comment "the H100 key, BF16 only (the key's FP8 points exceed the H100 FP8 peak)."
"$bin" calibrate $d/b200-sxm-180gb.measurements.textproto \
  --output $d/b200-sxm-180gb.calibration.textproto
echo "H100 cross-check: the XLA sm_90 points against the shipped H100 calibration"
"$bin" validate-kernels $d/xla/h100-sxm5-80gb.xla-sm90.measurements.textproto \
  --calibration $d/h100-sxm5-80gb.calibration.textproto | tail -4
echo "H100 cross-check: the same points fitted as the B200 file is (shipped H100 calibration:"
echo "gemm_bandwidth_fraction 0.909441, kernel_overhead_us 2.65364, bf16 gemm_ceiling 0.843996)"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$bin" calibrate $d/xla/h100-sxm5-80gb.xla-sm90.measurements.textproto --output "$tmp" 2>&1
grep -E '^(gemm_bandwidth_fraction|kernel_overhead_us)|^  gemm_ceiling' "$tmp"
