// File: strategies/serving_moe.h
//
// The serving-iteration ops of modern MoE and attention architectures
// (models/transformer_config.h), for strategies/serving_iteration.cc: latent
// attention, the MoE MLP with its expert FFN size and shared experts, and
// expert parallelism. One GPU's ops for one layer and one iteration.
//
// Multi-head latent attention (DeepSeek-V2 §2.1, arXiv 2405.04434), as vLLM's
// MLA backend and SGLang run it (heads a' = a/tp, or a under expert
// parallelism; d = nope + rope, v = v_head_dim, c = kv_lora_rank):
//   q_down_gemm, q_latent_norm, q_up_gemm   rows x h -> q_lora -> a'·d (without
//                                           a q latent: one q_gemm h -> a'·d)
//   kv_down_gemm, kv_latent_norm            rows x h -> c + rope (replicated on
//                                           every TP rank, as vLLM builds it)
//   kv_cache_write                          rows x (c + rope) latent values: the
//                                           cache holds c + rope values per token
//                                           and layer, shared by all heads
//   attention_prefill_kv_up                 prefill, non-absorbed: the chunks'
//                                           latents (context included) up to K
//                                           and V, (Σ context + new) x c -> a'·(nope + v)
//   attention_prefill                       flops 2·a'·(d + v)·Σ causal pairs
//   attention_decode_q_absorb               decode, absorbed (W_UK folded into
//                                           the query): a' GEMMs seqs x nope -> c
//   attention_decode                        MQA over the latent cache: reads
//                                           Σ (context + 1) x (c + rope) x kv bytes
//                                           once for all heads; flops
//                                           2·a'·(2c + rope) per cached token;
//                                           costed as attention (compute or
//                                           memory, whichever is slower: FlashMLA
//                                           decode runs on tensor cores)
//   attention_decode_v_absorb               a' GEMMs seqs x c -> v (W_UV)
// then o_proj_gemm k = a'·v. The absorbed decode reads c + rope values per
// cached token instead of 2·a·(nope + v)/tp: for DeepSeek-V3 576 against
// 2 x 128 x 128 / 8 = 4096 values at tp 8.
//
// MoE MLP (vLLM's fused MoE): router_gemm (16-bit), the routed experts as one
// grouped GEMM over T·k rows with the expert FFN size, reading the weights of
// the D = ExpectedExpertsTouched(E, k, T) experts the batch touches and
// computing each expert's rows in whole 128-row tiles (M = the expected padded
// rows, strategies/serving_moe_routing.h; the model FLOPs stay those of the
// T·k rows), then the shared experts (shared_gate_up_gemm, shared_activation,
// shared_down_gemm over all T rows). Dense-first layers (DeepSeek's first 3)
// run the dense MLP.
//
// Around the grouped GEMMs run the fused MoE's own memory-bound kernels, as
// TensorRT-LLM's CUTLASS MoE runs them (CutlassFusedMoE's max-throughput path:
// "routing(topK, etc.) + scatter + gemm1 + swiglu + gemm2 + finalizeMoeRoute",
// tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py of the v1.0
// releases; the TensorRT engine's MoE plugin runs the same CUTLASS runner):
//   moe_routing    top-k over the router logits (rows x E FP32) and the
//                  expert-sorted order of the rows x k picks
//   moe_permute    the T rows copied into expert order, T·k rows of h (the
//                  "scatter", expandInputRowsKernel)
//   moe_finalize   each token's k expert outputs read back, weighted and
//                  summed: T·k rows in, T rows out (finalizeMoeRoutingKernel;
//                  vLLM's moe_sum)
// vLLM's Triton fused MoE gathers the rows inside its first GEMM instead of a
// separate permute pass (it sorts them in moe_align_block_size); the model
// keeps the pass for every framework, a copy of T·k rows that is small beside
// the expert GEMMs.
//
// Expert parallelism (inference.expert_parallel_size = ep > 1; vLLM/SGLang
// data-parallel attention + EP, e.g. SGLang --enable-dp-attention --ep-size):
// ep must equal tensor_parallel_size; the replica's ep GPUs each run
// attention, the shared experts, the dense MLPs, the embedding and the LM head
// with whole weights on their own share of the batch, and each holds E/ep
// experts. Decode steps are balanced (T/ep rows, 1/ep of the sequences and
// their KV cache: TensorRT-LLM and SGLang give each new request to the rank
// with the fewest); a prompt runs whole on the rank it was given, so when the
// scheduler places prompts (IterationTotals::rank_tokens > 0) the attention
// and other non-expert ops run the busiest rank's rows and prompts, which
// every rank waits for at the all-to-alls. The
// routed rows are not balanced: the layer waits for the busiest GPU, whose
// expected R rows (ExpectedMaxRankRows, above T·k/ep) size its ops. Per MoE
// layer:
//   moe_routing             its own rows' top-k (above)
//   ep_alltoall_dispatch    R rows of h 16-bit values to the busiest GPU (each
//                           GPU sends (T/ep)·k on average, its own included),
//                           or the busiest rank's own rows x k when it sends
//                           more than that (a rank holding a whole prompt)
//   moe_permute             its R received rows into expert order
//   expert_gate_up_gemm,    over its R rows in whole tiles, reading the weights
//   activation,             of the experts of its E/ep that they touch
//   expert_down_gemm
//   moe_finalize            R expert output rows in, its own T/ep rows out
//   ep_alltoall_combine     the expert outputs back (same bytes)
// both costed by the topology's NetworkModel over the replica's GPUs. There is
// no tensor-parallel all-reduce (attention is not sharded).
//
// A block-scaled FP8 checkpoint (model.fp8_weight_block > 0: DeepSeek-V3/R1's
// 128 x 128 weight blocks, activations scaled per 1 x 128 group) on a GPU
// without block-scaled tensor cores (Hopper, Ada) quantizes the input of each
// such GEMM in a kernel of its own, `<gemm>_act_quant`: it reads the rows x k
// 16-bit activations and writes them in FP8 with one FP32 scale per group.
// TensorRT-LLM's PyTorch runtime does so on sm 89 and 90 for every
// block-scaled Linear (torch.ops.trtllm.fp8_quantize_1x128 before
// fp8_block_scaling_gemm: FP8BlockScalesLinearMethod.apply in
// tensorrt_llm/_torch/modules/linear.py @ 00bbf71e) and for MLA's absorbed
// per-head products (fp8_batched_quantize_1x128_permute102 before
// fp8_block_scaling_bmm_out, tensorrt_llm/_torch/modules/attention.py @
// c6d3bb2a); DeepGEMM's Hopper kernels take the activations already quantized
// ("For transposition or other FP8 casting operations, please implement or
// fuse them into prior kernels", deepseek-ai/DeepGEMM README @ 55ab91f7).
// The latent attention's q and kv down-projections share one input and one
// fused Linear (kv_a_proj_with_mqa), so one quantization; the routed experts'
// fused MoE is not given one (no source read here states where it quantizes).
//
// Example:
//   ServingOpBuilder b(replica, gemm_dtype, attention_dtype);
//   std::vector<models::Op> ops;
//   b.LatentAttention(totals, &ops);   // MLA projections and attention
//   b.MoeMlp(totals, &ops);            // routed + shared experts, EP all-to-alls
#ifndef CLUSTERSIM_STRATEGIES_SERVING_MOE_H_
#define CLUSTERSIM_STRATEGIES_SERVING_MOE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "models/dtype.h"
#include "models/gpu_catalog.h"
#include "models/inference_memory.h"
#include "models/workload.h"

namespace clustersim::strategies {

struct IterationTotals;

// A memory-bound op of `bytes`.
models::Op ServingMemoryOp(std::string name, int64_t bytes);

// A collective of `bytes` (the nccl-tests size): send/recv over the pipeline,
// all-to-all over the expert group, others over the tensor group.
models::Op ServingCollective(std::string name, models::CommKind kind, int64_t bytes);

// rows x k activations times `matrices` k x n weights of `weight_bits` per
// element (several for the experts an MoE layer touches); 16-bit activations
// in and out. `batch` independent products (per-head absorbed GEMMs).
models::Op ServingGemm(std::string name, int64_t rows, int64_t n, int64_t k, models::Dtype dtype,
                       double weight_bits, double matrices = 1, int64_t batch = 1);

// An attention kernel over `heads` heads: m query rows against n key rows of
// head dimension k, with the given FLOPs and bytes (costed compute- or
// memory-bound, whichever is slower).
models::Op ServingAttentionOp(std::string name, int64_t heads, int64_t m, int64_t n, int64_t k,
                              models::Dtype dtype, double flops, int64_t bytes);

// The share of `x` (sequences, tokens) one of `ep` data-parallel attention
// ranks runs: ceil(x / ep).
inline int64_t ShareOf(int64_t x, int64_t ep) { return (x + ep - 1) / ep; }

// inference.expert_parallel_size checks: ep >= 1; ep > 1 needs an MoE model,
// ep = tensor_parallel_size and ep dividing the expert count.
absl::Status ValidateServingExpertParallel(const models::ReplicaModel& replica);

class ServingOpBuilder {
 public:
  // `replica` must outlive the builder. `quantize_activations`: the GEMMs of
  // the replica's block-scaled FP8 checkpoint quantize their inputs in a
  // kernel of their own (see the file comment; BlockFp8ActivationQuant).
  ServingOpBuilder(const models::ReplicaModel& replica, models::Dtype gemm_dtype,
                   models::Dtype attention_dtype, bool quantize_activations = false);

  // Expert parallelism in effect (ep > 1): attention data-parallel.
  bool data_parallel_attention() const { return ep_ > 1; }
  // Rows of the non-expert ops on one GPU: T, or ceil(T/ep) under EP.
  int64_t Rows(int64_t tokens) const;
  // The non-expert rows of the iteration `t` on the busiest GPU: Rows(T), or
  // under EP the busiest attention rank's tokens when the scheduler placed
  // each prompt on one rank (IterationTotals::rank_tokens).
  int64_t RankRows(const IterationTotals& t) const;
  // Heads on one GPU: a/tp, or a under EP.
  int64_t Heads() const;
  // Tensor-parallel split of the non-expert weights: tp, or 1 under EP.
  int64_t AttentionTp() const { return ep_ > 1 ? 1 : tp_; }

  // A GEMM with weights of the replica's format.
  models::Op Gemm(std::string name, int64_t rows, int64_t n, int64_t k, double matrices = 1,
                  int64_t batch = 1) const;

  // With quantize_activations, appends the quantization of a block-scaled
  // FP8 GEMM's rows x k input to `ops` (`name`: "<gemm>_act_quant"); else
  // nothing.
  void ActivationQuant(std::string name, int64_t rows, int64_t k,
                       std::vector<models::Op>* ops) const;

  // A latent-attention projection (the o projection included): 16-bit in an
  // MLA MoE model's NVFP4 checkpoint, which quantises only the FFNs
  // (nvidia/DeepSeek-R1-FP4: "The MoE layers inside this checkpoint have been
  // quantized into FP4", TensorRT-LLM tech blog 3; tech blog 1's precision
  // table: attention modules bf16, dense FFN and MoE layers nvfp4) and under
  // fp8-mixed (Meta's Llama 3 FP8 checkpoints keep attention BF16,
  // models/quantization.h); else Gemm (other models' checkpoints: no source
  // states which layers they keep). Under fp8-mixed it also serves the
  // qkv and o projections of standard attention.
  models::Op AttentionGemm(std::string name, int64_t rows, int64_t n, int64_t k,
                           int64_t batch = 1) const;
  // MLA: projections, cache write and the prefill/decode attention (see the file comment).
  void LatentAttention(const IterationTotals& t, std::vector<models::Op>* ops) const;
  // Router, routed experts (EP all-to-alls when ep > 1) and shared experts.
  void MoeMlp(const IterationTotals& t, std::vector<models::Op>* ops) const;
  // The fused MoE's top-k routing kernel over `rows` tokens (see the file comment).
  models::Op MoeRouting(int64_t rows) const;
  // The model FLOPs of one of this GPU's ops for the iteration `t`: a grouped
  // expert GEMM's `flops` are what its kernel runs (whole tiles, the busiest
  // GPU's rows), its model FLOPs those of the average GPU's T·k/ep routed rows;
  // any other op's `flops`.
  double ModelFlops(const models::Op& op, const IterationTotals& t) const;

 private:
  // The routed rows of the busiest GPU's grouped expert GEMM, which the layer
  // waits for (every GPU's without EP), and its expected rows padded to whole
  // kGroupedGemmTileRows and kGroupedGemmSmallTileRows tiles per expert
  // (strategies/serving_moe_routing.h).
  struct ExpertRows {
    double busiest = 0, padded = 0, small_padded = 0;
  };
  models::Op GroupedGemm(std::string name, const ExpertRows& r, int64_t n, int64_t k,
                         double matrices) const;

  const models::ReplicaModel* replica_;
  models::Dtype gemm_dtype_, attention_dtype_;
  int64_t tp_, ep_;
  bool quantize_activations_;
};

// Whether the GEMMs of `replica` on `gpu` quantize their inputs in kernels of
// their own: a block-scaled FP8 checkpoint (model.fp8_weight_block > 0) run
// in FP8 on a GPU without FP4 tensor cores, whose FP8 tensor cores take no
// per-group scales (Hopper, Ada; see ServingOpBuilder's file comment).
bool BlockFp8ActivationQuant(const models::ReplicaModel& replica, const models::GpuSpec& gpu);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_MOE_H_
