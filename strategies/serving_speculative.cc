#include "strategies/serving_speculative.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/quantization.h"
#include "sim/random.h"

namespace clustersim::strategies {
namespace {

// The drafter's totals of one decode step over `rows` sequences whose drafter
// caches hold `context` tokens in all.
IterationTotals DraftStep(int64_t rows, int64_t context) {
  IterationTotals d;
  d.tokens = rows;
  d.sampled = rows;
  d.decode_seqs = rows;
  d.decode_queries = rows;
  d.decode_kv_tokens = context + rows;
  d.decode_pairs = static_cast<double>(context + rows);
  return d;
}

void AddDraft(const IterationCost& d, IterationCost* c) {
  c->compute += d.compute;
  c->communication += d.communication;
  c->flops += d.flops;
}

}  // namespace

absl::StatusOr<SpeculativeMethod> ParseSpeculativeMethod(std::string_view name) {
  if (name == "draft") return SpeculativeMethod::kDraft;
  if (name == "mtp") return SpeculativeMethod::kMtp;
  if (name == "eagle") return SpeculativeMethod::kEagle;
  return absl::InvalidArgumentError(
      absl::StrCat("inference.speculative.method=\"", std::string(name),
                   "\" is not known; use draft (a draft model), mtp or eagle"));
}

std::string_view SpeculativeMethodName(SpeculativeMethod m) {
  switch (m) {
    case SpeculativeMethod::kDraft:
      return "draft";
    case SpeculativeMethod::kMtp:
      return "mtp";
    case SpeculativeMethod::kEagle:
      return "eagle";
  }
  return "eagle";
}

double ExpectedAcceptedTokens(double alpha, int k) {
  if (alpha >= 1) return k + 1.0;
  return (1.0 - std::pow(alpha, k + 1)) / (1.0 - alpha);
}

double AcceptanceRateForMeanTokens(double tokens, int k) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (ExpectedAcceptedTokens(mid, k) < tokens ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

int64_t DrawAcceptedTokens(double alpha, int64_t drafted, uint64_t seed, int64_t request,
                           int64_t step) {
  uint64_t state = sim::StableHash(
      seed ^ sim::StableHash(static_cast<uint64_t>(request) ^
                             sim::StableHash(static_cast<uint64_t>(step) + 0x632BE59BD9B4E019ULL)));
  int64_t tokens = 1;
  for (int64_t j = 0; j < drafted; ++j) {
    state = sim::StableHash(state);
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;  // [0, 1)
    if (u >= alpha) break;
    ++tokens;
  }
  return tokens;
}

models::ReplicaModel DrafterReplica(const SpeculativeSpec& spec,
                                    const models::ReplicaModel& target) {
  models::ReplicaModel r = target;
  r.pipeline_parallel = 1;
  if (spec.method == SpeculativeMethod::kDraft) {
    r.model = spec.draft;
  } else {
    r.model.num_layers = 1;
    r.model.name = absl::StrCat(target.model.name, "-",
                                std::string(SpeculativeMethodName(spec.method)), "-head");
    // The MTP module sits after the target's last layer (layer index
    // num_layers) and has that index's MLP: an MoE layer for DeepSeek-V3,
    // whose first_k_dense_replace (3) dense layers come first.
    const models::TransformerConfig& m = target.model;
    if (spec.method == SpeculativeMethod::kMtp && !m.hybrid() && m.num_experts > 0) {
      const bool moe = m.IsMoeLayer(m.num_layers);
      r.model.moe_first_dense_layers = moe ? 0 : 1;
      r.model.moe_layer_step = 1;
    }
  }
  return r;
}

DrafterMemory EstimateDrafterMemory(const SpeculativeSpec& spec,
                                    const models::ReplicaModel& target) {
  const models::ReplicaModel r = DrafterReplica(spec, target);
  const models::TransformerConfig& m = r.model;
  const int tp = r.tensor_parallel;
  DrafterMemory out;
  out.kv_bytes_per_token = models::KvBytesPerToken(m, tp, 1, r.kv_cache_dtype);
  if (spec.method == SpeculativeMethod::kDraft) {
    models::InferenceMemoryInputs in;
    in.replica = r;
    out.weights = models::EstimateInferenceMemory(in, sim::Bytes(0)).weights;
    return out;
  }
  const models::ParameterCounts p = models::CountParameters(m);
  const double bits = models::BitsPerWeight(r.weight_format, r.quant_group_size, m.hidden_size);
  const double h = m.hidden_size;
  const double layer = p.linear_per_layer / tp * bits / 8.0 +
                       (p.per_layer - p.linear_per_layer) / tp * 2.0;  // norms, router
  const double projection = 2.0 * h * h * bits / 8.0;                  // replicated
  out.weights = sim::Bytes(static_cast<int64_t>(std::ceil(layer + projection)));
  return out;
}

SpeculativeCostModel::SpeculativeCostModel(const SpeculativeSpec& spec, ServingCostModel& target,
                                           ServingCostModel drafter,
                                           const models::KernelModel& kernels)
    : spec_(spec), target_(&target), drafter_(std::move(drafter)), kernels_(&kernels) {}

absl::StatusOr<SpeculativeCostModel> SpeculativeCostModel::Create(
    const SpeculativeSpec& spec, ServingCostModel& target, const models::KernelModel& kernels,
    const topology::NetworkModel& network) {
  const ServingModelSpec& t = target.spec();
  if (t.replica.pipeline_parallel != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.speculative needs inference.pipeline_parallel_size=1 (got ",
        t.replica.pipeline_parallel, "); use tensor parallelism, or remove inference.speculative"));
  }
  ServingModelSpec d = t;
  d.replica = DrafterReplica(spec, t.replica);
  d.gpus.resize(t.replica.tensor_parallel);
  // The target's host step covers the drafter's.
  d.host_per_iteration = sim::Duration::Zero();
  d.host_per_sequence = sim::Duration::Zero();
  absl::StatusOr<ServingCostModel> drafter = ServingCostModel::Create(d, kernels, network);
  if (!drafter.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.speculative.draft_model: ", drafter.status().message(),
        "; pick a draft model whose heads and FFN size the tensor-parallel size divides"));
  }
  return SpeculativeCostModel(spec, target, *std::move(drafter), kernels);
}

sim::Duration SpeculativeCostModel::Projection(int64_t rows) {
  auto it = projection_.find(rows);
  if (it != projection_.end()) return it->second;
  const models::ReplicaModel& r = drafter_.spec().replica;
  const int64_t h = r.model.hidden_size;
  models::Op op;
  op.name = "draft_projection_gemm";
  op.kind = models::OpKind::kGemm;
  op.m = rows;
  op.n = h;
  op.k = 2 * h;
  op.dtype = models::ComputeDtype(r.weight_format);
  op.flops = sim::Flops(2.0 * static_cast<double>(rows * h * 2 * h));
  const double bits = models::BitsPerWeight(r.weight_format, r.quant_group_size, 2 * h);
  op.bytes = sim::Bytes(rows * 2 * h * 2 + rows * h * 2 +
                        static_cast<int64_t>(2.0 * static_cast<double>(h * h) * bits / 8.0));
  return projection_.emplace(rows, kernels_->Cost(op).time).first->second;
}

IterationCost SpeculativeCostModel::DraftCost(const IterationTotals& t) {
  IterationCost c;
  // The prompt chunks of this iteration, prefilled into the drafter's cache.
  if (t.prefill_tokens > 0) {
    IterationTotals p;
    p.tokens = t.prefill_tokens;
    p.sampled = t.sampled - t.decode_queries;
    p.prefill_tokens = t.prefill_tokens;
    p.prefill_kv_tokens = t.prefill_kv_tokens;
    p.prefill_pairs = t.prefill_pairs;
    AddDraft(drafter_.Cost(p), &c);
  }
  const int64_t rows = t.decode_seqs;
  if (rows == 0) return c;
  // Drafted tokens per sequence, on average (fewer near a request's end).
  const int64_t drafted = t.decode_queries - rows;
  const int64_t steps = (drafted + rows - 1) / rows;
  const int64_t context = t.decode_kv_tokens - t.decode_queries;  // Σ cached before the step
  const bool head = spec_.method != SpeculativeMethod::kDraft;
  const double h = drafter_.spec().replica.model.hidden_size;
  for (int64_t j = 0; j < steps; ++j) {
    // A head's first pass takes every decoding sequence's verified rows
    // (1 + its drafts) over the same positions and causal pairs as the
    // target's verify pass, and one row per sequence (its last accepted
    // position) reaches the LM head; each later pass takes one row per sequence.
    const bool first = head && j == 0;
    const int64_t pass_rows = first ? t.decode_queries : rows;
    AddDraft(drafter_.Cost(first ? t.DecodeOnly() : DraftStep(rows, context + j * rows)), &c);
    if (head) {
      c.compute += Projection(pass_rows);
      c.flops += 2.0 * static_cast<double>(pass_rows) * 2.0 * h * h;  // replicated: counted once
    }
  }
  c.time = c.compute + c.communication;
  return c;
}

IterationCost SpeculativeCostModel::Cost(const IterationTotals& t) {
  IterationCost c = target_->Cost(t);
  AddDraft(DraftCost(t), &c);
  SetHostAndTime(target_->spec().host_overlapped, &c);
  return c;
}

}  // namespace clustersim::strategies
