// File: strategies/placement.h
//
// Maps ranks to GPUs and forms the communication groups, in Megatron-LM's
// order: tensor-parallel ranks are innermost (consecutive GPUs, so a TP group
// stays inside one NVLink node), then context, then data, then pipeline:
//   gpu = tp + TP * (cp + CP * (dp + DP * pp))
//
// Example:
//   Placement pl(config);                  // tp=8, dp=2 on 16 GPUs
//   pl.GpuOf({.tp = 3, .dp = 1});          // 11
//   pl.TensorGroup(11);                    // {8, ..., 15}
//   pl.DataGroup(11);                      // {3, 11}
//
// Expert parallelism (Megatron-core's expert rank order tp-ep-edp-pp, with
// expert TP = tp): ep is carved out of the cp x dp ranks of one stage. With
// r = cp + CP * dp, a GPU's expert rank is r % ep and its expert-data-parallel
// rank r / ep, so an expert group is ep consecutive data-parallel replicas
// (same tp and pp) and the expert-data-parallel group (dp·cp/ep ranks) holds
// the replicas with the same expert rank:
//   tp=2, dp=8, ep=4:  ExpertGroup(0) = {0, 2, 4, 6}, ExpertDataGroup(0) = {0, 8}
// MoE parallel folding (expert TP 1, ParallelConfig::expert_tensor_parallel):
// the expert ranks number the tp x cp x dp GPUs of a stage with tp innermost
// (Megatron-Core's expert RankGenerator, order tp-ep-dp-pp with expert TP 1),
// so with q = gpu's index inside its stage an expert group is ep consecutive
// GPUs (q / ep the same) and the expert-data-parallel group the tp·cp·dp/ep
// GPUs with the same q % ep:
//   tp=2, dp=4, ep=8, expert TP 1:  ExpertGroup(0) = {0, ..., 7}, ExpertDataGroup(0) = {0}
// Both orders are the one formula with e = expert TP (tp or 1): expert tensor
// rank q % e, expert rank (q / e) % ep, expert-data rank q / (e·ep).
// Context parallelism (Megatron-Core parallel_state, order "tp-cp-ep-dp-pp"):
// the cp ranks of a ring share tp, dp and pp and sit TP apart, so with
// tp x cp <= 8 a ring stays inside one node. Gradients are reduced over the
// combined data-and-context group (Megatron's get_data_parallel_group(
// with_context_parallel=True)): ContextGroup x DataGroup.
#ifndef CLUSTERSIM_STRATEGIES_PLACEMENT_H_
#define CLUSTERSIM_STRATEGIES_PLACEMENT_H_

#include <vector>

#include "strategies/parallel_config.h"

namespace clustersim::strategies {

struct RankCoords {
  int tp = 0;
  int cp = 0;
  int dp = 0;
  int pp = 0;
};

class Placement {
 public:
  // REQUIRES: config validated (data_parallel derived).
  explicit Placement(const ParallelConfig& config);

  int world_size() const { return tp_ * cp_ * dp_ * pp_; }
  int GpuOf(const RankCoords& c) const { return c.tp + tp_ * (c.cp + cp_ * (c.dp + dp_ * c.pp)); }
  RankCoords CoordsOf(int gpu) const;

  std::vector<int> TensorGroup(int gpu) const;
  std::vector<int> DataGroup(int gpu) const;
  std::vector<int> PipelineGroup(int gpu) const;
  // REQUIRES: expert TP x expert_parallel divides tp·cp·dp
  // (ValidateParallelConfig checks it).
  std::vector<int> ExpertGroup(int gpu) const;
  std::vector<int> ExpertDataGroup(int gpu) const;
  int ExpertRankOf(int gpu) const { return (StageIndexOf(gpu) / etp_) % ep_; }
  int ExpertDataRankOf(int gpu) const { return StageIndexOf(gpu) / (etp_ * ep_); }
  // The ring of context-parallel ranks, in ring order (cp = 0, 1, ...).
  std::vector<int> ContextGroup(int gpu) const;
  // Data x context ranks with the same tp and pp: where gradients are reduced
  // (and the distributed optimizer shards). Equals DataGroup when cp = 1.
  std::vector<int> DataContextGroup(int gpu) const;
  // Hybrid sharding with shard groups of `shard` data-parallel ranks
  // (ParallelConfig::data_parallel_shard; `shard` divides dp): the data x
  // context ranks whose dp index lies in `gpu`'s block of `shard`
  // consecutive ones, and the dp/shard ranks that hold the same shard as
  // `gpu` (same tp, cp, pp and dp index mod `shard`). shard = dp gives
  // DataContextGroup and {gpu}.
  std::vector<int> DataContextShardGroup(int gpu, int shard) const;
  std::vector<int> DataReplicaGroup(int gpu, int shard) const;
  // Every tp x cp x dp rank of `gpu`'s pipeline stage, ascending: Megatron's
  // tensor + data (+ context) parallel group, where FP8 amaxes are reduced.
  std::vector<int> StageGroup(int gpu) const;

 private:
  // `gpu`'s index tp + TP·(cp + CP·dp) inside its pipeline stage, and the
  // first GPU of that stage.
  int StageIndexOf(int gpu) const { return gpu % (tp_ * cp_ * dp_); }
  int StageBase(int gpu) const { return gpu - StageIndexOf(gpu); }
  int ExpertTensorRankOf(int gpu) const { return StageIndexOf(gpu) % etp_; }
  // The ranks that differ from `gpu` only in `axis` (of extent `size`).
  std::vector<int> Along(int gpu, int RankCoords::*axis, int size) const;

  int tp_, cp_, dp_, pp_, ep_, etp_;
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_PLACEMENT_H_
