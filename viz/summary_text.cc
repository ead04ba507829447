#include "viz/summary_text.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustersim::viz {
namespace {

// The recompute granularity, with full recompute's method and layer count
// when the scenario sets them (e.g. "full (block, 5 layers per chunk)").
// Activation offload, when set, follows it ("none, activations of 40 layers
// offloaded to host").
std::string RecomputeText(const config::TrainingConfig& t) {
  if (t.cpu_offload_layers() > 0) {
    return absl::StrFormat("%s, activations of %d layers offloaded to host",
                           t.recompute_granularity(), t.cpu_offload_layers());
  }
  if (!t.has_recompute_method()) return t.recompute_granularity();
  const bool block = t.recompute_method() == "block";
  return absl::StrFormat("%s (%s, %d layers %s)", t.recompute_granularity(), t.recompute_method(),
                         t.recompute_num_layers(), block ? "per chunk" : "per checkpoint");
}

void Line(std::string* out, std::string_view label, std::string_view value) {
  absl::StrAppendFormat(out, "  %-26s %s\n", label, value);
}

}  // namespace

std::string FormatSummary(const config::Result& r) {
  const config::Scenario& s = r.scenario();
  const config::ParallelismConfig& p = s.parallelism();
  std::string out;
  absl::StrAppendFormat(&out, "clustersim: %s\n", s.name());
  Line(&out, "model",
       absl::StrFormat("%s (%d layers, hidden %d, %d heads, seq %d)",
                       s.model().has_preset() ? s.model().preset() : "custom",
                       s.model().num_layers(), s.model().hidden_size(),
                       s.model().num_attention_heads(), s.model().seq_length()));
  Line(&out, "cluster",
       absl::StrFormat("%d x %s (%s)", s.cluster().num_gpus(), s.cluster().gpu(),
                       s.cluster().node()));
  Line(&out, "strategy",
       absl::StrFormat("tp %d, pp %d, cp %d, dp %d, micro-batch %d, global batch %d, "
                       "%d micro-batches, %s, recompute %s, %s",
                       p.tensor_model_parallel_size(), p.pipeline_model_parallel_size(),
                       p.context_parallel_size(), p.data_parallel_size(),
                       s.training().micro_batch_size(), s.training().global_batch_size(),
                       r.num_microbatches(), p.pipeline_schedule(),
                       RecomputeText(s.training()), s.training().precision()));
  if (p.expert_model_parallel_size() > 1) {
    // Parallel folding (expert TP 1) spreads the experts over tp x dp x cp.
    const bool folded = p.expert_tensor_parallel_size() == 1 && p.tensor_model_parallel_size() > 1;
    const int ranks = p.data_parallel_size() * std::max(1, p.context_parallel_size()) *
                      (folded ? p.tensor_model_parallel_size() : 1);
    Line(&out, "expert parallel",
         absl::StrFormat("ep %d%s (expert-data-parallel %d)", p.expert_model_parallel_size(),
                         folded ? ", expert tp 1" : "", ranks / p.expert_model_parallel_size()));
  }
  out += "\n";
  Line(&out, "step time", absl::StrFormat("%.4f s", r.step_time_s()));
  if (r.has_step_time_interval_s()) {
    const config::StepTimeInterval& i = r.step_time_interval_s();
    Line(&out, "80% band",
         absl::StrFormat("%.4f - %.4f s (%s, %d runs out of source%s)", i.p10(), i.p90(),
                         i.category(), i.rows(),
                         i.validated() ? "" : "; outside every validated category"));
  }
  Line(&out, "throughput", absl::StrFormat("%.0f tokens/s (%.1f tokens/s per GPU)",
                                           r.tokens_per_s(), r.tokens_per_s_per_gpu()));
  Line(&out, "model TFLOP/s per GPU",
       absl::StrFormat("%.1f (MFU %.1f%%)", r.model_tflops_per_gpu(), 100 * r.mfu()));
  Line(&out, "hardware TFLOP/s per GPU",
       absl::StrFormat("%.1f (HFU %.1f%%)", r.hardware_tflops_per_gpu(), 100 * r.hfu()));
  Line(&out, "compute (critical GPU)", absl::StrFormat("%.4f s", r.compute_s()));
  // MoE runs add their expert-parallel all-to-all time.
  const std::string ep_exposed =
      p.expert_model_parallel_size() > 1
          ? absl::StrFormat(", ep %.4f", r.exposed_comm_breakdown_s().ep_s())
          : "";
  Line(&out, "exposed communication",
       absl::StrFormat("%.4f s (tp %.4f, pp %.4f, dp %.4f%s)", r.exposed_comm_s(),
                       r.exposed_comm_breakdown_s().tp_s(), r.exposed_comm_breakdown_s().pp_s(),
                       r.exposed_comm_breakdown_s().dp_s(), ep_exposed));
  Line(&out, "pipeline bubble", absl::StrFormat("%.1f%% of the step", 100 * r.bubble_ratio()));
  const config::MemoryBreakdownGib& m = r.memory_breakdown_gib();
  Line(&out, "memory per GPU",
       absl::StrFormat("%.1f GiB of %.1f GiB: %s", r.peak_memory_gib(), r.memory_capacity_gib(),
                       r.fits_in_memory() ? "fits" : "DOES NOT FIT"));
  if (!r.memory_verdict().remedy().empty()) {
    Line(&out, "  remedy", absl::StrFormat("%s is the biggest term; %s",
                                           r.memory_verdict().biggest_term(),
                                           r.memory_verdict().remedy()));
  }
  Line(&out, "  breakdown",
       absl::StrFormat("weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f, "
                       "other %.1f GiB",
                       m.weights(), m.gradients(), m.optimizer(), m.activations(), m.other()));
  Line(&out, "cost", absl::StrFormat("$%.4f per step at $%.2f per GPU-hour",
                                     r.cost().usd_per_step(), r.cost().usd_per_gpu_hour()));
  Line(&out, "simulated", absl::StrFormat("%.0f tasks, %.0f events", r.simulated_tasks(),
                                          r.simulated_events()));
  return out;
}

}  // namespace clustersim::viz
