#include "strategies/serving_iteration.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/attention_window.h"
#include "models/quantization.h"
#include "sim/check.h"
#include "sim/status_macros.h"
#include "strategies/serving_mamba.h"
#include "strategies/serving_moe.h"

namespace clustersim::strategies {
namespace {

using models::Op;
using models::OpKind;

topology::Collective ToCollective(models::CommKind k) {
  switch (k) {
    case models::CommKind::kAllReduce:
      return topology::Collective::kAllReduce;
    case models::CommKind::kAllGather:
      return topology::Collective::kAllGather;
    case models::CommKind::kReduceScatter:
      return topology::Collective::kReduceScatter;
    case models::CommKind::kAllToAll:
      return topology::Collective::kAllToAll;
    case models::CommKind::kSendRecv:
      return topology::Collective::kSendRecv;
  }
  return topology::Collective::kAllReduce;
}

}  // namespace

double ExpectedExpertsTouched(int experts, int top_k, int64_t tokens) {
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  const double miss = 1.0 - static_cast<double>(std::min(top_k, experts)) / experts;
  return experts * (1.0 - std::pow(miss, static_cast<double>(tokens)));
}

void SetHostAndTime(bool overlapped, IterationCost* c) {
  const sim::Duration gpu = c->compute + c->communication;
  const sim::Duration zero = sim::Duration::Zero();
  c->host = overlapped ? std::max(zero, c->host_work - gpu)
                       : c->host_work - c->eager_dispatch +
                             std::max(zero, c->eager_dispatch - gpu);
  c->time = gpu + c->host;
}

int64_t DecodeKvReadBytes(int64_t values, models::Dtype kv_dtype) {
  if (kv_dtype != models::Dtype::kFp8) return values * models::BytesPerElement(kv_dtype);
  return std::llround(static_cast<double>(values) * 2.0 * kFp8KvDecodeTimeShare);
}

IterationTotals Summarise(const std::vector<SequenceWork>& work, int64_t window) {
  IterationTotals t;
  t.window = window;
  for (const SequenceWork& w : work) {
    if (window > 0) {
      const int64_t kv = models::WindowedKvTokens(w.context, w.new_tokens, window);
      const double pairs = models::CausalPairsAfter(w.context, w.new_tokens, window);
      (w.decode ? t.window_decode_kv_tokens : t.window_prefill_kv_tokens) += kv;
      (w.decode ? t.window_decode_pairs : t.window_prefill_pairs) += pairs;
    }
    t.tokens += w.new_tokens;
    if (w.samples) t.sampled += w.decode ? w.new_tokens : 1;
    if (w.decode) {
      ++t.decode_seqs;
      t.decode_kv_tokens += w.context + w.new_tokens;
      t.decode_queries += w.new_tokens;
      t.decode_pairs +=
          static_cast<double>(w.new_tokens) *
          (static_cast<double>(w.context) + static_cast<double>(w.new_tokens + 1) / 2.0);
    } else {
      ++t.prefill_seqs;
      t.prefill_tokens += w.new_tokens;
      t.prefill_kv_tokens += w.context + w.new_tokens;
      t.prefill_pairs +=
          static_cast<double>(w.new_tokens) *
          (static_cast<double>(w.context) + static_cast<double>(w.new_tokens + 1) / 2.0);
    }
  }
  return t;
}

IterationTotals IterationTotals::Windowed() const {
  IterationTotals w = *this;
  w.prefill_kv_tokens = window_prefill_kv_tokens;
  w.prefill_pairs = window_prefill_pairs;
  w.decode_kv_tokens = window_decode_kv_tokens;
  w.decode_pairs = window_decode_pairs;
  w.rank_prefill_kv_tokens = rank_window_prefill_kv_tokens;
  w.rank_prefill_pairs = rank_window_prefill_pairs;
  return w;
}

IterationTotals IterationTotals::DecodeOnly() const {
  IterationTotals d;
  d.tokens = decode_queries;
  d.sampled = decode_seqs;
  d.decode_seqs = decode_seqs;
  d.decode_queries = decode_queries;
  d.decode_kv_tokens = decode_kv_tokens;
  d.decode_pairs = decode_pairs;
  d.window = window;
  d.window_decode_kv_tokens = window_decode_kv_tokens;
  d.window_decode_pairs = window_decode_pairs;
  return d;
}

IterationTotals WindowFromMeans(const IterationTotals& t, int64_t window) {
  IterationTotals w = t;
  w.window = window;
  // n sequences of c̄ cached and q̄ new tokens each (c̄ and q̄ rounded down).
  auto sums = [window](int64_t seqs, int64_t kv, int64_t queries, int64_t* kv_out,
                       double* pairs_out) {
    if (seqs <= 0) return;
    const int64_t q = queries / seqs, c = (kv - queries) / seqs;
    *kv_out = seqs * models::WindowedKvTokens(c, q, window);
    *pairs_out = static_cast<double>(seqs) * models::CausalPairsAfter(c, q, window);
  };
  sums(t.decode_seqs, t.decode_kv_tokens, t.decode_queries, &w.window_decode_kv_tokens,
       &w.window_decode_pairs);
  sums(t.prefill_seqs, t.prefill_kv_tokens, t.prefill_tokens, &w.window_prefill_kv_tokens,
       &w.window_prefill_pairs);
  if (t.prefill_pairs > 0) {
    const double pairs = w.window_prefill_pairs / t.prefill_pairs;
    const double kv = static_cast<double>(w.window_prefill_kv_tokens) /
                      static_cast<double>(std::max<int64_t>(1, t.prefill_kv_tokens));
    w.rank_window_prefill_pairs = t.rank_prefill_pairs * pairs;
    w.rank_window_prefill_kv_tokens =
        std::llround(static_cast<double>(t.rank_prefill_kv_tokens) * kv);
  }
  return w;
}

ServingCostModel::ServingCostModel(ServingModelSpec spec, const models::KernelModel& kernels,
                                   const topology::NetworkModel& network)
    : spec_(std::move(spec)), kernels_(&kernels), network_(&network) {
  gemm_dtype_ = models::ComputeDtype(spec_.replica.weight_format);
  quantize_activations_ = BlockFp8ActivationQuant(spec_.replica, kernels.gpu());
  attention_dtype_ =
      kernels.gpu().Supports(models::Dtype::kBf16) ? models::Dtype::kBf16 : models::Dtype::kFp16;
}

absl::StatusOr<ServingCostModel> ServingCostModel::Create(ServingModelSpec spec,
                                                          const models::KernelModel& kernels,
                                                          const topology::NetworkModel& network) {
  const models::TransformerConfig& m = spec.replica.model;
  const int tp = spec.replica.tensor_parallel, pp = spec.replica.pipeline_parallel;
  if (tp < 1 || m.num_attention_heads % tp != 0 || m.ffn_hidden_size % tp != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.tensor_parallel_size=", tp,
                     " must divide model.num_attention_heads=", m.num_attention_heads,
                     " and model.ffn_hidden_size=", m.ffn_hidden_size, "; try 1, 2, 4 or 8"));
  }
  if (pp < 1 || m.num_layers % pp != 0) {
    return absl::InvalidArgumentError(absl::StrCat("inference.pipeline_parallel_size=", pp,
                                                   " must divide model.num_layers=", m.num_layers));
  }
  if (static_cast<int>(spec.gpus.size()) != tp * pp) {
    return absl::InternalError("ServingModelSpec.gpus must hold tp x pp GPUs");
  }
  if (!(spec.decode_attention_flops_per_sm_cycle >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.decode_attention_flops_per_sm_cycle=", spec.decode_attention_flops_per_sm_cycle,
        " must be >= 0; 0 leaves decode attention bound by its KV reads"));
  }
  if (spec.host_per_iteration < sim::Duration::Zero()) {
    return absl::InvalidArgumentError(
        "inference.host_overhead_us_per_iteration must be >= 0; 0 models an overlapped host");
  }
  if (spec.eager_dispatch_per_kernel < sim::Duration::Zero()) {
    return absl::InvalidArgumentError("inference.eager_dispatch_us_per_kernel must be >= 0");
  }
  if (spec.host_per_sequence < sim::Duration::Zero()) {
    return absl::InvalidArgumentError("inference.host_overhead_us_per_sequence must be >= 0");
  }
  CLUSTERSIM_RETURN_IF_ERROR(ValidateServingExpertParallel(spec.replica));
  CLUSTERSIM_RETURN_IF_ERROR(models::CheckWeightFormatFitsModel(spec.replica));
  if (auto s = models::CheckWeightFormatSupported(kernels.gpu(), spec.replica.weight_format,
                                                  "inference.weight_dtype");
      !s.ok()) {
    return s;
  }
  if (m.hybrid()) CLUSTERSIM_RETURN_IF_ERROR(ValidateServingMamba(spec.replica));
  const bool hybrid = m.hybrid();
  ServingCostModel model(std::move(spec), kernels, network);
  Part probe;
  IterationTotals t;
  t.tokens = 1;
  t.sampled = 1;
  if (hybrid) {
    for (models::LayerKind kind : models::kHybridLayerKinds) {
      if (model.spec().replica.model.num_layers_of(kind) == 0) continue;
      CLUSTERSIM_RETURN_IF_ERROR(model.Add(model.HybridLayerOps(t, kind), t, 1, &probe));
    }
  } else {
    CLUSTERSIM_RETURN_IF_ERROR(model.Add(model.LayerOps(t), t, 1, &probe));
    CLUSTERSIM_RETURN_IF_ERROR(model.Add(model.LayerOps(t, /*moe=*/false), t, 1, &probe));
  }
  CLUSTERSIM_RETURN_IF_ERROR(model.Add(model.IterationOps(t), t, 1, &probe));
  return model;
}

std::vector<Op> ServingCostModel::LayerOps(const IterationTotals& t, bool moe,
                                           bool ffn_16bit) const {
  const models::TransformerConfig& m = spec_.replica.model;
  const ServingOpBuilder b = Builder();
  const int64_t tp = b.AttentionTp();
  const int64_t T = b.RankRows(t), h = m.hidden_size, d = m.head_dim();
  const int64_t heads = b.Heads();
  const int64_t kv_heads = std::max<int64_t>(1, m.num_query_groups / tp);
  const int64_t f = m.ffn_hidden_size / tp;
  const bool gated = m.activation == models::Activation::kSwiglu;
  const int64_t kv_bytes = models::BytesPerElement(spec_.replica.kv_cache_dtype);
  auto gemm = [&](std::string name, int64_t rows, int64_t n, int64_t k) {
    return ffn_16bit ? ServingGemm(std::move(name), rows, n, k, attention_dtype_, 16.0)
                     : b.Gemm(std::move(name), rows, n, k);
  };

  std::vector<Op> ops;
  ops.push_back(ServingMemoryOp("input_norm", T * h * 2 * 2));
  if (m.mla()) {
    b.LatentAttention(t, &ops);
  } else {
    b.ActivationQuant("qkv_gemm_act_quant", T, h, &ops);
    ops.push_back(b.AttentionGemm("qkv_gemm", T, (heads + 2 * kv_heads) * d, h));
    ops.push_back(ServingMemoryOp("kv_cache_write", T * 2 * kv_heads * d * (2 + kv_bytes)));
    AppendAttention(t, &ops);
  }
  b.ActivationQuant("o_proj_gemm_act_quant", T, heads * m.value_head_dim(), &ops);
  ops.push_back(b.AttentionGemm("o_proj_gemm", T, h, heads * m.value_head_dim()));
  if (tp > 1) {
    ops.push_back(ServingCollective("tp_allreduce_attn", models::CommKind::kAllReduce, T * h * 2));
  }
  ops.push_back(ServingMemoryOp("post_norm", T * h * 2 * 3));
  if (m.num_experts > 0 && moe) {
    b.MoeMlp(t, &ops);
  } else {
    b.ActivationQuant("gate_up_gemm_act_quant", T, h, &ops);
    ops.push_back(gemm("gate_up_gemm", T, gated ? 2 * f : f, h));
    ops.push_back(ServingMemoryOp("activation", T * f * (gated ? 3 : 2) * 2));
    b.ActivationQuant("down_gemm_act_quant", T, f, &ops);
    ops.push_back(gemm("down_gemm", T, h, f));
  }
  if (tp > 1) {
    ops.push_back(ServingCollective("tp_allreduce_mlp", models::CommKind::kAllReduce, T * h * 2));
  }
  return ops;
}

// Grouped-query attention over the paged cache: prefill (FlashAttention) and
// decode (paged attention), on this GPU's heads (and, under expert
// parallelism, its 1/ep of the sequences).
void ServingCostModel::AppendAttention(const IterationTotals& t, std::vector<Op>* ops) const {
  const models::TransformerConfig& m = spec_.replica.model;
  const ServingOpBuilder b = Builder();
  const int64_t ep = spec_.replica.expert_parallel, d = m.head_dim(), heads = b.Heads();
  const int64_t kv_heads = std::max<int64_t>(1, m.num_query_groups / b.AttentionTp());
  const int64_t kv_bytes = models::BytesPerElement(spec_.replica.kv_cache_dtype);
  // Prompts placed whole on attention ranks: the busiest rank's.
  const bool placed = ep > 1 && t.rank_tokens > 0;
  if (placed ? t.rank_prefill_tokens > 0 : t.prefill_tokens > 0) {
    const int64_t q_tokens = placed ? t.rank_prefill_tokens : ShareOf(t.prefill_tokens, ep);
    const int64_t kv_tokens = placed ? t.rank_prefill_kv_tokens : ShareOf(t.prefill_kv_tokens, ep);
    // The causal pairs are counted exactly in the flops (causal stays false).
    sim::Flops flops(4.0 * static_cast<double>(heads * d) *
                     (placed ? t.rank_prefill_pairs : t.prefill_pairs));
    if (ep > 1 && !placed) flops = flops * (1.0 / static_cast<double>(ep));
    ops->push_back(ServingAttentionOp(
        "attention_prefill", heads, q_tokens, kv_tokens, d, attention_dtype_, flops.count(),
        q_tokens * heads * d * 2 * 2 + kv_tokens * 2 * kv_heads * d * kv_bytes));
  }
  if (t.decode_seqs > 0) {
    // Each sequence's KV is read once for all its queries (one, or 1 + k
    // under speculative decoding); an FP8 cache at its measured rate
    // (DecodeKvReadBytes).
    const int64_t queries = ShareOf(t.decode_queries, ep), cached = ShareOf(t.decode_kv_tokens, ep);
    const int64_t kv_read =
        DecodeKvReadBytes(cached * 2 * kv_heads * d, spec_.replica.kv_cache_dtype);
    Op a = ServingMemoryOp("attention_decode", kv_read + queries * heads * d * 2 * 2);
    a.flops =
        sim::Flops(4.0 * static_cast<double>(heads * d) * t.decode_pairs / static_cast<double>(ep));
    ops->push_back(std::move(a));
  }
}

std::vector<Op> ServingCostModel::IterationOps(const IterationTotals& t) const {
  const models::TransformerConfig& m = spec_.replica.model;
  // Under expert parallelism every GPU embeds and samples its own 1/ep of the
  // batch with the whole (replicated) vocabulary.
  const ServingOpBuilder b = Builder();
  const int64_t tp = b.AttentionTp();
  const int64_t T = b.RankRows(t), S = b.Rows(t.sampled), h = m.hidden_size;
  const int64_t vocab = m.vocab_size / tp;
  std::vector<Op> ops;
  ops.push_back(ServingMemoryOp("embedding", T * h * 2 * 2));
  for (int s = 1; s < spec_.replica.pipeline_parallel; ++s) {
    Op send =
        ServingCollective(absl::StrCat("pp_send_stage", s), models::CommKind::kSendRecv, T * h * 2);
    send.batch = s;  // the receiving stage
    ops.push_back(std::move(send));
  }
  ops.push_back(ServingMemoryOp("final_norm", S * h * 2 * 2));
  if (S > 0) {
    // 16-bit weights in every format.
    ops.push_back(ServingGemm("lm_head_gemm", S, vocab, h, attention_dtype_, 16.0));
    if (tp > 1) {
      ops.push_back(ServingCollective("logits_allgather", models::CommKind::kAllGather,
                                      S * static_cast<int64_t>(m.vocab_size) * 2));
    }
    ops.push_back(ServingMemoryOp("sampling", S * static_cast<int64_t>(m.vocab_size) * 4 * 2));
  }
  return ops;
}

absl::Status ServingCostModel::Add(const std::vector<Op>& ops, const IterationTotals& t,
                                   int64_t times, Part* part) const {
  const ServingOpBuilder builder = Builder();
  const int tp = spec_.replica.tensor_parallel;
  const std::vector<int> tp_group(spec_.gpus.begin(), spec_.gpus.begin() + tp);
  for (const Op& op : ops) {
    if (op.kind == OpKind::kCollective) {
      topology::CollectiveRequest r;
      r.op = ToCollective(op.comm);
      r.bytes = op.comm_bytes;
      if (op.comm == models::CommKind::kSendRecv) {
        const int64_t stage = op.batch;
        r.gpus = {spec_.gpus[(stage - 1) * tp], spec_.gpus[stage * tp]};
      } else {
        r.gpus = tp_group;
      }
      absl::StatusOr<topology::CollectiveEstimate> e = network_->Estimate(r);
      if (!e.ok()) {
        return absl::Status(
            e.status().code(),
            absl::StrCat("costing ", op.name, " over the replica's GPUs: ", e.status().message()));
      }
      part->communication += e->time * times;
    } else {
      sim::Duration time = kernels_->Cost(op).time;
      if (op.name == "attention_decode") time = std::max(time, DecodeArithmetic(op));
      part->compute += time * times;
      part->flops += builder.ModelFlops(op, t) * static_cast<double>(times * tp);
    }
    part->kernels += times;
  }
  return absl::OkStatus();
}

ServingOpBuilder ServingCostModel::Builder() const {
  return ServingOpBuilder(spec_.replica, gemm_dtype_, attention_dtype_, quantize_activations_);
}

sim::Duration ServingCostModel::DecodeArithmetic(const Op& op) const {
  const models::GpuSpec& gpu = kernels_->gpu();
  const double rate = spec_.decode_attention_flops_per_sm_cycle * gpu.sm_count *
                      gpu.boost_clock_mhz * 1e6;  // FLOP/s
  const models::TransformerConfig& m = spec_.replica.model;
  const bool grouped = m.num_query_groups < m.num_attention_heads;
  // Latent attention's decode is an attention op (tensor cores), costed as such.
  if (rate <= 0 || (grouped && spec_.decode_attention_grouped_gqa) || m.mla()) {
    return sim::Duration::Zero();
  }
  return sim::Duration::FromSecondsDouble(op.flops.count() / rate);
}

ServingCostModel::Part& ServingCostModel::Linear(int64_t tokens, int64_t sampled,
                                                 int64_t rank_tokens) {
  const auto key = std::make_tuple(tokens, sampled, rank_tokens);
  auto it = linear_.find(key);
  if (it != linear_.end()) return it->second;
  IterationTotals t;
  t.tokens = tokens;
  t.sampled = sampled;
  t.rank_tokens = rank_tokens;
  Part part;
  const models::TransformerConfig& m = spec_.replica.model;
  absl::Status s;
  if (m.hybrid()) {
    // Each kind of layer (TransformerConfig::Kind) times its count.
    for (models::LayerKind kind : models::kHybridLayerKinds) {
      const int n = m.num_layers_of(kind);
      if (s.ok() && n > 0) s = Add(HybridLayerOps(t, kind), t, n, &part);
    }
  } else {
    // The MoE layers, then the dense ones (TransformerConfig::IsMoeLayer).
    // Under fp8-mixed (dense models only) the first and last layers' MLPs
    // stay 16-bit.
    const int dense = m.num_experts > 0 ? m.num_dense_layers() : 0;
    const int ffn16 =
        models::Ffn16BitLayers(spec_.replica.weight_format, 0, m.num_layers, m.num_layers);
    s = Add(LayerOps(t), t, m.num_layers - dense - ffn16, &part);
    if (s.ok() && dense > 0) s = Add(LayerOps(t, /*moe=*/false), t, dense, &part);
    if (s.ok() && ffn16 > 0) {
      s = Add(LayerOps(t, /*moe=*/false, /*ffn_16bit=*/true), t, ffn16, &part);
    }
  }
  if (s.ok()) s = Add(IterationOps(t), t, 1, &part);
  SIM_CHECK(s.ok()) << "serving iteration cost: " << s.message();
  return linear_.emplace(key, part).first->second;
}

IterationCost ServingCostModel::Cost(const IterationTotals& t) {
  SIM_CHECK(t.tokens >= 1) << "an iteration needs at least one token";
  const Part linear = Linear(t.tokens, t.sampled, t.rank_tokens);
  // The attention ops are the part that depends on the sequences' contexts;
  // they are the same in a dense layer, whose MLP is cheaper to build than the
  // MoE one's routing expectations.
  Part attention;
  std::vector<Op> ops = LayerOps(t, /*moe=*/false);
  std::erase_if(ops, [](const Op& op) { return !op.name.starts_with("attention_"); });
  const models::TransformerConfig& m = spec_.replica.model;
  const int windowed = m.sliding_window > 0 ? m.sliding_window_layers : 0;
  SIM_CHECK(Add(ops, t, m.num_attention_layers() - windowed, &attention).ok());
  if (windowed > 0) {
    // Sliding-window layers read and attend to at most the window's keys.
    const IterationTotals w =
        (t.window == m.sliding_window ? t : WindowFromMeans(t, m.sliding_window)).Windowed();
    std::vector<Op> local = LayerOps(w, /*moe=*/false);
    std::erase_if(local, [](const Op& op) { return !op.name.starts_with("attention_"); });
    SIM_CHECK(Add(local, w, windowed, &attention).ok());
  }
  if (const int mamba = m.num_layers_of(models::LayerKind::kMamba); mamba > 0) {
    SIM_CHECK(Add(MambaStateOps(t), t, mamba, &attention).ok());
  }
  IterationCost c;
  c.compute = linear.compute + attention.compute;
  c.communication = linear.communication + attention.communication;
  const int64_t executor_seqs =
      ShareOf(t.decode_seqs + t.prefill_seqs, spec_.replica.expert_parallel);
  // An eager iteration's host dispatches each of its kernels.
  if (t.eager) {
    c.eager_dispatch = spec_.eager_dispatch_per_kernel * (linear.kernels + attention.kernels);
  }
  c.host_work =
      spec_.host_per_iteration + spec_.host_per_sequence * executor_seqs + c.eager_dispatch;
  SetHostAndTime(spec_.host_overlapped, &c);
  c.flops = linear.flops + attention.flops;
  return c;
}

}  // namespace clustersim::strategies
