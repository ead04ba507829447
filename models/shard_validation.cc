// File: models/shard_validation.cc
//
// Whether a shard (tensor, context, expert and sequence parallelism, micro
// batch, recompute choices) fits a model: each refusal names the field and a
// value that would fit.
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/workload.h"

namespace clustersim::models {
namespace {

// The divisors of n up to 64, for "try one of ..." hints.
std::string Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i <= n && i <= 64; ++i) {
    if (n % i == 0) out.push_back(i);
  }
  return absl::StrJoin(out, ", ");
}

// A hybrid model's Mamba layers: tensor parallelism splits the mixer's heads
// and B/C groups (Megatron-Core's MambaMixer asserts both divide); context
// parallelism of the scan is not modelled; torchtitan's per-op policy knows
// no Mamba layer.
absl::Status ValidateMambaShard(const TransformerConfig& c, const ShardSpec& s) {
  if (c.num_layers_of(LayerKind::kMamba) == 0) return absl::OkStatus();
  const int t = s.tensor_parallel;
  if (c.mamba_num_heads % t != 0 || c.mamba_num_groups % t != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor_model_parallel_size=", t, " must divide model.mamba_num_heads=",
        c.mamba_num_heads, " and model.mamba_num_groups=", c.mamba_num_groups,
        " (Megatron splits the Mamba mixer's heads and groups); try one of ",
        Divisors(std::gcd(c.mamba_num_heads, c.mamba_num_groups))));
  }
  if (s.context_parallel > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "context_parallel_size=", s.context_parallel,
        " with Mamba layers is not modelled; set context_parallel_size to 1"));
  }
  if (s.recompute == Recompute::kSelective && s.recompute_op_sac) {
    return absl::InvalidArgumentError(
        "training.recompute_granularity \"selective+op\" (torchtitan's per-op policy) is not "
        "modelled for Mamba layers; use selective or full");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateShard(const TransformerConfig& c, const ShardSpec& s) {
  if (s.tensor_parallel < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor_model_parallel_size must be >= 1 (got ", s.tensor_parallel, ")"));
  }
  if (s.context_parallel < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "context_parallel_size must be >= 1 (got ", s.context_parallel, ")"));
  }
  if (s.micro_batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("micro_batch_size must be >= 1 (got ", s.micro_batch_size, ")"));
  }
  if (s.dtype == Dtype::kInt8) {
    return absl::InvalidArgumentError(
        "precision int8 is not a training precision; use bf16, fp16, fp8, tf32 or fp32");
  }
  if (s.expert_parallel < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expert_model_parallel_size must be >= 1 (got ", s.expert_parallel, ")"));
  }
  if (s.expert_tensor_parallel < 0 || s.tensor_parallel % s.ExpertTp() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expert_tensor_parallel_size=", s.expert_tensor_parallel,
        " must divide tensor_model_parallel_size=", s.tensor_parallel, " (0: the same)"));
  }
  if (!(s.flat_grad_bytes >= 0 && s.flat_grad_bytes <= 64)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "flat_grad_bytes=", s.flat_grad_bytes, " must be in [0, 64] bytes per weight"));
  }
  if (!(s.gather_copy_bytes >= 0 && s.gather_copy_bytes <= 64) ||
      !(s.grad_copy_bytes >= 0 && s.grad_copy_bytes <= 64)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gather_copy_bytes=", s.gather_copy_bytes, " and grad_copy_bytes=", s.grad_copy_bytes,
        " must be in [0, 64] bytes per weight"));
  }
  if (!(s.grad_accumulate_bytes >= 0 && s.grad_accumulate_bytes <= 64)) {
    return absl::InvalidArgumentError(absl::StrCat("grad_accumulate_bytes=",
                                                   s.grad_accumulate_bytes,
                                                   " must be in [0, 64] bytes per weight"));
  }
  if (s.recompute_mlp_up && s.recompute != Recompute::kSelective) {
    return absl::InvalidArgumentError(
        "recompute_mlp_up needs selective recompute (training.recompute_granularity "
        "\"selective+mlp_up\"); full recompute already replays the MLP");
  }
  if (s.modules.mla_up_proj && !c.mla()) {
    return absl::InvalidArgumentError(
        "training.recompute_modules \"mla_up_proj\" needs multi-latent attention "
        "(model.kv_lora_rank > 0); drop it from the list");
  }
  if (s.modules.moe_act && c.num_experts == 0) {
    return absl::InvalidArgumentError(
        "training.recompute_modules \"moe_act\" needs a mixture-of-experts model "
        "(model.num_experts > 0); drop it from the list");
  }
  if (s.recompute_mlp_up && s.modules.mlp) {
    return absl::InvalidArgumentError(
        "training.recompute_granularity \"selective+mlp_up\" and recompute module \"mlp\" both "
        "replay the dense MLP; use one");
  }
  if (s.recompute_mlp_up && c.num_experts > 0) {
    return absl::UnimplementedError(
        "recompute_mlp_up replays a dense MLP; this mixture-of-experts model has routed experts "
        "(use training.recompute_granularity \"selective\")");
  }
  if (s.recompute_op_sac &&
      (s.recompute != Recompute::kSelective || s.recompute_mlp_up || c.num_experts > 0 ||
       c.mla() || c.attention_backend == AttentionBackend::kUnfused)) {
    return absl::InvalidArgumentError(
        "training.recompute_granularity \"selective+op\" (torchtitan's per-op policy) replays a "
        "dense Llama block with flash attention; this model has experts, latent or unfused "
        "attention (use \"selective\" or \"full\")");
  }
  if (s.expert_parallel > 1 && c.num_experts == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expert_model_parallel_size=", s.expert_parallel, " needs a mixture-of-experts model; "
        "model.num_experts is 0 (set expert_model_parallel_size to 1)"));
  }
  if (c.num_experts > 0 && s.tensor_parallel > 1 && !s.sequence_parallel) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.num_experts=", c.num_experts, " with tensor_model_parallel_size=",
        s.tensor_parallel, " needs sequence_parallel=true (Megatron-core's MoE layer refuses to "
        "train with tensor parallelism without it); turn sequence parallelism on or use tp 1"));
  }
  if (c.num_experts > 0 && c.num_experts % s.expert_parallel != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expert_model_parallel_size=", s.expert_parallel, " does not divide model.num_experts=",
        c.num_experts, "; try one of ", Divisors(c.num_experts)));
  }
  const int t = s.tensor_parallel;
  // Routed experts are split over the expert TP ranks, shared experts over tp.
  for (auto [field, value, split] :
       {std::tuple<absl::string_view, int, int>{"moe_ffn_hidden_size", c.moe_ffn_hidden_size,
                                                s.ExpertTp()},
        {"moe_shared_expert_ffn_size", c.moe_shared_expert_ffn_size, t}}) {
    if (value % split != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(split == t ? "tensor_model_parallel_size=" : "expert_tensor_parallel_size=",
                       split, " does not divide model.", field, "=", value, "; try one of ",
                       Divisors(value)));
    }
  }
  const int64_t common = std::gcd(std::gcd(c.num_attention_heads, c.num_query_groups),
                                  std::gcd(c.ffn_hidden_size, c.vocab_size));
  for (auto [field, value] :
       {std::pair<absl::string_view, int>{"num_attention_heads", c.num_attention_heads},
        {"num_query_groups", c.num_query_groups},
        {"ffn_hidden_size", c.ffn_hidden_size},
        {"vocab_size", c.vocab_size}}) {
    if (value % t != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor_model_parallel_size=", t, " does not divide model.", field, "=", value,
          "; try one of ", Divisors(common),
          field == "vocab_size" ? " (or pad the vocabulary to a multiple of 128·tp as Megatron does)"
                                : ""));
    }
  }
  const int cp = s.context_parallel;
  if (cp > 1 && c.attention_backend == AttentionBackend::kUnfused) {
    return absl::InvalidArgumentError(absl::StrCat(
        "context_parallel_size=", cp, " needs training.attention=flash; Megatron's unfused "
        "attention supports no context parallelism (set context_parallel_size to 1)"));
  }
  if (cp > 1 && c.seq_length % (2 * cp) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "context_parallel_size=", cp, " needs model.seq_length=", c.seq_length,
        " divisible by 2·context_parallel_size=", 2 * cp, " (load-balanced causal chunks)"));
  }
  if (s.sequence_parallel && t > 1 &&
      (static_cast<int64_t>(s.micro_batch_size) * (c.seq_length / cp)) % t != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sequence_parallel needs micro_batch_size·seq_length/context_parallel_size=",
        static_cast<int64_t>(s.micro_batch_size) * (c.seq_length / cp),
        " divisible by tensor_model_parallel_size=", t));
  }
  return ValidateMambaShard(c, s);
}

}  // namespace clustersim::models
