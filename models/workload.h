// File: models/workload.h
//
// What one training step computes, as ops with shapes, FLOPs and bytes: one
// transformer layer's forward and backward for one micro-batch on one
// tensor-parallel shard (Megatron-LM's pre-LN GPT/Llama layer), plus the
// embedding and the LM head. Tensor-parallel collectives sit where Megatron-LM
// puts them. The step builder multiplies layers, micro-batches and stages; this
// file knows nothing about schedules or time.
//
// Architecture variants (models/transformer_config.h): an explicit head
// dimension d (kv_channels) sizes QKV, attention and the output projection;
// MoE expert GEMMs use the expert FFN size; shared experts add
// tp_allgather_shared (sp), shared_fc1_gemm, shared_<activation>,
// shared_fc2_gemm and tp_reducescatter_shared (sp) after moe_unpermute;
// dense-first layers have their own op lists (Workload::dense_layer_*).
// Multi-head latent attention replaces qkv_gemm by q_down_gemm, q_latent_norm,
// q_up_gemm (or one q_gemm without a q latent), kv_down_gemm, kv_latent_norm
// and kv_up_gemm (down projections replicated over TP, as Megatron-core's
// MLASelfAttention builds them), runs attention with d = nope + rope for Q·K
// and v_head_dim for P·V (flops 2·b·s·s·(a/tp)·(d + dv)), and its output
// projection has k = a/tp·dv.
//
// Layer forward, in execution order (no sequence parallelism):
//   layernorm1, qkv_gemm, attention_fwd, out_proj_gemm, tp_allreduce_attn,
//   dropout_residual1, layernorm2, fc1_gemm, gelu|swiglu, fc2_gemm,
//   tp_allreduce_mlp, dropout_residual2
// MoE models (num_experts > 0) replace fc1_gemm, the activation and fc2_gemm
// (and, with sequence parallelism, the MLP's tp_allgather/_reducescatter) by
// Megatron-core's all-to-all token dispatcher: router_gemm,
// router_softmax_topk, moe_permute, ep_alltoall_dispatch (ep > 1),
// tp_allgather_moe_dispatch (tp > 1), moe_sort_chunks (several local experts),
// expert_fc1_gemm, activation, expert_fc2_gemm, moe_unsort_chunks,
// tp_reducescatter_moe_combine (tp > 1), ep_alltoall_combine (ep > 1),
// moe_unpermute. Each rank routes its own sequence-parallel shard of
// tokens/tp tokens and sends every expert capacity = ceil(k·(tokens/tp)/E·cf)
// rows (all-to-all: capacity·E·h per rank); expert GEMMs are grouped: batch =
// E/ep local experts, m = capacity·tp·ep rows each, n and k as the dense
// MLP's on one TP shard (expert TP = tp). MoE with tp > 1 needs sequence
// parallelism (as Megatron-core's MoE layer requires).
// With sequence parallelism the norms and dropouts run on s/tp tokens,
// tp_allgather_attn/_mlp precede the QKV and FC1 GEMMs and
// tp_reducescatter_attn/_mlp replace the all-reduces. With tp = 1 there are no
// TP collectives.
// Backward mirrors it: every GEMM becomes <name>_dgrad and <name>_wgrad (same
// FLOPs each), memory-bound ops move ~2x the bytes, attention_bwd costs 2.5x the
// forward FLOPs (FlashAttention-2: five matmuls against two).
// Context parallelism: each rank holds s/cp tokens (two load-balanced causal
// chunks of s/(2cp)) and attends to all s keys. `attention_fwd`/`_bwd` in the
// layer lists describe the whole attention; Workload::context_ring splits it
// into Transformer Engine's ring (AttnFuncWithCPAndKVP2P): cp steps, step 0
// the local (diagonal, causal) block, each later step half a block against a
// neighbour's K/V (the load-balanced chunks make every step half the work of
// an s/cp x s/cp block: costed as s/cp queries x s/(2cp) keys, unmasked);
// the K/V chunk (b·(s/cp)·2·g/tp·d 16-bit values) moves to the next rank
// while a step computes. Backward runs the same ring carrying K/V and dK/dV.
// The step builder turns it into tasks (strategies/step_builder.cc).
//
// Elementwise kernels (TransformerConfig::elementwise): fused, the default,
// costs each norm, activation and residual as one kernel (Megatron's fused
// kernels; what XLA and torch.compile's Inductor emit). Eager costs what eager
// PyTorch runs for the Llama reference code (torchtitan's model.py and
// RMSNorm): RMSNorm (layernorm1/2, final_norm; kEager with Norm::kRmsNorm) as
// x.float(), pow, mean, + eps, rsqrt, multiply, cast back and times the weight,
// 4·act + 28 B per element in 8 kernels, its autograd backward 8·act + 60 B in
// 13; SwiGLU as silu then a multiply, 5·act B per f element in 2 kernels,
// backward 9·act in 3; and a `rope` op after qkv_gemm (RoPE models) that
// casts Q and K to fp32, multiplies by the complex frequencies and casts back,
// 2·act + 16 B per element in 6 kernels, with rope_bwd the same before the QKV
// backward. Counted from the composite ops' reads and writes (act: the 16-bit
// activation bytes, 4 for the fp32 intermediates); every kernel pays the
// kernel overhead and a host launch. LayerNorm and GeLU are one ATen kernel
// in eager PyTorch too; residual adds cost the same either way; MoE experts
// and latent-attention norms are costed as fused, and the cross-entropy is
// the pass-by-pass one below either way.
//
// FP8 (dtype kFp8, Transformer Engine delayed scaling): the GEMMs of the
// transformer layers (QKV, out-proj, FC1, FC2, experts; fwd, dgrad, wgrad) run
// in FP8; attention (TE's default, fp8_dpa off), norms, elementwise ops and the
// LM head (Megatron's output_layer is not a TE module) in BF16; activations
// stay 16-bit. Each layer adds the casts as memory-bound ops: fp8_cast_fwd
// (cast_transpose of every FP8 GEMM's input: read 2 B, write 1 + 1 B per
// element) and fp8_cast_bwd (the same for every incoming gradient). Weight
// casts (once per step, cached across micro-batches) and amax reductions are
// not modelled.
//
// Attention core (TransformerConfig.attention_backend): flash (default) is the
// one attention_fwd / attention_bwd op above; unfused (Megatron before
// FlashAttention) replaces attention_fwd by attention_scores_gemm (Q·K^T,
// batch b·a/tp), attention_softmax, attention_dropout (memory-bound over the
// b·(a/tp)·s_q·s_kv scores) and attention_context_gemm (P·V), costed as GEMMs,
// and attention_bwd by attention_dprobs_gemm, attention_dv_gemm,
// attention_dropout_bwd, attention_softmax_bwd, attention_dq_gemm and
// attention_dk_gemm (same FLOPs as flash's forward, 2x in backward; no causal
// skipping). Unfused rejects context parallelism, as Megatron does.
//
// FLOP conventions: GEMM flops = 2·batch·m·n·k; attention forward =
// 4·b·(s/cp)·s·(a·d)/tp, counted unmasked like Megatron (the kernel model
// knows that a causal kernel skips half, and a sliding-window layer all but
// its window: Op::window). Memory-bound ops carry 0 flops: their
// arithmetic is not model FLOPs and their time is bandwidth-bound.
//
// Example:
//   models::ShardSpec shard{.tensor_parallel = 8, .sequence_parallel = true,
//                           .micro_batch_size = 1};
//   absl::StatusOr<models::Workload> w = models::BuildWorkload(config, shard);
//   if (!w.ok()) return w.status();   // e.g. tp does not divide the heads
//   for (const models::Op& op : w->layer_forward) { ... }
#ifndef CLUSTERSIM_MODELS_WORKLOAD_H_
#define CLUSTERSIM_MODELS_WORKLOAD_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/dtype.h"
#include "models/fp8_recipe.h"
#include "models/transformer_config.h"
#include "sim/units.h"

namespace clustersim::models {

enum class Recompute { kNone, kSelective, kFull };
// How full recompute picks the layers it replays (Megatron-Core
// --recompute-method; megatron/core/transformer/transformer_block.py,
// TransformerBlock._checkpointed_forward, per model chunk: a pipeline stage,
// or one virtual-pipeline chunk of it). kUniform replays every layer and
// checkpoints the input of each group of recompute_num_layers consecutive
// layers; kBlock replays only the first recompute_num_layers layers of each
// chunk, whose inputs are checkpointed, and the others keep all their
// activations and replay nothing.
enum class RecomputeMethod { kUniform, kBlock };
enum class OpKind { kGemm, kAttention, kMemoryBound, kCollective };
enum class CommGroup { kTensor, kContext, kExpert, kData, kPipeline };
enum class CommKind { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kSendRecv };
// The part of a transformer layer an op belongs to, as Megatron-Core's CUDA
// graph scopes cut it (models/cuda_graph.h): kNone outside every layer (the
// embedding, the head, per-step ops), kLayer inside a layer but in no named
// scope (the FP8 cast of the backward, a Mamba mixer).
enum class GraphScope : uint8_t { kNone, kLayer, kAttn, kMlp, kMoeRouter, kMoePreprocess, kMoe };

struct Op {
  std::string name;  // "qkv_gemm", "fc1_gemm_dgrad", "attention_fwd", "layernorm1", ...
  OpKind kind = OpKind::kMemoryBound;
  int64_t m = 0, n = 0, k = 0, batch = 1;  // GEMM: batch x (m x k)·(k x n)
  // GEMM with batch > 1: 0 runs the batch as one batched kernel; s > 0 runs one
  // kernel per entry, entry i on stream i mod s (Transformer Engine's grouped
  // GEMM for the experts: models/kernel_model.h).
  int streams = 0;
  // attention: batch = micro_batch * local heads, m = seq_q, n = seq_kv, k = head_dim
  bool causal = false;
  // Causal attention whose window_share of the layers it stands for attend to
  // at most `window` keys per query (TransformerConfig::sliding_window); the
  // kernel model costs the layers' mean work. flops stay unmasked.
  int64_t window = 0;
  double window_share = 0;
  sim::Flops flops;  // arithmetic of this op (0 for collectives and memory-bound ops)
  sim::Bytes bytes;  // memory traffic (reads + writes) of this op
  // Kernels the op launches: 1, or the composite's count for an eager
  // elementwise op (TransformerConfig::elementwise); each pays the kernel
  // overhead and a host launch.
  int kernels = 1;
  // Host launches the op costs where it runs eager: 0, one per kernel; > 0,
  // that many (an op whose kernels one C++ loop launches inside each Python
  // call, e.g. Transformer Engine's split_quantize, pays one per call).
  int host_launches = 0;
  int HostLaunches() const { return host_launches > 0 ? host_launches : kernels; }
  Dtype dtype = Dtype::kBf16;
  bool recompute = false;  // re-executed forward work: hardware FLOPs, not model FLOPs
  // > 0 on a GEMM op: a kernel of Triton tl.dot tiles with a sourced fraction of
  // the dtype's dense peak (the SSD scan kernels, models/mamba_scan.h),
  // costed as max(flops/(peak·tile_efficiency), bytes/(bandwidth·fraction))
  // instead of by the cuBLAS-like GEMM model.
  double tile_efficiency = 0;
  // > 0 on a GEMM op costed by the cuBLAS-like model: its compute and memory
  // times combine as (c^p + m^p)^(1/p) with p this value, a kernel that
  // cannot fully overlap its tensor-core work with its HBM traffic where the
  // two are close; 0 takes max(c, m) (models/kernel_model.h).
  double roofline_overlap = 0;
  CommGroup group = CommGroup::kTensor;  // collectives only
  CommKind comm = CommKind::kAllReduce;  // collectives only
  sim::Bytes comm_bytes;  // collectives: nccl-tests "size" (all-reduce: bytes per rank
                          // buffer; all-gather/reduce-scatter: the full gathered size;
                          // all-to-all: the bytes each rank sends, its own share included)
  // Tensor-parallel all-gathers: the gathered tensor is the input of the next
  // op (a GEMM's A operand), as for the sequence-parallel gathers before QKV,
  // FC1, the head and the row-parallel dgrads; false where it waits for a
  // later op (the input re-gather that wgrad consumes).
  bool gathers_next_input = false;
  // The host blocks until the GPU has drained its stream before it launches
  // this op (a synchronising host-to-device copy in front of it), so nothing
  // after it is queued ahead: the step builder launches it and every later op
  // of the pass one by one (strategies/step_builder_pipeline.cc).
  bool host_sync_before = false;
  GraphScope graph_scope = GraphScope::kNone;

  // A GEMM whose operands Transformer Engine quantizes: to FP8 (whose amaxes
  // the delayed-scaling recipe reduces) or, under NVFP4, to FP4.
  bool IsFp8Gemm() const {
    return kind == OpKind::kGemm && IsQuantizedGemmDtype(dtype);
  }
};

// Megatron-Core's selective recompute modules (megatron/core/transformer/
// transformer_config.py, recompute_modules): "core_attn" replays the attention
// core, "mla_up_proj" the MLA query and key/value up projections (and RoPE,
// not costed: the forward leaves it out too), "moe_act" the routed experts'
// activation, "layernorm" the input and pre-MLP norms, "mlp" the dense MLP
// (fc1, activation, fc2 and their tensor-parallel collectives) of dense
// layers only. Scenario: training.recompute_modules.
struct RecomputeModules {
  bool core_attn = true;
  bool mla_up_proj = false;
  bool moe_act = false;
  bool layernorm = false;
  bool mlp = false;
};

struct ShardSpec {
  int tensor_parallel = 1;
  bool sequence_parallel = false;  // no effect when tensor_parallel == 1
  int context_parallel = 1;
  int micro_batch_size = 1;
  Dtype dtype = Dtype::kBf16;  // GEMM inputs; activations are 16-bit for fp8/int8
  Recompute recompute = Recompute::kNone;
  // With kSelective, also replay the dense MLP's input projection (fc1: up and
  // gate) and its activation, with the norm and gather before them, just
  // before the MLP's backward; their activations are not kept. That is what a
  // JAX remat policy which saves every projection output but the MLP's input
  // one recomputes (MaxText save_dot_except_mlpwi, save_dot_except_mlp; Paxml
  // SAVE_QKV_OUT_PROJ): no backward op reads the down projection's output, so
  // XLA drops its replay. Scenario: training.recompute_granularity
  // "selective+mlp_up".
  bool recompute_mlp_up = false;
  // Under FP8 GEMMs, Transformer Engine's scaling recipe: what each input and
  // gradient cast moves per element (models/fp8_recipe.h). Scenario:
  // training.fp8_recipe.
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  // With kSelective, PyTorch's per-op selective checkpointing under
  // torchtitan's policy (selective_ac_option "op": _apply_ac_to_transformer_block
  // in parallelize_llama.py, the same from February 2024 to mid 2025): the
  // outputs of aten.mm, SDPA and the TP reduce-scatter are saved except every
  // second aten.mm; everything else in the block is recomputed when its
  // backward begins (non-reentrant checkpoint, stopping once the last saved
  // tensor is back). A Llama block's mms run wq, wk, wv, wo, w1, w3, w2, so
  // wk, wo and w3 are replayed, with the norms, RoPE, the residual add, the
  // SwiGLU product and the sequence-parallel all-gathers. Float8 linears run
  // aten._scaled_mm, which the list does not save, so under fp8 every linear
  // but w2 (whose output no backward reads) is replayed with its input cast.
  // The attention core is not. Scenario: training.recompute_granularity
  // "selective+op".
  bool recompute_op_sac = false;
  // With kSelective, Megatron-Core's recompute modules (--recompute-modules;
  // transformer_config.py recompute_modules): which parts of a layer's
  // forward are replayed just before their backward. Setting the list
  // replaces Megatron's default, the attention core alone.
  RecomputeModules modules;
  // With kFull, Megatron-Core's --recompute-method and --recompute-num-layers
  // (RecomputeMethod). The workload's lists are the same for every method:
  // layer_backward replays the forward, and a layer that block recompute
  // leaves out runs it without the ops marked recompute (the step builder
  // picks by the layer's place in its chunk). The memory model reads both.
  RecomputeMethod recompute_method = RecomputeMethod::kUniform;
  int recompute_num_layers = 1;
  int expert_parallel = 1;  // MoE: experts split over this many ranks (must divide num_experts)
  // MoE: ranks one routed expert is tensor-split over; 0 = tensor_parallel,
  // 1 = not split (parallel folding: strategies/expert_parallel.h).
  int expert_tensor_parallel = 0;
  // Bytes per weight element read and written after each micro-batch's
  // backward to add the 16-bit weight gradients into fp32 gradient buffers
  // (DeepSpeed's BF16_Optimizer.update_hp_grads: grad.to(fp32) reads 2 and
  // writes 4, add_ reads 4 + 4 and writes 4: 18). Appended to each backward
  // list as "grad_accumulate_fp32"; 0: none.
  double grad_accumulate_bytes = 0;
  // Bytes per weight element read and written after each micro-batch's
  // backward by FSDP1's FlatParameter gradient handling
  // (FlatParameterGradBytes). Appended to each backward list as
  // "fsdp_flat_grad"; 0: none.
  double flat_grad_bytes = 0;
  // Bytes per weight element read and written by FSDP2's per-parameter
  // sharding (fully_shard) on the compute stream: the all-gather copy-out
  // (PerParameterGatherCopyBytes) at the start of each micro-batch's forward
  // and again of its backward, which gathers anew, as "fsdp_gather_copy_out";
  // the reduce-scatter copy-in (PerParameterGradCopyBytes) at the end of each
  // backward list, as "fsdp_grad_copy_in". 0: none.
  // Routed experts' weights ("expert_" GEMMs) take part only when their
  // expert-data-parallel group shards them (more than one rank).
  double gather_copy_bytes = 0;
  double grad_copy_bytes = 0;
  bool copy_experts = false;
  // MoE: Megatron-Core's moe_pad_expert_input_to_capacity (with a capacity
  // factor): every expert receives exactly its capacity, so the all-to-all
  // dispatcher knows its splits without copying token counts to the host and
  // the forward has no host sync (token_dispatcher.py, drop_and_pad).
  bool moe_pad_to_capacity = false;
  int ExpertTp() const {
    return expert_tensor_parallel > 0 ? expert_tensor_parallel : tensor_parallel;
  }
};

// Ring attention of one layer and micro-batch under context parallelism.
struct ContextRing {
  int steps = 1;  // cp
  Op forward_diagonal, forward_step;    // attention kernels (step 0, steps 1..cp-1)
  Op backward_diagonal, backward_step;
  Op forward_exchange;   // K/V chunk to the next ring rank (send/recv, CommGroup::kContext)
  Op backward_exchange;  // K/V and the accumulated dK/dV chunk
  Op backward_final_exchange;  // the last dK/dV hop back to the chunk's owner
};

struct Workload {
  std::vector<Op> embedding_forward, embedding_backward;  // word (+position) embedding, vocab-parallel
  std::vector<Op> layer_forward;   // ONE transformer layer, one micro-batch, one TP shard
  std::vector<Op> layer_backward;  // with kFull it starts with the recomputed forward (ops
                                   // marked recompute=true, TP collectives included);
                                   // kSelective recomputes the attention core's forward
                                   // ops just before their backward (and with
                                   // recompute_mlp_up the MLP's fc1 and activation)
  std::vector<Op> head_forward, head_backward;  // final norm, LM head GEMM, vocab-parallel CE
  // Multi-token prediction (TransformerConfig.mtp_num_layers), after the head
  // on the last pipeline stage: per module its norms and input projection,
  // one transformer layer and the shared head again. Empty without MTP.
  std::vector<Op> mtp_forward, mtp_backward;
  // context_parallel > 1: how attention_fwd / attention_bwd run as a ring.
  std::optional<ContextRing> context_ring;
  // MoE models with dense layers (dense-first or interleaved,
  // TransformerConfig::IsMoeLayer): dense_layers[l] is true for each layer l
  // that runs these lists (a dense MLP of ffn_hidden_size); the others run
  // layer_forward / layer_backward. Empty when every layer runs those.
  std::vector<bool> dense_layers;
  std::vector<Op> dense_layer_forward, dense_layer_backward;
  // Hybrid models (TransformerConfig::hybrid_pattern): each layer's kind and
  // the lists of each kind present, indexed by HybridIndex; layer_forward and
  // layer_backward stay empty. Empty for other models.
  std::vector<LayerKind> hybrid_layers;
  std::array<std::vector<Op>, kHybridKinds> hybrid_forward, hybrid_backward;
  bool IsDenseLayer(int layer) const {
    return layer >= 0 && layer < static_cast<int>(dense_layers.size()) && dense_layers[layer];
  }
  // Which op lists `layer` runs: 0 layer_forward/backward, 1 the dense
  // layers', 2 + HybridIndex(kind) a hybrid kind's (kOpLists in all).
  static constexpr int kOpLists = 2 + kHybridKinds;
  int OpListIndex(int layer) const {
    if (!hybrid_layers.empty()) return 2 + HybridIndex(hybrid_layers[layer]);
    return IsDenseLayer(layer) ? 1 : 0;
  }
  const std::vector<Op>& ForwardList(int index) const {
    if (index >= 2) return hybrid_forward[index - 2];
    return index == 1 ? dense_layer_forward : layer_forward;
  }
  const std::vector<Op>& BackwardList(int index) const {
    if (index >= 2) return hybrid_backward[index - 2];
    return index == 1 ? dense_layer_backward : layer_backward;
  }
  // The most ops one layer's forward and backward lists hold together.
  size_t LargestLayerOps() const {
    size_t most = 0;
    for (int i = 0; i < kOpLists; ++i) {
      most = std::max(most, ForwardList(i).size() + BackwardList(i).size());
    }
    return most;
  }
  const std::vector<Op>& LayerForwardOps(int layer) const {
    return ForwardList(OpListIndex(layer));
  }
  const std::vector<Op>& LayerBackwardOps(int layer) const {
    return BackwardList(OpListIndex(layer));
  }
};

// InvalidArgument naming the field when the shard does not fit the model:
// sizes < 1, tensor_parallel not dividing heads / query groups / ffn / vocab,
// context_parallel not dividing the sequence into 2·cp chunks, sequence
// parallel with micro_batch·s/cp not divisible by tp, expert_parallel > 1 on
// a dense model or not dividing num_experts, MoE with tp > 1 and no sequence
// parallelism.
absl::Status ValidateShard(const TransformerConfig& c, const ShardSpec& s);

// Memory traffic per parameter, in bytes, of PyTorch FSDP1's FlatParameter
// gradient handling after every micro-batch's backward, for 16-bit
// parameters whose gradients are reduce-scattered in `reduce_bytes` (2 or 4)
// bytes per element. The module's weights are views into the unit's flat
// parameter, so autograd's split backward concatenates their gradients into
// the flat gradient (reads 2, writes 2); a reduce dtype other than the
// parameter's casts it whole (reads 2, writes reduce_bytes); FSDP's default
// reduce-scatter hook pre-divides the whole unsharded gradient by the
// gradient_predivide_factor, which exceeds 1 on every group of two or more
// ranks (reads and writes reduce_bytes). torch/distributed/fsdp/
// _runtime_utils.py _post_backward_hook and algorithms/_comm_hooks/
// default_hooks.py reduce_scatter_hook (pytorch/pytorch 00ae0bc91a). The
// sharded remainder (post-divide, accumulation, cast back) is 1/dp of this and
// left out. DEFAULT mixed precision (fp32 reduce): 18; PURE (bf16): 8.
double FlatParameterGradBytes(int reduce_bytes);

// FSDP2 (torch.distributed.fsdp fully_shard, torch/distributed/fsdp/
// _fully_shard/_fsdp_collectives.py): after each all-gather,
// foreach_all_gather_copy_out splits the gathered buffer into the unsharded
// parameters (split_with_sizes_copy on the current stream): one read and one
// write of each gathered parameter, 2 x param_bytes per weight.
double PerParameterGatherCopyBytes(int param_bytes);
// Before each reduce-scatter, foreach_reduce copies the unsharded 16-bit
// gradients into the reduce-scatter input in reduce_dtype (_chunk_cat, which
// widens bf16 to fp32 as it copies, on the current stream): 2 + reduce_bytes
// per weight.
double PerParameterGradCopyBytes(int reduce_bytes);

// REQUIRES nothing: validates `c` and `s` first.
absl::StatusOr<Workload> BuildWorkload(const TransformerConfig& c, const ShardSpec& s);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_WORKLOAD_H_
