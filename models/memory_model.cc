#include "models/memory_model.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "models/activation_memory.h"
#include "sim/check.h"
#include "sim/status_macros.h"

namespace clustersim::models {
namespace {

sim::Bytes RoundBytes(double b) { return sim::Bytes(std::llround(b)); }

int LayersOnStage(int num_layers, int p, int stage) {
  return num_layers / p + (stage < num_layers % p ? 1 : 0);
}

// Ranks holding the same experts: tp·dp·cp / (expert TP·ep).
int ExpertDataGroup(const MemoryInputs& in) {
  const ShardSpec& s = in.shard;
  return s.tensor_parallel * in.data_parallel * s.context_parallel /
         (s.ExpertTp() * s.expert_parallel);
}

// Ranks the dense model states are sharded over: dp (or its hybrid-sharding
// shard group) x cp.
int DenseShardGroup(const MemoryInputs& in) {
  const int dp = in.data_parallel_shard > 0 ? in.data_parallel_shard : in.data_parallel;
  return dp * in.shard.context_parallel;
}

// ZeRO-3 / FSDP working set (strategies/step_builder.h): the layer being
// computed and the prefetched next one, gathered in 16 bits, plus one layer's
// unsharded gradient (main-grad dtype) before its reduce-scatter. A
// mixture-of-experts layer gathers its dense part over dp x cp and the rank's
// experts (1/(expert TP x ep) of them) over the expert-data-parallel group
// (tp x dp x cp / (expert TP x ep) ranks); when that group is one rank the
// experts are never sharded,
// so the model states already hold them whole.
double ZeroThreeGatherBytes(const MemoryInputs& in, const ParameterCounts& counts) {
  const int zero_stage = std::max(in.zero_stage, in.distributed_optimizer ? 1 : 0);
  const int dp_group = DenseShardGroup(in);
  if (zero_stage < 3 || dp_group == 1) return 0;
  const double t = in.shard.tensor_parallel, ep = in.shard.expert_parallel;
  const double et = in.shard.ExpertTp();
  const double experts = ExpertDataGroup(in) > 1 ? counts.expert_per_layer : 0.0;
  const double layer = (counts.per_layer - counts.expert_per_layer) / t + experts / (et * ep);
  const double grad = in.finetune.method == FinetuneMethod::kFull
                          ? BytesPerElement(in.main_grad_dtype)
                          : 0.0;
  return layer * (2.0 * 2.0 + grad);
}


// FP8 training: Transformer Engine keeps, next to the 16-bit weight, an FP8
// copy of each FP8 GEMM's weight and its transpose (cached across the
// micro-batches of a step): 2 B per transformer linear-layer parameter. Under
// ZeRO-3 / FSDP a rank holds only its shard of the weights, and the FP8 copy
// is cast from that shard (torchtitan's float8 all-gather, XLA's sharded
// weights), so it shrinks with the shard group like the weights do; the
// gathered layer's full copy is transient and counted with the gather buffers.
// NVFP4 keeps the same two copies at 4 bits plus an E4M3 scale per 16
// elements (TE v2.8 NVFP4Tensor rowwise and columnwise data): 2 x 0.5625 B.
double Fp8WeightCopyBytes(const TransformerConfig& c, const ShardSpec& s, int layers,
                          int dense_shards, int expert_shards) {
  if (!IsQuantizedGemmDtype(s.dtype)) return 0;
  const ParameterCounts counts = CountParameters(c);
  const double dense = counts.linear_per_layer - counts.expert_per_layer;
  const double per_copy = s.dtype == Dtype::kFp4 ? kNvfp4BytesPerElement : 1.0;
  return 2.0 * per_copy * layers *
         (dense / (static_cast<double>(s.tensor_parallel) * dense_shards) +
          counts.expert_per_layer /
              (static_cast<double>(s.ExpertTp()) * s.expert_parallel * expert_shards));
}

}  // namespace


absl::Status ValidateMemoryInputs(const MemoryInputs& in) {
  CLUSTERSIM_RETURN_IF_ERROR(ValidateTransformer(in.model));
  CLUSTERSIM_RETURN_IF_ERROR(ValidateShard(in.model, in.shard));
  for (auto [field, value] : {std::pair<absl::string_view, int>{"pipeline_model_parallel_size",
                                                               in.pipeline_parallel},
                              {"data_parallel_size", in.data_parallel},
                              {"virtual_pipeline_model_parallel_size", in.virtual_pipeline},
                              {"num_microbatches", in.num_microbatches}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(absl::StrCat(field, " must be >= 1 (got ", value, ")"));
    }
  }
  if (in.pipeline_parallel * in.virtual_pipeline > in.model.num_layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pipeline_model_parallel_size=", in.pipeline_parallel,
        " x virtual_pipeline_model_parallel_size=", in.virtual_pipeline,
        " exceeds model.num_layers=", in.model.num_layers, "; every model chunk needs a layer"));
  }
  if (in.zero_stage < 0 || in.zero_stage > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("zero_stage must be 0, 1, 2 or 3 (got ", in.zero_stage, ")"));
  }
  if (in.data_parallel_shard < 0 ||
      (in.data_parallel_shard > 0 && in.data_parallel % in.data_parallel_shard != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("data_parallel_shard_size=", in.data_parallel_shard,
                     " must divide data_parallel_size=", in.data_parallel));
  }
  if (in.pipeline_stage < 0 || in.pipeline_stage >= in.pipeline_parallel) {
    return absl::InvalidArgumentError(absl::StrCat("pipeline_stage=", in.pipeline_stage,
                                                   " must be in [0, pipeline_model_parallel_size=",
                                                   in.pipeline_parallel, ")"));
  }
  const int dp_cp = in.data_parallel * in.shard.context_parallel;
  const bool folded = in.shard.ExpertTp() == 1 && in.shard.tensor_parallel > 1;
  if (!folded && dp_cp % in.shard.expert_parallel != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expert_model_parallel_size=", in.shard.expert_parallel,
        " must divide data_parallel_size x context_parallel_size=", dp_cp,
        " (experts are split across data-parallel replicas)"));
  }
  if (folded && in.shard.tensor_parallel * dp_cp % in.shard.expert_parallel != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expert_model_parallel_size=", in.shard.expert_parallel,
        " must divide tensor x data x context parallel size=", in.shard.tensor_parallel * dp_cp,
        " (expert_tensor_parallel_size=1 spreads experts over a stage's ranks)"));
  }
  CLUSTERSIM_RETURN_IF_ERROR(ValidateFinetune(in.model, in.finetune));
  if (in.cpu_offload_layers < 0 || in.cpu_offload_layers >= std::max(1, in.model.num_layers) ||
      (in.cpu_offload_layers > 0 &&
       (in.pipeline_parallel > 1 || in.shard.recompute != Recompute::kNone))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cpu_offload_layers=", in.cpu_offload_layers, " must be in [0, num_layers=",
        in.model.num_layers, "), with pipeline_model_parallel_size 1 and no recompute"));
  }
  if (in.main_grad_dtype != Dtype::kFp32 && in.main_grad_dtype != Dtype::kBf16 &&
      in.main_grad_dtype != Dtype::kFp16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "main_grad_dtype ", std::string(DtypeName(in.main_grad_dtype)), " must be fp32, bf16 or fp16"));
  }
  return absl::OkStatus();
}

MemoryBreakdown ModelStateMemory(double params_on_rank, Dtype dtype, Dtype main_grad_dtype,
                                 int zero_stage, int shard_group) {
  SIM_CHECK(shard_group >= 1 && zero_stage >= 0 && zero_stage <= 3)
      << "zero_stage " << zero_stage << " over " << shard_group << " ranks";
  const bool fp32_training = BytesPerElement(dtype) == 4;
  const double weight_bytes = fp32_training ? 4 : 2;
  const double grad_bytes = BytesPerElement(main_grad_dtype);
  const double optimizer_bytes = fp32_training ? 8 : 12;  // (master +) Adam m + v in fp32
  const double n = shard_group;
  MemoryBreakdown m;
  m.weights = RoundBytes(params_on_rank * weight_bytes / (zero_stage >= 3 ? n : 1));
  m.gradients = RoundBytes(params_on_rank * grad_bytes / (zero_stage >= 2 ? n : 1));
  m.optimizer = RoundBytes(params_on_rank * optimizer_bytes / (zero_stage >= 1 ? n : 1));
  return m;
}

MemoryBreakdown EstimateMemory(const MemoryInputs& in) {
  const TransformerConfig& c = in.model;
  const ShardSpec& s = in.shard;
  const int p = in.pipeline_parallel, stage = in.pipeline_stage;
  const bool first = stage == 0, last = stage == p - 1;
  const double t = s.tensor_parallel;
  const int layers = LayersOnStage(c.num_layers, p, stage);

  const ParameterCounts counts = CountParameters(c);
  double params = layers * (counts.per_layer - counts.expert_per_layer);
  if (first) params += counts.embedding;
  if (last) {
    params += counts.final_norm;
    // An untied head, or Megatron's copy of the tied word embedding on the last stage.
    params += counts.lm_head > 0 ? counts.lm_head
                                 : (p > 1 ? static_cast<double>(c.vocab_size) * c.hidden_size : 0);
  }
  const double ep = s.expert_parallel;
  const double dense_on_rank = params / t;
  const double experts_on_rank = layers * counts.expert_per_layer / (s.ExpertTp() * ep);
  const int zero_stage = std::max(in.zero_stage, in.distributed_optimizer ? 1 : 0);
  const int dp_group = DenseShardGroup(in);
  const int expert_dp_group = ExpertDataGroup(in);
  MemoryBreakdown m;
  if (in.finetune.method == FinetuneMethod::kFull) {
    const MemoryBreakdown dense =
        ModelStateMemory(dense_on_rank, s.dtype, in.main_grad_dtype, zero_stage, dp_group);
    const MemoryBreakdown experts =
        ModelStateMemory(experts_on_rank, s.dtype, in.main_grad_dtype, zero_stage, expert_dp_group);
    m.weights = dense.weights + experts.weights;
    m.gradients = dense.gradients + experts.gradients;
    m.optimizer = dense.optimizer + experts.optimizer;
  } else {
    // Frozen base: 16-bit, or NF4 for the linear layers' weights under QLoRA.
    const bool q = in.finetune.method == FinetuneMethod::kQlora;
    const double dense_linear =
        q ? layers * (counts.linear_per_layer - counts.expert_per_layer) / t : 0.0;
    const double expert_linear = q ? experts_on_rank : 0.0;
    auto base = [&](double on_rank, double linear, int group) {
      const double bytes = linear * kNf4BytesPerParameter + (on_rank - linear) * 2.0;
      return bytes / (zero_stage >= 3 ? group : 1);
    };
    const double adapters = layers * LoraParametersPerLayer(c, in.finetune, s.tensor_parallel,
                                                            s.expert_parallel);
    const double n = dp_group;
    m.weights = RoundBytes(base(dense_on_rank, dense_linear, dp_group) +
                           base(experts_on_rank, expert_linear, expert_dp_group) +
                           adapters * kAdapterWeightBytes / (zero_stage >= 3 ? n : 1));
    m.gradients = RoundBytes(adapters * kAdapterGradientBytes / (zero_stage >= 2 ? n : 1));
    m.optimizer = RoundBytes(adapters * kAdapterOptimizerBytes / (zero_stage >= 1 ? n : 1));
  }

  // In-flight micro-batches on this stage under 1F1B, times the interleaving penalty.
  double in_flight = std::min(in.num_microbatches, p - stage);
  if (in.virtual_pipeline > 1) {
    in_flight *= 1.0 + static_cast<double>(p - 1) / (static_cast<double>(p) * in.virtual_pipeline);
  }
  const bool sp = s.sequence_parallel && s.tensor_parallel > 1;
  const double tokens = static_cast<double>(s.micro_batch_size) * c.seq_length / s.context_parallel;
  const int chunks = std::min(in.virtual_pipeline, std::max(layers, 1));
  double activations = StageLayerActivationBytes(c, s, layers, chunks) * in_flight +
                       ReplayWindowBytes(c, s, layers, chunks);
  if (in.cpu_offload_layers > 1 && p == 1 && s.recompute == Recompute::kNone) {
    // Offloaded layers leave the GPU but the one being reloaded (p = 1: one
    // micro-batch in flight). A memory remedy that turns recompute or
    // pipelining on is estimated without offload, which Megatron-Core then
    // refuses.
    activations -= (in.cpu_offload_layers - 1) * MeanLayerActivationBytes(c, s);
  }
  if (first) {
    // Token ids (int64) and the embedding dropout mask (1 byte) per in-flight micro-batch.
    activations += (8.0 * tokens + tokens * c.hidden_size / (sp ? t : 1.0)) * in_flight;
  }
  if (last) {
    // Final norm input/output and the fp32 logits of one micro-batch for the loss.
    activations += 4.0 * tokens * c.hidden_size / (sp ? t : 1.0) + 4.0 * tokens * c.vocab_size / t;
  }
  activations += ContextRingBufferBytes(c, s);
  m.activations = RoundBytes(activations);
  if (in.finetune.method == FinetuneMethod::kFull) {
    const bool sharded = zero_stage >= 3;
    m.weights += RoundBytes(Fp8WeightCopyBytes(c, s, layers, sharded ? dp_group : 1,
                                               sharded ? expert_dp_group : 1));
  }
  m.other = in.overheads.cuda_context + in.overheads.gemm_workspace +
            RoundBytes(ZeroThreeGatherBytes(in, counts));
  if (in.keep_non_layer_gathered && zero_stage >= 3 && dp_group > 1 &&
      in.finetune.method == FinetuneMethod::kFull) {
    // The stage's embedding and output layer, gathered whole in 16 bits.
    const double non_layer = params - layers * (counts.per_layer - counts.expert_per_layer);
    m.other += RoundBytes(non_layer / t * 2.0);
  }
  return m;
}

}  // namespace clustersim::models
