// File: viz/goodput_chart.h
//
// The report's pictures of a run simulated with failures (Result.goodput,
// scenarios/goodput/): one trial's timeline (a bar of wall time with a mark
// per failure and planned stop, its restart, and sampled checkpoints) and the
// distribution of time-to-train over the trials (the result's histogram).
// Deterministic SVG (numbers with one decimal); cause names are escaped.
//
// Example:
//   if (r.has_goodput()) html += GoodputTimelineSvg(r.goodput()) +
//   GoodputHistogramSvg(r.goodput());
#ifndef CLUSTERSIM_VIZ_GOODPUT_CHART_H_
#define CLUSTERSIM_VIZ_GOODPUT_CHART_H_

#include <string>

#include "scenarios/proto/result.pb.h"

namespace clustersim::viz {

// SVG with id "goodput-timeline": wall time in days along x; failures red
// (their cause in a tooltip), planned stops orange, each followed by its
// restart in green; sampled checkpoints grey.
std::string GoodputTimelineSvg(const config::Goodput& g);

// SVG with id "goodput-histogram": trials per time-to-train bin, with the
// p10, p50 and p90 marked.
std::string GoodputHistogramSvg(const config::Goodput& g);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_GOODPUT_CHART_H_
