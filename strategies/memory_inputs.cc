#include "strategies/memory_inputs.h"

namespace clustersim::strategies {

models::MemoryInputs MemoryInputsFor(const models::TransformerConfig& model,
                                     const ParallelConfig& p,
                                     const models::FinetuneSpec& finetune) {
  models::MemoryInputs in;
  in.model = model;
  in.shard.tensor_parallel = p.tensor_parallel;
  in.shard.sequence_parallel = p.sequence_parallel;
  in.shard.context_parallel = p.context_parallel;
  in.shard.micro_batch_size = p.micro_batch_size;
  in.shard.dtype = p.precision;
  in.shard.recompute = p.recompute;
  in.shard.recompute_mlp_up = p.recompute_mlp_up;
  in.shard.recompute_op_sac = p.recompute_op_sac;
  in.shard.fp8_recipe = p.fp8_recipe;
  in.shard.modules = p.recompute_modules;
  in.shard.recompute_method = p.recompute_method;
  in.shard.recompute_num_layers = p.recompute_num_layers;
  in.shard.expert_parallel = p.expert_parallel;
  in.shard.expert_tensor_parallel = p.expert_tp();
  in.pipeline_parallel = p.pipeline_parallel;
  in.data_parallel = p.data_parallel;
  in.virtual_pipeline = p.virtual_pipeline;
  in.num_microbatches = p.num_microbatches();
  in.distributed_optimizer = p.distributed_optimizer;
  in.zero_stage = p.zero_stage;
  in.data_parallel_shard = p.data_parallel_shard;
  in.finetune = finetune;
  in.cpu_offload_layers = p.cpu_offload_layers;
  return in;
}

}  // namespace clustersim::strategies
