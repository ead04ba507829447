// File: scenarios/run/measure.h
//
// The Result's figures of a simulated training step: throughput, FLOPs in
// both conventions, MFU/HFU, bubble and exposed communication (from the step
// statistics), and memory per GPU and per pipeline stage (the memory model
// and the simulated memory timeline), with the fits / does-not-fit verdict.
//
// Example:
//   FillStepFigures(scenario, stats.Summarize(engine.Makespan()), &result);
//   FillMemory(scenario, inputs, MemoryByStage(inputs), timeline, &result);
#ifndef CLUSTERSIM_SCENARIOS_RUN_MEASURE_H_
#define CLUSTERSIM_SCENARIOS_RUN_MEASURE_H_

#include <vector>

#include "models/memory_model.h"
#include "scenarios/input/resolve.h"
#include "scenarios/proto/result.pb.h"
#include "strategies/memory_timeline.h"
#include "strategies/step_stats.h"

namespace clustersim::scenarios {

// Bytes per GiB, the unit of every memory figure in the Result.
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Step time, tokens/s, model and hardware FLOPs, MFU/HFU, bubble ratio,
// exposed communication by kind and compute time.
void FillStepFigures(const ResolvedScenario& s, const strategies::StepStats::Summary& sum,
                     config::Result* r);

// The memory model for every pipeline stage (stage 0 first).
std::vector<models::MemoryBreakdown> MemoryByStage(const models::MemoryInputs& in);

// Memory per GPU (stage 0, the most loaded under 1F1B), the verdict, and
// every stage's model and simulated peak.
void FillMemory(const ResolvedScenario& s, const models::MemoryInputs& in,
                const std::vector<models::MemoryBreakdown>& by_stage,
                const strategies::MemoryTimeline& timeline, config::Result* out);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_RUN_MEASURE_H_
