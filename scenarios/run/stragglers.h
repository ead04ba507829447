// File: scenarios/run/stragglers.h
//
// Slow GPUs in the step simulation (scenario reliability.stragglers). Every GPU
// g gets a throughput relative to the kernel model's typical GPU:
//   throughput_g = clip(1 + spread x z_g, 1 - 3 spread, 1 + 3 spread)
//                  x (slow_gpu_throughput if u_g < slow_gpu_fraction, else 1)
// with z_g standard normal and u_g uniform, drawn from stream g of the seed
// (sim/random.h), so that GPU g draws the same at every cluster size. Its
// compute ops take 1 / throughput_g as long (StepInputs::gpu_time_scale).
//
// Why it costs: every data-parallel replica waits for the slowest at the
// gradient collectives, and a tensor-parallel group for its slowest member at
// every op, so the step runs at roughly the slowest GPU's pace while the
// chance of drawing a slow GPU grows with the GPU count: the straggler tax
// grows with scale. The run (runner.cc) simulates every data-parallel
// replica on its own and each tensor-parallel group as its slowest member
// (exact: the group's collectives after every op make the others wait for
// it), against the usual folded step with every GPU typical.
//
// Example:
//   absl::StatusOr<std::optional<StragglerSpec>> s = ResolveStragglers(scenario);
//   GpuDraws d = DrawGpus(**s, 16384);   // d.throughput[g]: 0.667 for a straggler
#ifndef CLUSTERSIM_SCENARIOS_RUN_STRAGGLERS_H_
#define CLUSTERSIM_SCENARIOS_RUN_STRAGGLERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/proto/result.pb.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::scenarios {

struct StragglerSpec {
  double slow_gpu_fraction = 0;
  double slow_gpu_throughput = 1.0 / 1.5;
  double throughput_spread = 0;
  uint64_t seed = 1;
};

// The scenario's stragglers with defaults filled, nullopt when it has none, or
// InvalidArgument naming the field and its range, e.g.
// "reliability.stragglers.slow_gpu_fraction=1.5 must be in [0, 1]".
absl::StatusOr<std::optional<StragglerSpec>> ResolveStragglers(const config::Scenario& s);

struct GpuDraws {
  std::vector<double> throughput;  // per GPU, throughput_g (see above)
  int slow_gpus = 0;               // GPUs drawn as stragglers
};
GpuDraws DrawGpus(const StragglerSpec& s, int num_gpus);

// What the result reports of the draws: slow GPUs, the slowest one, the mean.
void DescribeDraws(const GpuDraws& d, config::Stragglers* out);

// The text lines of `run` for the Result's stragglers ("" without them).
std::string FormatStragglersText(const config::Result& r);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_RUN_STRAGGLERS_H_
