// File: models/workload_ops.h
//
// The shapes of one micro-batch on one shard (Dims) and the constructors of
// the ops that models/workload.cc assembles into layers: GEMMs and their
// gradients, memory-bound ops, collectives. Private to models/workload*.cc.
#ifndef CLUSTERSIM_MODELS_WORKLOAD_OPS_H_
#define CLUSTERSIM_MODELS_WORKLOAD_OPS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "models/workload.h"

namespace clustersim::models::workload_internal {

// Shapes of one micro-batch on one shard.
struct Dims {
  int64_t b, s, s_local, h, a_local, g_local, d, f_local, fc1_n, v_local, t;
  int64_t dv;                     // value head dimension (d except under MLA)
  int64_t fe_local, fe1_n;        // routed expert FFN / expert TP, its FC1 width
  int64_t et;                     // expert TP: tp, or 1 under parallel folding
  bool expert_sp;                 // routed tokens gathered over the expert TP group
  int64_t fs_local, fs1_n;        // shared experts' FFN / tp (0: none), its FC1 width
  bool mla;                       // multi-head latent attention
  int64_t q_lora, kv_lora, rope;  // MLA latent ranks, decoupled RoPE key width
  bool sp;                        // sequence parallel in effect (tp > 1)
  // The backward does not re-gather column-parallel inputs
  // (TransformerConfig::tp_keeps_gathered_input).
  bool tp_input_kept;
  int64_t gather_bytes;  // InputGather's element bytes: 1 under fp8_tp_gather, else act
  Fp8Recipe fp8_recipe;           // FP8 casts' recipe (ShardSpec::fp8_recipe)
  bool swiglu;
  const char* act_name;  // "gelu", "swiglu", "squared_relu"
  bool moe;
  int64_t ep, experts, experts_local, top_k;
  int64_t capacity;       // rows one rank sends each expert: ceil(k·ln_tokens/E · cf)
  int64_t moe_sent;       // rows one rank sends in the dispatch all-to-all: capacity·E
  int64_t expert_tokens;  // rows of each local expert's GEMMs: capacity·(expert TP)·ep
  // Mamba-2 mixer on one TP rank: heads and B/C groups (/tp), head and state
  // dimensions, conv1d taps, SSD chunk length.
  int64_t mamba_heads_local, mamba_groups_local, mamba_head_dim, mamba_state;
  int64_t mamba_conv_kernel, mamba_chunk;
  bool learned_positions;
  bool alibi;              // TransformerConfig::alibi
  int64_t window;          // TransformerConfig::sliding_window (0: none)
  double window_share;     // TransformerConfig::sliding_window_share()
  bool unfused_attention;  // AttentionBackend::kUnfused
  // Unfused attention whose shape Megatron's fused scale-mask-softmax kernel
  // does not take (TransformerConfig::fused_softmax_max_keys): FusedScaleMask-
  // Softmax falls back to PyTorch's fp32 cast, scale, masked_fill, softmax and
  // 16-bit cast, five kernels each way instead of one.
  bool torch_softmax;
  // The embedding's forward waits for a host sync (TransformerConfig::
  // data_broadcast_host_sync).
  bool data_sync;
  bool eager;              // ElementwiseKernels::kEager
  bool rms_norm;           // Norm::kRmsNorm
  // Megatron-Core's implementation of the layer variants (all false unless
  // TransformerConfig::megatron_core_modules): the clamped GLU's eager
  // kernels, the quick-GELU GLU's host sync, the unfused YaRN RoPE and the
  // grouped experts' eager fc2 bias (MoE with linear biases).
  bool glu_clamp;
  bool quick_gelu_glu;
  bool unfused_rope;
  bool expert_bias;
  bool drop_and_pad;  // ShardSpec::moe_pad_to_capacity
  int64_t tokens;     // b·s/cp: rows of every GEMM
  int64_t ln_tokens;  // tokens / tp with sequence parallel, else tokens
  int64_t in_bytes;   // GEMM input element bytes
  int64_t act;        // activation element bytes (16-bit for fp8)
  Dtype dtype;
  Dtype attn_dtype;   // attention and BF16 GEMMs: dtype, or bf16 under fp8
};

Dims MakeDims(const TransformerConfig& c, const ShardSpec& s);

// `batch` independent GEMMs of the same shape (MoE: one per local expert,
// each with its own weights), as a grouped GEMM.
Op Gemm(const Dims& d, std::string name, int64_t m, int64_t n, int64_t k, int64_t batch = 1);

// dgrad: dX[m x k] = dY[m x n]·W^T; wgrad: dW[k x n] = X^T[k x m]·dY. Same FLOPs.
Op Dgrad(const Dims& d, const Op& fwd);

Op Wgrad(const Dims& d, const Op& fwd);

Op MemoryBound(const Dims& d, std::string name, int64_t bytes);

// Backward of an elementwise/normalisation op: reads the saved input and the
// incoming gradient, writes the outgoing gradient (~2x the forward traffic).
Op MemoryBoundBackward(const Dims& d, const Op& fwd);

// A layer norm over `elements` 16-bit values and its backward. Fused: read
// x, write y (2 x 2 B) and twice that backward. Eager RMSNorm (x.float(),
// pow, mean, + eps, rsqrt, multiply, cast back, times the weight: the Llama
// reference code torchtitan runs) moves 4·act + 28 B per element in 8
// kernels, its autograd backward 8·act + 60 B in 13 (models/workload.h).
Op NormForward(const Dims& d, std::string name, int64_t elements);
Op NormBackward(const Dims& d, const Op& fwd, int64_t elements);

// The MLP activation over `elements` = tokens x f/tp values and its backward.
// Fused SwiGLU reads gate and up and writes one (3 x act), GeLU reads and
// writes (2 x act); backward twice that. Eager SwiGLU (silu, then times up)
// moves 5·act in 2 kernels, backward 9·act in 3.
Op ActivationForward(const Dims& d, int64_t elements);
Op ActivationBackward(const Dims& d, const Op& fwd, int64_t elements);

// Eager rotary embedding of the query and key heads (`elements` values):
// per tensor a cast to fp32, a complex multiply and a cast back, 2·act + 16 B
// per element in 3 kernels, the same backward. A fused RoPE is not costed
// (it rides in the projections' epilogue traffic). 0 elements: none.
// Megatron-Core's unfused RoPE in a fused stack (Dims::unfused_rope;
// rope_utils.py _apply_rotary_pos_emb_bshd: t·cos, rotate_half's negation
// and concatenation, ·sin, the sum and the concatenation with the
// unrotated part, plus cos and sin of the small frequency table) moves
// 12·act B per element in 10 kernels; its autograd backward 10·act in 6.
Op RopeForward(const Dims& d, int64_t elements);
Op RopeBackward(const Dims& d, const Op& fwd);

// Megatron-Core's clamped GLU in the grouped experts (fused_bias_geglu.py
// weighted_bias_quick_geglu_impl with a clamp value): the gate and linear
// halves of the fc1 output (`elements` = rows x expert FFN width, each half)
// are clamped and concatenated again by three eager kernels, 8·act B per
// element; backward (the two clamps' masked gradients and the chunk's
// concatenation) 10·act B in 4 kernels.
Op ExpertGluClamp(const Dims& d, int64_t elements);
Op ExpertGluClampBackward(const Dims& d, const Op& fwd);

// Megatron-Core's fc2 expert bias (TEGroupedMLP, skip_bias_add on fc2, then
// _apply_bias): per local expert `t + b·p` with the fp32 routing weight p,
// so b·p and the sum are fp32 rows, then one concatenation and a cast back:
// 4 + (act + 4 + 4) + 2·4 + (4 + act) B per value of the `rows` x h output,
// 2 kernels per local expert + 2. Backward: the cast's and the sum's
// gradients and, per expert, the bias gradient sum(g·p) and the weight
// gradient sum(g·b): 2·act + 40 B per value, 4 kernels per local expert + 2.
Op ExpertBias(const Dims& d, int64_t rows);
Op ExpertBiasBackward(const Dims& d, int64_t rows);

Op Collective(const Dims& d, std::string name, CommKind kind, int64_t bytes,
              CommGroup group = CommGroup::kTensor);

// The same shapes with 16-bit GEMMs: under fp8, what Transformer Engine does
// not cover (Megatron's output layer) stays in BF16.
Dims Sixteen(const Dims& d);

// FP8 casts of each FP8 GEMM's input (forward) or incoming gradient
// (backward), both layouts, at the recipe's bytes per element.
// Zero bytes when no GEMM runs in FP8.
int64_t Fp8CastBytes(const std::vector<Op>& ops, bool backward, Fp8Recipe recipe);
// Sets the kernels and host launches of the FP8 cast op over `ops`
// (workload_ops.cc).
void SetFp8CastKernels(const std::vector<Op>& ops, Fp8Recipe recipe, Op* cast);
// The bytes of the elementwise rescale that follows each FP8 GEMM's backward
// GEMMs under `recipe` (0 unless rowwise).
int64_t Fp8RescaleBytes(const std::vector<Op>& ops, Fp8Recipe recipe);

// The b·s·h activation crossing a TP boundary (full, unsharded size).
int64_t BoundaryBytes(const Dims& d);

// A sequence-parallel all-gather whose output the next op consumes:
// tokens·h values of Dims::gather_bytes each (float8 under fp8_tp_gather).
Op InputGather(const Dims& d, std::string name);

// The op of `ops` named `name`. REQUIRES: present (a build bug otherwise).
const Op& FindOp(const std::vector<Op>& ops, std::string_view name);

// Backward of a column-parallel GEMM (QKV, FC1, LM head) and of a
// row-parallel one (output projection, FC2), with the tensor-parallel
// collectives Megatron-LM puts around them; `block` names the collectives
// (models/workload.cc).
void ColumnParallelBackward(const Dims& d, const Op& fwd, absl::string_view block,
                            std::vector<Op>* out);
void RowParallelBackward(const Dims& d, const Op& fwd, absl::string_view block,
                         std::vector<Op>* out);

// Architecture variants (models/workload_architecture.cc): the routed
// experts' layer (MoeBackward replays the activation when `replay_act`), the
// shared experts' MLP and multi-head latent attention's projections, forward
// and backward.
void MoeForward(const Dims& d, std::vector<Op>* ops);
void MoeBackward(const Dims& d, const std::vector<Op>& fwd, bool replay_act,
                 std::vector<Op>* out);
void SharedExpertsForward(const Dims& d, std::vector<Op>* ops);
void SharedExpertsBackward(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* out);
void LatentProjections(const Dims& d, std::vector<Op>* ops);
void LatentProjectionsBackward(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* out);

// A hybrid model's Mamba-2 mixer (models/workload_mamba.cc): from the
// sequence-parallel gather through in_proj, conv1d, the SSD scan, the gated
// norm and out_proj to its tensor-parallel reduction; and its backward, from
// out_proj's back to in_proj's. The pre-norm and the residual are the
// caller's, as for attention.
void MambaMixerForward(const Dims& d, std::vector<Op>* ops);
void MambaMixerBackward(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* ops);

// Selective-recompute replays (models/workload_recompute.cc). Replay appends
// copies of the forward ops `names`, marked recomputed; MlpUpReplay replays
// the dense MLP's input side (norm, gather, fc1, activation); MlpReplay the
// whole dense MLP (recompute module "mlp"); OpSacReplay torchtitan's per-op
// policy. EagerRope: whether eager PyTorch rotates Q and K in kernels of its
// own; RopeElements: the query and key values of one shard.
void Replay(const std::vector<Op>& fwd, const std::vector<std::string_view>& names,
            std::vector<Op>* ops);
void MlpUpReplay(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* ops);
void MlpReplay(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* ops);
void OpSacReplay(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* ops);
bool EagerRope(const Dims& d);
int64_t RopeElements(const Dims& d);

// The attention core (models/workload_attention.cc): FlashAttention's fused
// kernel or, with Dims::unfused_attention, Megatron's CoreAttention (scores
// GEMM, softmax, dropout, context GEMM) appended to `ops`; its backward, after
// the selective-recompute replay of its forward when `replay`; and Transformer
// Engine's context-parallel ring attention over `cp` ranks.
void AttentionCoreForward(const Dims& d, std::vector<Op>* ops);
void AttentionCoreBackward(const Dims& d, const std::vector<Op>& fwd, bool replay,
                           std::vector<Op>* ops);
ContextRing MakeContextRing(const Dims& d, int cp);

// Appends the sharding's memory passes (ShardSpec grad_accumulate_bytes,
// flat_grad_bytes, gather_copy_bytes, grad_copy_bytes) to `w`'s op lists
// (workload_grad_passes.cc).
void AddGradientPasses(const Dims& d, const ShardSpec& s, Workload* w);

}  // namespace clustersim::models::workload_internal

#endif  // CLUSTERSIM_MODELS_WORKLOAD_OPS_H_
