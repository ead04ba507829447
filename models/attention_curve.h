// File: models/attention_curve.h
//
// An attention kernel's efficiency as a function of the sequence length one
// rank attends over: measured points (sequence, fraction of dense peak), read
// between them piecewise-linearly in log2(sequence) and held at the end
// points' values outside them. Fused attention kernels lose efficiency at short
// sequences (fewer key blocks per query tile to amortise each tile's prologue
// and epilogue over, fewer tiles per SM); cuDNN's B200 causal forward runs at
// 856 TFLOPS at 4K and 1,332 at 16K. A calibration stores one curve per
// dtype and direction when its measurements have attention points
// (models/calibration_fit.h); the kernel model reads it at the op's query
// length per rank (after the context-parallel split).
//
// Example:
//   std::vector<models::SeqEfficiency> fwd = {{4096, 0.39}, {8192, 0.53}};
//   CLUSTERSIM_RETURN_IF_ERROR(models::CheckEfficiencyCurve(fwd, "dtype[0].attention_fwd_curve"));
//   double e = models::InterpolateEfficiency(fwd, 6144);  // 0.4719 (halfway in log2)
#ifndef CLUSTERSIM_MODELS_ATTENTION_CURVE_H_
#define CLUSTERSIM_MODELS_ATTENTION_CURVE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace clustersim::models {

struct SeqEfficiency {
  int64_t seq = 0;        // query tokens per sequence on one rank
  double efficiency = 0;  // fraction of the dtype's dense peak for the FLOPs executed
};

// OK when every seq is > 0 and strictly above the one before and every
// efficiency is in (0, 1]; otherwise InvalidArgument naming `field` and the
// point ("dtype[0].attention_fwd_curve[2].seq=4096 must be above the point
// before (8192); list the points by increasing seq"). An empty curve is valid.
absl::Status CheckEfficiencyCurve(const std::vector<SeqEfficiency>& curve, std::string_view field);

// The curve's efficiency at `seq`: linear in log2(seq) between neighbouring
// points, the first point's value below it and the last's above it.
// REQUIRES: CheckEfficiencyCurve(curve).ok(), !curve.empty(), seq > 0.
double InterpolateEfficiency(const std::vector<SeqEfficiency>& curve, int64_t seq);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_ATTENTION_CURVE_H_
