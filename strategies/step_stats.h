// File: strategies/step_stats.h
//
// Measures where the time of a simulated step went, from the spans the engine
// reports: compute busy time, communication that no compute hid (exposed), per
// kind, and the pipeline bubble. Nothing here is a formula: every figure is
// read off the simulated timeline.
//
// Definitions (per GPU; the step reports the critical GPU, the one with the
// most compute-stream busy time, lowest index on ties):
//   compute      = union of compute-lane spans
//   exposed comm = union of communication-lane spans minus the compute union
//   exposed by kind = the same with only that lane's spans
//   bubble       = compute-lane idle time within the step [0, step end) that
//                  no communication covers: the warm-up and cool-down waits
//                  of a pipeline stage, and any stall in between
// A merged run with collectives inside (StepPlan::merged_runs) counts as its
// pieces, each on its own lane, as the op-by-op tasks would have.
//
// Example:
//   StepStats stats(plan);
//   engine.AddObserver(&stats);
//   engine.Run();
//   StepStats::Summary s = stats.Summarize(engine.Makespan());
#ifndef CLUSTERSIM_STRATEGIES_STEP_STATS_H_
#define CLUSTERSIM_STRATEGIES_STEP_STATS_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim/engine.h"
#include "strategies/step_plan.h"
#include "strategies/varint_chains.h"

namespace clustersim::strategies {

class StepStats : public sim::SpanObserver {
 public:
  struct Summary {
    sim::Duration step_time;
    sim::Duration compute;
    sim::Duration exposed_comm;
    sim::Duration exposed_tp;
    sim::Duration exposed_dp;
    sim::Duration exposed_pp;
    sim::Duration exposed_ep;  // expert-parallel all-to-all (MoE)
    sim::Duration exposed_cp;  // context-parallel ring exchanges
    sim::Duration bubble;
    int critical_gpu = 0;
  };

  // One simulated GPU's compute busy time and communication no compute hid.
  struct GpuBusy {
    int gpu = 0;
    sim::Duration compute;
    sim::Duration exposed_comm;
  };

  // Lifetime: `plan` must outlive this observer.
  explicit StepStats(const StepPlan& plan);
  void OnSpan(const sim::TaskGraph& g, const sim::Span& s) override;
  // REQUIRES for Summarize and PerGpu: the run has ended (their figures are
  // worked out once, on the first call, and kept). Not thread-safe.
  Summary Summarize(sim::Time makespan) const;
  // Every simulated GPU, in plan.simulated_gpus order.
  std::vector<GpuBusy> PerGpu() const;

 private:
  using Interval = std::pair<int64_t, int64_t>;  // [start, end) picoseconds
  // The spans of local GPU i's `lane`: the closed ones, then the open one.
  std::vector<Interval> LaneSpans(size_t i, int lane) const;
  // Every simulated GPU's figures, worked out on the first call.
  const std::vector<GpuBusy>& Busy() const;
  // From this many simulated GPUs, Busy decodes them on two threads.
  static constexpr size_t kTwoThreadGpus = 1024;
  mutable std::optional<std::vector<GpuBusy>> busy_;
  // The union of local GPU i's communication lanes.
  std::vector<Interval> CommUnion(size_t i) const;
  // Adds [start, end) to lane slot `slot` (local GPU x kNumLanes + lane).
  void Join(int32_t slot, int64_t start, int64_t end);
  const StepPlan& plan_;
  std::vector<int> local_of_;  // global GPU -> local index
  // Per lane slot: its spans but the last ("closed"), and the last one
  // ("open": later spans that start inside it join it). Every span the engine
  // reports reads its slot's open span and, when it starts past it, closes it:
  // the open span and the end of the last closed one sit together so that a
  // span costs one slot record and the tail of one chain. Closed spans are
  // packed as varints (zigzag start minus the previous closed end, then
  // length), about half the 16 bytes of a pair on steps of tens of millions.
  struct SlotState {
    Interval open;
    int64_t closed_end = 0;  // the end of its last closed span
  };
  std::vector<SlotState> slots_;
  VarintChains closed_;
  // Per resource of the plan's graph: its lane slot (-1: host lane).
  std::vector<int32_t> slot_of_;
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_STEP_STATS_H_
