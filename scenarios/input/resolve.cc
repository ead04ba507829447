#include "scenarios/input/resolve.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/dtype.h"
#include "models/framework_profile.h"
#include "scenarios/input/limits.h"
#include "scenarios/input/resolve_cluster.h"
#include "scenarios/input/resolve_model.h"
#include "scenarios/input/resolve_recompute.h"
#include "strategies/activation_offload.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

absl::Status WithField(const absl::Status& s, std::string_view field) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(std::string(field), ": ", s.message()));
}

// An in-framework rate factor (models/framework_profile.h): in (0, 1].
absl::StatusOr<double> InFrameworkFactor(const char* field, double value, const char* meaning) {
  if (value > 0 && value <= 1) return value;
  return absl::InvalidArgumentError(absl::StrCat(
      field, "=", value, " must be in (0, 1]: ", meaning,
      "; omit it for the framework profile's value)"));
}

// Refuses the parallel features `stack` lacks, naming the setting, a fix and
// the stacks that have the feature.
absl::Status CheckStackFeatures(const models::FrameworkProfile& stack,
                                const strategies::ParallelConfig& pc) {
  struct Use {
    std::string_view feature;
    bool used;
    std::string setting;
  };
  const Use uses[] = {
      {"tensor_parallel", pc.tensor_parallel > 1,
       absl::StrCat("parallelism.tensor_model_parallel_size=", pc.tensor_parallel)},
      {"sequence_parallel", pc.sequence_parallel, "parallelism.sequence_parallel=true"},
      {"pipeline_parallel", pc.pipeline_parallel > 1,
       absl::StrCat("parallelism.pipeline_model_parallel_size=", pc.pipeline_parallel)},
      {"context_parallel", pc.context_parallel > 1,
       absl::StrCat("parallelism.context_parallel_size=", pc.context_parallel)},
      {"expert_parallel", pc.expert_parallel > 1,
       absl::StrCat("parallelism.expert_model_parallel_size=", pc.expert_parallel)},
      {"distributed_optimizer", pc.distributed_optimizer,
       "parallelism.use_distributed_optimizer=true"},
      {"zero", pc.zero_stage > 0, absl::StrCat("parallelism.zero_stage=", pc.zero_stage)},
      {"tp_comm_overlap", pc.tp_comm_overlap, "parallelism.tp_comm_overlap=true"},
      {"overlap_param_gather", pc.overlap_param_gather, "parallelism.overlap_param_gather=true"},
      {"moe_a2a_overlap", pc.overlap_moe_expert_parallel_comm,
       "parallelism.overlap_moe_expert_parallel_comm=true"},
      {"fp8", models::IsQuantizedGemmDtype(pc.precision),
       pc.precision == models::Dtype::kFp4 ? "training.precision=nvfp4" : "training.precision=fp8"},
  };
  for (const Use& u : uses) {
    if (!u.used || stack.Supports(u.feature)) continue;
    std::vector<std::string> having;
    for (const models::FrameworkProfile& p : models::FrameworkCatalog::Default().profiles()) {
      if (p.Supports(u.feature)) having.push_back(p.name);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        u.setting, ": training.framework=", stack.name, " (", stack.display_name, ") has no ",
        std::string(u.feature), "; turn it off, or name a stack that has it: ",
        absl::StrJoin(having, ", ")));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ResolvedScenario> Resolve(const config::Scenario& in) {
  CLUSTERSIM_RETURN_IF_ERROR(CheckFiniteNumbers(in));
  ResolvedScenario r;
  r.echo = in;
  r.name = in.name().empty() ? "scenario" : in.name();

  // Cluster.
  absl::StatusOr<ResolvedCluster> cluster = ResolveCluster(in.cluster());
  if (!cluster.ok()) return cluster.status();
  r.gpu = cluster->gpu;
  r.power_cap_w = cluster->power_cap_w;
  r.host_link = cluster->host_link;
  // Kernel, memory and network models of a training step are GPU ones; a
  // serving-only device (Jetson, Apple silicon, a CPU) says so instead of
  // producing numbers nobody measured.
  if (r.gpu->kind != models::DeviceKind::kGpu && !in.has_inference()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.gpu: ", r.gpu->name, " (", r.gpu->display_name, ") is a ",
        std::string(models::DeviceKindName(r.gpu->kind)),
        " device; training is modelled on discrete GPUs only (the kernel, memory and network "
        "models are GPU ones). Serve on it instead (an `inference` section), or train on a GPU "
        "such as h100-sxm5-80gb"));
  }
  r.cluster = cluster->spec;
  r.num_gpus = cluster->num_gpus;

  // Model.
  CLUSTERSIM_RETURN_IF_ERROR(ResolveModel(in.model(), &r.model));

  // Training and parallelism.
  const config::TrainingConfig& t = in.training();
  absl::StatusOr<const models::FrameworkProfile*> stack = models::FrameworkCatalog::Default().Find(
      t.has_framework() ? t.framework() : models::FrameworkCatalog::kDefault);
  if (!stack.ok()) return stack.status();
  r.framework = *stack;
  r.model.megatron_core_modules = r.framework->name == "megatron-core";
  if (t.has_attention()) {
    absl::StatusOr<models::AttentionBackend> attention = models::ParseAttentionBackend(t.attention());
    if (!attention.ok()) return attention.status();
    r.model.attention_backend = *attention;
  } else {
    r.model.attention_backend = r.framework->attention;
  }
  if (t.has_elementwise()) {
    absl::StatusOr<models::ElementwiseKernels> elementwise =
        models::ParseElementwiseKernels(t.elementwise(), "training.elementwise");
    if (!elementwise.ok()) return elementwise.status();
    r.model.elementwise = *elementwise;
  } else {
    r.model.elementwise = r.framework->elementwise;
  }
  r.model.tp_keeps_gathered_input = r.framework->tp_keeps_gathered_input.value > 0;
  r.model.fused_softmax_max_keys = static_cast<int>(r.framework->fused_softmax_max_keys.value);
  r.model.data_broadcast_host_sync = r.framework->data_broadcast_host_sync.value > 0;
  r.model.fp8_tp_gather = t.fp8_tp_gather();
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
  pc.tp_comm_overlap = p.tp_comm_overlap();
  pc.overlap_param_gather = p.overlap_param_gather();
  pc.overlap_moe_expert_parallel_comm = p.overlap_moe_expert_parallel_comm();
  pc.zero_stage = p.zero_stage();
  pc.data_parallel_shard = p.data_parallel_shard_size();
  pc.first_stage_layers = p.first_pipeline_num_layers();
  pc.last_stage_layers = p.last_pipeline_num_layers();
  pc.layout.assign(p.pipeline_layout().begin(), p.pipeline_layout().end());
  pc.expert_tensor_parallel =
      p.has_expert_tensor_parallel_size() ? p.expert_tensor_parallel_size() : 0;
  if (p.has_moe_token_dispatcher()) {
    absl::StatusOr<strategies::MoeDispatcher> d =
        strategies::ParseMoeDispatcher(p.moe_token_dispatcher());
    if (!d.ok()) return WithField(d.status(), "parallelism.moe_token_dispatcher");
    pc.moe_dispatcher = *d;
  }
  if (p.has_moe_routing()) {
    absl::StatusOr<strategies::MoeRouting> r = strategies::ParseMoeRouting(p.moe_routing());
    if (!r.ok()) return WithField(r.status(), "parallelism.moe_routing");
    pc.moe_routing = *r;
  }
  pc.moe_pad_to_capacity = p.moe_pad_expert_input_to_capacity();
  if (p.has_pipeline_schedule()) {
    absl::StatusOr<strategies::Schedule> sched = strategies::ParseSchedule(p.pipeline_schedule());
    if (!sched.ok()) return WithField(sched.status(), "parallelism.pipeline_schedule");
    pc.schedule = *sched;
  }
  pc.data_parallel = p.has_data_parallel_size() ? p.data_parallel_size() : 0;
  pc.micro_batch_size = t.has_micro_batch_size() ? t.micro_batch_size() : 1;
  const std::string precision = t.has_precision() ? t.precision() : "bf16";
  // "nvfp4": Transformer Engine's NVFP4BlockScaling recipe, whose linear-layer
  // GEMMs run on the FP4 tensor cores (models/fp8_recipe.h Fp8Recipe::kNvfp4).
  const bool nvfp4 = precision == "nvfp4";
  absl::StatusOr<models::Dtype> dtype =
      nvfp4 ? absl::StatusOr<models::Dtype>(models::Dtype::kFp4) : models::ParseDtype(precision);
  if (!dtype.ok()) {
    return WithField(absl::InvalidArgumentError(
                         absl::StrCat(dtype.status().message(), ", or nvfp4 (training)")),
                     "training.precision");
  }
  if (nvfp4 && !r.gpu->Supports(models::Dtype::kFp4)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.precision=\"nvfp4\" needs FP4 tensor cores (Blackwell), which ", r.gpu->name,
        " lacks; use fp8 or bf16"));
  }
  // What the GPU cannot run at all (FP8 on an A100) is said before what the
  // simulator does not run yet.
  if (auto s = models::CheckDtypeSupported(*r.gpu, *dtype); !s.ok()) {
    return WithField(s, "training.precision");
  }
  if (!nvfp4 && *dtype != models::Dtype::kBf16 && *dtype != models::Dtype::kFp16 &&
      *dtype != models::Dtype::kFp8) {
    return absl::UnimplementedError(absl::StrCat(
        "training.precision=\"", precision, "\" is not supported yet; use bf16, fp16, fp8 or nvfp4"));
  }
  pc.precision = *dtype;
  if (nvfp4) pc.fp8_recipe = models::Fp8Recipe::kNvfp4;
  if (t.fp8_tp_gather() && (pc.precision != models::Dtype::kFp8 || !pc.sequence_parallel)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.fp8_tp_gather=true gathers the sequence-parallel inputs in float8, so it needs "
        "training.precision=\"fp8\" and parallelism.sequence_parallel=true (got precision \"",
        precision, "\", sequence_parallel ", pc.sequence_parallel ? "true" : "false",
        "); set both or drop it"));
  }
  if (t.has_fp8_recipe() && nvfp4) {
    return absl::InvalidArgumentError(
        "training.fp8_recipe sets an FP8 recipe, but training.precision=\"nvfp4\" runs NVFP4 "
        "block scaling; drop training.fp8_recipe or set training.precision=\"fp8\"");
  }
  if (t.has_fp8_recipe()) {
    absl::StatusOr<models::Fp8Recipe> recipe = models::ParseFp8Recipe(t.fp8_recipe());
    if (!recipe.ok()) return WithField(recipe.status(), "training.fp8_recipe");
    pc.fp8_recipe = *recipe;
    // Transformer Engine runs MXFP8 on compute capability 10.x only
    // (v2.9 pytorch/quantization.py check_mxfp8_support): the catalog's
    // Blackwell parts, the ones with an FP4 peak.
    if (pc.fp8_recipe == models::Fp8Recipe::kMxfp8 && r.gpu->PeakFlops(models::Dtype::kFp4) <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "training.fp8_recipe=\"mxfp8\" needs Blackwell block-scaled tensor cores, which ",
          r.gpu->name, " lacks; use delayed or current"));
    }
  }
  CLUSTERSIM_RETURN_IF_ERROR(ResolveRecompute(t, r.model, &pc));
  pc.cpu_offload_layers = t.cpu_offload_layers();
  if (t.has_global_batch_size()) {
    pc.global_batch_size = t.global_batch_size();
  } else {
    const int mp = pc.tensor_parallel * pc.pipeline_parallel * pc.context_parallel;
    pc.global_batch_size = pc.micro_batch_size * (mp > 0 ? std::max(1, r.num_gpus / mp) : 1);
  }
  CLUSTERSIM_RETURN_IF_ERROR(strategies::ValidateParallelConfig(r.model, r.num_gpus, &pc));
  CLUSTERSIM_RETURN_IF_ERROR(CheckStackFeatures(*r.framework, pc));
  CLUSTERSIM_RETURN_IF_ERROR(strategies::ValidateCpuOffload(r.model, pc));

  absl::StatusOr<models::FinetuneSpec> ft = models::ParseFinetune(
      t.finetune(), t.lora_rank(),
      {t.lora_target_modules().begin(), t.lora_target_modules().end()});
  if (!ft.ok()) return ft.status();
  CLUSTERSIM_RETURN_IF_ERROR(models::ValidateFinetune(r.model, *ft));
  r.finetune = *ft;

  r.host_overhead_us_per_op = t.has_host_overhead_us_per_op()
                                  ? t.host_overhead_us_per_op()
                                  : r.framework->host_us_per_op.value;
  if (!(r.host_overhead_us_per_op >= 0 && r.host_overhead_us_per_op < 1e6)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.host_overhead_us_per_op=", r.host_overhead_us_per_op,
        " must be between 0 and 1e6 microseconds"));
  }
  absl::StatusOr<models::CudaGraphScopes> graphs = models::ParseCudaGraphScopes(
      {t.cuda_graph_scope().begin(), t.cuda_graph_scope().end()});
  if (!graphs.ok()) return graphs.status();
  r.cuda_graphs = *graphs;
  if (pc.moe_pad_to_capacity && r.model.num_experts == 0) {
    return absl::InvalidArgumentError(
        "parallelism.moe_pad_expert_input_to_capacity needs a mixture-of-experts model");
  }
  if (r.cuda_graphs.CapturesExperts() && r.model.num_experts > 0 && !pc.moe_pad_to_capacity) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.cuda_graph_scope \"", r.cuda_graphs.Names().front(),
        "\" captures the MoE dispatch, whose dropless token counts the host must read; set "
        "parallelism.moe_pad_expert_input_to_capacity, or capture attn, moe_router and "
        "moe_preprocess only"));
  }
  absl::StatusOr<double> attention_rate = InFrameworkFactor(
      "training.framework_attention_factor",
      t.has_framework_attention_factor() ? t.framework_attention_factor()
                                         : r.framework->attention_factor.value,
      "the fraction of the calibrated attention kernel rate reached in training (1 = the "
      "standalone kernel");
  if (!attention_rate.ok()) return attention_rate.status();
  r.framework_attention_factor = *attention_rate;
  r.attention_at_sustained_clock = t.has_attention_at_sustained_clock()
                                       ? t.attention_at_sustained_clock()
                                       : r.framework->attention_at_sustained_clock.value > 0;
  absl::StatusOr<double> gemm_rate = InFrameworkFactor(
      "training.framework_gemm_factor",
      t.has_framework_gemm_factor() ? t.framework_gemm_factor() : r.framework->gemm_factor.value,
      "the fraction of the GPU's sustained GEMM rate reached in training (1 = that rate");
  if (!gemm_rate.ok()) return gemm_rate.status();
  r.framework_gemm_factor = *gemm_rate;
  r.grad_accumulate_bytes = pc.precision == models::Dtype::kBf16
                                ? r.framework->bf16_grad_accumulate_bytes.value
                                : 0;
  r.flat_parameter = r.framework->flat_parameter.value > 0;
  r.per_parameter_sharding = r.framework->per_parameter_sharding.value > 0;
  r.megatron_fsdp = r.framework->megatron_fsdp.value > 0;
  r.fp8_amax_reduction = r.framework->fp8_amax_reduction.value > 0;
  r.pipeline_p2p_host_us = t.has_pipeline_p2p_host_us() ? t.pipeline_p2p_host_us()
                                                        : r.framework->pipeline_p2p_host_us.value;
  if (!(r.pipeline_p2p_host_us >= 0 && r.pipeline_p2p_host_us < 1e6)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.pipeline_p2p_host_us=", r.pipeline_p2p_host_us,
        " must be between 0 and 1e6 microseconds (0: Megatron's p2p, no engine cost)"));
  }

  r.grad_reduce_bytes = t.has_grad_reduce_bytes()
                            ? t.grad_reduce_bytes()
                            : static_cast<int>(r.framework->grad_reduce_bytes.value);
  if (r.grad_reduce_bytes != 2 && r.grad_reduce_bytes != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.grad_reduce_bytes=", r.grad_reduce_bytes,
        " must be 2 (gradients reduced in 16 bits) or 4 (fp32); omit it for the framework "
        "profile's value"));
  }

  CLUSTERSIM_RETURN_IF_ERROR(CheckStepFitsClock(r));
  CLUSTERSIM_RETURN_IF_ERROR(CheckTaskGraphFits(r));

  // Network.
  const config::NetworkConfig& n = in.network();
  const std::string tier = n.has_tier() ? n.tier() : "analytic";
  if (tier != "analytic" && tier != "flow") {
    return absl::InvalidArgumentError(absl::StrCat(
        "network.tier=\"", tier, "\" is not known; use analytic (alpha-beta, no contention) or "
        "flow (max-min fair sharing of links)"));
  }
  r.flow_network = tier == "flow";
  const std::string algo = n.has_collective_algorithm() ? n.collective_algorithm() : "auto";
  absl::StatusOr<topology::Algorithm> a = topology::ParseAlgorithm(algo);
  if (!a.ok()) return WithField(a.status(), "network.collective_algorithm");
  r.algorithm = *a;
  const std::string proto = n.has_collective_protocol() ? n.collective_protocol() : "auto";
  absl::StatusOr<topology::Protocol> pr = topology::ParseProtocol(proto);
  if (!pr.ok()) return WithField(pr.status(), "network.collective_protocol");
  r.protocol = *pr;

  // Price.
  absl::StatusOr<ResolvedPricing> pricing =
      ResolvePricing(in.pricing(), *r.gpu, cluster->gpus_per_node);
  if (!pricing.ok()) return pricing.status();
  r.pricing = *std::move(pricing);

  // Echo every resolved value.
  config::Scenario& e = r.echo;
  e.set_name(r.name);
  EchoCluster(*cluster, e.mutable_cluster());
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
  if (pc.tp_comm_overlap) ep->set_tp_comm_overlap(true);
  if (pc.overlap_param_gather) ep->set_overlap_param_gather(true);
  if (pc.overlap_moe_expert_parallel_comm) ep->set_overlap_moe_expert_parallel_comm(true);
  if (pc.moe_pad_to_capacity) ep->set_moe_pad_expert_input_to_capacity(true);
  ep->set_zero_stage(pc.zero_stage);
  if (pc.data_parallel_shard > 0) ep->set_data_parallel_shard_size(pc.data_parallel_shard);
  ep->set_first_pipeline_num_layers(pc.first_stage_layers);
  ep->set_last_pipeline_num_layers(pc.last_stage_layers);
  for (const int layers : pc.layout) ep->add_pipeline_layout(layers);
  if (pc.expert_tensor_parallel > 0) {
    ep->set_expert_tensor_parallel_size(pc.expert_tensor_parallel);
  }
  ep->set_pipeline_schedule(std::string(strategies::ScheduleName(pc.schedule)));
  if (pc.moe_dispatcher != strategies::MoeDispatcher::kAllToAll) {
    ep->set_moe_token_dispatcher(std::string(strategies::MoeDispatcherName(pc.moe_dispatcher)));
  }
  if (pc.moe_routing != strategies::MoeRouting::kUniform) {
    ep->set_moe_routing(std::string(strategies::MoeRoutingName(pc.moe_routing)));
  }
  ep->set_data_parallel_size(pc.data_parallel);
  config::TrainingConfig* et = e.mutable_training();
  et->set_micro_batch_size(pc.micro_batch_size);
  et->set_global_batch_size(pc.global_batch_size);
  et->set_precision(pc.fp8_recipe == models::Fp8Recipe::kNvfp4
                        ? "nvfp4"
                        : std::string(models::DtypeName(pc.precision)));
  if (pc.precision == models::Dtype::kFp8) {
    et->set_fp8_recipe(std::string(models::Fp8RecipeName(pc.fp8_recipe)));
  }
  et->set_framework(r.framework->name);
  et->set_host_overhead_us_per_op(r.host_overhead_us_per_op);
  if (r.pipeline_p2p_host_us > 0) et->set_pipeline_p2p_host_us(r.pipeline_p2p_host_us);
  et->set_framework_attention_factor(r.framework_attention_factor);
  // Echoed only where it departs from the profile's, which a rerun takes.
  if (r.attention_at_sustained_clock != (r.framework->attention_at_sustained_clock.value > 0)) {
    et->set_attention_at_sustained_clock(r.attention_at_sustained_clock);
  }
  et->set_framework_gemm_factor(r.framework_gemm_factor);
  if (pc.zero_stage == 3) et->set_grad_reduce_bytes(r.grad_reduce_bytes);
  et->set_attention(std::string(models::AttentionBackendName(r.model.attention_backend)));
  if (r.model.elementwise == models::ElementwiseKernels::kEager) et->set_elementwise("eager");
  if (r.model.fp8_tp_gather) et->set_fp8_tp_gather(true);
  et->clear_cuda_graph_scope();
  for (const std::string& scope : r.cuda_graphs.Names()) et->add_cuda_graph_scope(scope);
  EchoRecompute(t, pc, et);
  if (pc.cpu_offload_layers > 0) et->set_cpu_offload_layers(pc.cpu_offload_layers);
  EchoPricing(r.pricing, e.mutable_pricing());
  e.mutable_network()->set_tier(tier);
  e.mutable_network()->set_collective_algorithm(algo);
  e.mutable_network()->set_collective_protocol(proto);
  return r;
}

}  // namespace clustersim::scenarios
