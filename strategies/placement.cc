#include "strategies/placement.h"

namespace clustersim::strategies {

Placement::Placement(const ParallelConfig& c)
    : tp_(c.tensor_parallel), cp_(c.context_parallel), dp_(c.data_parallel),
      pp_(c.pipeline_parallel), ep_(c.expert_parallel), etp_(c.expert_tp()) {}

RankCoords Placement::CoordsOf(int gpu) const {
  RankCoords c;
  c.tp = gpu % tp_;
  gpu /= tp_;
  c.cp = gpu % cp_;
  gpu /= cp_;
  c.dp = gpu % dp_;
  c.pp = gpu / dp_;
  return c;
}

std::vector<int> Placement::TensorGroup(int gpu) const {
  RankCoords c = CoordsOf(gpu);
  std::vector<int> g;
  for (c.tp = 0; c.tp < tp_; ++c.tp) g.push_back(GpuOf(c));
  return g;
}

std::vector<int> Placement::DataGroup(int gpu) const {
  RankCoords c = CoordsOf(gpu);
  std::vector<int> g;
  for (c.dp = 0; c.dp < dp_; ++c.dp) g.push_back(GpuOf(c));
  return g;
}

std::vector<int> Placement::PipelineGroup(int gpu) const {
  RankCoords c = CoordsOf(gpu);
  std::vector<int> g;
  for (c.pp = 0; c.pp < pp_; ++c.pp) g.push_back(GpuOf(c));
  return g;
}

std::vector<int> Placement::ExpertGroup(int gpu) const {
  const int base = StageBase(gpu) + ExpertTensorRankOf(gpu);
  const int first = ExpertDataRankOf(gpu) * ep_;
  std::vector<int> g;
  for (int e = 0; e < ep_; ++e) g.push_back(base + etp_ * (first + e));
  return g;
}

std::vector<int> Placement::ExpertDataGroup(int gpu) const {
  const int base = StageBase(gpu) + ExpertTensorRankOf(gpu);
  const int e = ExpertRankOf(gpu);
  std::vector<int> g;
  for (int d = 0; d < tp_ * cp_ * dp_ / (etp_ * ep_); ++d) g.push_back(base + etp_ * (e + ep_ * d));
  return g;
}

std::vector<int> Placement::Along(int gpu, int RankCoords::*axis, int size) const {
  RankCoords c = CoordsOf(gpu);
  std::vector<int> g;
  for (c.*axis = 0; c.*axis < size; ++(c.*axis)) g.push_back(GpuOf(c));
  return g;
}

std::vector<int> Placement::ContextGroup(int gpu) const { return Along(gpu, &RankCoords::cp, cp_); }

std::vector<int> Placement::DataContextGroup(int gpu) const {
  // cp is inside dp in the rank order, so dp-major, cp-minor is ascending.
  RankCoords c = CoordsOf(gpu);
  std::vector<int> g;
  g.reserve(static_cast<size_t>(cp_) * dp_);
  for (c.dp = 0; c.dp < dp_; ++c.dp) {
    for (c.cp = 0; c.cp < cp_; ++c.cp) g.push_back(GpuOf(c));
  }
  return g;
}

std::vector<int> Placement::DataContextShardGroup(int gpu, int shard) const {
  RankCoords c = CoordsOf(gpu);
  const int first = c.dp - c.dp % shard;
  std::vector<int> g;
  g.reserve(static_cast<size_t>(cp_) * shard);
  for (c.dp = first; c.dp < first + shard; ++c.dp) {
    for (c.cp = 0; c.cp < cp_; ++c.cp) g.push_back(GpuOf(c));
  }
  return g;
}

std::vector<int> Placement::DataReplicaGroup(int gpu, int shard) const {
  RankCoords c = CoordsOf(gpu);
  std::vector<int> g;
  g.reserve(static_cast<size_t>(dp_ / shard));
  for (c.dp = c.dp % shard; c.dp < dp_; c.dp += shard) g.push_back(GpuOf(c));
  return g;
}

std::vector<int> Placement::StageGroup(int gpu) const {
  std::vector<int> g(static_cast<size_t>(tp_) * cp_ * dp_);
  for (size_t j = 0; j < g.size(); ++j) g[j] = StageBase(gpu) + static_cast<int>(j);
  return g;
}

}  // namespace clustersim::strategies
