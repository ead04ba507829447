#include "strategies/parallel_config.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/status_macros.h"
#include "strategies/expert_parallel.h"

namespace clustersim::strategies {
namespace {

std::string Divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n && d.size() < 12; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return absl::StrJoin(d, ", ");
}

absl::Status Positive(int value, const char* field) {
  if (value >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, "=", value, " must be at least 1; set it to a positive integer"));
}

absl::Status MustDivide(int size, const char* size_field, int n, const char* n_field) {
  if (n % size == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(size_field, "=", size, " does not divide ", n_field,
                                                 "=", n, "; try ", Divisors(n)));
}

// Context parallelism (Megatron-Core / Transformer Engine ring attention with
// load-balanced causal chunks): each rank holds two of 2·cp sequence chunks.
absl::Status ValidateContextParallel(const models::TransformerConfig& model,
                                     const ParallelConfig& p) {
  const int cp = p.context_parallel;
  if (cp == 1) return absl::OkStatus();
  if (model.seq_length % (2 * cp) != 0) {
    std::vector<int> ok;
    for (int c = 1; c <= 64 && 2 * c <= model.seq_length; ++c) {
      if (model.seq_length % (2 * c) == 0) ok.push_back(c);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism.context_parallel_size=", cp, " needs model.seq_length=", model.seq_length,
        " divisible by 2 x context_parallel_size=", 2 * cp,
        " (two load-balanced causal chunks per rank); try ", absl::StrJoin(ok, ", ")));
  }
  const int64_t local = static_cast<int64_t>(p.micro_batch_size) * model.seq_length / cp;
  if (p.sequence_parallel && local % p.tensor_parallel != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism.sequence_parallel with context_parallel_size=", cp,
        " needs micro_batch_size x seq_length / cp = ", local,
        " divisible by tensor_model_parallel_size=", p.tensor_parallel,
        "; change the sequence length or turn sequence parallelism off"));
  }
  return absl::OkStatus();
}

// An explicit pipeline layout: pp x vp chunks, none negative, summing to the
// model's layers, and not combined with first/last_pipeline_num_layers.
absl::Status ValidateLayout(const models::TransformerConfig& model, const ParallelConfig& p) {
  constexpr const char* kLayout = "parallelism.pipeline_layout";
  const int positions = p.pipeline_parallel * p.virtual_pipeline;
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kLayout, " and first/last_pipeline_num_layers both set the stage split; keep one"));
  }
  if (static_cast<int>(p.layout.size()) != positions) {
    return absl::InvalidArgumentError(absl::StrCat(
        kLayout, " has ", p.layout.size(), " entries; it needs one per model chunk: pp x vp = ",
        p.pipeline_parallel, " x ", p.virtual_pipeline, " = ", positions));
  }
  int64_t sum = 0;
  for (size_t i = 0; i < p.layout.size(); ++i) {
    if (p.layout[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(kLayout, "[", i, "]=", p.layout[i],
                                                     " is negative; give a layer count >= 0"));
    }
    sum += p.layout[i];
  }
  if (sum != model.num_layers) {
    return absl::InvalidArgumentError(absl::StrCat(kLayout, " places ", sum,
                                                   " layers; model.num_layers is ",
                                                   model.num_layers, "; make them add up"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateParallelConfig(const models::TransformerConfig& model, int world_size,
                                    ParallelConfig* p) {
  constexpr const char* kTp = "parallelism.tensor_model_parallel_size";
  constexpr const char* kPp = "parallelism.pipeline_model_parallel_size";
  constexpr const char* kCp = "parallelism.context_parallel_size";
  constexpr const char* kEp = "parallelism.expert_model_parallel_size";
  constexpr const char* kVp = "parallelism.virtual_pipeline_model_parallel_size";
  constexpr const char* kMbs = "training.micro_batch_size";
  constexpr const char* kGbs = "training.global_batch_size";
  CLUSTERSIM_RETURN_IF_ERROR(Positive(world_size, "cluster.num_gpus"));
  CLUSTERSIM_RETURN_IF_ERROR(Positive(p->tensor_parallel, kTp));
  CLUSTERSIM_RETURN_IF_ERROR(Positive(p->pipeline_parallel, kPp));
  CLUSTERSIM_RETURN_IF_ERROR(Positive(p->context_parallel, kCp));
  CLUSTERSIM_RETURN_IF_ERROR(Positive(p->expert_parallel, kEp));
  CLUSTERSIM_RETURN_IF_ERROR(Positive(p->virtual_pipeline, kVp));
  CLUSTERSIM_RETURN_IF_ERROR(Positive(p->micro_batch_size, kMbs));
  CLUSTERSIM_RETURN_IF_ERROR(Positive(p->global_batch_size, kGbs));

  if (auto s = MustDivide(p->tensor_parallel, kTp, model.num_attention_heads,
                          "model.num_attention_heads");
      !s.ok()) {
    return s;
  }
  if (auto s = MustDivide(p->tensor_parallel, kTp, model.num_query_groups,
                          "model.num_query_groups");
      !s.ok()) {
    return s;
  }
  if (auto s = MustDivide(p->tensor_parallel, kTp, model.ffn_hidden_size,
                          "model.ffn_hidden_size");
      !s.ok()) {
    return s;
  }
  const bool uneven = p->first_stage_layers > 0 || p->last_stage_layers > 0;
  if (!p->layout.empty()) {
    CLUSTERSIM_RETURN_IF_ERROR(ValidateLayout(model, *p));
  } else if (uneven) {
    const int pp = p->pipeline_parallel, vp = p->virtual_pipeline;
    const int first = p->first_stage_layers, last = p->last_stage_layers;
    const int middle_stages = pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
    const int rest = model.num_layers - first - last;
    const bool split = pp >= 2 && first >= 0 && last >= 0 && rest >= 0 &&
                       (middle_stages == 0 ? rest == 0 : rest % middle_stages == 0 && rest > 0);
    // With interleaving, every model chunk holds middle / vp layers except
    // the first stage's first chunk and the last stage's last chunk, which
    // take up the difference (Llama 3: 0 layers, only the embedding or loss).
    const int middle = middle_stages > 0 ? rest / middle_stages : 0;
    const bool chunks = vp == 1 || (middle_stages > 0 && middle % vp == 0 &&
                                    middle / vp + (first > 0 ? first : middle) - middle >= 0 &&
                                    middle / vp + (last > 0 ? last : middle) - middle >= 0);
    if (!split || !chunks) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parallelism.first_pipeline_num_layers=", first, " and last_pipeline_num_layers=", last,
          " cannot split model.num_layers=", model.num_layers, " over ", pp,
          " stages: the other stages must share the rest evenly",
          vp > 1 ? absl::StrCat(", in whole layers per each of the ", vp,
                                " model chunks, and the first and last stages may differ from "
                                "them by at most one chunk's layers")
                 : ""));
    }
  } else if (auto s = MustDivide(p->pipeline_parallel, kPp, model.num_layers,
                                 "model.num_layers");
             !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        s.message(), ", or set parallelism.pipeline_layout (or first/last_pipeline_num_layers)"));
  }
  if (p->sequence_parallel && p->tensor_parallel == 1) {
    return absl::InvalidArgumentError(
        "parallelism.sequence_parallel=true needs parallelism.tensor_model_parallel_size > 1; "
        "raise tp or turn sequence parallelism off");
  }
  if (p->tp_comm_overlap && !p->sequence_parallel) {
    return absl::InvalidArgumentError(
        "parallelism.tp_comm_overlap=true needs parallelism.sequence_parallel=true (it overlaps "
        "the sequence-parallel all-gathers and reduce-scatters); turn sequence parallelism on "
        "or tp_comm_overlap off");
  }
  if (p->overlap_param_gather && !p->distributed_optimizer) {
    return absl::InvalidArgumentError(
        "parallelism.overlap_param_gather=true needs parallelism.use_distributed_optimizer=true "
        "(it overlaps the distributed optimizer's parameter all-gather); turn the distributed "
        "optimizer on or overlap_param_gather off");
  }
  if (p->overlap_moe_expert_parallel_comm) {
    // Megatron-Core TransformerConfig.__post_init__ asserts these.
    const char* kField = "parallelism.overlap_moe_expert_parallel_comm=true";
    if (p->expert_parallel <= 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, " needs parallelism.expert_model_parallel_size > 1 (it overlaps the "
          "expert-parallel all-to-alls); raise ep or turn the overlap off"));
    }
    if (p->pipeline_parallel > 1 && p->virtual_pipeline <= 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, " needs parallelism.virtual_pipeline_model_parallel_size > 1 when "
          "pipeline_model_parallel_size > 1 (Megatron-Core merges forward and backward only in "
          "the interleaved schedule); set vp or turn the overlap off"));
    }
    if (p->schedule != Schedule::k1F1B && p->schedule != Schedule::kInterleaved1F1B) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, " needs parallelism.pipeline_schedule=1f1b or interleaved-1f1b "
          "(Megatron-Core's); use one of them or turn the overlap off"));
    }
    if (p->recompute == models::Recompute::kFull) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, " cannot run with training.recompute_granularity=full; use selective or no "
          "recompute, or turn the overlap off"));
    }
  }
  // tp x pp x cp in int64, saturating (absurd sizes must not overflow int).
  int64_t mp = 1;
  for (const int size : {p->tensor_parallel, p->pipeline_parallel, p->context_parallel}) {
    if (__builtin_mul_overflow(mp, int64_t{size}, &mp)) mp = INT64_MAX;
  }
  if (world_size % mp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.num_gpus=", world_size, " is not a multiple of tp x pp x cp = ",
        p->tensor_parallel, " x ", p->pipeline_parallel, " x ", p->context_parallel, " = ", mp,
        "; use a multiple of ", mp, " GPUs or change the parallel sizes"));
  }
  const int dp = static_cast<int>(world_size / mp);
  if (p->data_parallel != 0 && p->data_parallel != 1 && p->data_parallel != dp) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism.data_parallel_size=", p->data_parallel, " disagrees with num_gpus / (tp x pp x cp) = ",
        dp, "; leave it unset (it is derived)"));
  }
  p->data_parallel = dp;
  const int64_t per_step = int64_t{p->micro_batch_size} * dp;  // int64: no overflow
  if (p->global_batch_size % per_step != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kGbs, "=", p->global_batch_size, " is not divisible by micro_batch_size x data_parallel = ",
        p->micro_batch_size, " x ", dp, " = ", per_step, "; use a multiple of ", per_step));
  }
  if (p->zero_stage < 0 || p->zero_stage > 3) {
    return absl::InvalidArgumentError(absl::StrCat("parallelism.zero_stage=", p->zero_stage,
                                                   " is not 0, 1, 2 or 3"));
  }
  if (p->data_parallel_shard != 0) {
    constexpr const char* kShard = "parallelism.data_parallel_shard_size";
    if (p->data_parallel_shard < 1 || dp % p->data_parallel_shard != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          kShard, "=", p->data_parallel_shard, " must divide data_parallel_size=", dp,
          "; use a divisor of it, or leave it unset to shard over all of them"));
    }
    if (p->zero_stage != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          kShard, "=", p->data_parallel_shard, " needs parallelism.zero_stage=3 (not ",
          p->zero_stage, "): it splits the ZeRO-3 / FSDP shard group; set zero_stage: 3"));
    }
    if (model.num_experts > 0 && p->data_parallel_shard != dp) {
      return absl::UnimplementedError(absl::StrCat(
          kShard, "=", p->data_parallel_shard,
          " is not simulated for mixture-of-experts models (the expert shards' groups); "
          "leave it unset"));
    }
  }
  // Pipeline schedules.
  if (p->virtual_pipeline > 1) {
    if (p->schedule != Schedule::kInterleaved1F1B && p->schedule != Schedule::k1F1B) {
      return absl::InvalidArgumentError(absl::StrCat(
          kVp, "=", p->virtual_pipeline, " needs the interleaved-1f1b schedule, not ",
          std::string(ScheduleName(p->schedule))));
    }
    p->schedule = Schedule::kInterleaved1F1B;
    if (p->pipeline_parallel == 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(kVp, "=", p->virtual_pipeline, " needs ", kPp, " > 1"));
    }
    if (p->layout.empty() && !uneven) {  // a layout or uneven split is checked above
      if (auto s = MustDivide(p->pipeline_parallel * p->virtual_pipeline, "pp x vp",
                              model.num_layers, "model.num_layers");
          !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(s.message(), ", or set parallelism.pipeline_layout"));
      }
    }
    if (p->num_microbatches() % p->pipeline_parallel != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the interleaved schedule needs the number of micro-batches (", p->num_microbatches(),
          " = global_batch_size / (micro_batch_size x dp)) to be a multiple of ", kPp, "=",
          p->pipeline_parallel, "; change ", kGbs));
    }
  } else if (p->schedule == Schedule::kInterleaved1F1B) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism.pipeline_schedule=interleaved-1f1b needs ", kVp, " > 1"));
  }
  if (p->recompute == models::Recompute::kFull &&
      p->recompute_method == models::RecomputeMethod::kBlock && !p->AllowsBlockRecompute()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.recompute_method=\"block\" is not supported with "
        "parallelism.pipeline_schedule=", std::string(ScheduleName(p->schedule)),
        " (it splits the backward pass); use 1f1b or training.recompute_method=\"uniform\""));
  }
  CLUSTERSIM_RETURN_IF_ERROR(ValidateContextParallel(model, *p));
  return ValidateExpertParallel(model, *p);
}

bool ParallelConfig::ReplaysLayer(int layer, int num_layers) const {
  if (recompute != models::Recompute::kFull) return false;
  if (recompute_method != models::RecomputeMethod::kBlock) return true;
  for (int pos = 0; pos < pipeline_parallel * virtual_pipeline; ++pos) {
    const auto [begin, end] = LayersOf(pos, num_layers);
    if (layer >= begin && layer < end) return ReplaysInChunk(layer - begin);
  }
  return false;
}

std::pair<int, int> ParallelConfig::LayersOf(int position, int num_layers) const {
  const int positions = pipeline_parallel * virtual_pipeline;
  if (!layout.empty()) {
    int begin = 0;
    for (int i = 0; i < position; ++i) begin += layout[i];
    return {begin, begin + layout[position]};
  }
  if (first_stage_layers == 0 && last_stage_layers == 0) {
    const int per = num_layers / positions;
    return {position * per, (position + 1) * per};
  }
  // Uneven stages: the first and last stages hold first/last_stage_layers
  // (when set), the others share the rest. With interleaving each chunk holds
  // middle / vp layers, and the first stage's first chunk and the last stage's
  // last chunk absorb the difference (Validate checks they stay >= 0).
  const int middle_stages = pipeline_parallel - (first_stage_layers > 0 ? 1 : 0) -
                            (last_stage_layers > 0 ? 1 : 0);
  const int middle =
      (num_layers - first_stage_layers - last_stage_layers) / std::max(middle_stages, 1);
  const int first = first_stage_layers > 0 ? first_stage_layers : middle;
  const int last = last_stage_layers > 0 ? last_stage_layers : middle;
  const int per_chunk = middle / virtual_pipeline;
  const int first_chunk = per_chunk + first - middle;
  const int last_chunk = per_chunk + last - middle;
  if (position == positions - 1) return {num_layers - last_chunk, num_layers};
  if (position == 0) return {0, first_chunk};
  const int begin = first_chunk + (position - 1) * per_chunk;
  return {begin, begin + per_chunk};
}

}  // namespace clustersim::strategies
