#include "models/kernel_model.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::models {
namespace {

constexpr std::string_view kGemmCompute =
    "gemm compute-bound: flops/(peak*mamf_ceiling*wave_util) + kernel_overhead";
constexpr std::string_view kGemmMemory =
    "gemm memory-bound (small dimension): bytes/(bandwidth*fraction) + kernel_overhead";
constexpr std::string_view kAttentionCompute =
    "attention: flops*causal_fraction/(peak*flash_attention_efficiency) + kernel_overhead";
constexpr std::string_view kAttentionMemory =
    "attention memory-bound: bytes/(bandwidth*fraction) + kernel_overhead";
constexpr std::string_view kMemoryBound =
    "memory-bound: bytes/(bandwidth*fraction) + kernel_overhead";

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::string_view CostSourceName(CostSource s) {
  switch (s) {
    case CostSource::kMeasured: return "measured";
    case CostSource::kFitted: return "fitted";
    case CostSource::kSpecFallback: return "spec_fallback";
  }
  return "unknown";
}

double WaveUtilization(int64_t m, int64_t n, int64_t batch, int tile_m, int tile_n,
                       int sm_count) {
  SIM_CHECK(m > 0 && n > 0 && batch > 0 && sm_count > 0) << "empty GEMM " << m << "x" << n;
  const int64_t tiles = CeilDiv(m, tile_m) * CeilDiv(n, tile_n) * batch;
  const int64_t waves = CeilDiv(tiles, sm_count);
  return static_cast<double>(tiles) / static_cast<double>(waves * sm_count);
}

KernelModel::KernelModel(const GpuSpec& gpu, KernelModelParams params)
    : gpu_(gpu), params_(params) {}

OpCost KernelModel::Cost(const Op& op) const {
  switch (op.kind) {
    case OpKind::kGemm: return GemmCost(op);
    case OpKind::kAttention: return AttentionCost(op);
    case OpKind::kMemoryBound: return MemoryBoundCost(op);
    case OpKind::kCollective: break;
  }
  SIM_CHECK(false) << "KernelModel::Cost got collective op " << op.name
                   << "; collectives are costed by the network model";
  return {};
}

double KernelModel::MemorySeconds(sim::Bytes bytes) const {
  return static_cast<double>(bytes.count()) /
         (gpu_.memory_bandwidth_gbs * 1e9 * params_.memory_bandwidth_fraction);
}

OpCost KernelModel::GemmCost(const Op& op) const {
  const double peak = gpu_.PeakFlops(op.dtype);
  SIM_CHECK(peak > 0) << gpu_.name << " has no " << DtypeName(op.dtype)
                      << " peak; call CheckDtypeSupported before costing " << op.name;
  // cuBLAS-like choice: the tile shape that fills the SMs best.
  double util = std::max(WaveUtilization(op.m, op.n, op.batch, 128, 256, gpu_.sm_count),
                         WaveUtilization(op.m, op.n, op.batch, 256, 128, gpu_.sm_count));
  util = std::max(util, params_.small_tile_efficiency *
                            WaveUtilization(op.m, op.n, op.batch, 128, 128, gpu_.sm_count));
  const double compute_s = op.flops.count() / (peak * gpu_.GemmCeiling(op.dtype) * util);
  const double memory_s = MemorySeconds(op.bytes);
  const sim::Duration time =
      sim::Duration::FromSecondsDouble(std::max(compute_s, memory_s)) + params_.kernel_overhead;
  return OpCost{time, op.flops.count() / (time.ToSeconds() * peak), CostSource::kSpecFallback,
                compute_s >= memory_s ? kGemmCompute : kGemmMemory};
}

OpCost KernelModel::AttentionCost(const Op& op) const {
  const double peak = gpu_.PeakFlops(op.dtype);
  SIM_CHECK(peak > 0) << gpu_.name << " has no " << DtypeName(op.dtype)
                      << " peak; call CheckDtypeSupported before costing " << op.name;
  double work_fraction = 1.0;
  if (op.causal) {
    // Square (no context parallelism): (n_blk + 1) / (2 n_blk). With context
    // parallelism (m < n) the load-balanced chunks also do half the work.
    const int64_t blocks = CeilDiv(op.m, params_.attention_block);
    work_fraction = op.m == op.n ? static_cast<double>(blocks + 1) / (2.0 * blocks) : 0.5;
  }
  const double compute_s =
      op.flops.count() * work_fraction / (peak * params_.attention_efficiency);
  const double memory_s = MemorySeconds(op.bytes);
  const sim::Duration time =
      sim::Duration::FromSecondsDouble(std::max(compute_s, memory_s)) + params_.kernel_overhead;
  return OpCost{time, op.flops.count() * work_fraction / (time.ToSeconds() * peak),
                CostSource::kSpecFallback,
                compute_s >= memory_s ? kAttentionCompute : kAttentionMemory};
}

OpCost KernelModel::MemoryBoundCost(const Op& op) const {
  const sim::Duration time =
      sim::Duration::FromSecondsDouble(MemorySeconds(op.bytes)) + params_.kernel_overhead;
  const double achieved = static_cast<double>(op.bytes.count()) / time.ToSeconds();
  return OpCost{time, achieved / (gpu_.memory_bandwidth_gbs * 1e9), CostSource::kSpecFallback,
                kMemoryBound};
}

}  // namespace clustersim::models
