// File: scenarios/input/limits.h
//
// Up-front limits on what clustersim will simulate, checked by Resolve before
// any task graph is built, so absurd input is refused with a clear error
// instead of crashing, wrapping the clock, or running for days:
//   - every double in the scenario is finite (no nan / inf);
//   - the step fits the simulated clock: int64 picoseconds hold about 106.7
//     days (sim/units.h). The ideal step time, model FLOPs of one global batch
//     over the peak FLOP/s of all GPUs, is a lower bound on any simulated step;
//     a scenario whose ideal step exceeds 1% of the clock (about 25.6 hours) is
//     refused, which leaves a factor 100 for kernels slower than peak, so no
//     task or step can overflow the clock at 1% or more of peak;
//   - the task graph fits in 8 GiB: tasks are estimated as
//     kTasksPerRankLayerMicroBatch x (tensor x context parallel ranks) x
//     micro-batches per pipeline x layers, at kBytesPerTask each, with the
//     runner's default folds (one data-parallel replica; one tensor rank per
//     group above 64 GPUs). `clustersim run --no-fold` is not estimated.
//
// Example:
//   if (absl::Status s = CheckFiniteNumbers(scenario); !s.ok()) return s;
//   if (absl::Status s = CheckStepFitsClock(resolved); !s.ok()) return s;
#ifndef CLUSTERSIM_SCENARIOS_INPUT_LIMITS_H_
#define CLUSTERSIM_SCENARIOS_INPUT_LIMITS_H_

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace clustersim::scenarios {

struct ResolvedScenario;

// Measured on this build (docs/reliability.md): 29.5 (Llama 2 7B, tp 2,
// selective recompute), 40.8 (Mixtral 8x7B, pp 4), 48.1 (GPT 22B, tp 8, full
// recompute) tasks per tensor-parallel rank, micro-batch and layer; 50 bounds
// them. Peak RSS over tasks at 18.9 M tasks: 1,991,952 KB / 18,904,072 = 108 B.
inline constexpr double kTasksPerRankLayerMicroBatch = 50;
inline constexpr double kBytesPerTask = 110;
// Above this many GPUs a run simulates one tensor-parallel rank per group and
// one context-parallel rank per ring (exact; smaller runs keep every GPU so
// that traces show them all). RunOptions' default.
inline constexpr int kFoldTensorParallelAboveGpus = 64;

inline constexpr double kMaxTaskGraphBytes = 8.0 * (1 << 30);

// The longest ideal step accepted, in seconds: 1% of the picosecond clock.
double MaxIdealStepSeconds();

// INVALID_ARGUMENT naming the first (in field-number order) double or float
// field, nested messages and repeated fields included, that is nan or inf.
absl::Status CheckFiniteNumbers(const google::protobuf::Message& message);

// INVALID_ARGUMENT, with the estimate, when the ideal step time of `r`
// exceeds MaxIdealStepSeconds().
absl::Status CheckStepFitsClock(const ResolvedScenario& r);

// The estimated number of tasks of one simulated step (see above).
double EstimatedTasks(const ResolvedScenario& r);

// INVALID_ARGUMENT, with the estimate in tasks and GiB, when the task graph
// would exceed kMaxTaskGraphBytes.
absl::Status CheckTaskGraphFits(const ResolvedScenario& r);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_INPUT_LIMITS_H_
