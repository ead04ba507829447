// File: viz/summary_text.h
//
// The human-readable summary of a run (`clustersim run --format text`): the
// key numbers of a Result, aligned, with units, in a fixed order.
//
// Example:
//   std::cout << FormatSummary(result);
#ifndef CLUSTERSIM_VIZ_SUMMARY_TEXT_H_
#define CLUSTERSIM_VIZ_SUMMARY_TEXT_H_

#include <string>

#include "scenarios/proto/result.pb.h"

namespace clustersim::viz {

std::string FormatSummary(const config::Result& result);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_SUMMARY_TEXT_H_
