// File: strategies/serving_speculative.h
//
// Speculative decoding in a serving replica (Leviathan et al. 2023, "Fast
// Inference from Transformers via Speculative Decoding", ICML; Chen et al.
// 2023, "Accelerating Large Language Model Decoding with Speculative
// Sampling"). Each decode step of a sequence drafts k tokens cheaply, then the
// target verifies them in one pass over 1 + k query rows; every draft token is
// accepted with probability alpha until the first rejection, and the target's
// own distribution at the first rejected (or the bonus) position gives one
// more token. The tokens one step emits follow a truncated geometric law:
//   P(n tokens) = alpha^(n-1)·(1 - alpha) for n <= k, alpha^k for n = k + 1,
//   E[n] = (1 - alpha^(k+1)) / (1 - alpha)          (Leviathan et al., eq. 1)
// (k + 1 at alpha = 1). DrawAcceptedTokens draws n per sequence and step from
// a counter-based hash of (seed, request, step), so a request's draws do not
// depend on which batch it ran in: rates and load levels see the same draws.
//
// Drafters (SpeculativeMethod):
//   kDraft  a separate draft model sharing the target's vocabulary, on the
//           same GPUs at the same tensor parallelism and formats (vLLM's
//           draft-model proposer). Per iteration it prefills the prompt chunks
//           the target prefills and runs k sequential decode steps over the
//           decoding sequences, each costed by ServingCostModel (its own
//           embedding, layers, KV reads and LM head).
//   kMtp    DeepSeek-V3's multi-token prediction module (DeepSeek-AI 2024,
//   kEagle  arXiv:2412.19437 §2.2) and the EAGLE head (Li et al. 2024,
//           arXiv:2401.15077): one transformer layer of the target's shape
//           that takes the target's hidden state and the next token's
//           embedding through a 2h -> h projection and reuses the target's
//           embedding and LM head. Cost per draft step: the projection GEMM
//           (m = rows, n = h, k = 2h, replicated on every TP rank as vLLM's
//           EAGLE does), one layer over its own one-layer KV cache, and the
//           LM head over one row per sequence. The first step of an iteration
//           runs over every decoding sequence's verified rows (1 + k: the
//           target's hidden states of all of them), the later steps over one
//           row per sequence (TensorRT-LLM's MTPEagleWorker, tensorrt_llm/
//           _torch/speculative/mtp.py @ 23ee85e: input_ids_gen =
//           accepted_tokens.flatten(), "All of the seq_len are 1" after the
//           first; vLLM's EagleProposer.propose, vllm/v1/spec_decode/eagle.py
//           @ f7eef1b, over the step's target tokens). Assumed: a chain of k
//           tokens, not a tree; the head's weights are the target layer's size
//           (EAGLE's Llama-3 heads are). The MTP module is the layer after the
//           target's last (index num_layers, TensorRT-LLM's DeepseekV3MTP) and
//           has that index's MLP: DeepSeek-V3's is an MoE layer.
// Verification (strategies/serving_iteration.h): each decoding sequence adds
// 1 + drafted new tokens (GEMM rows), reads its KV once for its 1 + drafted
// queries (causal pairs counted exactly) and samples 1 + drafted LM-head rows.
// At batch 1 that pass costs about one decode step, since both stream the
// weights; at large batch the GEMMs turn compute-bound and the pass costs
// nearly (1 + k) steps, so the speed-up shrinks as load grows.
// Drafts are capped by the tokens a request still needs and by the
// iteration's token budget; KV blocks are held for the verified positions and
// the sequence grows by the accepted tokens.
// Memory (models/inference_memory.h): the drafter's weights and its KV bytes
// per token come out of every GPU's budget (EstimateDrafterMemory).
//
// Example:
//   SpeculativeSpec spec{.method = SpeculativeMethod::kEagle, .num_tokens = 4,
//                        .acceptance_rate = 0.8};
//   absl::StatusOr<SpeculativeCostModel> m =
//       SpeculativeCostModel::Create(spec, target, kernels, network);
//   IterationCost c = m->Cost(totals);   // target verify + drafting
//   ExpectedAcceptedTokens(0.8, 4);     // 3.36 tokens per step
#ifndef CLUSTERSIM_STRATEGIES_SERVING_SPECULATIVE_H_
#define CLUSTERSIM_STRATEGIES_SERVING_SPECULATIVE_H_

#include <cstdint>
#include <map>
#include <string_view>

#include "absl/status/statusor.h"
#include "models/inference_memory.h"
#include "models/kernel_model.h"
#include "models/transformer_config.h"
#include "sim/units.h"
#include "strategies/serving_iteration.h"
#include "topology/network_model.h"

namespace clustersim::strategies {

enum class SpeculativeMethod { kDraft, kMtp, kEagle };
// "draft" | "mtp" | "eagle"; InvalidArgument naming inference.speculative.method.
absl::StatusOr<SpeculativeMethod> ParseSpeculativeMethod(std::string_view name);
std::string_view SpeculativeMethodName(SpeculativeMethod m);

// (1 - alpha^(k+1)) / (1 - alpha): the mean tokens one step emits, k + 1 at
// alpha = 1. REQUIRES: alpha in [0, 1], k >= 0.
double ExpectedAcceptedTokens(double alpha, int k);
// The alpha whose ExpectedAcceptedTokens(alpha, k) equals `tokens` (clamped to
// [1, k + 1]), by bisection: turns a published mean acceptance length into a
// per-token acceptance rate.
double AcceptanceRateForMeanTokens(double tokens, int k);

// The tokens the `step`-th decode step of `request` emits when it verifies
// `drafted` drafted tokens: 1 + the drafts accepted before the first
// rejection, each accepted with probability alpha. Deterministic in its
// arguments.
int64_t DrawAcceptedTokens(double alpha, int64_t drafted, uint64_t seed, int64_t request,
                           int64_t step);

struct SpeculativeSpec {
  SpeculativeMethod method = SpeculativeMethod::kEagle;
  int num_tokens = 4;            // k, drafted per step
  double acceptance_rate = 0.7;  // alpha
  uint64_t seed = 0;
  models::TransformerConfig draft;  // kDraft: the draft model
};

// The drafter as a replica on the target's GPUs: the draft model, or one layer
// of the target's shape (kMtp, kEagle); the target's tp and formats, pp 1.
models::ReplicaModel DrafterReplica(const SpeculativeSpec& spec,
                                    const models::ReplicaModel& target);

// What the drafter adds to each GPU's memory. kDraft: the draft model's
// weights (embedding and LM head included) and KV per token. kMtp, kEagle: one
// layer (linear weights in the target's format, the rest 16-bit) plus the
// 2h x h projection, whose embedding and LM head are the target's; the KV of
// one layer.
struct DrafterMemory {
  sim::Bytes weights;
  sim::Bytes kv_bytes_per_token;
};
DrafterMemory EstimateDrafterMemory(const SpeculativeSpec& spec,
                                    const models::ReplicaModel& target);

// One iteration's cost with speculative decoding: the target's pass over the
// iteration's totals (the verify rows included) plus the drafting. `target`,
// `kernels` and `network` must outlive the model.
class SpeculativeCostModel {
 public:
  // Errors (InvalidArgument) name inference.speculative.*: a draft model tp
  // does not divide, a pipeline-parallel target.
  static absl::StatusOr<SpeculativeCostModel> Create(const SpeculativeSpec& spec,
                                                     ServingCostModel& target,
                                                     const models::KernelModel& kernels,
                                                     const topology::NetworkModel& network);

  // Target verify + drafter; the host time once (the target's). Not thread-safe.
  IterationCost Cost(const IterationTotals& t);
  // The drafting alone (no host time).
  IterationCost DraftCost(const IterationTotals& t);

 private:
  SpeculativeCostModel(const SpeculativeSpec& spec, ServingCostModel& target,
                       ServingCostModel drafter, const models::KernelModel& kernels);
  sim::Duration Projection(int64_t rows);

  SpeculativeSpec spec_;
  ServingCostModel* target_;
  ServingCostModel drafter_;
  const models::KernelModel* kernels_;
  std::map<int64_t, sim::Duration> projection_;  // by rows (kMtp, kEagle)
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_SPECULATIVE_H_
