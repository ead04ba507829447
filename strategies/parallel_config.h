// File: strategies/parallel_config.h
//
// How one training step is split over GPUs, in Megatron-LM's vocabulary:
// tensor (tp), pipeline (pp), context (cp), expert (ep) and data (dp, derived)
// parallelism, sequence parallelism, the distributed optimizer / ZeRO stage,
// micro and global batch, recompute granularity and precision.
//
// Example:
//   ParallelConfig p;
//   p.tensor_parallel = 8; p.micro_batch_size = 4; p.global_batch_size = 4;
//   absl::Status s = ValidateParallelConfig(model, /*world_size=*/8, &p);  // fills p.data_parallel
//   int m = p.num_microbatches();
#ifndef CLUSTERSIM_STRATEGIES_PARALLEL_CONFIG_H_
#define CLUSTERSIM_STRATEGIES_PARALLEL_CONFIG_H_

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "models/dtype.h"
#include "models/fp8_recipe.h"
#include "models/transformer_config.h"
#include "models/workload.h"
#include "strategies/expert_dispatch.h"
#include "strategies/pipeline_schedule.h"

namespace clustersim::strategies {

struct ParallelConfig {
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int context_parallel = 1;
  int expert_parallel = 1;
  int virtual_pipeline = 1;
  int data_parallel = 1;  // derived: world / (tp * pp * cp)
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  int zero_stage = 0;
  // Hybrid sharding (PyTorch HSDP, torchtitan data_parallel_shard_degree,
  // MaxText FSDP inside dcn data parallelism): ZeRO-3 shards over groups of
  // this many data-parallel ranks, consecutive in rank order, and replicates
  // across the groups; after each layer's gradient reduce-scatter inside its
  // group, the shard is all-reduced over the replicas. 0: one group of all
  // data-parallel ranks. Needs zero_stage 3 and must divide data_parallel.
  int data_parallel_shard = 0;
  // Data-parallel ranks a ZeRO-3 shard group spans.
  int ShardedDataParallel() const {
    return data_parallel_shard > 0 ? data_parallel_shard : data_parallel;
  }
  // Overlap the data-parallel gradient reduction with the backward pass
  // (Megatron-LM --overlap-grad-reduce), bucket by bucket.
  bool overlap_grad_reduce = false;
  // Megatron-Core --tp-comm-overlap (Transformer Engine userbuffers): each
  // sequence-parallel all-gather runs under the GEMM that consumes it, each
  // reduce-scatter under the GEMM whose output it reduces (forward, chunk by
  // chunk) or, in backward, under the weight-gradient GEMM that follows
  // (TE's bulk overlap). Costed as the two running side by side: the next op
  // waits for both; a GEMM that consumes the gathered input runs as tp row
  // chunks (TE's ring exchange, KernelModel::RowSplitCost). Not modelled: the
  // first/last chunk that cannot overlap and the SMs the pipelined and bulk
  // communication kernels take. Needs sequence_parallel.
  bool tp_comm_overlap = false;
  // Megatron-Core --overlap-param-gather (distributed optimizer only): the
  // updated 16-bit parameters are all-gathered bucket by bucket (the gradient
  // buckets) at the start of the next step, back to back on the data-parallel
  // lane; the first micro-batch's forward of each layer waits for its bucket.
  // Without it, one all-gather follows the optimizer step and nothing
  // overlaps it.
  bool overlap_param_gather = false;
  // Megatron-Core --overlap-moe-expert-parallel-comm (the EP all-to-all
  // overlap): in the steady state of the pipeline schedule each forward
  // that the schedule runs right before a backward on the same stage is
  // merged with it layer by layer, and each one's token dispatch / combine
  // all-to-alls run on the communication stream under the other's compute
  // (megatron/core/models/common/model_chunk_schedule_plan.py,
  // TransformerLayerSchedulePlan.run). Simulated as two chains of work on
  // the stage's GPUs that share the compute and expert lanes; the action
  // after the pair waits for both. Warm-up forwards and cool-down backwards
  // run alone. Needs expert parallelism, vp > 1 when pp > 1, no full
  // recompute, and 16-bit or FP8 training (transformer_config.py).
  bool overlap_moe_expert_parallel_comm = false;
  // parallelism.moe_pad_expert_input_to_capacity (models::ShardSpec).
  bool moe_pad_to_capacity = false;
  int micro_batch_size = 1;
  int global_batch_size = 1;
  models::Recompute recompute = models::Recompute::kNone;
  // Selective recompute also replays the MLP's input projection
  // (models::ShardSpec::recompute_mlp_up; training.recompute_granularity
  // "selective+mlp_up").
  bool recompute_mlp_up = false;
  // Selective recompute under torchtitan's per-op policy
  // (models::ShardSpec::recompute_op_sac; training.recompute_granularity
  // "selective+op").
  bool recompute_op_sac = false;
  // Megatron-Core's selective recompute modules (models::RecomputeModules;
  // training.recompute_modules).
  models::RecomputeModules recompute_modules;
  // Full recompute's method and layer count (models::RecomputeMethod;
  // training.recompute_method, training.recompute_num_layers).
  models::RecomputeMethod recompute_method = models::RecomputeMethod::kUniform;
  int recompute_num_layers = 1;
  models::Dtype precision = models::Dtype::kBf16;
  // Transformer Engine's FP8 scaling recipe under kFp8 (models::Fp8Recipe;
  // training.fp8_recipe): the cast bytes, and whether the delayed-scaling amax
  // all-reduce runs.
  models::Fp8Recipe fp8_recipe = models::Fp8Recipe::kDelayed;
  // Uneven pipeline stages (Megatron-LM --decoder-first/last-pipeline-num-layers):
  // layers on the first and last stage; 0 = an even share. The middle stages
  // split the rest evenly. Only without interleaving.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // Layers of every model chunk in position order (pp x vp entries; chunk c
  // of stage s at c * pp + s), as Megatron-Core's pipeline layout states them;
  // empty = an even split (or first/last_stage_layers). Works with
  // interleaving.
  std::vector<int> layout;
  // Ranks one routed expert is tensor-split over (expert TP): 0 = tp (the
  // experts sharded like the dense MLP), or 1 (MoE parallel folding: expert
  // parallelism spans tp x dp x cp; strategies/expert_parallel.h).
  int expert_tensor_parallel = 0;
  // How MoE tokens reach the expert-parallel ranks: Megatron-Core's
  // all-to-all dispatcher, or DeepEP / HybridEP (once per destination node,
  // then NVLink inside it; strategies/expert_dispatch.h).
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // Which experts each token picks, for DeepEP / HybridEP's bytes
  // (strategies/expert_dispatch.h DistinctBins).
  MoeRouting moe_routing = MoeRouting::kUniform;
  // Pipeline schedule; interleaved when virtual_pipeline > 1.
  Schedule schedule = Schedule::k1F1B;
  // Megatron-Core's activation offload to host memory
  // (cpu_offloading_num_layers; training.cpu_offload_layers): the saved
  // activations of the first this-many layers are copied to the host after
  // their forward and back before their backward (strategies/activation_offload.h).
  // 0: none. Only with pp = 1 and no recompute, as Megatron-Core allows.
  int cpu_offload_layers = 0;

  int model_parallel_size() const { return tensor_parallel * pipeline_parallel * context_parallel; }
  int expert_tp() const {
    return expert_tensor_parallel > 0 ? expert_tensor_parallel : tensor_parallel;
  }
  // Ranks of a stage holding the same experts: tp·dp·cp / (expert TP · ep).
  int expert_data_parallel() const {
    return tensor_parallel * data_parallel * context_parallel / (expert_tp() * expert_parallel);
  }
  // [first, end) layers of model chunk `position` (chunk c of stage s is
  // position c * pp + s). REQUIRES: validated.
  std::pair<int, int> LayersOf(int position, int num_layers) const;
  // Whether the backward of `layer` replays its forward: with full recompute
  // by the block method, only the first recompute_num_layers layers of each
  // model chunk do; every layer with the uniform method; none without full
  // recompute. REQUIRES: validated.
  bool ReplaysLayer(int layer, int num_layers) const;
  // The same for the `in_chunk`-th layer (from 0) of its model chunk.
  bool ReplaysInChunk(int in_chunk) const {
    return recompute == models::Recompute::kFull &&
           (recompute_method != models::RecomputeMethod::kBlock || in_chunk < recompute_num_layers);
  }
  // Whether the schedule can run block recompute: it picks a layer's whole
  // backward by its place in its chunk, so a schedule that splits the
  // backward into input and weight halves (zb-h1) cannot.
  bool AllowsBlockRecompute() const { return schedule != Schedule::kZeroBubbleH1; }
  // Micro-batches each pipeline runs per step (gradient accumulation steps).
  int num_microbatches() const { return global_batch_size / (micro_batch_size * data_parallel); }
};

// Checks every divisibility and range rule and derives `data_parallel` from
// `world_size`. Errors name the field (scenario path, as Megatron flags are
// named) and suggest valid values, e.g.
//   "parallelism.tensor_model_parallel_size=3 does not divide
//    model.num_attention_heads=32; try 1, 2, 4, 8, 16, 32".
// Context parallelism needs seq_length divisible by 2·cp (load-balanced causal
// chunks). Mixture-of-experts rules: strategies/expert_parallel.h.
absl::Status ValidateParallelConfig(const models::TransformerConfig& model, int world_size,
                                    ParallelConfig* config);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_PARALLEL_CONFIG_H_
