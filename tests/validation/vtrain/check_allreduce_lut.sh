#!/usr/bin/env bash
# Compares clustersim's all-reduce model on one NVSwitch A100 node (the
# dgx-a100 preset) with vTrain's measured A100 all-reduce tables
# (allreduce_lut/a100/AR_GPU<n>_1M_1024M_LUT, nccl-tests all_reduce_perf
# layout, in-place time in ns in column 6). For each rank count it prints the
# model's time over the measured one at sizes 1 MiB x 2^k up to 1 GiB, then the
# mean and largest |ratio - 1|. Nothing here feeds a fit.
# Usage: tests/validation/vtrain/check_allreduce_lut.sh [build-dir] [ranks...]
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin="${1:-build}/cli/clustersim"
shift || true
ranks=("$@")
[[ ${#ranks[@]} -eq 0 ]] && ranks=(2 3 4 5 6 7 8)
lut_dir=tests/validation/vtrain/allreduce_lut/a100
for n in "${ranks[@]}"; do
  lut="$lut_dir/AR_GPU${n}_1M_1024M_LUT"
  if [[ ! -f "$lut" ]]; then
    echo "no measured table for $n ranks: $lut" >&2
    exit 2
  fi
  echo "== $n ranks: size, model us, measured us, model / measured, model's choice"
  "$bin" collective --node dgx-a100 --num-gpus "$n" -b 1M -e 1G -f 2 |
    awk -v lut="$lut" '
      BEGIN {
        while ((getline line < lut) > 0) {
          split(line, f, ",")
          if (f[1] ~ /^[0-9]+$/) measured[f[1]] = f[6] / 1000
        }
      }
      /^ *[0-9]/ {
        if (!($1 in measured)) next
        r = $3 / measured[$1]
        d = r > 1 ? r - 1 : 1 - r
        sum += d; rows += 1; if (d > worst) worst = d
        printf "%6d MiB %10.1f %10.1f %6.2f  %s\n", $1 / 1048576, $3, measured[$1], r, $6
      }
      END { printf "mean |ratio - 1| %.3f, largest %.3f over %d sizes\n", sum / rows, worst, rows }'
done
