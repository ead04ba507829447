#include "models/engine_memory.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "sim/units.h"

namespace clustersim::models {

absl::StatusOr<KvCacheAccounting> ParseKvCacheAccounting(std::string_view name) {
  if (name.empty()) return KvCacheAccounting::kBudget;
  if (name == "vllm-v1") return KvCacheAccounting::kVllmV1;
  if (name == "sglang") return KvCacheAccounting::kSglang;
  return absl::InvalidArgumentError(absl::StrCat(
      "inference.kv_cache_accounting='", std::string(name),
      "' is not an engine accounting: use \"vllm-v1\" (vLLM V1's profile run) or \"sglang\" "
      "(SGLang's mem_fraction_static), or leave it out for the generic memory budget"));
}

std::string_view KvCacheAccountingName(KvCacheAccounting accounting) {
  switch (accounting) {
    case KvCacheAccounting::kVllmV1: return "vllm-v1";
    case KvCacheAccounting::kSglang: return "sglang";
    case KvCacheAccounting::kBudget: break;
  }
  return "budget";
}

VllmBatchDefaults VllmServeDefaults(const GpuSpec& gpu) {
  const bool large = gpu.cuda_total_memory.count() >= sim::GiB(70).count() &&
                     !absl::StrContains(absl::AsciiStrToLower(gpu.name), "a100");
  return large ? VllmBatchDefaults{.max_num_seqs = 1024, .max_num_batched_tokens = 8192}
               : VllmBatchDefaults{.max_num_seqs = 256, .max_num_batched_tokens = 2048};
}

double SglangDefaultMemFractionStatic(int tensor_parallel) {
  if (tensor_parallel >= 16) return 0.79;
  if (tensor_parallel >= 8) return 0.81;
  if (tensor_parallel >= 4) return 0.85;
  if (tensor_parallel >= 2) return 0.87;
  return 0.88;
}

int64_t VllmSamplerPeakBytes(int64_t rows, int64_t vocab) {
  // 16-bit gathered logits + fp32 copy + sorted fp32 values and int64 indices
  // + the sort's int64 index input + cub's alternate keys and values.
  constexpr int64_t kBytesPerElement = 2 + 4 + (4 + 8) + 8 + (4 + 8);
  return rows * vocab * kBytesPerElement;
}

int64_t VllmV1ProfilePeakBytes(const TransformerConfig& m, int tp, int64_t tokens,
                               int64_t max_num_seqs) {
  const int64_t h = m.hidden_size, d = m.head_dim();
  // 16-bit values per token of each layer kind's largest live set.
  int64_t per_token = 2 * h + (m.num_attention_heads + 2 * m.num_query_groups) * d / tp;
  if (m.num_dense_layers() > 0) {
    const int64_t f = m.ffn_hidden_size / tp;
    per_token = std::max(per_token, 2 * h + (m.activation == Activation::kSwiglu ? 3 * f : 2 * f));
  }
  if (m.num_moe_layers() > 0) {
    const int64_t n = 2 * static_cast<int64_t>(m.expert_ffn_size()) / tp;
    per_token = std::max(per_token, 2 * h + m.moe_top_k * (std::max(n, h) + n / 2));
  }
  if (m.num_layers_of(LayerKind::kMamba) > 0) {
    per_token = std::max(per_token, 2 * h + (m.mamba_in_proj_width() + m.mamba_d_inner()) / tp);
  }
  const int64_t forward = tokens * per_token * 2;
  const int64_t rows = std::min(tokens, max_num_seqs);
  const int64_t sampler = tokens * h * 2 + VllmSamplerPeakBytes(rows, m.vocab_size);
  return std::max(forward, sampler);
}

}  // namespace clustersim::models
