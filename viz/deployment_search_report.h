// File: viz/deployment_search_report.h
//
// The outputs of `clustersim serve --search` (scenarios/serve/deployment_search.h):
//   FormatDeploymentSearch   the text table: the search's counts, then the
//                            first top_rows candidates of the ranking with
//                            GPU, GPUs, layout (replicas x tp/pp/ep, or
//                            prefill + decode instances), formats, batch
//                            limit, p99 TTFT and TPOT, output tokens/s,
//                            $/M output tokens, $/hour, whether the targets
//                            hold ("*" marks the Pareto front) and why not;
//                            then how to run the best one alone.
//   RenderDeploymentSearchReport  one self-contained HTML page:
//     #deploy-pareto   $/M output tokens (y) against p99 TPOT (x, ms) of every
//                      candidate meeting the targets (grey), the Pareto front
//                      in red joined by a step line, the TPOT target dashed
//     #deploy-ranking  the ranking's first top_rows rows, as in the text
//     #deploy-front    every candidate on the front
// Every piece of text is escaped; the same result gives the same bytes.
//
// Example:
//   *io.out << FormatDeploymentSearch(result);
//   std::string html = RenderDeploymentSearchReport(result);
#ifndef CLUSTERSIM_VIZ_DEPLOYMENT_SEARCH_REPORT_H_
#define CLUSTERSIM_VIZ_DEPLOYMENT_SEARCH_REPORT_H_

#include <string>

#include "scenarios/proto/deployment_search.pb.h"

namespace clustersim::viz {

std::string FormatDeploymentSearch(const config::DeploymentSearchResult& r);

std::string RenderDeploymentSearchReport(const config::DeploymentSearchResult& r);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_DEPLOYMENT_SEARCH_REPORT_H_
