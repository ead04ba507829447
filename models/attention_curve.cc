#include "models/attention_curve.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::models {

absl::Status CheckEfficiencyCurve(const std::vector<SeqEfficiency>& curve, std::string_view field) {
  for (size_t i = 0; i < curve.size(); ++i) {
    const std::string at = absl::StrCat(std::string(field), "[", i, "]");
    const SeqEfficiency& p = curve[i];
    if (p.seq <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".seq=", p.seq, " must be > 0 (query tokens per sequence)"));
    }
    if (i > 0 && p.seq <= curve[i - 1].seq) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".seq=", p.seq, " must be above the point before (", curve[i - 1].seq,
                       "); list the points by increasing seq, one per length"));
    }
    if (!std::isfinite(p.efficiency) || p.efficiency <= 0 || p.efficiency > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          at, ".efficiency=", p.efficiency, " must be in (0, 1] (a fraction of dense peak)"));
    }
  }
  return absl::OkStatus();
}

double InterpolateEfficiency(const std::vector<SeqEfficiency>& curve, int64_t seq) {
  SIM_CHECK(!curve.empty() && seq > 0) << "InterpolateEfficiency needs points and seq > 0, got "
                                       << curve.size() << " points, seq " << seq;
  if (seq <= curve.front().seq) return curve.front().efficiency;
  if (seq >= curve.back().seq) return curve.back().efficiency;
  size_t hi = 1;
  while (curve[hi].seq < seq) ++hi;
  const SeqEfficiency& a = curve[hi - 1];
  const SeqEfficiency& b = curve[hi];
  const double t = std::log2(static_cast<double>(seq) / static_cast<double>(a.seq)) /
                   std::log2(static_cast<double>(b.seq) / static_cast<double>(a.seq));
  return a.efficiency + t * (b.efficiency - a.efficiency);
}

}  // namespace clustersim::models
