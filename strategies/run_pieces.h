// File: strategies/run_pieces.h
//
// Records, while a step is built, the pieces of merged runs that take in
// collectives (StepPlan::merged_runs, BuildMode::merge_compute_chains): per
// GPU, the run being recorded and its pieces (lane, offset from the run's
// start, length). Closing a run files its pieces in the plan and tags its
// task with 1 + the entry's index; runs with the same pieces (a layer's pass,
// micro-batch after micro-batch) share one entry.
//
// Example:
//   RunPieces pieces(num_gpus);
//   pieces.Open(0, run, &plan);
//   pieces.Add(0, kTensorCommLane, offset, collective_time);
//   ...
//   pieces.CloseAll(&plan);  // before the plan is simulated
#ifndef CLUSTERSIM_STRATEGIES_RUN_PIECES_H_
#define CLUSTERSIM_STRATEGIES_RUN_PIECES_H_

#include <map>
#include <vector>

#include "sim/task_graph.h"
#include "sim/units.h"
#include "strategies/step_plan.h"

namespace clustersim::strategies {

class RunPieces {
 public:
  explicit RunPieces(int num_gpus);

  // Whether `run` is the run being recorded on `gpu`.
  bool IsOpen(int gpu, sim::TaskId run) const { return open_[gpu] == run; }

  // Starts recording `run` on `gpu` (closing the one recorded before), its
  // ops so far (the task's duration in `plan`) one compute piece. No-op when
  // it already is.
  void Open(int gpu, sim::TaskId run, StepPlan* plan);

  // Appends a piece to the open run of `gpu`; one that continues the last
  // piece on the same lane lengthens it. REQUIRES: a run is open there.
  void Add(int gpu, Lane lane, sim::Duration start, sim::Duration length);

  // Files the open run of `gpu` (if any) in `plan` and tags its task.
  void Close(int gpu, StepPlan* plan);
  void CloseAll(StepPlan* plan);

 private:
  struct PiecesLess {
    bool operator()(const std::vector<RunPiece>& a, const std::vector<RunPiece>& b) const;
  };
  std::vector<sim::TaskId> open_;  // per GPU; kNone when none
  std::vector<std::vector<RunPiece>> pieces_;  // per GPU, of its open run
  std::map<std::vector<RunPiece>, uint32_t, PiecesLess> ids_;  // index in merged_runs
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_RUN_PIECES_H_
