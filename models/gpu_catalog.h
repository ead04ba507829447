// File: models/gpu_catalog.h
//
// The GPU catalog: dense peak throughput per dtype, memory, bandwidth, SM
// count, clocks, power, list price and the measured GEMM ceiling of each GPU,
// with the source of every number. The shipped catalog is parsed once from
// models/data/gpus.textproto (schema: models/proto/catalog.proto), which is
// embedded in the binary; it is immutable.
//
// Example:
//   const models::GpuCatalog& catalog = models::GpuCatalog::Default();
//   absl::StatusOr<const models::GpuSpec*> gpu = catalog.Find("h100-sxm5-80gb");
//   if (!gpu.ok()) return gpu.status();   // message lists the valid names
//   if (absl::Status s = models::CheckDtypeSupported(**gpu, models::Dtype::kFp8); !s.ok())
//     return s;
//   double peak = (*gpu)->PeakFlops(models::Dtype::kBf16);   // 989.4e12
#ifndef CLUSTERSIM_MODELS_GPU_CATALOG_H_
#define CLUSTERSIM_MODELS_GPU_CATALOG_H_

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/attention_tiles.h"
#include "models/dtype.h"
#include "sim/units.h"

namespace clustersim::models {

// What a catalog device is (catalog field device_kind). Training is modelled on
// kGpu only; the others are serving devices.
enum class DeviceKind {
  kGpu,     // a discrete GPU with its own memory ("gpu")
  kSocGpu,  // a GPU inside a system on a chip sharing LPDDR/unified memory ("soc-gpu")
  kCpu,     // a server CPU; peaks are its matrix/vector units ("cpu")
};

// "gpu", "soc-gpu", "cpu".
std::string_view DeviceKindName(DeviceKind k);

struct GpuSpec {
  std::string name;          // canonical: "a100-sxm4-80gb", "h100-sxm5-80gb", ...
  std::string display_name;  // "NVIDIA A100-SXM4-80GB"

  // Dense (no 2:4 sparsity) peak in FLOP/s (OP/s for int8); 0 when unsupported.
  double PeakFlops(Dtype d) const { return dense_peak_flops[DtypeIndex(d)]; }
  bool Supports(Dtype d) const { return PeakFlops(d) > 0; }
  // Measured max achievable matmul FLOP/s over peak for `d`: the dtype's own
  // measurement when the catalog has one, else gemm_ceiling_fraction (BF16's,
  // or FP16's on a device without BF16).
  double GemmCeiling(Dtype d) const {
    const double f = gemm_ceiling_by_dtype[DtypeIndex(d)];
    return f > 0 ? f : gemm_ceiling_fraction;
  }

  sim::Bytes memory;                // marketed capacity read as GiB (80 for an H100 80GB)
  // The total the CUDA runtime reports (cudaMemGetInfo), which serving engines
  // size their KV cache from: memory less the driver's reservation. Equal to
  // memory where the catalog has no source for it (cuda_total_memory_source
  // empty).
  sim::Bytes cuda_total_memory;
  std::string cuda_total_memory_source;
  double memory_bandwidth_gbs = 0;  // 1e9 B/s
  int sm_count = 0;
  double boost_clock_mhz = 0;
  sim::Bytes l2_cache;              // 0 when not in our sources
  double tdp_w = 0;
  double list_price_usd = 0;        // 0 when no list price is published
  double gemm_ceiling_fraction = 0; // measured max matmul FLOPS / peak (BF16, else FP16)
  std::string gemm_ceiling_source;
  std::string source;               // where the numbers come from
  DeviceKind kind = DeviceKind::kGpu;
  bool unified_memory = false;      // memory is shared with the host CPU and OS
  std::string compute_unit = "SMs"; // what sm_count counts ("GPU cores", "CPU cores")
  AttentionTiles attention_tiles;   // known() false when the catalog has none

  std::array<double, kAllDtypes.size()> dense_peak_flops{};      // indexed by DtypeIndex
  std::array<double, kAllDtypes.size()> gemm_ceiling_by_dtype{};  // 0 = use BF16's
};

// InvalidArgument when `gpu` has no tensor-core rate for `d`, e.g.
// "dtype fp8 is not supported by a100-sxm4-80gb (...); supported: fp32, ...".
absl::Status CheckDtypeSupported(const GpuSpec& gpu, Dtype d);

// An immutable, name-sorted set of GPU specs. Thread-safe (const after build).
class GpuCatalog {
 public:
  // The shipped catalog, parsed once from the embedded data file. Aborts if the
  // embedded file is invalid (a build bug, caught by the unit tests).
  static const GpuCatalog& Default();

  // Parses and validates a GpuCatalogFile in protobuf text format. Errors name
  // the entry and field ("gpu[3] 'l40s': memory_bandwidth_gbs must be > 0").
  static absl::StatusOr<GpuCatalog> Parse(std::string_view textproto);

  // NotFound listing the valid names when `name` is unknown. The pointer stays
  // valid for the catalog's lifetime.
  absl::StatusOr<const GpuSpec*> Find(std::string_view name) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  std::vector<GpuSpec> gpus_;  // sorted by name
};

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_GPU_CATALOG_H_
