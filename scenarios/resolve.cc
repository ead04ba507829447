#include "scenarios/resolve.h"

#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/dtype.h"
#include "models/pricing.h"

namespace clustersim::scenarios {
namespace {

absl::Status WithField(const absl::Status& s, std::string_view field) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(std::string(field), ": ", s.message()));
}

// Prefix -> node preset. First match wins; see topology's preset list.
struct NodeRule {
  std::string_view gpu_prefix;
  std::string_view node;
};
constexpr NodeRule kNodeRules[] = {
    {"a100-sxm4", "dgx-a100"},  {"h100-sxm5", "dgx-h100"}, {"h200-sxm", "dgx-h200"},
    {"b200", "hgx-b200"},       {"rtx-4090", "pcie-rtx4090-8x"}, {"l40s", "pcie-l40s-8x"},
    {"a10g", "pcie-a10g-8x"},
};

absl::Status ResolveModel(const config::ModelConfig& in, models::TransformerConfig* out) {
  if (in.has_preset()) {
    absl::StatusOr<models::TransformerConfig> preset =
        models::ModelCatalog::Default().Find(in.preset());
    if (!preset.ok()) return WithField(preset.status(), "model.preset");
    *out = *preset;
  } else {
    out->name = "custom";
    for (auto [has, field] : {std::pair{in.has_num_layers(), "num_layers"},
                              std::pair{in.has_hidden_size(), "hidden_size"},
                              std::pair{in.has_num_attention_heads(), "num_attention_heads"},
                              std::pair{in.has_seq_length(), "seq_length"},
                              std::pair{in.has_vocab_size(), "vocab_size"}}) {
      if (!has) {
        return absl::InvalidArgumentError(
            absl::StrCat("model.", field, " is required when model.preset is not set; set it, or "
                         "name a preset (`clustersim list models`)"));
      }
    }
  }
  if (in.has_num_layers()) out->num_layers = in.num_layers();
  if (in.has_hidden_size()) out->hidden_size = in.hidden_size();
  if (in.has_num_attention_heads()) out->num_attention_heads = in.num_attention_heads();
  if (in.has_seq_length()) out->seq_length = in.seq_length();
  if (in.has_vocab_size()) out->vocab_size = in.vocab_size();
  if (in.has_swiglu()) {
    out->activation = in.swiglu() ? models::Activation::kSwiglu : models::Activation::kGelu;
  }
  if (in.has_ffn_hidden_size()) {
    out->ffn_hidden_size = in.ffn_hidden_size();
  } else if (!in.has_preset() || in.has_hidden_size()) {
    out->ffn_hidden_size = 4 * out->hidden_size;
  }
  if (in.has_num_query_groups()) {
    out->num_query_groups = in.num_query_groups();
  } else if (!in.has_preset() || in.has_num_attention_heads()) {
    out->num_query_groups = out->num_attention_heads;
  }
  if (in.has_norm()) {
    if (in.norm() == "layernorm") {
      out->norm = models::Norm::kLayerNorm;
    } else if (in.norm() == "rmsnorm") {
      out->norm = models::Norm::kRmsNorm;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("model.norm=\"", in.norm(),
                                                     "\" is not known; use layernorm or rmsnorm"));
    }
  }
  if (in.has_tied_embeddings()) out->tied_embeddings = in.tied_embeddings();
  if (in.has_num_experts()) out->num_experts = in.num_experts();
  if (in.has_moe_top_k()) out->moe_top_k = in.moe_top_k();
  return models::ValidateTransformer(*out);
}

absl::StatusOr<models::Recompute> ParseRecompute(std::string_view s) {
  if (s == "none") return models::Recompute::kNone;
  if (s == "selective") return models::Recompute::kSelective;
  if (s == "full") return models::Recompute::kFull;
  return absl::InvalidArgumentError(absl::StrCat(
      "training.recompute_granularity=\"", std::string(s), "\" is not known; use none, selective or full"));
}

void EchoModel(const models::TransformerConfig& m, config::ModelConfig* out) {
  out->set_num_layers(m.num_layers);
  out->set_hidden_size(m.hidden_size);
  out->set_ffn_hidden_size(m.ffn_hidden_size);
  out->set_num_attention_heads(m.num_attention_heads);
  out->set_num_query_groups(m.num_query_groups);
  out->set_seq_length(m.seq_length);
  out->set_vocab_size(m.vocab_size);
  out->set_swiglu(m.activation == models::Activation::kSwiglu);
  out->set_norm(m.norm == models::Norm::kRmsNorm ? "rmsnorm" : "layernorm");
  out->set_tied_embeddings(m.tied_embeddings);
  out->set_num_experts(m.num_experts);
  out->set_moe_top_k(m.moe_top_k);
}

}  // namespace

absl::StatusOr<std::string> DefaultNodeFor(const models::GpuSpec& gpu) {
  for (const NodeRule& r : kNodeRules) {
    if (absl::StartsWith(gpu.name, std::string(r.gpu_prefix))) return std::string(r.node);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "cluster.node is required for GPU ", gpu.name,
      " (no default server for it); set it to a preset (`clustersim list clusters`)"));
}

absl::StatusOr<ResolvedScenario> Resolve(const config::Scenario& in) {
  ResolvedScenario r;
  r.echo = in;
  r.name = in.name().empty() ? "scenario" : in.name();

  // Cluster.
  const config::ClusterConfig& c = in.cluster();
  if (!c.has_gpu()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.gpu is required; use one of: ",
        absl::StrJoin(models::GpuCatalog::Default().Names(), ", ")));
  }
  absl::StatusOr<const models::GpuSpec*> gpu = models::GpuCatalog::Default().Find(c.gpu());
  if (!gpu.ok()) return WithField(gpu.status(), "cluster.gpu");
  r.gpu = *gpu;
  if (c.has_node()) {
    r.cluster.node_preset = c.node();
  } else {
    absl::StatusOr<std::string> node = DefaultNodeFor(*r.gpu);
    if (!node.ok()) return node.status();
    r.cluster.node_preset = *node;
  }
  const int gpus_per_node = c.has_gpus_per_node() ? c.gpus_per_node() : 8;
  if (gpus_per_node < 1) {
    return absl::InvalidArgumentError(absl::StrCat("cluster.gpus_per_node=", gpus_per_node,
                                                   " must be at least 1"));
  }
  r.num_gpus = c.has_num_gpus() ? c.num_gpus() : gpus_per_node;
  if (r.num_gpus < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.num_gpus=", r.num_gpus, " must be at least 1"));
  }
  r.cluster.num_nodes = (r.num_gpus + gpus_per_node - 1) / gpus_per_node;
  const config::FabricConfig& f = c.fabric();
  if (f.has_kind()) r.cluster.fabric.kind = f.kind();
  if (f.has_tiers()) r.cluster.fabric.tiers = f.tiers();
  if (f.has_oversubscription()) r.cluster.fabric.oversubscription = f.oversubscription();
  if (f.has_link()) r.cluster.fabric.link = f.link();

  // Model.
  if (auto s = ResolveModel(in.model(), &r.model); !s.ok()) return s;

  // Training and parallelism.
  const config::TrainingConfig& t = in.training();
  const config::ParallelismConfig& p = in.parallelism();
  strategies::ParallelConfig& pc = r.parallel;
  pc.tensor_parallel = p.has_tensor_model_parallel_size() ? p.tensor_model_parallel_size() : 1;
  pc.pipeline_parallel =
      p.has_pipeline_model_parallel_size() ? p.pipeline_model_parallel_size() : 1;
  pc.context_parallel = p.has_context_parallel_size() ? p.context_parallel_size() : 1;
  pc.expert_parallel = p.has_expert_model_parallel_size() ? p.expert_model_parallel_size() : 1;
  pc.virtual_pipeline = p.has_virtual_pipeline_model_parallel_size()
                            ? p.virtual_pipeline_model_parallel_size()
                            : 1;
  pc.sequence_parallel = p.sequence_parallel();
  pc.distributed_optimizer = p.use_distributed_optimizer();
  pc.overlap_grad_reduce = p.overlap_grad_reduce();
  pc.zero_stage = p.zero_stage();
  pc.data_parallel = p.has_data_parallel_size() ? p.data_parallel_size() : 0;
  pc.micro_batch_size = t.has_micro_batch_size() ? t.micro_batch_size() : 1;
  const std::string precision = t.has_precision() ? t.precision() : "bf16";
  absl::StatusOr<models::Dtype> dtype = models::ParseDtype(precision);
  if (!dtype.ok()) return WithField(dtype.status(), "training.precision");
  if (*dtype != models::Dtype::kBf16 && *dtype != models::Dtype::kFp16) {
    return absl::UnimplementedError(absl::StrCat("training.precision=\"", precision,
                                                 "\" is not supported yet; use bf16 or fp16"));
  }
  if (auto s = models::CheckDtypeSupported(*r.gpu, *dtype); !s.ok()) {
    return WithField(s, "training.precision");
  }
  pc.precision = *dtype;
  absl::StatusOr<models::Recompute> rc =
      ParseRecompute(t.has_recompute_granularity() ? t.recompute_granularity() : "none");
  if (!rc.ok()) return rc.status();
  pc.recompute = *rc;
  if (t.has_global_batch_size()) {
    pc.global_batch_size = t.global_batch_size();
  } else {
    const int mp = pc.tensor_parallel * pc.pipeline_parallel * pc.context_parallel;
    pc.global_batch_size = pc.micro_batch_size * (mp > 0 ? std::max(1, r.num_gpus / mp) : 1);
  }
  if (auto s = strategies::ValidateParallelConfig(r.model, r.num_gpus, &pc); !s.ok()) return s;

  // Network.
  const config::NetworkConfig& n = in.network();
  const std::string tier = n.has_tier() ? n.tier() : "analytic";
  if (tier != "analytic") {
    return absl::UnimplementedError(absl::StrCat(
        "network.tier=\"", tier, "\" is not supported yet; use analytic (alpha-beta)"));
  }
  const std::string algo = n.has_collective_algorithm() ? n.collective_algorithm() : "auto";
  absl::StatusOr<topology::Algorithm> a = topology::ParseAlgorithm(algo);
  if (!a.ok()) return WithField(a.status(), "network.collective_algorithm");
  r.algorithm = *a;

  // Price.
  if (in.pricing().has_usd_per_gpu_hour()) {
    r.usd_per_gpu_hour = in.pricing().usd_per_gpu_hour();
    r.price_source = "scenario pricing.usd_per_gpu_hour";
    if (r.usd_per_gpu_hour < 0) {
      return absl::InvalidArgumentError("pricing.usd_per_gpu_hour must not be negative");
    }
  } else if (auto price = models::DefaultGpuHourPrice(r.gpu->name)) {
    r.usd_per_gpu_hour = price->usd_per_gpu_hour;
    r.price_source = std::string(price->source);
  } else {
    r.price_source = "no default price for this GPU; set pricing.usd_per_gpu_hour";
  }

  // Echo every resolved value.
  config::Scenario& e = r.echo;
  e.set_name(r.name);
  e.mutable_cluster()->set_gpu(r.gpu->name);
  e.mutable_cluster()->set_num_gpus(r.num_gpus);
  e.mutable_cluster()->set_gpus_per_node(gpus_per_node);
  e.mutable_cluster()->set_node(r.cluster.node_preset);
  config::FabricConfig* ef = e.mutable_cluster()->mutable_fabric();
  ef->set_kind(r.cluster.fabric.kind);
  ef->set_tiers(r.cluster.fabric.tiers);
  ef->set_oversubscription(r.cluster.fabric.oversubscription);
  ef->set_link(r.cluster.fabric.link);
  const std::string preset_name = in.model().has_preset() ? in.model().preset() : "";
  EchoModel(r.model, e.mutable_model());
  if (!preset_name.empty()) e.mutable_model()->set_preset(preset_name);
  config::ParallelismConfig* ep = e.mutable_parallelism();
  ep->set_tensor_model_parallel_size(pc.tensor_parallel);
  ep->set_pipeline_model_parallel_size(pc.pipeline_parallel);
  ep->set_context_parallel_size(pc.context_parallel);
  ep->set_expert_model_parallel_size(pc.expert_parallel);
  ep->set_virtual_pipeline_model_parallel_size(pc.virtual_pipeline);
  ep->set_sequence_parallel(pc.sequence_parallel);
  ep->set_use_distributed_optimizer(pc.distributed_optimizer);
  ep->set_overlap_grad_reduce(pc.overlap_grad_reduce);
  ep->set_zero_stage(pc.zero_stage);
  ep->set_data_parallel_size(pc.data_parallel);
  config::TrainingConfig* et = e.mutable_training();
  et->set_micro_batch_size(pc.micro_batch_size);
  et->set_global_batch_size(pc.global_batch_size);
  et->set_precision(std::string(models::DtypeName(pc.precision)));
  et->set_recompute_granularity(t.has_recompute_granularity() ? t.recompute_granularity()
                                                              : "none");
  e.mutable_pricing()->set_usd_per_gpu_hour(r.usd_per_gpu_hour);
  e.mutable_network()->set_tier(tier);
  e.mutable_network()->set_collective_algorithm(algo);
  return r;
}

}  // namespace clustersim::scenarios
