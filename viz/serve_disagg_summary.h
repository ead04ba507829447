// File: viz/serve_disagg_summary.h
//
// The text summary of a disaggregated `clustersim serve` run
// (ServeResult.disaggregated, scenarios/serve/serve_disagg_runner.h): the two
// pools (GPUs, parallelism, memory, busy fraction, batch), the KV transfers
// (bytes, time, wait, path), latency percentiles, throughput, capacity,
// goodput and goodput per GPU, money, and the ratio search's table when it ran.
//
// Example:
//   std::cout << FormatDisaggSummary(result);
#ifndef CLUSTERSIM_VIZ_SERVE_DISAGG_SUMMARY_H_
#define CLUSTERSIM_VIZ_SERVE_DISAGG_SUMMARY_H_

#include <string>

#include "scenarios/proto/serve_result.pb.h"

namespace clustersim::viz {

// REQUIRES: r.has_disaggregated().
std::string FormatDisaggSummary(const config::ServeResult& r);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_SERVE_DISAGG_SUMMARY_H_
