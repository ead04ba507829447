#include "strategies/serving_moe.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/quantization.h"
#include "strategies/serving_iteration.h"
#include "strategies/serving_moe_routing.h"

namespace clustersim::strategies {

using models::Op;
using models::OpKind;

Op ServingMemoryOp(std::string name, int64_t bytes) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kMemoryBound;
  op.bytes = sim::Bytes(bytes);
  return op;
}

Op ServingCollective(std::string name, models::CommKind kind, int64_t bytes) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kCollective;
  op.comm = kind;
  op.group = kind == models::CommKind::kSendRecv   ? models::CommGroup::kPipeline
             : kind == models::CommKind::kAllToAll ? models::CommGroup::kExpert
                                                   : models::CommGroup::kTensor;
  op.comm_bytes = sim::Bytes(bytes);
  return op;
}

Op ServingGemm(std::string name, int64_t rows, int64_t n, int64_t k, models::Dtype dtype,
               double weight_bits, double matrices, int64_t batch) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kGemm;
  op.m = rows;
  op.n = n;
  op.k = k;
  op.batch = batch;
  op.dtype = dtype;
  op.flops = sim::Flops(2.0 * static_cast<double>(batch) * static_cast<double>(rows) *
                        static_cast<double>(n) * static_cast<double>(k));
  op.bytes = sim::Bytes(batch * (rows * k * 2 + rows * n * 2) +
                        static_cast<int64_t>(matrices * static_cast<double>(batch) *
                                             static_cast<double>(k * n) * weight_bits / 8.0));
  return op;
}

Op ServingAttentionOp(std::string name, int64_t heads, int64_t m, int64_t n, int64_t k,
                      models::Dtype dtype, double flops, int64_t bytes) {
  Op a;
  a.name = std::move(name);
  a.kind = OpKind::kAttention;
  a.batch = heads;
  a.m = m;
  a.n = n;
  a.k = k;
  a.dtype = dtype;
  a.flops = sim::Flops(flops);
  a.bytes = sim::Bytes(bytes);
  return a;
}

absl::Status ValidateServingExpertParallel(const models::ReplicaModel& r) {
  const int ep = r.expert_parallel;
  if (ep < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.expert_parallel_size=", ep, " must be >= 1; 1 keeps experts tensor-parallel"));
  }
  if (ep == 1) return absl::OkStatus();
  if (r.model.num_experts == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.expert_parallel_size=", ep,
                     " needs a mixture-of-experts model (model.num_experts is 0); set it to 1"));
  }
  if (ep != r.tensor_parallel) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.expert_parallel_size=", ep,
        " must equal inference.tensor_parallel_size=", r.tensor_parallel,
        ": the replica's GPUs run data-parallel attention and hold 1/ep of the experts each; "
        "set both to the replica's GPU count"));
  }
  if (r.model.num_experts % ep != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.expert_parallel_size=", ep,
                     " must divide model.num_experts=", r.model.num_experts));
  }
  return absl::OkStatus();
}

bool BlockFp8ActivationQuant(const models::ReplicaModel& replica, const models::GpuSpec& gpu) {
  return replica.model.fp8_weight_block > 0 &&
         replica.weight_format == models::WeightFormat::kFp8 &&
         !gpu.Supports(models::Dtype::kFp4);
}

ServingOpBuilder::ServingOpBuilder(const models::ReplicaModel& replica, models::Dtype gemm_dtype,
                                   models::Dtype attention_dtype, bool quantize_activations)
    : replica_(&replica),
      gemm_dtype_(gemm_dtype),
      attention_dtype_(attention_dtype),
      tp_(replica.tensor_parallel),
      ep_(replica.expert_parallel),
      quantize_activations_(quantize_activations) {}

void ServingOpBuilder::ActivationQuant(std::string name, int64_t rows, int64_t k,
                                       std::vector<Op>* ops) const {
  if (!quantize_activations_ || rows <= 0) return;
  // 16-bit in, FP8 out, one FP32 scale per group of the block.
  const int64_t block = replica_->model.fp8_weight_block;
  ops->push_back(ServingMemoryOp(std::move(name), rows * k * (2 + 1) +
                                                      rows * ((k + block - 1) / block) * 4));
}

int64_t ServingOpBuilder::Rows(int64_t tokens) const { return (tokens + ep_ - 1) / ep_; }

int64_t ServingOpBuilder::RankRows(const IterationTotals& t) const {
  return ep_ > 1 && t.rank_tokens > 0 ? t.rank_tokens : Rows(t.tokens);
}

int64_t ServingOpBuilder::Heads() const {
  return replica_->model.num_attention_heads / AttentionTp();
}

Op ServingOpBuilder::Gemm(std::string name, int64_t rows, int64_t n, int64_t k, double matrices,
                          int64_t batch) const {
  return ServingGemm(std::move(name), rows, n, k, gemm_dtype_,
                     models::BitsPerWeight(replica_->weight_format, replica_->quant_group_size, k),
                     matrices, batch);
}

Op ServingOpBuilder::AttentionGemm(std::string name, int64_t rows, int64_t n, int64_t k,
                                   int64_t batch) const {
  const models::TransformerConfig& m = replica_->model;
  if ((m.mla() && m.num_experts > 0 && replica_->weight_format == models::WeightFormat::kNvfp4) ||
      models::AttentionKeeps16Bit(replica_->weight_format)) {
    return ServingGemm(std::move(name), rows, n, k, attention_dtype_, 16.0, 1, batch);
  }
  return Gemm(std::move(name), rows, n, k, 1, batch);
}

void ServingOpBuilder::LatentAttention(const IterationTotals& t, std::vector<Op>* ops) const {
  const models::TransformerConfig& m = replica_->model;
  const int64_t rows = RankRows(t), h = m.hidden_size, heads = Heads();
  const int64_t d = m.head_dim(), v = m.v_head_dim, nope = m.qk_nope_head_dim;
  const int64_t c = m.kv_lora_rank, latent = m.kv_lora_rank + m.qk_rope_head_dim;
  const int64_t kv_bytes = models::BytesPerElement(replica_->kv_cache_dtype);
  // One quantization of the layer input serves the q and kv down-projections
  // (one fused Linear).
  ActivationQuant(m.q_lora_rank > 0 ? "q_down_gemm_act_quant" : "q_gemm_act_quant", rows, h, ops);
  if (m.q_lora_rank > 0) {
    ops->push_back(AttentionGemm("q_down_gemm", rows, m.q_lora_rank, h));
    ops->push_back(ServingMemoryOp("q_latent_norm", rows * m.q_lora_rank * 2 * 2));
    ActivationQuant("q_up_gemm_act_quant", rows, m.q_lora_rank, ops);
    ops->push_back(AttentionGemm("q_up_gemm", rows, heads * d, m.q_lora_rank));
  } else {
    ops->push_back(AttentionGemm("q_gemm", rows, heads * d, h));
  }
  ops->push_back(AttentionGemm("kv_down_gemm", rows, latent, h));
  ops->push_back(ServingMemoryOp("kv_latent_norm", rows * c * 2 * 2));
  ops->push_back(ServingMemoryOp("kv_cache_write", rows * latent * (2 + kv_bytes)));
  // Under EP each GPU decodes 1/ep of the sequences (balanced) and runs the
  // prompts placed on it (the busiest rank's), or 1/ep of them when spread.
  const bool placed = ep_ > 1 && t.rank_tokens > 0;
  if (placed ? t.rank_prefill_tokens > 0 : t.prefill_tokens > 0) {
    const int64_t kv_tokens =
        placed ? t.rank_prefill_kv_tokens : ShareOf(t.prefill_kv_tokens, ep_);
    const int64_t q_tokens = placed ? t.rank_prefill_tokens : ShareOf(t.prefill_tokens, ep_);
    const double pairs =
        placed ? t.rank_prefill_pairs : t.prefill_pairs / static_cast<double>(ep_);
    ActivationQuant("attention_prefill_kv_up_act_quant", kv_tokens, c, ops);
    ops->push_back(AttentionGemm("attention_prefill_kv_up", kv_tokens, heads * (nope + v), c));
    ops->push_back(ServingAttentionOp(
        "attention_prefill", heads, q_tokens, kv_tokens, d, attention_dtype_,
        2.0 * static_cast<double>(heads * (d + v)) * pairs,
        q_tokens * heads * (d + v) * 2 + kv_tokens * heads * (d + v) * 2 +
            kv_tokens * latent * kv_bytes));
  }
  if (t.decode_seqs > 0) {
    // One query per sequence, or 1 + k under speculative decoding.
    const int64_t seqs = ShareOf(t.decode_queries, ep_), cached = ShareOf(t.decode_kv_tokens, ep_);
    ActivationQuant("attention_decode_q_absorb_act_quant", seqs * heads, nope, ops);
    ops->push_back(AttentionGemm("attention_decode_q_absorb", seqs, c, nope, heads));
    ops->push_back(
        ServingAttentionOp("attention_decode", heads, seqs, cached, latent, attention_dtype_,
                           2.0 * static_cast<double>(heads) * static_cast<double>(latent + c) *
                               t.decode_pairs / static_cast<double>(ep_),
                           cached * latent * kv_bytes + seqs * heads * (latent + c) * 2));
    ActivationQuant("attention_decode_v_absorb_act_quant", seqs * heads, c, ops);
    ops->push_back(AttentionGemm("attention_decode_v_absorb", seqs, v, c, heads));
  }
}

Op ServingOpBuilder::GroupedGemm(std::string name, const ExpertRows& r, int64_t n, int64_t k,
                                 double matrices) const {
  // Bytes of the busiest GPU's rows and expert weights; M of its rows in
  // whole 128-row tiles, so the kernel model's wave count sees at least one M
  // tile per touched expert.
  Op op = Gemm(std::move(name), static_cast<int64_t>(std::ceil(r.busiest)), n, k, matrices);
  op.m = static_cast<int64_t>(std::ceil(r.padded));
  const double nk = static_cast<double>(n) * static_cast<double>(k);
  if (r.busiest >= kGroupedGemmTileRows * matrices) {
    // The touched experts average whole 128-row tiles (the measured shapes
    // run 256 to 8,192 rows per expert): the kernel computes those tiles,
    // and as each expert's weight tiles are reused only by its own rows, the
    // HBM and tensor-core times are close and overlap imperfectly.
    op.flops = sim::Flops(2.0 * r.padded * nk);
    op.roofline_overlap = kGroupedGemmRooflineOverlap;
  } else {
    // Fewer rows: the kernel runs 16-row M tiles (kGroupedGemmSmallTileRows),
    // so it computes each expert's rows padded to 16, not to 128, and mostly
    // streams the touched experts' weights: max() of the two times.
    op.flops = sim::Flops(2.0 * r.small_padded * nk);
  }
  return op;
}

double ServingOpBuilder::ModelFlops(const Op& op, const IterationTotals& t) const {
  if (op.kind != OpKind::kGemm || !op.name.starts_with("expert_")) return op.flops.count();
  const double routed = static_cast<double>(t.tokens * replica_->model.moe_top_k) / ep_;
  return 2.0 * routed * static_cast<double>(op.n) * static_cast<double>(op.k);
}

Op ServingOpBuilder::MoeRouting(int64_t rows) const {
  // Reads the router's FP32 logits, writes each row's k expert ids and
  // weights (32 bits each) and the expert-sorted order of its k entries.
  const int64_t e = replica_->model.num_experts, k = replica_->model.moe_top_k;
  return ServingMemoryOp("moe_routing", rows * (e * 4 + k * 4 * 3));
}

void ServingOpBuilder::MoeMlp(const IterationTotals& t, std::vector<Op>* ops) const {
  const models::TransformerConfig& m = replica_->model;
  const bool gated = m.activation == models::Activation::kSwiglu;
  const int64_t h = m.hidden_size, rows = RankRows(t), k = m.moe_top_k;
  ops->push_back(ServingGemm("router_gemm", rows, m.num_experts, h, attention_dtype_, 16.0));
  ExpertRows r;
  if (ep_ > 1) {
    // Every GPU holds whole experts (E/ep of them); the layer waits for the
    // GPU that receives the most routed rows and reads the weights of the
    // experts they touch. Both all-to-alls are sized by its rows.
    const int64_t f = m.expert_ffn_size();
    r.busiest =
        ExpectedMaxRankRows(m.num_experts, m.moe_top_k, t.tokens, ep_, m.moe_expert_load_cv);
    const int per_gpu = m.num_experts / static_cast<int>(ep_);
    const double experts = ExpectedRankExpertsTouched(per_gpu, r.busiest);
    const int64_t busiest = static_cast<int64_t>(std::ceil(r.busiest));
    // Each of its rows goes to one of its E/ep experts.
    r.padded = ExpectedPaddedRows(per_gpu, 1, busiest, kGroupedGemmTileRows);
    r.small_padded = ExpectedPaddedRows(per_gpu, 1, busiest, kGroupedGemmSmallTileRows);
    // The all-to-all waits for the GPU that receives or sends the most rows.
    const int64_t exchanged = std::max(busiest, (t.rank_tokens > 0 ? t.rank_tokens : 0) * k);
    ops->push_back(MoeRouting(rows));
    ops->push_back(ServingCollective("ep_alltoall_dispatch", models::CommKind::kAllToAll,
                                     exchanged * h * 2));
    // The busiest GPU gathers its received rows by expert and, after the
    // experts, sums each of its own tokens' k outputs.
    ops->push_back(ServingMemoryOp("moe_permute", busiest * h * 2 * 2));
    ops->push_back(GroupedGemm("expert_gate_up_gemm", r, gated ? 2 * f : f, h, experts));
    ops->push_back(ServingMemoryOp("activation", busiest * f * (gated ? 3 : 2) * 2));
    ops->push_back(GroupedGemm("expert_down_gemm", r, h, f, experts));
    ops->push_back(ServingMemoryOp("moe_finalize", (busiest + rows) * h * 2));
    ops->push_back(ServingCollective("ep_alltoall_combine", models::CommKind::kAllToAll,
                                     exchanged * h * 2));
  } else {
    // Routed experts as one grouped GEMM over the T·k routed rows, every
    // expert sharded over TP, reading the weights of the experts the batch
    // touches.
    const int64_t f = m.expert_ffn_size() / tp_, routed = t.tokens * k;
    const double touched = ExpectedExpertsTouched(m.num_experts, m.moe_top_k, t.tokens);
    r.busiest = static_cast<double>(routed);
    r.padded = ExpectedPaddedRows(m.num_experts, m.moe_top_k, t.tokens, kGroupedGemmTileRows);
    r.small_padded =
        ExpectedPaddedRows(m.num_experts, m.moe_top_k, t.tokens, kGroupedGemmSmallTileRows);
    ops->push_back(MoeRouting(rows));
    ops->push_back(ServingMemoryOp("moe_permute", (rows + routed) * h * 2));
    ops->push_back(GroupedGemm("expert_gate_up_gemm", r, gated ? 2 * f : f, h, touched));
    ops->push_back(ServingMemoryOp("activation", routed * f * (gated ? 3 : 2) * 2));
    ops->push_back(GroupedGemm("expert_down_gemm", r, h, f, touched));
    ops->push_back(ServingMemoryOp("moe_finalize", (routed + rows) * h * 2));
  }
  if (m.moe_shared_expert_ffn_size > 0) {
    const int64_t fs = m.moe_shared_expert_ffn_size / AttentionTp();
    ActivationQuant("shared_gate_up_gemm_act_quant", rows, h, ops);
    ops->push_back(Gemm("shared_gate_up_gemm", rows, gated ? 2 * fs : fs, h));
    ops->push_back(ServingMemoryOp("shared_activation", rows * fs * (gated ? 3 : 2) * 2));
    ActivationQuant("shared_down_gemm_act_quant", rows, fs, ops);
    ops->push_back(Gemm("shared_down_gemm", rows, h, fs));
  }
}

}  // namespace clustersim::strategies
