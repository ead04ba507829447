#include "models/finetune_ops.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "models/dtype.h"
#include "models/flops.h"
#include "sim/status_macros.h"

namespace clustersim::models {
namespace {

// The frozen linears of a transformer layer, by their forward op name.
constexpr const char* kLayerLinears[] = {"qkv_gemm",   "out_proj_gemm",   "fc1_gemm",
                                         "fc2_gemm",   "router_gemm",     "expert_fc1_gemm",
                                         "expert_fc2_gemm"};
constexpr const char* kHeadLinear = "lm_head_gemm";  // frozen, kept in 16 bits under QLoRA

bool IsLayerLinear(absl::string_view name) {
  for (const char* l : kLayerLinears) {
    if (name == l) return true;
  }
  return false;
}

// The base GEMM a "<gemm>_dgrad" / "<gemm>_wgrad" op belongs to ("" if none).
absl::string_view BaseOf(absl::string_view name, absl::string_view suffix) {
  if (!absl::EndsWith(name, suffix)) return {};
  absl::string_view base = name.substr(0, name.size() - suffix.size());
  return IsLayerLinear(base) || base == kHeadLinear ? base : absl::string_view();
}

// One adapted module inside a base GEMM: its Hugging Face name and its share
// of the GEMM's output width on this tensor-parallel rank.
struct Module {
  const char* name;
  int64_t out;
};

std::vector<Module> ModulesOf(const TransformerConfig& c, const FinetuneSpec& f, int tp,
                              absl::string_view gemm) {
  const LoraTargets& t = f.targets;
  const int64_t d = c.head_dim();
  std::vector<Module> out;
  if (gemm == "qkv_gemm") {
    if (t.q_proj) out.push_back({"q_proj", c.num_attention_heads / tp * d});
    if (t.k_proj) out.push_back({"k_proj", c.num_query_groups / tp * d});
    if (t.v_proj) out.push_back({"v_proj", c.num_query_groups / tp * d});
  } else if (gemm == "out_proj_gemm") {
    if (t.o_proj) out.push_back({"o_proj", c.hidden_size});
  } else if (gemm == "fc1_gemm" || gemm == "expert_fc1_gemm") {
    if (t.gate_proj && c.activation == Activation::kSwiglu) {
      out.push_back({"gate_proj", c.ffn_hidden_size / tp});
    }
    if (t.up_proj) out.push_back({"up_proj", c.ffn_hidden_size / tp});
  } else if (gemm == "fc2_gemm" || gemm == "expert_fc2_gemm") {
    if (t.down_proj) out.push_back({"down_proj", c.hidden_size});
  }
  return out;
}

// Adapter ops run in 16 bits under FP8 (Transformer Engine does not cover them).
Dtype AdapterDtype(const Op& base) {
  return IsQuantizedGemmDtype(base.dtype) ? Dtype::kBf16 : base.dtype;
}

Op MemoryBound(std::string name, double bytes, Dtype dtype, bool recompute) {
  Op op;
  op.name = std::move(name);
  op.bytes = sim::Bytes(static_cast<int64_t>(bytes));
  op.dtype = dtype;
  op.recompute = recompute;
  return op;  // kind kMemoryBound, 0 FLOPs
}

// batch x (m x k)·(k x n), reading both operands and writing the result.
Op Gemm(std::string name, int64_t m, int64_t n, int64_t k, int64_t batch, Dtype dtype,
        bool recompute) {
  const double bytes = static_cast<double>(batch * (m * k + k * n + m * n) * BytesPerElement(dtype));
  Op op = MemoryBound(std::move(name), bytes, dtype, recompute);
  op.kind = OpKind::kGemm;
  std::tie(op.m, op.n, op.k, op.batch) = std::tie(m, n, k, batch);
  op.flops = sim::Flops(2.0 * batch * m * n * k);
  return op;
}

std::string AdapterName(absl::string_view gemm, const Module& mod) {
  return absl::StrCat("lora_", absl::StartsWith(gemm, "expert_") ? "expert_" : "", mod.name);
}

// After base forward GEMM `fwd` (m x n x k): x·A, ·B and the scaled add.
void AdapterForward(const Op& fwd, const std::vector<Module>& modules, int r,
                    std::vector<Op>* out) {
  const Dtype dt = AdapterDtype(fwd);
  const int64_t e = BytesPerElement(dt);
  for (const Module& mod : modules) {
    const std::string name = AdapterName(fwd.name, mod);
    out->push_back(Gemm(name + "_a", fwd.m, r, fwd.k, fwd.batch, dt, fwd.recompute));
    out->push_back(Gemm(name + "_b", fwd.m, mod.out, r, fwd.batch, dt, fwd.recompute));
    out->push_back(MemoryBound(name + "_add", 5.0 * fwd.batch * fwd.m * mod.out * e, dt,
                               fwd.recompute));
  }
}

// After base dgrad `dgrad` (m x in x out): the adapters' backward.
void AdapterBackward(const Op& dgrad, absl::string_view gemm, const std::vector<Module>& modules,
                     int r, std::vector<Op>* out) {
  const Dtype dt = AdapterDtype(dgrad);
  const int64_t e = BytesPerElement(dt);
  const int64_t m = dgrad.m, in = dgrad.n, b = dgrad.batch;
  for (const Module& mod : modules) {
    const std::string name = AdapterName(gemm, mod);
    out->push_back(Gemm(name + "_b_dgrad", m, r, mod.out, b, dt, false));
    out->push_back(Gemm(name + "_b_wgrad", r, mod.out, m, b, dt, false));
    out->push_back(Gemm(name + "_a_dgrad", m, in, r, b, dt, false));
    out->push_back(Gemm(name + "_a_wgrad", in, r, m, b, dt, false));
    out->push_back(
        MemoryBound(name + "_bwd_add", (2.0 * m * mod.out + 3.0 * m * in) * b * e, dt, false));
  }
}

// bitsandbytes dequantize_4bit of the weight of `gemm_op` (k x n per batch).
Op Dequant(absl::string_view base, const Op& gemm_op, int64_t weight_elements) {
  return MemoryBound(absl::StrCat("nf4_dequant_", std::string(base)),
                     static_cast<double>(weight_elements) * (kNf4BytesPerParameter + 2),
                     Dtype::kBf16, gemm_op.recompute);
}

std::vector<Op> Rewrite(const TransformerConfig& c, const FinetuneSpec& f, int tp,
                        const std::vector<Op>& ops) {
  const bool qlora = f.method == FinetuneMethod::kQlora;
  std::vector<Op> out;
  for (const Op& op : ops) {
    if (op.name == "embedding_bwd" || !BaseOf(op.name, "_wgrad").empty()) continue;
    if (op.kind == OpKind::kGemm && IsLayerLinear(op.name)) {
      if (qlora) out.push_back(Dequant(op.name, op, op.batch * op.n * op.k));
      out.push_back(op);
      AdapterForward(op, ModulesOf(c, f, tp, op.name), f.lora_rank, &out);
      continue;
    }
    const absl::string_view base = BaseOf(op.name, "_dgrad");
    if (base.empty()) {
      out.push_back(op);
      continue;
    }
    // dgrad of W (k x n): m x k x n, so the weight has op.n·op.k elements too.
    if (qlora && base != kHeadLinear) out.push_back(Dequant(base, op, op.batch * op.n * op.k));
    out.push_back(op);
    AdapterBackward(op, base, ModulesOf(c, f, tp, base), f.lora_rank, &out);
  }
  return out;
}

// Adapter parameters one token passes through: all attention adapters and
// top-k experts' MLP adapters (tensor parallel 1).
double AdapterParametersPerToken(const TransformerConfig& c, const FinetuneSpec& f) {
  TransformerConfig dense = c;
  dense.num_experts = 0;
  FinetuneSpec attention = f, mlp = f;
  attention.targets.gate_proj = attention.targets.up_proj = attention.targets.down_proj = false;
  mlp.targets.q_proj = mlp.targets.k_proj = mlp.targets.v_proj = mlp.targets.o_proj = false;
  const double k = c.num_experts > 0 ? c.moe_top_k : 1;
  return c.num_layers * (LoraParametersPerLayer(dense, attention, 1, 1) +
                         k * LoraParametersPerLayer(dense, mlp, 1, 1));
}

}  // namespace

absl::Status ApplyFinetune(const TransformerConfig& c, const FinetuneSpec& f, const ShardSpec& s,
                           Workload* w) {
  CLUSTERSIM_RETURN_IF_ERROR(ValidateFinetune(c, f));
  if (f.method == FinetuneMethod::kFull) return absl::OkStatus();
  const int tp = s.tensor_parallel;
  for (std::vector<Op>* ops :
       {&w->embedding_forward, &w->embedding_backward, &w->layer_forward, &w->layer_backward,
        &w->dense_layer_forward, &w->dense_layer_backward, &w->head_forward, &w->head_backward}) {
    *ops = Rewrite(c, f, tp, *ops);
  }
  for (int k = 0; k < kHybridKinds; ++k) {
    w->hybrid_forward[k] = Rewrite(c, f, tp, w->hybrid_forward[k]);
    w->hybrid_backward[k] = Rewrite(c, f, tp, w->hybrid_backward[k]);
  }
  return absl::OkStatus();
}

double AdapterParameters(const TransformerConfig& c, const FinetuneSpec& f) {
  return c.num_layers * LoraParametersPerLayer(c, f, 1, 1);
}

double FinetuneModelFlops(const TransformerConfig& c, const FinetuneSpec& f,
                          int64_t global_batch) {
  const double full = MegatronModelFlops(c, global_batch);
  if (f.method == FinetuneMethod::kFull) return full;
  const double b = static_cast<double>(global_batch), s = c.seq_length;
  // Forward FLOPs of the layer GEMMs: what full recompute adds over selective.
  const double layer_gemms = MegatronHardwareFlops(c, global_batch, Recompute::kFull) -
                             MegatronHardwareFlops(c, global_batch, Recompute::kSelective);
  const double logits = b * 2.0 * s * c.hidden_size * c.vocab_size;
  const double adapters = 3.0 * 2.0 * b * s * AdapterParametersPerToken(c, f);
  return full - layer_gemms - logits + adapters;
}

double FinetuneHardwareFlops(const TransformerConfig& c, const FinetuneSpec& f,
                             int64_t global_batch, Recompute r) {
  const double recomputed =
      MegatronHardwareFlops(c, global_batch, r) - MegatronModelFlops(c, global_batch);
  const double adapters = f.method != FinetuneMethod::kFull && r == Recompute::kFull
                              ? 2.0 * static_cast<double>(global_batch) * c.seq_length *
                                    AdapterParametersPerToken(c, f)
                              : 0.0;
  return FinetuneModelFlops(c, f, global_batch) + recomputed + adapters;
}

}  // namespace clustersim::models
