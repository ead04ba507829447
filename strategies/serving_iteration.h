// File: strategies/serving_iteration.h
//
// What one iteration (one forward step) of a serving replica costs: the ops of
// every transformer layer for that iteration's batch shape, each costed by
// models::KernelModel, plus the tensor-parallel all-reduces (two per layer)
// and, with pipeline parallelism, the activation sends between stages, costed
// by the topology's NetworkModel over the replica's real GPUs and links.
//
// One layer on one tensor-parallel shard, in execution order (vLLM's Llama):
//   input_norm          memory-bound: T·h 16-bit values in and out
//   qkv_gemm            m = T, n = (a + 2g)·d / tp, k = h
//   kv_cache_write      memory-bound: T new K and V rows into the paged cache
//   attention_prefill   FlashAttention over the prefill chunks (when any):
//                       flops = 4·(a/tp)·d·Σ new·(context + (new + 1)/2) (the
//                       causal query-key pairs, counted exactly), reads Q and
//                       the chunks' K/V (context included), writes O
//   attention_decode    paged attention of the decoding sequences (when any):
//                       reads every decoding sequence's whole KV once
//                       (Σ (context + new) tokens x 2 x g/tp x d x kv bytes;
//                       an FP8 cache at 4/3 of a byte, DecodeKvReadBytes) and
//                       does 4·(a/tp)·d FLOPs per causal query-key pair (one
//                       query per step, 1 + k when verifying k drafted tokens)
//                       on the CUDA cores: the slower of the two
//                       (models/data/fitted_constants.textproto)
//   o_proj_gemm         m = T, n = h, k = a·d / tp
//   tp_allreduce_attn   T·h 16-bit values (tp > 1)
//   post_norm           memory-bound: residual add and RMSNorm
//   gate_up_gemm        m = T, n = 2f/tp (gated) or f/tp, k = h
//   activation          memory-bound
//   down_gemm           m = T, n = h, k = f/tp
// A mixture-of-experts layer (model.num_experts E > 0, top-k routing; vLLM's
// fused MoE with every expert sharded over TP) replaces the three MLP ops by
//   router_gemm         m = T, n = E, k = h (16-bit weights)
//   moe_routing         memory-bound: top-k over the logits, expert order
//   moe_permute         memory-bound: T rows copied into T·k expert-ordered rows
//   expert_gate_up_gemm one grouped GEMM over the T·k routed rows, each
//                       expert's in whole 128-row tiles (m = their expected
//                       padded rows, strategies/serving_moe_routing.h), reading
//                       the weights of the D experts the batch touches
//   activation          over the T·k rows
//   expert_down_gemm    likewise, n = h, k = f/tp
//   moe_finalize        memory-bound: the T·k outputs weighted and summed into T
// where D = ExpectedExpertsTouched(E, k, T) = E·(1 − (1 − k/E)^T): each token
// picks k of E experts and, under uniform routing, misses a given expert with
// probability 1 − k/E. A batch-1 decode step of Mixtral 8x7B (E 8, k 2) reads 2
// experts per layer, a batch of 8 reads 7.2, a batch of 32 all 8 (real routers
// are skewed, so D is an upper bound and decode is pessimistic at small batch).
//   tp_allreduce_mlp    T·h 16-bit values (tp > 1)
// T = new tokens of the iteration (prefill chunks + one per decoding sequence).
// Once per iteration: embedding (memory-bound), final_norm, lm_head_gemm over
// the S rows that sample a token (m = S, n = V/tp, k = h, 16-bit weights; a
// decode step samples each of its query rows), logits_allgather (S·V 16-bit
// values, tp > 1) and sampling (memory-bound).
//
// A block-scaled FP8 checkpoint on Hopper or Ada also quantizes each such
// GEMM's input in a kernel of its own, `<gemm>_act_quant` before the GEMM
// (strategies/serving_moe.h).
//
// Weight bytes of every GEMM follow the weight format (models/quantization.h:
// 4-bit weights stream 4.16 bits per weight), so decode, which is bound by
// reading the weights, speeds up with quantisation; the GEMM runs in the
// format's compute dtype. DeepSeek's NVFP4 checkpoint (an MLA MoE model)
// quantises only its FFNs: its attention projections stay 16-bit
// (ServingOpBuilder::AttentionGemm, strategies/serving_moe.h). Meta's
// fp8-mixed checkpoints (models/quantization.h) run qkv_gemm and o_proj_gemm
// as 16-bit BF16 GEMMs in every layer, and gate_up_gemm and down_gemm as FP8
// GEMMs in layers 1..L-2 and BF16 ones in layers 0 and L-1: the iteration
// costs L - 2 layers of the one kind and 2 of the other. A decode step of
// Llama 3 8B in BF16 on one H100 streams ~15 GB: ~5.2 ms at 86% of 3.35
// TB/s, plus kernel overheads.
//
// Iteration time = L x (layer ops + all-reduces) + once-per-iteration ops +
// (pp - 1) stage-to-stage sends + the host's per-iteration time
// (ServingModelSpec.host_per_iteration, models/data/fitted_constants.textproto),
// which the GPUs wait for; stages run one after another for one batch
// (no overlap between batches across stages, as one vLLM virtual engine).
// Nothing overlaps inside an iteration (vLLM runs them in one stream).
//
// The GEMM and collective part depends only on (T, S) and, under data-parallel
// attention, the busiest rank's rows: it is memoised.
//
// Explicit head dimensions, latent attention, expert FFN sizes, shared
// experts, dense-first layers and expert parallelism
// (inference.expert_parallel_size): strategies/serving_moe.h. Iteration time
// then sums (L - dense) MoE layers and the dense-first layers.
//
// Example:
//   absl::StatusOr<ServingCostModel> m = ServingCostModel::Create(spec, kernels, network);
//   IterationTotals t = Summarise({{.new_tokens = 512, .context = 0}, {.new_tokens = 1, .context =
//   900}}); IterationCost c = m->Cost(t);   // c.time
#ifndef CLUSTERSIM_STRATEGIES_SERVING_ITERATION_H_
#define CLUSTERSIM_STRATEGIES_SERVING_ITERATION_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/inference_memory.h"
#include "models/kernel_model.h"
#include "models/quantization.h"
#include "models/transformer_config.h"
#include "models/workload.h"
#include "sim/units.h"
#include "topology/network_model.h"

namespace clustersim::strategies {

class ServingOpBuilder;

// One sequence's share of an iteration.
struct SequenceWork {
  int64_t new_tokens = 1;  // a prefill chunk's length, or 1 for a decode step
  int64_t context = 0;     // tokens already in the KV cache before this step
  bool decode = false;     // a decode step (else a prefill chunk)
  bool samples = true;     // produces a token: decode, or a prompt's last chunk
};

// What an iteration's cost depends on.
struct IterationTotals {
  int64_t tokens = 0;             // T: new tokens (GEMM rows)
  int64_t sampled = 0;            // S: rows of the LM head
  int64_t prefill_tokens = 0;     // new tokens of prefill chunks
  int64_t prefill_kv_tokens = 0;  // Σ (context + new) over prefill chunks
  double prefill_pairs = 0;       // Σ new·(context + (new + 1)/2): causal query-key pairs
  int64_t decode_seqs = 0;
  int64_t prefill_seqs = 0;       // sequences with a prefill chunk
  int64_t decode_kv_tokens = 0;  // Σ (context + new) over decode steps
  // Σ new over decode steps: one query each, or 1 + k when verifying k drafted
  // tokens (strategies/serving_speculative.h), and Σ new·(context + (new + 1)/2),
  // their causal query-key pairs (context + 1 for a plain decode step).
  int64_t decode_queries = 0;
  double decode_pairs = 0;
  // Data-parallel attention (expert parallelism): the busiest attention
  // rank's share when the scheduler places each prompt whole on one rank
  // (strategies/serving_scheduler.h): its new tokens (its 1/ep of the decode
  // queries plus its prompts) and its prompts' tokens, Σ (context + new) and
  // causal pairs. rank_tokens 0: the work is spread evenly, ceil(x / ep) each.
  int64_t rank_tokens = 0;
  int64_t rank_prefill_tokens = 0;
  int64_t rank_prefill_kv_tokens = 0;
  double rank_prefill_pairs = 0;
  // Sliding-window layers (TransformerConfig::sliding_window): the window the
  // sums below use (0: none) and the same sums with each query reading at
  // most `window` keys (models/attention_window.h): KV tokens read and
  // query-key pairs.
  int64_t window = 0;
  int64_t window_prefill_kv_tokens = 0;
  double window_prefill_pairs = 0;
  int64_t window_decode_kv_tokens = 0;
  double window_decode_pairs = 0;
  int64_t rank_window_prefill_kv_tokens = 0;
  double rank_window_prefill_pairs = 0;
  // The iteration runs eagerly, kernel by kernel, rather than replaying a
  // captured CUDA graph (PadToCudaGraph, strategies/serving_dp_placement.h):
  // its host dispatches every kernel (ServingModelSpec::eager_dispatch_per_kernel).
  bool eager = false;

  // What a sliding-window layer sees: these totals with the windowed sums in
  // place of the plain KV-token and causal-pair sums.
  IterationTotals Windowed() const;
  // The decode steps alone: their queries as the new tokens, one sampled row
  // per sequence, their KV and pair sums (plain and windowed); no prefill.
  IterationTotals DecodeOnly() const;
};
// The totals of `work`; `window` > 0 also sums the sliding-window layers'.
IterationTotals Summarise(const std::vector<SequenceWork>& work, int64_t window = 0);
// `t` with its windowed sums estimated for `window` from its sequences' mean
// context and new tokens: for totals built without the sequences (a
// drafter's steps), which ServingCostModel::Cost gets for a windowed model.
IterationTotals WindowFromMeans(const IterationTotals& t, int64_t window);

// Expected number of distinct experts that `tokens` tokens route to when each
// picks `top_k` of `experts` uniformly: E·(1 − (1 − k/E)^T). 0 for a dense model.
double ExpectedExpertsTouched(int experts, int top_k, int64_t tokens);

// Decode attention over an FP8 (E4M3) KV cache takes this share of the time
// the same read takes over a 16-bit cache, not the half its bytes would give.
// TensorRT-LLM's XQA kernel on an H100 SXM (Llama 3.1 8B: 32 query and 8 KV
// heads of 128, FP8 weights, batch 64, one query per sequence) ran about
// 40 µs per call over an FP8 cache and 60 µs over an FP16 one
// (github.com/NVIDIA/TensorRT-LLM/issues/2372, 2024-10-24). On Hopper that
// kernel (cpp/kernels/xqa/mha_sm90.cu) converts the queries to FP8 and runs
// both products on the FP8 tensor cores, so the cache is never widened; its
// half-size tiles are streamed at 3/4 of the 16-bit kernel's rate. Measured
// on the H100 only; the other GPUs take the same share.
inline constexpr double kFp8KvDecodeTimeShare = 2.0 / 3.0;

// The bytes at which decode attention's read of `values` cached K and V
// elements of `kv_dtype` is costed: their size, except an FP8 cache's, whose
// values count 2 x kFp8KvDecodeTimeShare = 4/3 of a byte each (the time of
// its read at the bandwidth a 16-bit cache is read at). values >= 0.
int64_t DecodeKvReadBytes(int64_t values, models::Dtype kv_dtype);

struct ServingModelSpec {
  models::ReplicaModel replica;
  // Global GPU indices of the replica, stage by stage: stage s holds
  // gpus[s·tp .. s·tp + tp - 1]. REQUIRES: size tp·pp.
  std::vector<int> gpus;
  // Host (CPU) time per iteration; >= 0.
  sim::Duration host_per_iteration;
  // Host time per sequence scheduled in the iteration (request bookkeeping,
  // sampling and response handling in the runtime's executor), counted on the
  // busiest executor: under data-parallel attention each of the ep ranks runs
  // its own executor over its 1/ep of the sequences. >= 0.
  sim::Duration host_per_sequence;
  // The runtime prepares the next iteration while the GPUs run this one
  // (TensorRT-LLM's overlap scheduler): an iteration takes the longer of the
  // GPU work and the host work instead of their sum.
  bool host_overlapped = false;
  // Host time to dispatch one kernel of an iteration that runs eagerly
  // (IterationTotals::eager): Python and the launch for each op of every
  // layer and of the iteration, collectives included. The kernels run while
  // later ones are dispatched, so this time overlaps the iteration's own GPU
  // work (IterationCost::eager_dispatch). Zero: eager iterations cost what
  // graph replays do. >= 0.
  sim::Duration eager_dispatch_per_kernel;
  // Decode attention's CUDA-core arithmetic rate in FLOPs per SM per clock
  // (models/data/fitted_constants.textproto); 0: decode attention is bound by
  // its bytes only. >= 0.
  double decode_attention_flops_per_sm_cycle = 0;
  // GQA decode packs each group's query heads onto the tensor cores, so the
  // arithmetic bound applies to MHA only; false: to every model.
  bool decode_attention_grouped_gqa = true;
};

struct IterationCost {
  sim::Duration time;           // the whole iteration
  sim::Duration compute;        // kernels
  sim::Duration communication;  // all-reduces, logits gather, stage sends
  sim::Duration host;           // the host time the GPUs wait for (all of host_work
                                // unless overlapped: what it exceeds the GPU work by)
  sim::Duration host_work;      // the host's work for the iteration, eager dispatch included
  sim::Duration eager_dispatch;  // of it, dispatching the kernels one by one (eager only)
  double flops = 0;             // model FLOPs of the replica (all its GPUs)
};

// Sets c->host to the host time the GPUs wait for and c->time to the GPU work
// (compute + communication) plus it: all of c->host_work, or under an
// overlapped host only what it exceeds the GPU work by. The eager dispatch
// share of host_work runs beside the GPU work in either case: a host that
// does not overlap iterations waits for the rest of host_work plus what the
// dispatch exceeds the GPU work by.
void SetHostAndTime(bool overlapped, IterationCost* c);

class ServingCostModel {
 public:
  // Errors (InvalidArgument) name the inference.* field: tp not dividing the
  // heads, the ffn size or the vocabulary; pp not dividing the layers; a
  // weight format the GPU lacks; a collective the network cannot cost.
  // `kernels` and `network` must outlive the model.
  static absl::StatusOr<ServingCostModel> Create(ServingModelSpec spec,
                                                 const models::KernelModel& kernels,
                                                 const topology::NetworkModel& network);

  // The cost of one iteration. Memoises the (T, S) part; not thread-safe.
  // REQUIRES: t.tokens >= 1.
  IterationCost Cost(const IterationTotals& t);

  // One layer's ops on one tensor-parallel shard, in execution order (the
  // collectives included, OpKind::kCollective), and the once-per-iteration ops.
  // `moe` false: a dense-first layer of an MoE model (the dense MLP).
  // `ffn_16bit`: the dense MLP's GEMMs read 16-bit weights and run in BF16
  // (the first and last layers under fp8-mixed).
  std::vector<models::Op> LayerOps(const IterationTotals& t, bool moe = true,
                                   bool ffn_16bit = false) const;
  std::vector<models::Op> IterationOps(const IterationTotals& t) const;
  // A hybrid model's layer of `kind` (models::LayerKind; serving_mamba.cc):
  // attention's or the MLP's half of LayerOps, or the Mamba-2 mixer's
  // projections, conv1d and gated norm. MambaStateOps: a Mamba layer's ops
  // that depend on the sequences, the SSD scan over the prefill tokens and
  // the decode steps' read and write of each sequence's fixed-size state.
  std::vector<models::Op> HybridLayerOps(const IterationTotals& t, models::LayerKind kind) const;
  std::vector<models::Op> MambaStateOps(const IterationTotals& t) const;

  const ServingModelSpec& spec() const { return spec_; }

 private:
  ServingCostModel(ServingModelSpec spec, const models::KernelModel& kernels,
                   const topology::NetworkModel& network);
  struct Part {
    sim::Duration compute, communication;
    double flops = 0;
    int64_t kernels = 0;  // ops launched, collectives included
  };
  // Costs `ops` of the iteration `t` (x `times`) into `part`.
  absl::Status Add(const std::vector<models::Op>& ops, const IterationTotals& t, int64_t times,
                   Part* part) const;
  Part& Linear(int64_t tokens, int64_t sampled, int64_t rank_tokens);
  // Prefill and decode attention of a grouped-query (non-latent) model.
  void AppendAttention(const IterationTotals& t, std::vector<models::Op>* ops) const;
  // Decode attention's CUDA-core arithmetic time (0 when the bound is off).
  sim::Duration DecodeArithmetic(const models::Op& op) const;
  // The op builder of this replica on this GPU.
  ServingOpBuilder Builder() const;

  ServingModelSpec spec_;
  const models::KernelModel* kernels_;
  const topology::NetworkModel* network_;
  models::Dtype gemm_dtype_, attention_dtype_;
  bool quantize_activations_ = false;  // BlockFp8ActivationQuant (serving_moe.h)
  std::map<std::tuple<int64_t, int64_t, int64_t>, Part> linear_;  // by (T, S, rank tokens)
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_ITERATION_H_
