// File: viz/html_report.h
//
// The HTML report of one run (`clustersim run --report FILE.html`): one
// self-contained file (inline CSS and SVG; no script, no network, no CDN) that
// a team can open in any browser or attach to an e-mail. Sections, each an
// element with a fixed id (the browser test checks them):
//   #numbers    the key numbers (step time, throughput, TFLOP/s and MFU,
//               bubble, exposed communication, memory verdict, cost)
//   #pipeline   the pipeline schedule (viz/pipeline_diagram.h)
//   #breakdown  the step time stacked: compute, optimizer, exposed tp / cp /
//               ep / dp / pp communication, bubble, and the rest ("other":
//               host launch waits and stalls the other terms do not cover)
//   #memory     memory per pipeline stage (weights, gradients, optimizer
//               state, activations, other) as stacked bars against the GPU's
//               capacity, each with fits / does not fit and the peak read off
//               the simulated timeline
//   #memory-curve  memory in use over the step on the first and the last
//               stage (viz/memory_chart.h), when the caller passes curves
//   #scenario   the resolved scenario as pretty JSON
// Every piece of text from the input is escaped; the same Result and Timeline
// give the same bytes.
//
// Example:
//   viz::Timeline timeline(describer, {});
//   engine.AddObserver(&timeline);
//   ... run, build `result` ...
//   absl::Status s = viz::WriteHtmlReport("out/report.html", result, timeline);
#ifndef CLUSTERSIM_VIZ_HTML_REPORT_H_
#define CLUSTERSIM_VIZ_HTML_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scenarios/proto/result.pb.h"
#include "viz/bar_charts.h"
#include "viz/memory_chart.h"
#include "viz/timeline.h"

namespace clustersim::viz {

// The segments of the step-time bar, in seconds, in display order. Compute
// excludes the optimizer, whose time is the largest per-GPU sum of optimizer
// ("step") compute spans in `timeline`; "other" is what remains of the step
// time (zero when the terms already reach it).
std::vector<BarSegment> StepBreakdown(const config::Result& result, const Timeline& timeline);

// The memory bars in GiB: one per pipeline stage (Result.memory_per_stage_gib)
// with its verdict and simulated peak, or one for every GPU when the result
// carries no stages.
std::vector<BarRow> MemoryBars(const config::Result& result);

// The whole page. Error only if the scenario cannot be printed as JSON.
absl::StatusOr<std::string> RenderHtmlReport(const config::Result& result,
                                             const Timeline& timeline,
                                             const std::vector<MemoryCurve>& memory_curves = {});

// Renders and writes the page atomically (sim/atomic_file.h). Error names
// the path when it cannot be written.
absl::Status WriteHtmlReport(const std::string& path, const config::Result& result,
                             const Timeline& timeline,
                             const std::vector<MemoryCurve>& memory_curves = {});

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_HTML_REPORT_H_
