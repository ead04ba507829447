// File: models/calibration.h
//
// Kernel calibration data: measurement files (what models/validator measured
// on one GPU, or published points) and calibration files (the KernelModel's
// parameters fitted to them by models/calibration_fit.h). Schemas:
// models/proto/calibration.proto. A Calibration is immutable; KernelModel reads
// it through a pointer (see kernel_model.h).
//
// Shipped calibrations (models/data/calibration/*.calibration.textproto) are
// embedded in the binary; Calibration::Shipped(gpu) finds one by catalog name.
//
// Example:
//   const models::Calibration* cal = models::Calibration::Shipped("h100-sxm5-80gb");
//   models::KernelModel kernels(*gpu, {}, cal);     // cal may be nullptr
//
//   absl::StatusOr<config::MeasurementFile> file = models::ParseMeasurementFile(text, path);
//   if (!file.ok()) return file.status();   // "measurement[3] (gemm): m must be > 0"
//   absl::StatusOr<std::vector<models::Measurement>> points = models::SelectMeasurements(*file);
#ifndef CLUSTERSIM_MODELS_CALIBRATION_H_
#define CLUSTERSIM_MODELS_CALIBRATION_H_

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "models/attention_curve.h"
#include "models/dtype.h"
#include "models/proto/calibration.pb.h"
#include "models/workload.h"
#include "sim/units.h"

namespace clustersim::models {

// Fitted parameters of one dtype; nullopt = not fitted (the spec fallback applies).
struct DtypeFit {
  std::optional<double> gemm_ceiling;           // fraction of the dtype's dense peak
  std::optional<double> small_tile_efficiency;  // 128x128 tiles against 128x256
  std::optional<double> unaligned_efficiency;   // k or n not a multiple of 16 bytes
  std::optional<double> attention_fwd_efficiency;
  std::optional<double> attention_bwd_efficiency;
  // Efficiency by sequence length per direction (attention_curve.h); when
  // non-empty it replaces the constant of its direction. Empty: not measured.
  std::vector<SeqEfficiency> attention_fwd_curve, attention_bwd_curve;
};

// Every fitted parameter of one GPU; nullopt = not fitted.
struct CalibrationParams {
  std::optional<double> gemm_bandwidth_fraction;    // small-dimension GEMM roofline
  std::optional<double> memory_bandwidth_fraction;  // memory-bound kernels, attention roofline
  std::optional<sim::Duration> kernel_overhead;
  std::array<DtypeFit, kAllDtypes.size()> dtype{};  // indexed by DtypeIndex

  const DtypeFit& For(Dtype d) const { return dtype[DtypeIndex(d)]; }
};

// One measured kernel, as the Op the KernelModel costs, with its measured time.
struct Measurement {
  Op op;
  sim::Duration median;
  bool cold_l2 = false;
  std::string label;  // "gemm bf16 1x12288x5376", for reports
};

// True for the attention backward op ("attention_bwd"; workload.h names it so).
bool IsAttentionBackward(const Op& op);

// Parses a MeasurementFile in text format and validates every entry; errors
// name the entry and field ("measurement[3] (gemm bf16): m must be > 0").
// `origin` (a path) prefixes the messages.
absl::StatusOr<config::MeasurementFile> ParseMeasurementFile(std::string_view text,
                                                             std::string_view origin);

// The Op a KernelModel costs for one validated measurement (launch: a
// memory-bound op of 0 bytes). FLOP and byte conventions follow workload.h.
absl::StatusOr<Op> MeasurementToOp(const config::KernelMeasurement& m);

// One Measurement per distinct shape, in file order: the cold-L2 time where the
// file has both, else the one it has. REQUIRES: `file` passed ParseMeasurementFile.
absl::StatusOr<std::vector<Measurement>> SelectMeasurements(const config::MeasurementFile& file);

class Calibration {
 public:
  // Parses and validates a CalibrationFile in text format.
  static absl::StatusOr<Calibration> Parse(std::string_view textproto, std::string_view origin);
  static absl::StatusOr<Calibration> FromProto(const config::CalibrationFile& file,
                                               std::string_view origin);

  // The shipped calibration for a GPU catalog name, or nullptr when none is
  // shipped. Parsed once; aborts if an embedded file is invalid (a build bug
  // caught by calibration_test). Thread-safe.
  static const Calibration* Shipped(std::string_view gpu_name);
  static std::vector<std::string> ShippedGpus();  // sorted

  Calibration(std::string gpu, CalibrationParams params, const std::vector<Measurement>& measured,
              std::string provenance);

  const std::string& gpu() const { return gpu_; }
  const CalibrationParams& params() const { return params_; }
  const std::string& provenance() const { return provenance_; }
  // The measured time of a GEMM or attention op of exactly this shape and
  // dtype, if the table has one. Memory-bound ops are never looked up (their
  // bytes do not identify the kernel).
  std::optional<sim::Duration> Measured(const Op& op) const;
  size_t measured_count() const { return measured_.size(); }

 private:
  // (kind, backward, dtype, m, n, k, batch, causal)
  using ShapeKey = std::tuple<int, bool, int, int64_t, int64_t, int64_t, int64_t, bool>;
  static std::optional<ShapeKey> KeyOf(const Op& op);
  static const std::vector<Calibration>& ShippedAll();  // sorted by gpu

  std::string gpu_;
  CalibrationParams params_;
  std::map<ShapeKey, sim::Duration> measured_;
  std::string provenance_;
};

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_CALIBRATION_H_
