#include "strategies/run_pieces.h"

#include <algorithm>
#include <tuple>

#include "sim/check.h"

namespace clustersim::strategies {
namespace {
constexpr sim::TaskId kNone = ~sim::TaskId{0};
}  // namespace

bool RunPieces::PiecesLess::operator()(const std::vector<RunPiece>& a,
                                       const std::vector<RunPiece>& b) const {
  return std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(), [](const RunPiece& x, const RunPiece& y) {
        return std::tie(x.lane, x.start, x.length) < std::tie(y.lane, y.start, y.length);
      });
}

RunPieces::RunPieces(int num_gpus) : open_(num_gpus, kNone), pieces_(num_gpus) {}

void RunPieces::Open(int gpu, sim::TaskId run, StepPlan* plan) {
  if (open_[gpu] == run) return;
  Close(gpu, plan);
  open_[gpu] = run;
  pieces_[gpu].assign(
      1, RunPiece{kComputeLane, sim::Duration::Zero(), plan->graph.task(run).duration});
}

void RunPieces::Add(int gpu, Lane lane, sim::Duration start, sim::Duration length) {
  SIM_CHECK(open_[gpu] != kNone) << "no run is being recorded on local GPU " << gpu;
  std::vector<RunPiece>& pieces = pieces_[gpu];
  RunPiece& last = pieces.back();
  if (last.lane == lane && last.start + last.length == start) {
    last.length += length;
  } else {
    pieces.push_back(RunPiece{lane, start, length});
  }
}

void RunPieces::Close(int gpu, StepPlan* plan) {
  if (open_[gpu] == kNone) return;
  const auto [it, added] =
      ids_.try_emplace(pieces_[gpu], static_cast<uint32_t>(plan->merged_runs.size()));
  if (added) {
    plan->merged_runs.push_back(MergedRun{static_cast<uint32_t>(plan->run_pieces.size()),
                                          static_cast<uint32_t>(pieces_[gpu].size())});
    plan->run_pieces.insert(plan->run_pieces.end(), pieces_[gpu].begin(), pieces_[gpu].end());
  }
  plan->graph.SetTag(open_[gpu], it->second + 1);
  open_[gpu] = kNone;
}

void RunPieces::CloseAll(StepPlan* plan) {
  for (int gpu = 0; gpu < static_cast<int>(open_.size()); ++gpu) Close(gpu, plan);
}

}  // namespace clustersim::strategies
