#include "scenarios/runner.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "models/calibration.h"
#include "models/finetune_ops.h"
#include "models/flops.h"
#include "models/kernel_model.h"
#include "models/memory_model.h"
#include "models/memory_verdict.h"
#include "scenarios/link_counters.h"
#include "scenarios/memory_timeline.h"
#include "sim/engine.h"
#include "sim/simulator.h"
#include "strategies/flow_executor.h"
#include "strategies/placement.h"
#include "strategies/search_space.h"
#include "strategies/step_builder.h"
#include "strategies/step_describer.h"
#include "strategies/step_stats.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"
#include "topology/flow_network.h"
#include "traces/chrome_trace_writer.h"
#include "traces/perfetto_trace_writer.h"
#include "traces/trace_sink.h"
#include "viz/html_report.h"
#include "viz/memory_chart.h"
#include "viz/timeline.h"

namespace clustersim::scenarios {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void SetGib(const models::MemoryBreakdown& m, config::MemoryBreakdownGib* b) {
  b->set_weights(m.weights.count() / kGiB);
  b->set_gradients(m.gradients.count() / kGiB);
  b->set_optimizer(m.optimizer.count() / kGiB);
  b->set_activations(m.activations.count() / kGiB);
  b->set_other(m.other.count() / kGiB);
}

// The memory model for every pipeline stage (stage 0 first).
std::vector<models::MemoryBreakdown> MemoryByStage(const models::MemoryInputs& in) {
  std::vector<models::MemoryBreakdown> out;
  for (int stage = 0; stage < in.pipeline_parallel; ++stage) {
    models::MemoryInputs at = in;
    at.pipeline_stage = stage;
    out.push_back(models::EstimateMemory(at));
  }
  return out;
}

// Memory per GPU (stage 0, the most loaded under 1F1B), the verdict, and
// every stage's model and simulated peak.
void FillMemory(const ResolvedScenario& s, const models::MemoryInputs& in,
                const std::vector<models::MemoryBreakdown>& by_stage,
                const MemoryTimeline& timeline, config::Result* out) {
  const models::MemoryBreakdown& m = by_stage[0];
  SetGib(m, out->mutable_memory_breakdown_gib());
  out->set_peak_memory_gib(m.Total().count() / kGiB);
  const double capacity = s.gpu->memory.count() / kGiB;
  out->set_memory_capacity_gib(capacity);
  const models::MemoryVerdict verdict = models::JudgeMemory(in, m, s.gpu->memory);
  out->set_fits_in_memory(verdict.fits);
  out->mutable_memory_verdict()->set_biggest_term(verdict.biggest_term);
  out->mutable_memory_verdict()->set_remedy(verdict.remedy);
  for (int stage = 0; stage < static_cast<int>(by_stage.size()); ++stage) {
    config::StageMemoryGib* st = out->add_memory_per_stage_gib();
    st->set_stage(stage);
    SetGib(by_stage[stage], st->mutable_breakdown());
    st->set_total_gib(by_stage[stage].Total().count() / kGiB);
    st->set_fits(by_stage[stage].Total() <= s.gpu->memory);
    st->set_simulated_peak_gib(timeline.PeakBytes(stage) / kGiB);
    st->set_simulated_peak_activations_gib(timeline.PeakActivationBytes(stage) / kGiB);
  }
}

// The trace writer the options ask for (Chrome JSON or Perfetto protobuf).
absl::StatusOr<std::unique_ptr<traces::TraceSink>> OpenTrace(
    const ResolvedScenario& s, const RunOptions& options, const topology::Cluster& cluster,
    const strategies::Placement& placement, const strategies::StepDescriber& describer) {
  if (options.trace_format == "perfetto") {
    traces::PerfettoTraceWriter::Options popts;
    popts.ranks = options.trace_ranks;
    absl::StatusOr<std::unique_ptr<traces::PerfettoTraceWriter>> w =
        traces::PerfettoTraceWriter::Open(options.trace_path, describer, popts);
    if (!w.ok()) return w.status();
    return std::unique_ptr<traces::TraceSink>(*std::move(w));
  }
  traces::ChromeTraceWriter::Options topts;
  topts.other_data = {{"simulator", "clustersim"},
                      {"scenario", s.name},
                      {"cluster", cluster.Describe()},
                      {"model", s.model.name},
                      {"link_utilisation", s.flow_network
                                               ? "counters from the flow tier's link rates"
                                               : "none: link counters need --network-tier flow"}};
  topts.ranks = options.trace_ranks;
  topts.steps = options.trace_steps;
  topts.detail = options.trace_detail;
  // Stages read top to bottom.
  topts.process_sort_index = [&placement, &s](uint32_t g) {
    return int64_t{placement.CoordsOf(static_cast<int>(g)).pp} * s.num_gpus + g;
  };
  absl::StatusOr<std::unique_ptr<traces::ChromeTraceWriter>> w =
      traces::ChromeTraceWriter::Open(options.trace_path, describer, topts);
  if (!w.ok()) return w.status();
  return std::unique_ptr<traces::TraceSink>(*std::move(w));
}

// Arrows from each pipeline send to the action it feeds; both ends lie inside
// their slices (the send's last picosecond, the receiver's start).
void AddPipelineFlows(const strategies::StepPlan& plan, const sim::Engine& engine,
                      traces::TraceSink& trace) {
  const sim::TaskGraph& g = plan.graph;
  for (const strategies::PipelineTransfer& x : plan.transfers) {
    const sim::TaskGraph::Resource& from = g.resource(g.ResourcesOf(x.send)[0]);
    uint32_t to_lane = 0;
    for (sim::ResourceId r : g.ResourcesOf(x.receive)) {
      if (g.resource(r).group == static_cast<uint32_t>(x.receiver_gpu)) to_lane = g.resource(r).lane;
    }
    trace.AddFlow(x.forward ? "pp activation" : "pp gradient", from.group, from.lane,
                  engine.EndOf(x.send) - sim::Picoseconds(1), x.receiver_gpu, to_lane,
                  engine.StartOf(x.receive));
  }
}

// The first simulated GPU of `stage`, or -1.
int FirstGpuOfStage(const strategies::StepPlan& plan, const strategies::Placement& placement,
                    int stage) {
  int best = -1;
  for (int g : plan.simulated_gpus) {
    if (placement.CoordsOf(g).pp == stage && (best < 0 || g < best)) best = g;
  }
  return best;
}

// The memory curves of the first and last stage for the report.
std::vector<viz::MemoryCurve> ReportCurves(const MemoryTimeline& memory,
                                           const std::vector<int>& gpus,
                                           const strategies::StepDescriber& describer) {
  std::vector<viz::MemoryCurve> curves;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i] < 0 || (i > 0 && gpus[i] == gpus[0])) continue;
    viz::MemoryCurve c;
    c.label = absl::StrCat(i == 0 ? "first stage: " : "last stage: ",
                           describer.ProcessName(static_cast<uint32_t>(gpus[i])));
    for (const MemoryTimeline::Point& p : memory.Curve(static_cast<uint32_t>(gpus[i]))) {
      c.points.push_back({p.t_ps * 1e-12, p.bytes / kGiB});
    }
    curves.push_back(std::move(c));
  }
  return curves;
}

}  // namespace

absl::StatusOr<config::Result> RunScenario(const ResolvedScenario& s, const RunOptions& options) {
  std::optional<topology::Cluster> built;
  if (options.cluster == nullptr) {
    absl::StatusOr<topology::Cluster> c = topology::BuildCluster(s.cluster);
    if (!c.ok()) {
      return absl::Status(c.status().code(), absl::StrCat("cluster: ", c.status().message()));
    }
    built.emplace(*std::move(c));
  }
  const topology::Cluster* cluster = options.cluster != nullptr ? options.cluster : &*built;
  if (cluster->num_gpus() < s.num_gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.num_gpus=", s.num_gpus, " exceeds the ", cluster->num_gpus(), " GPUs of ",
        cluster->Describe()));
  }
  std::optional<topology::AnalyticNetwork> own_network;
  if (options.network == nullptr) own_network.emplace(*cluster);
  const topology::NetworkModel& network =
      options.network != nullptr ? *options.network : *own_network;
  // Shipped calibration for this GPU (fitted to published measured points) when
  // one exists; otherwise the spec-sheet model (models/calibration.h).
  models::KernelModelParams kernel_params;
  kernel_params.framework_attention_factor = s.framework_attention_factor;
  kernel_params.framework_gemm_factor = s.framework_gemm_factor;
  const models::KernelModel kernels(*s.gpu, kernel_params,
                                    models::Calibration::Shipped(s.gpu->name));
  strategies::StepInputs in;
  in.model = &s.model;
  in.parallel = &s.parallel;
  in.kernels = &kernels;
  in.network = &network;
  in.algorithm = s.algorithm;
  in.protocol = s.protocol;
  in.mode.fold.data_parallel = options.fold_data_parallel;
  in.mode.collectives = s.flow_network ? strategies::CollectiveTiming::kExternal
                                       : strategies::CollectiveTiming::kAnalytic;
  in.host_overhead_per_op = sim::Duration::FromSecondsDouble(s.host_overhead_us_per_op * 1e-6);
  in.pipeline_p2p_host = sim::Duration::FromSecondsDouble(s.pipeline_p2p_host_us * 1e-6);
  in.mode.fold.tensor_parallel = s.num_gpus > options.fold_tensor_parallel_above_gpus;
  in.mode.fold.context_parallel = in.mode.fold.tensor_parallel;
  in.mode.merge_compute_chains =
      options.merge_compute_chains && options.trace_path.empty() && options.report_path.empty();
  in.finetune = s.finetune;
  // What each task means is read by the memory timeline, traces, reports and
  // the flow tier only (the search's runs have none of them).
  in.mode.record_task_infos = options.memory_timeline || !options.trace_path.empty() ||
                              !options.report_path.empty() || s.flow_network;
  absl::StatusOr<strategies::StepPlan> plan = strategies::BuildStep(in);
  if (!plan.ok()) return plan.status();

  sim::Simulator simulator;
  sim::Engine engine(plan->graph, simulator);
  std::unique_ptr<topology::FlowNetwork> flow;
  std::unique_ptr<strategies::FlowCollectiveExecutor> executor;
  if (s.flow_network) {
    flow = std::make_unique<topology::FlowNetwork>(*cluster, simulator);
    executor = std::make_unique<strategies::FlowCollectiveExecutor>(*plan, *flow);
    engine.SetExecutor(executor.get());
  }
  strategies::StepStats stats(*plan);
  engine.AddObserver(&stats);
  const strategies::Placement placement(s.parallel);
  const strategies::StepDescriber describer(*plan, placement, cluster->gpus_per_node());
  std::unique_ptr<traces::TraceSink> trace;
  if (!options.trace_path.empty()) {
    absl::StatusOr<std::unique_ptr<traces::TraceSink>> t =
        OpenTrace(s, options, *cluster, placement, describer);
    if (!t.ok()) return t.status();
    trace = *std::move(t);
    engine.AddObserver(trace.get());
  }
  // Kept GPUs: simulated and inside --trace-ranks.
  const auto kept = [&](int gpu) {
    return (!options.trace_ranks.has_value() || options.trace_ranks->Contains(gpu));
  };
  std::unique_ptr<LinkCounters> links;
  if (trace && flow) {
    std::vector<bool> simulated(cluster->num_gpus(), false);
    for (int g : plan->simulated_gpus) simulated[g] = true;
    links = std::make_unique<LinkCounters>(
        *cluster, *flow, [&](int gpu) { return simulated[gpu] && kept(gpu); }, *trace);
    flow->SetLinkRateObserver([&links](sim::Time now, const std::vector<topology::LinkRate>& c) {
      links->OnRates(now, c);
    });
  }
  const models::MemoryInputs memory_inputs =
      strategies::MemoryInputsFor(s.model, s.parallel, s.finetune);
  const std::vector<models::MemoryBreakdown> memory_by_stage = MemoryByStage(memory_inputs);
  std::vector<StaticMemory> static_by_stage;
  for (const models::MemoryBreakdown& m : memory_by_stage) {
    static_by_stage.push_back({m.weights.count(), m.gradients.count(), m.optimizer.count(),
                               m.other.count()});
  }
  const std::vector<int> curve_gpus = {
      FirstGpuOfStage(*plan, placement, 0),
      FirstGpuOfStage(*plan, placement, s.parallel.pipeline_parallel - 1)};
  MemoryTimeline::Options mo;
  mo.sink = trace.get();
  if (!options.report_path.empty()) {
    for (int g : curve_gpus) {
      if (g >= 0) mo.curve_groups.push_back(static_cast<uint32_t>(g));
    }
  }
  MemoryTimeline memory(
      *plan, [&placement](uint32_t g) { return placement.CoordsOf(static_cast<int>(g)).pp; },
      std::move(static_by_stage), ActivationSizesOf(memory_inputs), s.model.num_layers,
      std::move(mo));
  if (options.memory_timeline || trace || !options.report_path.empty()) {
    engine.AddObserver(&memory);
  }
  std::unique_ptr<viz::Timeline> timeline;
  if (!options.report_path.empty()) {
    viz::Timeline::Options vo;
    vo.stage_of = [&placement](uint32_t g) { return placement.CoordsOf(static_cast<int>(g)).pp; };
    timeline = std::make_unique<viz::Timeline>(describer, vo);
    engine.AddObserver(timeline.get());
  }
  const absl::Status ran = engine.Run();
  // A collective past the clock never ends; that, not "cannot make progress", is the cause.
  if (flow && !flow->clock_status().ok()) return flow->clock_status();
  if (!ran.ok()) return ran;
  if (executor && !executor->status().ok()) return executor->status();
  memory.Finish();
  if (links) links->Finish();
  if (trace) {
    AddPipelineFlows(*plan, engine, *trace);
    if (auto st = trace->Finish(); !st.ok()) return st;
  }

  const strategies::StepStats::Summary sum = stats.Summarize(engine.Makespan());
  config::Result r;
  const double step_s = sum.step_time.ToSeconds();
  const double tokens =
      static_cast<double>(s.parallel.global_batch_size) * static_cast<double>(s.model.seq_length);
  const double gpus = s.num_gpus;
  r.set_step_time_s(step_s);
  r.set_tokens_per_s(tokens / step_s);
  r.set_tokens_per_s_per_gpu(tokens / step_s / gpus);
  // Fine-tuning counts only the work it does (models/finetune_ops.h); for full
  // training these are Megatron's counts.
  const double model_flops =
      models::FinetuneModelFlops(s.model, s.finetune, s.parallel.global_batch_size);
  const double hw_flops = models::FinetuneHardwareFlops(
      s.model, s.finetune, s.parallel.global_batch_size, s.parallel.recompute);
  const bool finetune = s.finetune.method != models::FinetuneMethod::kFull;
  const double peak = s.gpu->PeakFlops(s.parallel.precision);
  r.set_model_tflops_per_gpu(model_flops / step_s / gpus / 1e12);
  r.set_hardware_tflops_per_gpu(hw_flops / step_s / gpus / 1e12);
  r.set_mfu(model_flops / step_s / gpus / peak);
  const double six_n = models::SixNAttentionFlops(s.model, s.parallel.global_batch_size).Total();
  r.set_model_flops_per_step_megatron(
      models::MegatronModelFlops(s.model, s.parallel.global_batch_size));
  r.set_model_flops_per_step_6n_attention(six_n);
  r.set_hfu(hw_flops / step_s / gpus / peak);
  if (finetune) {
    // 6·N·T is full training's count; the fine-tuning step does not run it.
    r.set_model_flops_per_step_finetune(model_flops);
    r.set_flops_convention(
        "LoRA/QLoRA fine-tuning: Megatron-LM num_floating_point_operations less the frozen "
        "base's weight-gradient GEMMs (layers and LM head; ~4·N·T instead of 6·N·T) plus the "
        "adapters' forward, dgrad and wgrad (models/finetune_ops.h); attention unmasked, no "
        "recompute, QLoRA dequantisation 0 FLOPs; mfu = these FLOP/s per GPU / dense peak. "
        "model_flops_per_step_megatron and _6n_attention are full training's counts, "
        "mfu_6n_attention is not set");
  } else {
    r.set_mfu_6n_attention(six_n / step_s / gpus / peak);
    r.set_flops_convention(
        "Megatron-LM num_floating_point_operations (model FLOPs, attention unmasked, no "
        "recompute); mfu = model FLOP/s per GPU / dense peak of the training precision");
  }
  r.set_bubble_ratio(sum.bubble.ToSeconds() / step_s);
  r.set_exposed_comm_s(sum.exposed_comm.ToSeconds());
  r.mutable_exposed_comm_breakdown_s()->set_tp_s(sum.exposed_tp.ToSeconds());
  r.mutable_exposed_comm_breakdown_s()->set_dp_s(sum.exposed_dp.ToSeconds());
  r.mutable_exposed_comm_breakdown_s()->set_pp_s(sum.exposed_pp.ToSeconds());
  r.mutable_exposed_comm_breakdown_s()->set_ep_s(sum.exposed_ep.ToSeconds());
  r.mutable_exposed_comm_breakdown_s()->set_cp_s(sum.exposed_cp.ToSeconds());
  r.set_compute_s(sum.compute.ToSeconds());
  FillMemory(s, memory_inputs, memory_by_stage, memory, &r);
  FillCost(s.pricing, {step_s, tokens, s.num_gpus, s.gpu->tdp_w}, &r);
  r.set_num_microbatches(s.parallel.num_microbatches());
  r.set_data_parallel_size(s.parallel.data_parallel);
  r.set_simulated_events(static_cast<double>(simulator.ExecutedEvents()));
  r.set_simulated_tasks(static_cast<double>(plan->graph.NumTasks()));
  r.set_cost_model_source(absl::StrCat(
      "kernels: models/kernel_model (", s.gpu->name, "); network: ",
      s.flow_network ? "topology/flow_network (max-min fair flows)"
                     : "topology/analytic_network (alpha-beta)",
      " on ", cluster->Describe()));
  *r.mutable_scenario() = s.echo;
  if (timeline) {
    if (auto st = viz::WriteHtmlReport(options.report_path, r, *timeline,
                                       ReportCurves(memory, curve_gpus, describer));
        !st.ok()) {
      return st;
    }
  }
  return r;
}

}  // namespace clustersim::scenarios
