// File: models/power_model.h
//
// Board power of a GPU under a power limit (nvidia-smi -pl): how fast its
// tensor cores run, and what its kernels draw. Read from the embedded
// models/data/gpu_power.textproto (schema models/proto/power.proto), where
// every number states its source.
//
// Model. A compute-bound GEMM held at the board's default limit P runs at P,
// at its sustained clock (see Sustained below). Its draw above idle grows as
// clock^a (dynamic power f·V(f)²), so under a cap C < P its clock, and its
// rate, fall to
//     r = ((C - idle) / (P - idle))^(1/a).
// The exponent a is fitted on load to the data file's one published cap
// point (a = ln(load ratio) / ln(throughput ratio)); its held-out points are
// checked by the unit test. Kernels that stream HBM (memory-bound ops,
// memory-limited GEMMs, communication) draw memory_bound_w, below any
// settable cap on the sourced boards, and HBM clocks are not lowered by a
// power limit, so they are not slowed.
//
// Sustained rate. The GEMM ceilings are short bursts at (or near) the boost
// clock; minutes of back-to-back GEMMs hold the board at its default limit,
// where the clock settles lower. Sustained(gpu, dtype).ratio is the published
// sustained / burst rate of a large GEMM of that input type on that GPU (or on
// one of the same die and limit, borrowed_from); training multiplies the
// ceiling of each GEMM by the ratio of its input type. FP8 GEMMs run twice the
// math per clock and draw more, so the clock they settle at can be lower than
// BF16's. An entry scaled_from another GPU takes this GPU's 16-bit ratio
// times that GPU's measured ratio of the type over its 16-bit ratio. A type
// without its own entry takes the GPU's 16-bit entry; a GPU without any takes
// the mean ratio of the measured 16-bit entries.
//
// Example:
//   const models::PowerModel& pm = models::PowerModel::Default();
//   models::BoardPower b = pm.For(*gpu);                    // idle, limits, draws
//   if (absl::Status s = pm.CheckCap(*gpu, 500, "cluster.power_cap_w"); !s.ok()) return s;
//   double r = pm.ClockRatio(b, 500);                        // 0.717 on an H100 SXM
//   models::KernelDraw d = pm.Draw(b, 500);                  // compute 500 W, memory 301 W
//   double s = pm.Sustained(*gpu, models::Dtype::kBf16).ratio;  // 0.887 on an H100 SXM
//   double f = pm.Sustained(*gpu, models::Dtype::kFp8).ratio;   // 0.795 on an H100 SXM
#ifndef CLUSTERSIM_MODELS_POWER_MODEL_H_
#define CLUSTERSIM_MODELS_POWER_MODEL_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/dtype.h"
#include "models/gpu_catalog.h"
#include "models/kernel_model.h"

namespace clustersim::config {
class GpuPowerFile;
class SustainedRate;
}  // namespace clustersim::config

namespace clustersim::models {

// The board-power facts of one GPU.
struct BoardPower {
  double idle_w = 0;
  double min_limit_w = 0;     // the lowest settable limit
  double max_limit_w = 0;     // the default limit (TDP)
  double memory_bound_w = 0;  // draw of HBM-streaming kernels and communication
  bool sourced = false;       // false: the fallback fractions of TDP
  std::string source;
};

// What a GPU draws, by what it is doing, under a cap.
struct KernelDraw {
  double compute_w = 0;  // a compute-bound GEMM or attention kernel
  double memory_w = 0;   // a memory-bound kernel, or communication alone
  double idle_w = 0;     // waiting
};

// A published GEMM (or step) throughput at a cap, relative to the default limit.
struct CapPoint {
  std::string gpu;
  double cap_w = 0, default_w = 0, idle_w = 0;
  double throughput_ratio = 0;
  double throughput_ratio_max = 0;  // > 0: a band [throughput_ratio, this]
  std::string source;
};

// A large GEMM's sustained rate at the default limit over its burst rate.
struct SustainedGemm {
  double ratio = 1;                 // sustained / burst
  double sustained = 0, burst = 0;  // the published pair, in `quantity`
  std::string quantity;
  std::string dtype;          // the input type measured; empty: the 16-bit entry
  std::string borrowed_from;  // the GPU measured, when not this one
  std::string scaled_from;    // the GPU whose dtype / 16-bit ratios scale this one's
  bool sourced = false;       // false: the mean ratio of the measured 16-bit entries
  std::string source;
};

class PowerModel {
 public:
  // The shipped model, parsed once from the embedded data file. Aborts if the
  // embedded file is invalid (a build bug, caught by the unit tests).
  static const PowerModel& Default();
  // Parses and checks a GpuPowerFile in protobuf text format; errors name the
  // entry and field. `origin` names the file in messages.
  static absl::StatusOr<PowerModel> Parse(std::string_view textproto, std::string_view origin);

  // The dynamic-power exponent a, fitted to fit().
  double exponent() const { return exponent_; }
  const CapPoint& fit() const { return fit_; }
  const std::vector<CapPoint>& held_out() const { return held_out_; }
  double held_out_tolerance() const { return held_out_tolerance_; }

  // The GPU's entry, or the fallback fractions of its TDP (sourced = false).
  BoardPower For(const GpuSpec& gpu) const;

  // InvalidArgument naming `field` and the valid range unless cap_w is within
  // the GPU's settable limits.
  absl::Status CheckCap(const GpuSpec& gpu, double cap_w, std::string_view field) const;

  // Compute-bound rate under `cap_w` over the rate at the default limit; 1
  // when cap_w is 0 (no cap) or at or above the default limit.
  double ClockRatio(const BoardPower& b, double cap_w) const;
  // What the GPU draws under `cap_w` (0: no cap).
  KernelDraw Draw(const BoardPower& b, double cap_w) const;

  // The GPU's sustained rate of GEMMs with input type `dtype` at its default
  // limit over the burst rate of its ceilings: the entry for that type, else
  // the GPU's 16-bit entry, else the fallback (sourced = false).
  SustainedGemm Sustained(const GpuSpec& gpu, Dtype dtype) const;
  // Mean ratio of the 16-bit entries measured on their own GPU.
  double sustained_fallback_ratio() const { return sustained_fallback_ratio_; }
  // Sets params->sustained_gemm_ratio of every input type to Sustained(gpu, type).ratio.
  void SetSustainedGemmRatios(const GpuSpec& gpu, KernelModelParams* params) const;

  // r = ((cap - idle) / (default - idle))^(1/exponent), 1 at or above default.
  static double ClockRatio(double cap_w, double default_w, double idle_w, double exponent);

 private:
  double exponent_ = 0;
  CapPoint fit_;
  std::vector<CapPoint> held_out_;
  double held_out_tolerance_ = 0;
  double memory_bound_fraction_ = 0;
  double fallback_idle_fraction_ = 0, fallback_min_limit_fraction_ = 0;
  std::string memory_bound_source_, fallback_source_;
  struct Entry {
    std::string gpu;
    BoardPower power;
  };
  std::vector<Entry> entries_;
  struct SustainedEntry {
    std::string gpu;
    std::optional<Dtype> dtype;  // nullopt: the 16-bit entry
    SustainedGemm rate;
  };
  std::vector<SustainedEntry> sustained_;
  // Reads the file's sustained entries into sustained_ and the fallback.
  absl::Status ReadSustained(const config::GpuPowerFile& file, const std::string& origin);
  // The entry read so far for exactly this GPU and type (nullopt: 16-bit), or nullptr.
  const SustainedGemm* FindSustained(const std::string& gpu, std::optional<Dtype> dtype) const;
  // A scaled_from entry of `dtype`: this GPU's 16-bit ratio times the named
  // GPU's measured `dtype` ratio over its 16-bit ratio.
  absl::StatusOr<SustainedGemm> ScaledEntry(const config::SustainedRate& in,
                                            std::optional<Dtype> dtype,
                                            const std::string& where) const;
  double sustained_fallback_ratio_ = 1;
  std::string sustained_fallback_source_;
};

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_POWER_MODEL_H_
