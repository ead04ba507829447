#include "models/workload_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace clustersim::models::workload_internal {

Dims MakeDims(const TransformerConfig& c, const ShardSpec& s) {
  Dims d{};
  d.t = s.tensor_parallel;
  d.sp = s.sequence_parallel && d.t > 1;
  d.fp8_recipe = s.fp8_recipe;
  d.b = s.micro_batch_size;
  d.s = c.seq_length;
  d.s_local = c.seq_length / s.context_parallel;
  d.h = c.hidden_size;
  d.a_local = c.num_attention_heads / d.t;
  d.g_local = c.num_query_groups / d.t;
  d.d = c.head_dim();
  d.f_local = c.ffn_hidden_size / d.t;
  d.swiglu = c.activation == Activation::kSwiglu;
  d.fc1_n = d.f_local * (d.swiglu ? 2 : 1);
  d.dv = c.value_head_dim();
  d.et = s.ExpertTp();
  d.expert_sp = d.sp && d.et > 1;
  d.fe_local = c.expert_ffn_size() / d.et;
  d.fe1_n = d.fe_local * (d.swiglu ? 2 : 1);
  d.fs_local = c.num_experts > 0 ? c.moe_shared_expert_ffn_size / d.t : 0;
  d.fs1_n = d.fs_local * (d.swiglu ? 2 : 1);
  d.mla = c.mla();
  d.q_lora = c.q_lora_rank;
  d.kv_lora = c.kv_lora_rank;
  d.rope = c.qk_rope_head_dim;
  d.act_name = c.activation == Activation::kSwiglu        ? "swiglu"
               : c.activation == Activation::kSquaredRelu ? "squared_relu"
                                                          : "gelu";
  d.v_local = c.vocab_size / d.t;
  d.learned_positions = c.learned_position_embeddings;
  d.alibi = c.alibi;
  d.window = c.sliding_window;
  d.window_share = c.sliding_window_share();
  d.unfused_attention = c.attention_backend == AttentionBackend::kUnfused;
  // FusedScaleMaskSoftmax.forward's custom_kernel_constraint (Megatron-
  // DeepSpeed megatron/model/fused_softmax.py): 16 < sk <= the limit, sq % 4
  // == 0 and the b·np attention batches % 4 == 0.
  const bool fused_softmax_fits = d.s > 16 && d.s <= c.fused_softmax_max_keys &&
                                  d.s_local % 4 == 0 && (d.b * d.a_local) % 4 == 0;
  d.torch_softmax = d.unfused_attention && c.fused_softmax_max_keys > 0 && !fused_softmax_fits;
  d.data_sync = c.data_broadcast_host_sync;
  d.eager = c.elementwise == ElementwiseKernels::kEager;
  d.rms_norm = c.norm == Norm::kRmsNorm;
  d.glu_clamp = c.megatron_core_modules && c.glu_clamp > 0;
  d.quick_gelu_glu = c.megatron_core_modules && c.quick_gelu_glu;
  d.unfused_rope = c.unfused_rope();
  d.expert_bias = c.megatron_core_modules && c.num_experts > 0 && c.add_bias_linear;
  d.tokens = d.b * d.s_local;
  d.ln_tokens = d.sp ? d.tokens / d.t : d.tokens;
  d.in_bytes = BytesPerElement(s.dtype);
  d.act = d.in_bytes >= 2 ? d.in_bytes : 2;
  d.tp_input_kept = c.tp_keeps_gathered_input;
  d.gather_bytes = c.fp8_tp_gather && d.in_bytes == 1 ? 1 : d.act;
  d.dtype = s.dtype;
  // Transformer Engine quantizes the linear layers only: attention, and under
  // NVFP4 too (TE v2.8 NVFP4BlockScaling: fp8_dpa and fp8_mha False), runs in
  // BF16.
  d.attn_dtype = IsQuantizedGemmDtype(s.dtype) ? Dtype::kBf16 : s.dtype;
  d.moe = c.num_experts > 0;
  d.ep = s.expert_parallel;
  d.experts = c.num_experts;
  d.experts_local = d.moe ? c.num_experts / s.expert_parallel : 0;
  d.top_k = c.moe_top_k;
  // Megatron-core's all-to-all dispatcher routes each rank's own
  // sequence-parallel shard (ln_tokens), k choices per token; with a capacity
  // factor every rank sends each expert ceil(k·ln_tokens/E · cf) rows
  // (moe_utils.get_capacity; cf 1 = balanced routing). An expert receives
  // that from every rank of the tp x ep group (all-to-all over ep, then
  // all-gather over tp); with expert TP 1 from the ep ranks alone.
  d.capacity = d.moe ? static_cast<int64_t>(std::ceil(static_cast<double>(d.top_k) *
                                                      d.ln_tokens / d.experts *
                                                      c.moe_capacity_factor))
                     : 0;
  d.drop_and_pad = d.moe && s.moe_pad_to_capacity;
  d.moe_sent = d.capacity * d.experts;
  d.expert_tokens = d.capacity * (d.expert_sp ? d.et : 1) * d.ep;
  // Megatron-Core's MambaMixer splits heads and groups over tp.
  d.mamba_heads_local = c.mamba_num_heads / d.t;
  d.mamba_groups_local = c.mamba_num_groups / d.t;
  d.mamba_head_dim = c.mamba_head_dim;
  d.mamba_state = c.mamba_state_dim;
  d.mamba_conv_kernel = c.mamba_conv_kernel;
  d.mamba_chunk = c.mamba_chunk_size;
  return d;
}

// `batch` independent GEMMs of the same shape (MoE: one per local expert,
// each with its own weights), as a grouped GEMM.
Op Gemm(const Dims& d, std::string name, int64_t m, int64_t n, int64_t k, int64_t batch) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = batch;
  op.flops = sim::Flops(2.0 * batch * m * n * k);
  op.bytes = sim::Bytes(batch * ((m * k + k * n) * d.in_bytes + m * n * d.act));
  op.dtype = d.dtype;
  return op;
}

// dgrad: dX[m x k] = dY[m x n]·W^T; wgrad: dW[k x n] = X^T[k x m]·dY. Same FLOPs.
// Both run as their forward GEMM does (one batched kernel or one per stream).
Op Dgrad(const Dims& d, const Op& fwd) {
  Op op = Gemm(d, fwd.name + "_dgrad", fwd.m, fwd.k, fwd.n, fwd.batch);
  op.streams = fwd.streams;
  op.kernels = fwd.kernels;
  return op;
}
Op Wgrad(const Dims& d, const Op& fwd) {
  Op op = Gemm(d, fwd.name + "_wgrad", fwd.k, fwd.n, fwd.m, fwd.batch);
  op.streams = fwd.streams;
  op.kernels = fwd.kernels;
  return op;
}

Op MemoryBound(const Dims& d, std::string name, int64_t bytes) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kMemoryBound;
  op.bytes = sim::Bytes(bytes);
  op.dtype = d.dtype;
  return op;
}

// Backward of an elementwise/normalisation op: reads the saved input and the
// incoming gradient, writes the outgoing gradient (~2x the forward traffic).
Op MemoryBoundBackward(const Dims& d, const Op& fwd) {
  return MemoryBound(d, fwd.name + "_bwd", fwd.bytes.count() * 2);
}

namespace {

Op Eager(const Dims& d, std::string name, int64_t bytes, int kernels) {
  Op op = MemoryBound(d, std::move(name), bytes);
  op.kernels = kernels;
  return op;
}

bool EagerNorm(const Dims& d) { return d.eager && d.rms_norm; }
bool EagerSwiglu(const Dims& d) { return d.eager && d.swiglu; }

}  // namespace

Op NormForward(const Dims& d, std::string name, int64_t elements) {
  if (EagerNorm(d)) return Eager(d, std::move(name), elements * (4 * d.act + 28), 8);
  return MemoryBound(d, std::move(name), 2 * elements * d.act);
}

Op NormBackward(const Dims& d, const Op& fwd, int64_t elements) {
  if (EagerNorm(d)) return Eager(d, fwd.name + "_bwd", elements * (8 * d.act + 60), 13);
  return MemoryBoundBackward(d, fwd);
}

Op ActivationForward(const Dims& d, int64_t elements) {
  if (EagerSwiglu(d)) return Eager(d, d.act_name, elements * 5 * d.act, 2);
  return MemoryBound(d, d.act_name, elements * d.act * (d.swiglu ? 3 : 2));
}

Op ActivationBackward(const Dims& d, const Op& fwd, int64_t elements) {
  if (EagerSwiglu(d)) return Eager(d, fwd.name + "_bwd", elements * 9 * d.act, 3);
  return MemoryBoundBackward(d, fwd);
}

Op RopeForward(const Dims& d, int64_t elements) {
  if (d.eager) return Eager(d, "rope", elements * (2 * d.act + 16), 6);
  return Eager(d, "rope", elements * 12 * d.act, 10);
}

Op RopeBackward(const Dims& d, const Op& fwd) {
  Op op = fwd;
  op.name = "rope_bwd";
  op.recompute = false;
  if (!d.eager) {
    op.bytes = sim::Bytes(fwd.bytes.count() / 12 * 10);
    op.kernels = 6;
  }
  return op;
}

Op ExpertGluClamp(const Dims& d, int64_t elements) {
  return Eager(d, "expert_glu_clamp", elements * 8 * d.act, 3);
}

Op ExpertGluClampBackward(const Dims& d, const Op& fwd) {
  Op op = Eager(d, "expert_glu_clamp_bwd", fwd.bytes.count() / 8 * 10, 4);
  return op;
}

Op ExpertBias(const Dims& d, int64_t rows) {
  const int kernels = static_cast<int>(2 * std::max<int64_t>(1, d.experts_local) + 2);
  return Eager(d, "expert_fc2_bias", rows * d.h * (4 + (d.act + 4 + 4) + 2 * 4 + (4 + d.act)),
               kernels);
}

Op ExpertBiasBackward(const Dims& d, int64_t rows) {
  const int kernels = static_cast<int>(4 * std::max<int64_t>(1, d.experts_local) + 2);
  return Eager(d, "expert_fc2_bias_bwd", rows * d.h * (2 * d.act + 40), kernels);
}

Op Collective(const Dims& d, std::string name, CommKind kind, int64_t bytes,
              CommGroup group) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kCollective;
  op.comm = kind;
  op.group = group;
  op.comm_bytes = sim::Bytes(bytes);
  op.dtype = d.dtype;
  return op;
}

// The same shapes with 16-bit GEMMs: under fp8, what Transformer Engine does
// not cover (Megatron's output layer) stays in BF16.
Dims Sixteen(const Dims& d) {
  Dims out = d;
  out.dtype = d.attn_dtype;
  out.in_bytes = std::max<int64_t>(d.in_bytes, 2);
  out.gather_bytes = d.act;
  return out;
}

// The FP8 cast of each FP8 GEMM's input (forward) or incoming gradient
// (backward), both layouts, at the recipe's bytes per element
// (models/fp8_recipe.h: 4 under delayed scaling's cast_transpose, 6 with
// current scaling's amax pass, 4 + 2/32 for MXFP8's block scales). Zero bytes
// when no GEMM runs in FP8.
int64_t Fp8CastBytes(const std::vector<Op>& ops, bool backward, Fp8Recipe recipe) {
  int64_t elements = 0;
  for (const Op& op : ops) {
    if (!op.IsFp8Gemm()) continue;
    elements += op.batch * (backward ? op.m * op.n : op.m * op.k);
  }
  return static_cast<int64_t>(static_cast<double>(elements) * Fp8CastBytesPerElement(recipe));
}

// Kernels of one layer pass's FP8 cast op (fp8_cast_fwd / fp8_cast_bwd): one
// for the dense GEMMs' casts together, plus the per-expert quantizes of each
// grouped expert GEMM (ops run on streams, Op::streams), which split their input (forward) or output gradient (backward) and
// quantize every expert's rows on its own (Fp8GroupedCastKernels). Each kernel
// pays the kernel overhead on the GPU, CUDA graph or not. Each grouped GEMM's
// quantizes are one Python call (split_quantize, whose C++ loop launches
// them), so eager they add one host launch per grouped GEMM, not one per kernel.
void SetFp8CastKernels(const std::vector<Op>& ops, Fp8Recipe recipe, Op* cast) {
  int64_t kernels = 1, calls = 1;
  for (const Op& op : ops) {
    if (!op.IsFp8Gemm() || op.streams <= 0) continue;
    kernels += Fp8GroupedCastKernels(recipe, op.batch);
    ++calls;
  }
  cast->kernels = static_cast<int>(kernels);
  cast->host_launches = static_cast<int>(calls);
}

// The rescale of each FP8 GEMM's two backward outputs, the input gradient
// (m x k) and the weight gradient (k x n), at the recipe's bytes per element
// (models/fp8_recipe.h: 4 under rowwise scaling, else 0).
int64_t Fp8RescaleBytes(const std::vector<Op>& ops, Fp8Recipe recipe) {
  const double per_element = Fp8BackwardRescaleBytesPerElement(recipe);
  if (per_element == 0) return 0;
  int64_t elements = 0;
  for (const Op& op : ops) {
    if (op.IsFp8Gemm()) elements += op.batch * (op.m * op.k + op.k * op.n);
  }
  return static_cast<int64_t>(static_cast<double>(elements) * per_element);
}

// The b·s·h activation crossing a TP boundary (full, unsharded size).
int64_t BoundaryBytes(const Dims& d) { return d.tokens * d.h * d.act; }

// A sequence-parallel all-gather whose output the next op consumes, in float8
// under Dims::gather_bytes 1.
Op InputGather(const Dims& d, std::string name) {
  Op op = Collective(d, std::move(name), CommKind::kAllGather, d.tokens * d.h * d.gather_bytes);
  op.gathers_next_input = true;
  return op;
}

// Eager PyTorch rotates the query and key heads in its own kernels (RoPE
// models; latent attention keeps its decoupled RoPE key inside its
// projections). The query and key values of one shard.
bool EagerRope(const Dims& d) {
  return (d.eager || d.unfused_rope) && !d.learned_positions && !d.mla;
}
int64_t RopeElements(const Dims& d) { return d.tokens * (d.a_local + d.g_local) * d.d; }

}  // namespace clustersim::models::workload_internal
