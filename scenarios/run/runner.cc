#include "scenarios/run/runner.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/calibration.h"
#include "models/fp8_recipe.h"
#include "models/kernel_model.h"
#include "models/memory_model.h"
#include "models/power_model.h"
#include "scenarios/goodput/goodput.h"
#include "scenarios/input/train_cost.h"
#include "scenarios/run/measure.h"
#include "scenarios/run/run_trace.h"
#include "scenarios/run/step_energy.h"
#include "scenarios/run/stragglers.h"
#include "sim/engine.h"
#include "sim/simulator.h"
#include "sim/status_macros.h"
#include "strategies/activation_offload.h"
#include "strategies/flow_executor.h"
#include "strategies/memory_inputs.h"
#include "strategies/memory_timeline.h"
#include "strategies/placement.h"
#include "strategies/step_builder.h"
#include "strategies/step_describer.h"
#include "strategies/step_stats.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"
#include "topology/flow_network.h"
#include "topology/link_technology.h"
#include "topology/node_preset.h"
#include "traces/link_counters.h"
#include "traces/trace_sink.h"
#include "viz/html_report.h"
#include "viz/memory_chart.h"
#include "viz/timeline.h"

namespace clustersim::scenarios {
namespace {

// The first simulated GPU of `stage`, or -1.
int FirstGpuOfStage(const strategies::StepPlan& plan, const strategies::Placement& placement,
                    int stage) {
  int best = -1;
  for (int g : plan.simulated_gpus) {
    if (placement.CoordsOf(g).pp == stage && (best < 0 || g < best)) best = g;
  }
  return best;
}

// One run's modules. Each stage fills the members it owns; later members
// point into earlier ones, so they are declared (and destroyed) in order.
class ScenarioRun {
 public:
  ScenarioRun(const ResolvedScenario& s, const RunOptions& options)
      : s_(s), options_(options), placement_(s.parallel) {}

  absl::Status Build();
  absl::Status Simulate();
  config::Result Measure() const;
  absl::StatusOr<std::string> Report(const config::Result& r) const;

 private:
  absl::Status AttachTrace();
  void AttachMemory();

  const ResolvedScenario& s_;
  const RunOptions& options_;
  const strategies::Placement placement_;
  // Build.
  std::optional<topology::Cluster> own_cluster_;
  const topology::Cluster* cluster_ = nullptr;
  std::optional<topology::AnalyticNetwork> own_network_;
  const topology::NetworkModel* network_ = nullptr;
  std::optional<models::KernelModel> kernels_;
  std::optional<strategies::StepPlan> plan_;
  // Simulate.
  sim::Simulator simulator_;
  std::optional<sim::Engine> engine_;
  std::unique_ptr<topology::FlowNetwork> flow_;
  std::unique_ptr<strategies::FlowCollectiveExecutor> executor_;
  std::optional<strategies::StepStats> stats_;
  // Time in compute-bound kernels per GPU, for the energy section; absent when
  // compute chains are merged (a merged task hides its kernels' kinds).
  std::optional<KernelKindTime> kinds_;
  bool merged_chains_ = false;  // BuildMode::merge_compute_chains of this run
  std::optional<strategies::StepDescriber> describer_;
  std::unique_ptr<traces::TraceSink> trace_;
  std::unique_ptr<traces::LinkCounters> links_;
  models::MemoryInputs memory_inputs_;
  std::vector<models::MemoryBreakdown> memory_by_stage_;
  std::vector<int> curve_gpus_;  // first GPU of the first and the last stage
  std::optional<strategies::MemoryTimeline> memory_;
  std::unique_ptr<viz::Timeline> timeline_;
};

// The cluster, its network model, the kernel model, and the step's task graph.
absl::Status ScenarioRun::Build() {
  if (options_.cluster == nullptr) {
    absl::StatusOr<topology::Cluster> c = topology::BuildCluster(s_.cluster);
    if (!c.ok()) {
      return absl::Status(c.status().code(), absl::StrCat("cluster: ", c.status().message()));
    }
    own_cluster_.emplace(*std::move(c));
  }
  cluster_ = options_.cluster != nullptr ? options_.cluster : &*own_cluster_;
  if (cluster_->num_gpus() < s_.num_gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.num_gpus=", s_.num_gpus, " exceeds the ", cluster_->num_gpus(), " GPUs of ",
        cluster_->Describe()));
  }
  if (options_.network == nullptr) own_network_.emplace(*cluster_);
  network_ = options_.network != nullptr ? options_.network : &*own_network_;
  // Shipped calibration for this GPU (fitted to published measured points) when
  // one exists; otherwise the spec-sheet model (models/calibration.h).
  models::KernelModelParams kernel_params;
  kernel_params.framework_attention_factor = s_.framework_attention_factor;
  kernel_params.framework_gemm_factor = s_.framework_gemm_factor;
  kernel_params.attention_kernel_forward = s_.framework->attention_kernel_forward.value;
  kernel_params.attention_kernel_backward = s_.framework->attention_kernel_backward.value;
  kernel_params.attention_at_sustained_clock = s_.attention_at_sustained_clock;
  const models::PowerModel& power = models::PowerModel::Default();
  power.SetSustainedGemmRatios(*s_.gpu, &kernel_params);
  kernel_params.fp8_recipe_gemm_factor = models::Fp8GemmRateFactor(s_.parallel.fp8_recipe);
  kernel_params.fp4_gemm_as_mxfp8 = s_.parallel.fp8_recipe == models::Fp8Recipe::kNvfp4;
  kernel_params.compute_clock_ratio = power.ClockRatio(power.For(*s_.gpu), s_.power_cap_w);
  kernels_.emplace(*s_.gpu, kernel_params, models::Calibration::Shipped(s_.gpu->name));
  strategies::StepInputs in;
  in.model = &s_.model;
  in.parallel = &s_.parallel;
  in.kernels = &*kernels_;
  in.network = network_;
  in.cluster = cluster_;
  in.algorithm = s_.algorithm;
  in.protocol = s_.protocol;
  in.mode.fold.data_parallel = options_.fold_data_parallel;
  in.mode.collectives = s_.flow_network ? strategies::CollectiveTiming::kExternal
                                        : strategies::CollectiveTiming::kAnalytic;
  in.host_overhead_per_op = sim::Duration::FromSecondsDouble(s_.host_overhead_us_per_op * 1e-6);
  in.pipeline_p2p_host = sim::Duration::FromSecondsDouble(s_.pipeline_p2p_host_us * 1e-6);
  in.cuda_graphs = s_.cuda_graphs;
  in.zero3_grad_reduce_bytes = s_.grad_reduce_bytes;
  in.grad_accumulate_bytes = s_.grad_accumulate_bytes;
  in.flat_parameter = s_.flat_parameter;
  in.per_parameter_sharding = s_.per_parameter_sharding;
  in.megatron_fsdp = s_.megatron_fsdp;
  in.fp8_amax_reduction = s_.fp8_amax_reduction;
  if (s_.parallel.cpu_offload_layers > 0) {
    if (s_.host_link == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cluster.node=", s_.cluster.node_preset, " has no host link for activation offload"));
    }
    in.host_link = s_.host_link->bandwidth;
  }
  in.mode.fold.tensor_parallel = s_.num_gpus > options_.fold_tensor_parallel_above_gpus;
  in.mode.fold.context_parallel = in.mode.fold.tensor_parallel && options_.fold_context_parallel;
  in.gpu_time_scale = options_.gpu_time_scale;
  merged_chains_ =
      options_.merge_compute_chains && options_.trace_path.empty() && !options_.report;
  in.mode.merge_compute_chains = merged_chains_;
  in.finetune = s_.finetune;
  if (options_.control != nullptr) in.cancel = &options_.control->cancel;
  // What each task means is read by the memory timeline, traces, reports and
  // the flow tier only (the search's runs have none of them).
  in.mode.record_task_infos = options_.memory_timeline || !options_.trace_path.empty() ||
                              options_.report || s_.flow_network;
  absl::StatusOr<strategies::StepPlan> plan = strategies::BuildStep(in);
  if (!plan.ok()) return plan.status();
  plan_.emplace(*std::move(plan));
  return absl::OkStatus();
}

// The trace writer, and the flow tier's link counters that write into it.
absl::Status ScenarioRun::AttachTrace() {
  absl::StatusOr<std::unique_ptr<traces::TraceSink>> t =
      OpenRunTrace(s_, options_, *cluster_, placement_, *describer_);
  if (!t.ok()) return t.status();
  trace_ = *std::move(t);
  engine_->AddObserver(trace_.get());
  if (!flow_) return absl::OkStatus();
  // Kept GPUs: simulated and inside --trace-ranks.
  std::vector<bool> simulated(cluster_->num_gpus(), false);
  for (int g : plan_->simulated_gpus) simulated[g] = true;
  const std::optional<traces::IdRanges>& ranks = options_.trace_ranks;
  links_ = std::make_unique<traces::LinkCounters>(
      *cluster_, *flow_,
      [simulated = std::move(simulated), &ranks](int gpu) {
        return simulated[gpu] && (!ranks.has_value() || ranks->Contains(gpu));
      },
      *trace_);
  flow_->SetLinkRateObserver(
      [this](sim::Time now, const std::vector<topology::LinkRate>& c) { links_->OnRates(now, c); });
  return absl::OkStatus();
}

// Memory in use over the step: the memory model's static part per stage plus
// the activations that forwards allocate and backwards free.
void ScenarioRun::AttachMemory() {
  memory_inputs_ = strategies::MemoryInputsFor(s_.model, s_.parallel, s_.finetune);
  memory_inputs_.keep_non_layer_gathered = s_.megatron_fsdp;
  memory_by_stage_ = MemoryByStage(memory_inputs_);
  std::vector<strategies::StaticMemory> static_by_stage;
  for (const models::MemoryBreakdown& m : memory_by_stage_) {
    static_by_stage.push_back({m.weights.count(), m.gradients.count(), m.optimizer.count(),
                               m.other.count()});
  }
  curve_gpus_ = {FirstGpuOfStage(*plan_, placement_, 0),
                 FirstGpuOfStage(*plan_, placement_, s_.parallel.pipeline_parallel - 1)};
  strategies::MemoryTimeline::Options mo;
  mo.sink = trace_.get();
  if (options_.report) {
    for (int g : curve_gpus_) {
      if (g >= 0) mo.curve_groups.push_back(static_cast<uint32_t>(g));
    }
  }
  const strategies::Placement& placement = placement_;
  memory_.emplace(
      *plan_, [&placement](uint32_t g) { return placement.CoordsOf(static_cast<int>(g)).pp; },
      std::move(static_by_stage), strategies::ActivationSizesOf(memory_inputs_, s_.parallel),
      s_.model.num_layers, std::move(mo));
  // With a trace the timeline writes counters into the sink the simulation
  // thread writes to, so it is told inline; otherwise it may run beside it.
  if (options_.memory_timeline || trace_ || options_.report) {
    engine_->AddObserver(&*memory_, trace_ ? sim::Engine::Delivery::kInline
                                           : sim::Engine::Delivery::kDeferred);
  }
}

// Runs the task graph on the event engine with every observer subscribed.
absl::Status ScenarioRun::Simulate() {
  // Only a trace's pipeline arrows ask the engine for task times afterwards.
  engine_.emplace(plan_->graph, simulator_,
                  options_.trace_path.empty() ? sim::Engine::Times::kNotKept
                                              : sim::Engine::Times::kKept);
  // The engine keeps its own successor lists; the graph's copy is not read again.
  plan_->graph.ReleaseDependencies();
  if (s_.flow_network) {
    flow_ = std::make_unique<topology::FlowNetwork>(*cluster_, simulator_);
    executor_ = std::make_unique<strategies::FlowCollectiveExecutor>(*plan_, *flow_);
    engine_->SetExecutor(executor_.get());
  }
  engine_->SetControl(options_.control);
  stats_.emplace(*plan_);
  // Step statistics and kernel kinds only summarise: they may run beside the
  // simulation (Engine::Delivery::kDeferred).
  engine_->AddObserver(&*stats_, sim::Engine::Delivery::kDeferred);
  if (!merged_chains_) {
    kinds_.emplace(*plan_, *kernels_);
    engine_->AddObserver(&*kinds_, sim::Engine::Delivery::kDeferred);
  }
  describer_.emplace(*plan_, placement_, cluster_->gpus_per_node());
  if (!options_.trace_path.empty()) {
    CLUSTERSIM_RETURN_IF_ERROR(AttachTrace());
  }
  AttachMemory();
  if (options_.report) {
    viz::Timeline::Options vo;
    const strategies::Placement& placement = placement_;
    vo.stage_of = [&placement](uint32_t g) { return placement.CoordsOf(static_cast<int>(g)).pp; };
    timeline_ = std::make_unique<viz::Timeline>(*describer_, vo);
    engine_->AddObserver(timeline_.get());
  }
  const absl::Status ran = engine_->Run();
  // A collective past the clock never ends; that, not "cannot make progress", is the cause.
  if (flow_ && !flow_->clock_status().ok()) return flow_->clock_status();
  if (!ran.ok()) return ran;
  if (executor_ && !executor_->status().ok()) return executor_->status();
  memory_->Finish();
  if (links_) links_->Finish();
  if (trace_) {
    AddPipelineFlows(*plan_, *engine_, *trace_);
    CLUSTERSIM_RETURN_IF_ERROR(trace_->Finish());
  }
  return absl::OkStatus();
}

// The Result: the step's figures, memory, cost, and what produced them.
config::Result ScenarioRun::Measure() const {
  config::Result r;
  const strategies::StepStats::Summary sum = stats_->Summarize(engine_->Makespan());
  FillStepFigures(s_, sum, &r);
  FillMemory(s_, memory_inputs_, memory_by_stage_, *memory_, &r);
  const double tokens =
      static_cast<double>(s_.parallel.global_batch_size) * static_cast<double>(s_.model.seq_length);
  FillCost(s_.pricing, {sum.step_time.ToSeconds(), tokens, s_.num_gpus, s_.gpu->tdp_w}, &r);
  if (kinds_) FillEnergy(s_, stats_->PerGpu(), *kinds_, sum.step_time.ToSeconds(), &r);
  r.set_num_microbatches(s_.parallel.num_microbatches());
  r.set_data_parallel_size(s_.parallel.data_parallel);
  r.set_simulated_events(static_cast<double>(simulator_.ExecutedEvents()));
  r.set_simulated_tasks(static_cast<double>(plan_->graph.NumTasks()));
  r.set_cost_model_source(absl::StrCat(
      "kernels: models/kernel_model (", s_.gpu->name, "); network: ",
      s_.flow_network ? "topology/flow_network (max-min fair flows)"
                      : "topology/analytic_network (alpha-beta)",
      " on ", cluster_->Describe()));
  *r.mutable_scenario() = s_.echo;
  return r;
}

// The HTML page: the Result, the simulated timeline, and the memory curves of
// the first and last stage.
absl::StatusOr<std::string> ScenarioRun::Report(const config::Result& r) const {
  std::vector<viz::MemoryCurve> curves;
  for (size_t i = 0; i < curve_gpus_.size(); ++i) {
    const int gpu = curve_gpus_[i];
    if (gpu < 0 || (i > 0 && gpu == curve_gpus_[0])) continue;
    viz::MemoryCurve c;
    c.label = absl::StrCat(i == 0 ? "first stage: " : "last stage: ",
                           describer_->ProcessName(static_cast<uint32_t>(gpu)));
    for (const strategies::MemoryTimeline::Point& p : memory_->Curve(static_cast<uint32_t>(gpu))) {
      c.points.push_back({p.t_ps * 1e-12, p.bytes / kGiB});
    }
    curves.push_back(std::move(c));
  }
  return viz::RenderHtmlReport(r, *timeline_, curves);
}

}  // namespace

// With stragglers: the usual step with every GPU typical, then the step with
// every data-parallel replica simulated on its own GPUs' draws and each
// tensor-parallel group at its slowest member (stragglers.h); the Result is
// the straggled step's, with the nominal one beside it.
absl::StatusOr<RunOutput> RunScenarioWithReport(const ResolvedScenario& s,
                                                const RunOptions& options) {
  CLUSTERSIM_RETURN_IF_ERROR(ValidateReliability(s.echo));
  absl::StatusOr<std::optional<StragglerSpec>> stragglers = ResolveStragglers(s.echo);
  if (!stragglers.ok()) return stragglers.status();
  RunOptions straggled = options;
  config::Stragglers summary;
  if (stragglers->has_value()) {
    RunOptions plain = options;
    plain.trace_path.clear();
    plain.report = false;
    ScenarioRun nominal(s, plain);
    CLUSTERSIM_RETURN_IF_ERROR(nominal.Build());
    CLUSTERSIM_RETURN_IF_ERROR(nominal.Simulate());
    summary.set_nominal_step_time_s(nominal.Measure().step_time_s());
    const GpuDraws draws = DrawGpus(**stragglers, s.num_gpus);
    DescribeDraws(draws, &summary);
    straggled.fold_data_parallel = false;
    straggled.fold_tensor_parallel_above_gpus = 0;
    straggled.fold_context_parallel = false;
    straggled.gpu_time_scale.clear();
    for (double t : draws.throughput) straggled.gpu_time_scale.push_back(1.0 / t);
  }
  ScenarioRun run(s, straggled);
  CLUSTERSIM_RETURN_IF_ERROR(run.Build());
  CLUSTERSIM_RETURN_IF_ERROR(run.Simulate());
  RunOutput out;
  out.result = run.Measure();
  if (stragglers->has_value()) {
    summary.set_tax(out.result.step_time_s() / summary.nominal_step_time_s() - 1.0);
    summary.set_simulated_tasks(out.result.simulated_tasks());
    *out.result.mutable_stragglers() = summary;
  }
  CLUSTERSIM_RETURN_IF_ERROR(AddGoodput(s, &out.result));
  if (options.report) {
    absl::StatusOr<std::string> html = run.Report(out.result);
    if (!html.ok()) return html.status();
    out.report_html = *std::move(html);
  }
  return out;
}

absl::StatusOr<config::Result> RunScenario(const ResolvedScenario& s, const RunOptions& options) {
  RunOptions without_report = options;
  without_report.report = false;
  absl::StatusOr<RunOutput> out = RunScenarioWithReport(s, without_report);
  if (!out.ok()) return out.status();
  return std::move(out->result);
}

}  // namespace clustersim::scenarios
