// File: viz/memory_chart.h
//
// Memory in use over one step as a small inline SVG line chart (the report's
// #memory-curve): one step line per curve (e.g. the first and the last
// pipeline stage), the GPU's capacity as a dashed red line, time in the step
// along x, GiB along y. Long curves are reduced to at most kMaxSteps buckets
// of equal time, each drawn at its largest value, so peaks survive and the
// SVG stays small.
//
// Example:
//   std::string svg = MemoryCurveSvg({{"stage 0", {{0, 40.1}, {0.2, 52.3}}}}, 80, 1.3);
#ifndef CLUSTERSIM_VIZ_MEMORY_CHART_H_
#define CLUSTERSIM_VIZ_MEMORY_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace clustersim::viz {

struct MemoryCurve {
  std::string label;  // "first stage: node0/gpu0 (tp 0, cp 0, pp 0, dp 0)"
  // (seconds into the step, GiB in use from then on), in time order.
  std::vector<std::pair<double, double>> points;
};

inline constexpr int kMaxSteps = 600;

// Deterministic SVG with id "memory-curve"; text is escaped. `end_s` is the
// step's end (the x axis); `capacity_gib` < 0 draws no capacity line.
std::string MemoryCurveSvg(const std::vector<MemoryCurve>& curves, double capacity_gib,
                           double end_s);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_MEMORY_CHART_H_
