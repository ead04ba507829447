#include "scenarios/run/run_trace.h"

#include <utility>

#include "traces/chrome_trace_writer.h"
#include "traces/perfetto_trace_writer.h"

namespace clustersim::scenarios {

absl::StatusOr<std::unique_ptr<traces::TraceSink>> OpenRunTrace(
    const ResolvedScenario& s, const RunOptions& options, const topology::Cluster& cluster,
    const strategies::Placement& placement, const strategies::StepDescriber& describer) {
  if (options.trace_format == "perfetto") {
    traces::PerfettoTraceWriter::Options popts;
    popts.ranks = options.trace_ranks;
    absl::StatusOr<std::unique_ptr<traces::PerfettoTraceWriter>> w =
        traces::PerfettoTraceWriter::Open(options.trace_path, describer, popts);
    if (!w.ok()) return w.status();
    return std::unique_ptr<traces::TraceSink>(*std::move(w));
  }
  traces::ChromeTraceWriter::Options topts;
  topts.other_data = {{"simulator", "clustersim"},
                      {"scenario", s.name},
                      {"cluster", cluster.Describe()},
                      {"model", s.model.name},
                      {"link_utilisation", s.flow_network
                                               ? "counters from the flow tier's link rates"
                                               : "none: link counters need --network-tier flow"}};
  topts.ranks = options.trace_ranks;
  topts.steps = options.trace_steps;
  topts.detail = options.trace_detail;
  // Stages read top to bottom.
  topts.process_sort_index = [&placement, &s](uint32_t g) {
    return int64_t{placement.CoordsOf(static_cast<int>(g)).pp} * s.num_gpus + g;
  };
  absl::StatusOr<std::unique_ptr<traces::ChromeTraceWriter>> w =
      traces::ChromeTraceWriter::Open(options.trace_path, describer, topts);
  if (!w.ok()) return w.status();
  return std::unique_ptr<traces::TraceSink>(*std::move(w));
}

void AddPipelineFlows(const strategies::StepPlan& plan, const sim::Engine& engine,
                      traces::TraceSink& trace) {
  const sim::TaskGraph& g = plan.graph;
  for (const strategies::PipelineTransfer& x : plan.transfers) {
    const sim::TaskGraph::Resource& from = g.resource(g.ResourcesOf(x.send)[0]);
    uint32_t to_lane = 0;
    for (sim::ResourceId r : g.ResourcesOf(x.receive)) {
      if (g.resource(r).group == static_cast<uint32_t>(x.receiver_gpu)) to_lane = g.resource(r).lane;
    }
    trace.AddFlow(x.forward ? "pp activation" : "pp gradient", from.group, from.lane,
                  engine.EndOf(x.send) - sim::Picoseconds(1), x.receiver_gpu, to_lane,
                  engine.StartOf(x.receive));
  }
}

}  // namespace clustersim::scenarios
