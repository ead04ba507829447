// File: scenarios/goodput/goodput.h
//
// The whole training run with failures, checkpoints and restarts: turns the
// scenario's `reliability` section, the reliability catalog
// (topology/reliability_catalog.h) and a simulated step (its time and the
// memory model's weights and optimizer states per GPU) into the inputs of
// the run timeline (run_timeline.h), runs its Monte Carlo, and fills
// Result.goodput: time-to-train percentiles, effective training time,
// interruptions by cause, checkpoint and restart costs, lost work, and
// GPU-hours, dollars and energy with the waste.
//
// Checkpoint model:
//   size    = parameters x (weight + optimizer bytes per parameter): every
//             shard saved once (Megatron's fully parallel save, PyTorch DCP);
//   snapshot per GPU = the largest pipeline stage's weights + optimizer
//             states on one GPU (the memory model, per the strategy's
//             sharding), copied over the GPU's host link (PCIe, NVLink-C2C
//             on a Grace superchip) at the catalog's efficiency;
//   write   = max(size / aggregate bandwidth, size / nodes / per-node bandwidth);
//   blocking: the GPUs stall for max(snapshot, write); asynchronous: for the
//             snapshot, and the write runs beside training;
//   interval: reliability.checkpoint_interval_s, or Young/Daly from the stall
//             and the unplanned MTTF, rounded to whole steps.
// Restart = detection + reschedule + init_s_per_gpu x GPUs (at least
//   init_min_s) + checkpoint load + warm-up steps x step time.
//
// Example:
//   if (GoodputRequested(scenario)) CLUSTERSIM_RETURN_IF_ERROR(ValidateReliability(scenario));
//   ... simulate the step into `result` ...
//   CLUSTERSIM_RETURN_IF_ERROR(AddGoodput(resolved, &result));
//   std::cout << FormatGoodputText(result);
#ifndef CLUSTERSIM_SCENARIOS_GOODPUT_GOODPUT_H_
#define CLUSTERSIM_SCENARIOS_GOODPUT_GOODPUT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scenarios/goodput/run_timeline.h"
#include "scenarios/input/resolve.h"
#include "scenarios/proto/result.pb.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::scenarios {

// True when the scenario has a `reliability` section, unless all it holds is
// `stragglers` and the run has no length (pricing.train_tokens / train_steps).
bool GoodputRequested(const config::Scenario& s);

// Checks the `reliability` section before anything is simulated. Errors name
// the field (reliability.trials=0 must be ...) and a fix; a section without
// a run length is refused too.
absl::Status ValidateReliability(const config::Scenario& s);

// Everything the timeline needs, resolved, and what produced it.
struct GoodputPlan {
  TimelineInputs timeline;
  TimelineOptions options;
  std::string profile, storage, mode;
  double checkpoint_gb = 0, snapshot_gb_per_gpu = 0;
  double stall_s = 0, write_s = 0, load_s = 0;
  bool young_daly = false;
  double unplanned_per_hour = 0;
  int gpus_per_node = 1;
};

// REQUIRES: ValidateReliability(s.echo).ok(); `step` holds the step time,
// memory per stage and train estimate of the simulated step.
absl::StatusOr<GoodputPlan> PlanGoodput(const ResolvedScenario& s, const config::Result& step);

// Plans, runs the Monte Carlo and fills result->goodput. No-op unless requested.
absl::Status AddGoodput(const ResolvedScenario& s, config::Result* result);

// The goodput lines of `clustersim run`'s text output; empty without goodput.
std::string FormatGoodputText(const config::Result& r);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_GOODPUT_GOODPUT_H_
