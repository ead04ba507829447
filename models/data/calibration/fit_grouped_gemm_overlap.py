#!/usr/bin/env python3
"""Fits strategies::kGroupedGemmRooflineOverlap to DeepGEMM's grouped GEMM table.

Source: deepseek-ai/DeepGEMM README.md @ 55ab91f72f76e8a6db0e86282c3169a88d93df1b,
"Grouped GEMMs for MoE models" (contiguous and masked layouts), FP8 on H800 SXM5.
Each shape is costed as models::KernelModel costs a GEMM of its padded rows
(best of the 128x256, 256x128 and 0.9 x 128x128 tile waves over 132 SMs; FP8
in, 16-bit out) with the shipped H100 SXM calibration (the H800 has the H100
SXM's SMs and HBM3): compute c = flops / (peak · ceiling · wave utilisation),
memory m = bytes / (bandwidth · gemm_bandwidth_fraction), time
(c^p + m^p)^(1/p) + kernel overhead (p = 0: max(c, m)). Each N x K pair is
normalised by its largest-M shape, so the comparison measures how much of the
large-M rate a kernel keeps at fewer rows per expert, not DeepGEMM's own
ceiling. Prints the mean absolute and mean signed error of the other shapes
per p.

Usage: python3 models/data/calibration/fit_grouped_gemm_overlap.py
"""
import math

PEAK = 1978.9e12 * 0.823331  # h100-sxm5-80gb fp8 dense peak x fitted gemm_ceiling
BANDWIDTH = 3350e9 * 0.909441  # memory bandwidth x fitted gemm_bandwidth_fraction
OVERHEAD = 2.65364e-6  # fitted kernel_overhead_us
SMS = 132

# (groups, rows per group, N, K, measured TFLOPS)
GROUPED = [
    (4, 8192, 4096, 7168, 1346), (4, 8192, 7168, 2048, 1214),
    (8, 4096, 4096, 7168, 1346), (8, 4096, 7168, 2048, 1214),
    (1, 1024, 4096, 7168, 1233), (1, 1024, 7168, 2048, 925),
    (2, 512, 4096, 7168, 1040), (2, 512, 7168, 2048, 916),
    (4, 256, 4096, 7168, 932), (4, 256, 7168, 2048, 815),
]


def wave_utilization(m, n, batch, tile_m, tile_n):
  tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n) * batch
  return tiles / (math.ceil(tiles / SMS) * SMS)


def modelled_tflops(groups, m, n, k, p):
  flops = 2.0 * groups * m * n * k
  util = max(wave_utilization(m, n, groups, 128, 256), wave_utilization(m, n, groups, 256, 128),
             0.9 * wave_utilization(m, n, groups, 128, 128))
  c = flops / (PEAK * util)
  mem = groups * (m * k + n * k + m * n * 2) / BANDWIDTH
  t = (c**p + mem**p)**(1.0 / p) if p > 0 else max(c, mem)
  return flops / (t + OVERHEAD) / 1e12


def main():
  for p in [0, 2.0, 2.5, 2.8, 3.0, 3.5, 4.0]:
    errors = []
    for n, k in [(4096, 7168), (7168, 2048)]:
      family = sorted([r for r in GROUPED if r[2] == n and r[3] == k], key=lambda r: -r[1])
      ref = family[0]
      ref_ratio = modelled_tflops(*ref[:4], p) / ref[4]
      errors += [modelled_tflops(*r[:4], p) / r[4] / ref_ratio - 1 for r in family[2:]]
    print(f"p={p}: mean |error| {100 * sum(map(abs, errors)) / len(errors):.1f}%, "
          f"mean {100 * sum(errors) / len(errors):+.1f}% over {len(errors)} shapes")


if __name__ == "__main__":
  main()
