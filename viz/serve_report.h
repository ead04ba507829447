// File: viz/serve_report.h
//
// The inference page of the HTML report (`clustersim serve --report FILE`):
// one self-contained page (inline CSS and SVG, no script) with
//   #serve-summary     latency percentiles, throughput, saturation, the
//                      sustainable rate, money and energy
//   #serve-memory      one GPU's memory: weights, activations, overheads, KV
//                      cache, blocks and concurrent sequences, the verdict
//   #serve-curve-tpot  p50 and p99 time per output token (y, ms) against
//                      output tokens/s (x), one point per re-simulated rate;
//                      the TPOT target as a dashed line, the asked run as a
//                      red dot
//   #serve-curve-ttft  the same for p99 time to first token
// Every piece of text is escaped; the same result gives the same bytes.
//
// Example:
//   std::string html = RenderServeReport(result);
#ifndef CLUSTERSIM_VIZ_SERVE_REPORT_H_
#define CLUSTERSIM_VIZ_SERVE_REPORT_H_

#include <string>

#include "scenarios/proto/serve_result.pb.h"

namespace clustersim::viz {

std::string RenderServeReport(const config::ServeResult& r);

// The human-readable summary of `clustersim serve --format text`: aligned
// lines with units, in a fixed order.
std::string FormatServeSummary(const config::ServeResult& r);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_SERVE_REPORT_H_
