#include "models/inference_memory.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustersim::models {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Weights of one GPU on a stage of `layers` layers from layer `first`, with
// the embedding and/or the LM head when the stage holds them.
double StageWeightBytes(const InferenceMemoryInputs& in, int first, int layers, bool embedding,
                        bool head) {
  const TransformerConfig& m = in.replica.model;
  const ParameterCounts p = CountParameters(m);
  const int tp = in.replica.tensor_parallel;
  // Attention (QKV + output) and MLP weights: k is h for QKV/FC1, a·d or f for
  // the others; int8's per-channel scale depends on it only through 16/k.
  const double bits =
      BitsPerWeight(in.replica.weight_format, in.replica.quant_group_size, m.hidden_size);
  const int ep = in.replica.expert_parallel;
  if (ep > 1) {
    // Data-parallel attention: everything whole except the routed experts.
    const double linear =
        (p.linear_per_layer - p.expert_per_layer + p.expert_per_layer / ep) * bits / 8.0;
    const double other16 = (p.per_layer - p.linear_per_layer) * 2.0;
    double total = layers * (linear + other16);
    if (embedding) total += p.embedding * 2.0;
    if (head) total += (p.lm_head + p.final_norm) * 2.0;
    return total;
  }
  const double other16 = (p.per_layer - p.linear_per_layer) / tp * 2.0;  // norms, biases, router
  double total = layers * other16;
  if (AttentionKeeps16Bit(in.replica.weight_format)) {
    // fp8-mixed (a dense model): attention 16-bit, the FFN quantised except
    // in the first and last layers.
    const double ffn = (m.activation == Activation::kSwiglu ? 3.0 : 2.0) * m.hidden_size *
                       static_cast<double>(m.ffn_hidden_size) / tp;
    const double attention = p.linear_per_layer / tp - ffn;
    const int ffn16 = Ffn16BitLayers(in.replica.weight_format, first, layers, m.num_layers);
    total += layers * attention * 2.0 + ffn16 * ffn * 2.0 + (layers - ffn16) * ffn * bits / 8.0;
  } else {
    total += layers * p.linear_per_layer / tp * bits / 8.0;
  }
  if (embedding) total += p.embedding / tp * 2.0;
  if (head) total += (p.lm_head + p.final_norm) / tp * 2.0;
  return total;
}

std::string GiB(sim::Bytes b) { return absl::StrFormat("%.2f GiB", b.ToGiB()); }

}  // namespace

absl::Status CheckWeightFormatFitsModel(const ReplicaModel& replica) {
  const TransformerConfig& m = replica.model;
  if (replica.weight_format != WeightFormat::kFp8Mixed || (m.num_experts == 0 && !m.hybrid())) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "inference.weight_dtype=fp8-mixed is Meta's FP8 recipe for dense Llama 3 models (FFN of "
      "the inner layers in FP8); ",
      m.name, " is ", m.hybrid() ? "a hybrid (Mamba) model" : "a mixture-of-experts model",
      ", which it does not cover (Meta's Llama 4 FP8 releases quantize the routed experts only, "
      "which is not modelled); use fp8 or bf16"));
}

sim::Bytes KvBytesPerToken(const TransformerConfig& model, int tensor_parallel,
                           int pipeline_parallel, Dtype kv_cache_dtype,
                           int attention_data_parallel) {
  const int64_t layers = CeilDiv(model.num_attention_layers(), pipeline_parallel);
  if (model.mla() || attention_data_parallel > 1) {
    const int64_t per_layer =
        model.mla()
            ? model.kv_lora_rank + model.qk_rope_head_dim
            : 2 *
                  std::max<int64_t>(1, model.num_query_groups /
                                           (attention_data_parallel > 1 ? 1 : tensor_parallel)) *
                  model.head_dim();
    return sim::Bytes(
        CeilDiv(layers * per_layer * BytesPerElement(kv_cache_dtype), attention_data_parallel));
  }
  const int64_t kv_heads = std::max<int64_t>(1, model.num_query_groups / tensor_parallel);
  return sim::Bytes(layers * 2 * kv_heads * model.head_dim() * BytesPerElement(kv_cache_dtype));
}

int64_t MambaStateElementsPerLayer(const TransformerConfig& model, int tensor_parallel) {
  return static_cast<int64_t>(model.mamba_num_heads / tensor_parallel) * model.mamba_head_dim *
             model.mamba_state_dim +
         static_cast<int64_t>(model.mamba_conv_kernel - 1) *
             (model.mamba_conv_dim() / tensor_parallel);
}

sim::Bytes MambaStateBytesPerSequence(const TransformerConfig& model, int tensor_parallel,
                                      int pipeline_parallel, Dtype state_dtype) {
  const int64_t layers = CeilDiv(model.num_layers_of(LayerKind::kMamba), pipeline_parallel);
  return sim::Bytes(layers * MambaStateElementsPerLayer(model, tensor_parallel) *
                    BytesPerElement(state_dtype));
}

InferenceMemory EstimateInferenceMemory(const InferenceMemoryInputs& in, sim::Bytes capacity) {
  const TransformerConfig& m = in.replica.model;
  InferenceMemory r;
  r.capacity = capacity;
  const bool free_fraction = in.kv_free_memory_fraction > 0;
  const bool sglang = in.accounting == KvCacheAccounting::kSglang;
  // SGLang's fraction applies to the memory free after the CUDA context.
  const sim::Bytes base = sglang ? capacity - in.overheads.cuda_context : capacity;
  r.budget = free_fraction ? capacity
                           : sim::Bytes(static_cast<int64_t>(
                                 static_cast<double>(base.count()) * in.memory_utilization));
  const int pp = in.replica.pipeline_parallel;
  const int layers = static_cast<int>(CeilDiv(m.num_layers, pp));
  const double weights = pp == 1 ? StageWeightBytes(in, 0, layers, true, true)
                                 : std::max(StageWeightBytes(in, 0, layers, true, false),
                                            StageWeightBytes(in, m.num_layers - layers, layers,
                                                             false, true));
  r.weights = sim::Bytes(static_cast<int64_t>(std::ceil(weights))) + in.drafter_weights;

  const int tp = in.replica.tensor_parallel;
  const int64_t tokens = in.max_tokens_per_step;
  const int64_t h = m.hidden_size, d = m.head_dim();
  const int64_t attention = 2 * h + (m.num_attention_heads + 2 * m.num_query_groups) * d / tp;
  const int64_t f = m.ffn_hidden_size / tp;
  const int64_t mlp = 2 * h + (m.activation == Activation::kSwiglu ? 3 * f : 2 * f);
  const int64_t sampled = std::min<int64_t>(tokens, in.max_batch_size);
  // A Mamba layer's in_proj output and the scan's output.
  const int64_t mamba = m.num_layers_of(LayerKind::kMamba) > 0
                            ? 2 * h + (m.mamba_in_proj_width() + m.mamba_d_inner()) / tp
                            : 0;
  r.activations = sim::Bytes(tokens * std::max({attention, mlp, mamba}) * 2 +
                             sampled * static_cast<int64_t>(m.vocab_size) * 4);
  r.overheads = in.overheads.cuda_context + in.overheads.gemm_workspace;
  if (in.accounting == KvCacheAccounting::kVllmV1) {
    r.activations = sim::Bytes(VllmV1ProfilePeakBytes(m, tp, tokens, in.max_batch_size));
    r.overheads = in.overheads.gemm_workspace;
  } else if (sglang) {
    // Inside the (1 - mem_fraction_static) reserve, not taken from the cache.
    r.activations = sim::Bytes(0);
    r.overheads = sim::Bytes(0);
  }

  r.kv_bytes_per_token =
      KvBytesPerToken(m, tp, pp, in.replica.kv_cache_dtype, in.replica.expert_parallel) +
      in.drafter_kv_bytes_per_token;
  r.kv_block_bytes = r.kv_bytes_per_token * in.kv_block_size;
  const sim::Bytes left = r.budget - r.weights - r.activations - r.overheads;
  r.kv_cache = left.count() > 0 ? left : sim::Bytes(0);
  // TensorRT-LLM's kv_cache_free_gpu_mem_fraction: the cache is that share of what is left.
  if (free_fraction) {
    r.kv_cache = sim::Bytes(
        static_cast<int64_t>(static_cast<double>(r.kv_cache.count()) * in.kv_free_memory_fraction));
  }
  // A model of Mamba layers alone caches no K or V (blocks of 0 bytes).
  r.kv_blocks = r.kv_cache.count() / std::max<int64_t>(1, r.kv_block_bytes.count());
  r.kv_footprint =
      KvFootprintOf(m, in.kv_block_size, r.kv_bytes_per_token, in.drafter_kv_bytes_per_token);
  const int64_t units = r.kv_footprint.Units(in.sequence_length, 1);
  r.blocks_per_sequence = r.kv_footprint.Blocks(units);
  r.max_concurrent_sequences = std::min<int64_t>(
      r.kv_blocks * r.kv_footprint.UnitsPerBlock() / units, in.max_batch_size);
  r.state_bytes_per_sequence = MambaStateBytesPerSequence(m, tp, pp, in.replica.kv_cache_dtype);
  if (r.state_bytes_per_sequence.count() > 0) {
    // Each running sequence's state comes out of the same pool as its blocks.
    const int64_t per_sequence =
        r.blocks_per_sequence * r.kv_block_bytes.count() + r.state_bytes_per_sequence.count();
    // kv_blocks stays what the blocks leave once every running sequence's
    // state is set aside.
    r.max_concurrent_sequences =
        std::min<int64_t>(r.kv_cache.count() / per_sequence, in.max_batch_size);
    r.kv_blocks = (r.kv_cache.count() -
                   r.max_concurrent_sequences * r.state_bytes_per_sequence.count()) /
                  std::max<int64_t>(1, r.kv_block_bytes.count());
  }
  r.fits = r.max_concurrent_sequences >= 1;
  return r;
}

InferenceVerdict JudgeInferenceMemory(const InferenceMemoryInputs& in, const GpuSpec& gpu) {
  InferenceVerdict v;
  const InferenceMemory m = EstimateInferenceMemory(in, gpu.cuda_total_memory);
  if (m.fits) {
    v.fits = true;
    v.some_remedy_fits = true;
    v.summary = absl::StrCat("fits: weights ", GiB(m.weights), ", KV cache ", GiB(m.kv_cache),
                             " = ", m.kv_blocks, " blocks of ", in.kv_block_size,
                             " tokens: ", m.max_concurrent_sequences, " concurrent sequences of ",
                             in.sequence_length, " tokens");
    return v;
  }
  const sim::Bytes needed =
      m.weights + m.activations + m.overheads + m.kv_block_bytes * m.blocks_per_sequence;
  v.summary = absl::StrCat(
      "does not fit: ", in.replica.model.name, " needs ", GiB(needed), " per GPU (weights ",
      GiB(m.weights), " in ", std::string(WeightFormatName(in.replica.weight_format)), " at tp ",
      in.replica.tensor_parallel, ", activations ", GiB(m.activations), ", overheads ",
      GiB(m.overheads), ", KV of one ", in.sequence_length, "-token sequence ",
      GiB(m.kv_block_bytes * m.blocks_per_sequence), ") but ", gpu.name, " gives ", GiB(m.budget),
      " (", GiB(m.capacity), " reported by CUDA",
      in.accounting == KvCacheAccounting::kSglang
          ? absl::StrCat(" less the CUDA context ", GiB(in.overheads.cuda_context))
          : "",
      " x ", absl::StrFormat("%.2f", in.memory_utilization), ")");

  std::vector<std::string> remedies;
  // 1. Quantise.
  for (WeightFormat f : {WeightFormat::kFp8, WeightFormat::kInt8, WeightFormat::kInt4Awq}) {
    if (BitsPerWeight(f, in.replica.quant_group_size, in.replica.model.hidden_size) >=
        BitsPerWeight(in.replica.weight_format, in.replica.quant_group_size,
                      in.replica.model.hidden_size)) {
      continue;
    }
    if (!CheckDtypeSupported(gpu, ComputeDtype(f)).ok()) continue;
    InferenceMemoryInputs q = in;
    q.replica.weight_format = f;
    if (EstimateInferenceMemory(q, gpu.cuda_total_memory).fits) {
      remedies.push_back(
          absl::StrCat("quantise: inference.weight_dtype=", std::string(WeightFormatName(f))));
      break;
    }
  }
  // 2. Raise tensor parallelism (at this format, then at 4-bit).
  for (WeightFormat f : {in.replica.weight_format, WeightFormat::kInt4Awq}) {
    bool found = false;
    for (int tp = in.replica.tensor_parallel * 2; tp <= 64 && !found; tp *= 2) {
      if (in.replica.model.num_attention_heads % tp != 0) break;
      InferenceMemoryInputs t = in;
      t.replica.tensor_parallel = tp;
      t.replica.weight_format = f;
      if (EstimateInferenceMemory(t, gpu.cuda_total_memory).fits) {
        remedies.push_back(absl::StrCat(
            "raise inference.tensor_parallel_size to ", tp, " (", tp * in.replica.pipeline_parallel,
            " GPUs per replica)",
            f == in.replica.weight_format
                ? ""
                : absl::StrCat(" with inference.weight_dtype=", std::string(WeightFormatName(f)))));
        found = true;
      }
    }
    if (found) break;
  }
  // 3. Shorten the context (the weights must fit first).
  if (m.budget.count() > (m.weights + m.activations + m.overheads).count()) {
    const int64_t tokens = m.kv_cache.count() / m.kv_bytes_per_token.count();
    const int64_t longest = tokens / in.kv_block_size * in.kv_block_size;
    if (longest >= 1) {
      remedies.push_back(absl::StrCat("shorten the context to at most ", longest,
                                      " tokens (prompt + output lengths)"));
    }
  }
  v.some_remedy_fits = !remedies.empty();
  if (remedies.empty()) {
    v.remedy =
        absl::StrCat("it does not fit even at 4-bit (int4-awq) with tensor parallelism up to the ",
                     "attention heads; use a GPU with more memory or a smaller model");
  } else {
    v.remedy = absl::StrCat("try: ", remedies[0]);
    for (size_t i = 1; i < remedies.size(); ++i) absl::StrAppend(&v.remedy, "; or ", remedies[i]);
  }
  return v;
}

}  // namespace clustersim::models
