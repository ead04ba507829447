// File: scenarios/serve/serve_trace.h
//
// The Chrome trace of a serving run (traces/ChromeTraceWriter): one process
// per GPU of the simulated replica with one track, "iterations", holding one
// slice per iteration ("prefill 3 seq 1536 tok", "decode 64 seq",
// "mixed 12 seq 512 prefill tok") with its batch in the args; and counters on
// the first GPU: sequences running and waiting, KV blocks in use. Every GPU of
// the replica shows the whole iteration (tensor-parallel peers work in lock
// step; with pipeline parallelism each stage is busy for its share of it).
//
// Example:
//   absl::Status s = WriteServeTrace("serve.trace.json", run, resolved);
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_TRACE_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_TRACE_H_

#include <string>

#include "absl/status/status.h"
#include "scenarios/serve/serve_resolve.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::scenarios {

// REQUIRES: run.iterations kept (SimulateServing's keep_iterations).
absl::Status WriteServeTrace(const std::string& path, const strategies::ServingRun& run,
                             const ResolvedServe& s);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_TRACE_H_
