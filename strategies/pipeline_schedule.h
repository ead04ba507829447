// File: strategies/pipeline_schedule.h
//
// The order in which one pipeline stage runs its micro-batches: a list of
// actions (forward, backward, or — for zero-bubble schedules — the input-
// gradient and weight-gradient halves of the backward) per stage. The step
// builder turns each action into that stage's ops; the timeline, and so the
// bubble, comes out of the simulation, not out of a formula.
//
//   kGPipe            all forwards, then all backwards (Huang et al. 2019)
//   k1F1B             PipeDream-Flush: p-s-1 warm-up forwards, then one
//                     forward / one backward, then the remaining backwards
//                     (Narayanan et al. 2021)
//   kInterleaved1F1B  Megatron-LM's interleaved schedule over v model chunks
//                     per stage (virtual stages); needs m % p == 0
//   kZeroBubbleH1     ZB-H1 (Qi et al. 2024): 1F1B with each backward split
//                     into B (input gradient) and W (weight gradient); stage s
//                     defers up to p-s-1 W passes so they fill the cool-down
//                     bubbles, at 1F1B's activation memory. This is the
//                     paper's handcrafted H1 order; its profile-driven
//                     scheduler, which also fills steady-state gaps when
//                     stages are uneven, is not reproduced, so the measured
//                     bubble lands between 1F1B's and the paper's 1/3.
//
// Example:
//   std::vector<PipelineAction> a = ScheduleForStage(Schedule::k1F1B, 0, 4, 8, 1);
#ifndef CLUSTERSIM_STRATEGIES_PIPELINE_SCHEDULE_H_
#define CLUSTERSIM_STRATEGIES_PIPELINE_SCHEDULE_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clustersim::strategies {

enum class Schedule { kGPipe, k1F1B, kInterleaved1F1B, kZeroBubbleH1 };
std::string_view ScheduleName(Schedule s);  // "gpipe", "1f1b", "interleaved-1f1b", "zb-h1"
absl::StatusOr<Schedule> ParseSchedule(std::string_view name);

// kBackward is a whole backward; kBackwardInput / kBackwardWeight its halves.
enum class Pass { kForward, kBackward, kBackwardInput, kBackwardWeight };

struct PipelineAction {
  Pass pass;
  int microbatch;
  int chunk;  // model chunk on this stage (0 unless interleaved)
  bool operator==(const PipelineAction&) const = default;
};

// REQUIRES: 0 <= stage < stages, microbatches >= 1, chunks >= 1 (== 1 unless
// interleaved), and for interleaving microbatches % stages == 0.
// `extra_warmup` (interleaved only): forwards added to every stage's warm-up;
// Megatron-Core adds one with --overlap-moe-expert-parallel-comm so that the
// forward and backward of each steady-state pair are independent
// (schedules.py, get_pp_rank_microbatches).
std::vector<PipelineAction> ScheduleForStage(Schedule schedule, int stage, int stages,
                                             int microbatches, int chunks,
                                             int extra_warmup = 0);

// Peak number of micro-batches whose activations a stage holds at once
// (forwards done, backwards not yet done), read off its action list.
int PeakInFlight(const std::vector<PipelineAction>& actions);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_PIPELINE_SCHEDULE_H_
