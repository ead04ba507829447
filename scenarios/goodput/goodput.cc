#include "scenarios/goodput/goodput.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/memory_model.h"
#include "models/transformer_config.h"
#include "scenarios/input/train_cost.h"
#include "sim/status_macros.h"
#include "topology/link_technology.h"
#include "topology/node_preset.h"
#include "topology/reliability_catalog.h"

namespace clustersim::scenarios {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Refused above this many checkpoints and interruptions over all trials (about 2e8
// events take 10 s).
constexpr double kMaxEvents = 1e9;

double Quantile(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<size_t>(std::floor(q * static_cast<double>(sorted.size() - 1)))];
}

}  // namespace

// A section with stragglers alone asks for the straggler tax only, unless the
// run has a length.
bool GoodputRequested(const config::Scenario& s) {
  if (!s.has_reliability()) return false;
  if (!s.reliability().has_stragglers()) return true;
  config::ReliabilityConfig rest = s.reliability();
  rest.clear_stragglers();
  return rest.ByteSizeLong() > 0 || s.pricing().has_train_tokens() ||
         s.pricing().has_train_steps();
}

absl::StatusOr<GoodputPlan> PlanGoodput(const ResolvedScenario& s, const config::Result& step) {
  const config::ReliabilityConfig& r = s.echo.reliability();
  const topology::ReliabilityCatalog& cat = topology::ReliabilityCatalog::Default();
  GoodputPlan p;
  const config::FailureProfile& profile = **cat.FindProfile(
      r.has_failure_profile() ? r.failure_profile() : cat.file().default_profile());
  const config::StoragePreset& storage =
      **cat.FindStorage(r.has_storage() ? r.storage() : cat.file().default_storage());
  const config::RestartCosts& rc = cat.file().restart();
  p.profile = profile.name();
  p.storage = storage.name();
  p.mode = r.has_checkpoint_mode() ? r.checkpoint_mode() : "async";
  const int n = s.num_gpus;
  const int per_node = std::max(1, s.echo.cluster().gpus_per_node());
  p.gpus_per_node = per_node;
  const int nodes = s.cluster.num_nodes;
  const double step_s = step.step_time_s();

  // Causes: the profile's, overridden and scaled; a per-job software rate; planned stops.
  const double scale = r.has_failure_rate_scale() ? r.failure_rate_scale() : 1.0;
  for (const config::FailureCause& f : profile.cause()) {
    config::FailureCause c = f;
    for (const config::CauseRate& o : r.cause_rate()) {
      if (o.cause() == f.name()) c.set_rate(o.rate());
    }
    const double per_hour = topology::CauseRatePerJobHour(c, n, per_node) * scale;
    int down = 1;
    for (const config::CauseNodes& o : r.cause_nodes()) {
      if (o.cause() == f.name()) down = std::min(o.nodes(), nodes);  // the job's nodes among them
    }
    p.timeline.causes.push_back({f.name(), f.component(), per_hour, f.needs_node(), false, down});
    p.unplanned_per_hour += per_hour;
  }
  if (r.software_failures_per_job_day() > 0) {
    const double per_hour = r.software_failures_per_job_day() / 24.0;
    p.timeline.causes.push_back({"software-per-job", "software", per_hour, false, false});
    p.unplanned_per_hour += per_hour;
  }
  const double planned = r.has_planned_per_day()
                             ? r.planned_per_day() / 24.0
                             : topology::CauseRatePerJobHour(profile.planned(), n, per_node);
  if (planned > 0) {
    p.timeline.causes.push_back({"planned-maintenance", "planned", planned, false, true});
  }

  // Checkpoint size and times.
  const double params = models::CountParameters(s.model).Total(s.model.num_layers);
  const models::MemoryBreakdown states =
      models::ModelStateMemory(params, s.parallel.precision, models::Dtype::kFp32, 0, 1);
  const double bytes = static_cast<double>((states.weights + states.optimizer).count());
  double snapshot = 0;
  for (const config::StageMemoryGib& m : step.memory_per_stage_gib()) {
    snapshot = std::max(snapshot, (m.breakdown().weights() + m.breakdown().optimizer()) * kGiB);
  }
  if (snapshot == 0) {
    snapshot =
        (step.memory_breakdown_gib().weights() + step.memory_breakdown_gib().optimizer()) * kGiB;
  }
  p.checkpoint_gb = bytes * 1e-9;
  p.snapshot_gb_per_gpu = snapshot * 1e-9;
  const auto bw = [](bool has, double v, double preset) { return (has ? v : preset) * 1e9; };
  const double w_node = bw(r.has_storage_write_gb_per_s_per_node(),
                           r.storage_write_gb_per_s_per_node(), storage.write_gb_per_s_per_node());
  const double w_all = bw(r.has_storage_write_gb_per_s_aggregate(),
                          r.storage_write_gb_per_s_aggregate(), storage.write_gb_per_s_aggregate());
  const double r_node = bw(r.has_storage_read_gb_per_s_per_node(),
                           r.storage_read_gb_per_s_per_node(), storage.read_gb_per_s_per_node());
  const double r_all = bw(r.has_storage_read_gb_per_s_aggregate(),
                          r.storage_read_gb_per_s_aggregate(), storage.read_gb_per_s_aggregate());
  p.write_s = std::max(bytes / w_all, bytes / nodes / w_node);
  p.load_s = std::max(bytes / r_all, bytes / nodes / r_node);
  double snapshot_bw = r.snapshot_gb_per_s_per_gpu() * 1e9;
  if (!r.has_snapshot_gb_per_s_per_gpu()) {
    // The device-to-host copy runs over the GPU's host link (NVLink-C2C on a
    // Grace superchip, PCIe elsewhere); 31.5 GB/s is PCIe 4 x16's line rate.
    snapshot_bw = (s.host_link != nullptr ? s.host_link->bandwidth.BytesPerSecond() : 31.5e9) *
                  rc.snapshot_copy_efficiency();
  }
  const double snapshot_s = snapshot / snapshot_bw;
  const bool async = p.mode == "async";
  p.stall_s = async ? snapshot_s : std::max(snapshot_s, p.write_s);
  p.timeline.stall_s = p.stall_s;
  p.timeline.upload_s = async ? p.write_s : 0;

  // Restart.
  const double init_s = std::max(
      rc.init_min_s(), (r.has_init_s_per_gpu() ? r.init_s_per_gpu() : rc.init_s_per_gpu()) * n);
  const double warmup_s = (r.has_warmup_steps() ? r.warmup_steps() : rc.warmup_steps()) * step_s;
  const double reschedule = r.has_reschedule_s() ? r.reschedule_s() : rc.reschedule_s();
  const double back = reschedule + init_s + p.load_s + warmup_s;
  p.timeline.restart_s = (r.has_detection_s() ? r.detection_s() : rc.detection_s()) + back;
  p.timeline.planned_down_s = std::max(snapshot_s, p.write_s) + back;
  p.timeline.hot_spares = r.has_hot_spares() ? r.hot_spares() : true;
  p.timeline.repair_s = (r.has_repair_hours() ? r.repair_hours() : rc.repair_hours()) * 3600.0;
  if (r.has_spare_nodes()) p.timeline.spare_nodes = r.spare_nodes();

  // Run length and the checkpoint interval, in whole steps.
  p.timeline.compute_s = step.train().time_to_train_s();
  double interval = r.checkpoint_interval_s();
  if (!r.has_checkpoint_interval_s()) {
    p.young_daly = true;
    interval = p.unplanned_per_hour > 0
                   ? YoungDalyInterval(p.stall_s, 3600.0 / p.unplanned_per_hour)
                   : p.timeline.compute_s;
  }
  p.timeline.interval_s = std::max(1.0, std::round(interval / step_s)) * step_s;

  p.options.trials = r.has_trials() ? r.trials() : 1000;
  p.options.seed = r.has_seed() ? r.seed() : 1;
  p.options.record_first = true;
  // Each checkpoint interval, with the restart before it, must be likely to
  // finish between failures; otherwise attempts grow as exp(rate x (restart + interval)).
  double rate_per_s = 0;
  for (const CauseRate& c : p.timeline.causes) rate_per_s += c.per_hour / 3600.0;
  const double exposure =
      rate_per_s * (p.timeline.restart_s + p.timeline.interval_s + p.timeline.stall_s);
  if (exposure > 20) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reliability: a restart (%.0f s) plus a checkpoint interval (%.0f s) is %.0f times the "
        "job's mean time between interruptions (%.0f s): the run would almost never finish; "
        "lower the failure rates (reliability.failure_rate_scale, cause_rate) or "
        "reliability.checkpoint_interval_s",
        p.timeline.restart_s, p.timeline.interval_s, exposure, 1 / rate_per_s));
  }
  const double events = p.options.trials * p.timeline.compute_s *
                        (1 / p.timeline.interval_s + rate_per_s * std::exp(exposure));
  if (events > kMaxEvents) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reliability: about %.3g checkpoints and interruptions to simulate (trials x run length "
        "/ checkpoint_interval_s=%.4g s, and the failures); at most %.0e: raise "
        "reliability.checkpoint_interval_s or lower reliability.trials",
        events, p.timeline.interval_s, kMaxEvents));
  }
  return p;
}

// Energy of the job's GPUs over the mean wall time, times PUE. With the
// simulated step's energy section, the GPUs draw the step's average power
// while they train (the failure-free compute and the work later redone) and
// their idle draw otherwise (checkpoint stalls, restarts, repair waits);
// without it (search rows carry none) they draw pricing.utilisation x TDP
// throughout.
double RunEnergyKwh(const ResolvedScenario& s, const config::Result& step, double compute_s,
                    const TimelineStats& st, double gpu_hours) {
  if (!step.has_energy() || step.energy().average_power_w_per_gpu() <= 0) {
    return EnergyKwh(s.pricing, gpu_hours, s.gpu->tdp_w);
  }
  const double training_s = compute_s + st.mean_lost_s;
  const double other_s = std::max(0.0, st.mean_wall_s - training_s);
  const double joules_per_gpu = training_s * step.energy().average_power_w_per_gpu() +
                                other_s * step.energy().idle_draw_w();
  return s.num_gpus * joules_per_gpu * s.pricing.pue / 3.6e6;
}

absl::Status AddGoodput(const ResolvedScenario& s, config::Result* result) {
  if (!GoodputRequested(s.echo) || !result->has_train()) return absl::OkStatus();
  absl::StatusOr<GoodputPlan> plan = PlanGoodput(s, *result);
  if (!plan.ok()) return plan.status();
  const GoodputPlan& p = *plan;
  const TimelineStats st = SimulateRuns(p.timeline, p.options);
  config::Goodput* g = result->mutable_goodput();
  g->set_trials(p.options.trials);
  g->set_seed(p.options.seed);
  g->set_failure_profile(p.profile);
  g->set_storage(p.storage);
  g->set_checkpoint_mode(p.mode);
  const double compute = p.timeline.compute_s;
  g->set_compute_days(compute / 86400.0);
  config::GoodputQuantiles* q = g->mutable_time_to_train_days();
  q->set_p10(Quantile(st.wall_s, 0.1) / 86400.0);
  q->set_p50(Quantile(st.wall_s, 0.5) / 86400.0);
  q->set_p90(Quantile(st.wall_s, 0.9) / 86400.0);
  q->set_mean(st.mean_wall_s / 86400.0);
  g->set_effective_training_time(compute / st.mean_wall_s);
  g->set_job_mttf_hours(p.unplanned_per_hour > 0 ? 1.0 / p.unplanned_per_hour : 0);
  double total = 0;
  for (size_t c = 0; c < p.timeline.causes.size(); ++c) {
    config::InterruptionsByCause* i = g->add_interruptions();
    i->set_cause(p.timeline.causes[c].name);
    i->set_component(p.timeline.causes[c].component);
    i->set_expected(st.mean_interruptions[c]);
    i->set_rate_per_hour(p.timeline.causes[c].per_hour);
    total += st.mean_interruptions[c];
  }
  g->set_expected_interruptions(total);
  g->set_checkpoint_gb(p.checkpoint_gb);
  g->set_snapshot_gb_per_gpu(p.snapshot_gb_per_gpu);
  g->set_checkpoint_stall_s(p.stall_s);
  g->set_checkpoint_write_s(p.write_s);
  g->set_checkpoint_load_s(p.load_s);
  g->set_checkpoint_interval_s(p.timeline.interval_s);
  g->set_interval_is_young_daly(p.young_daly);
  g->set_restart_s(p.timeline.restart_s);
  g->set_checkpoint_overhead_hours(st.mean_stall_s / 3600.0);
  g->set_lost_work_hours(st.mean_lost_s / 3600.0);
  g->set_restart_hours(st.mean_restart_s / 3600.0);
  g->set_repair_wait_hours(st.mean_repair_s / 3600.0);
  const double gpu_hours = s.num_gpus * st.mean_wall_s / 3600.0;
  g->set_gpu_hours(gpu_hours);
  // Spares are billed like the job's GPUs for as long as the run holds them.
  const int spare_gpus = std::max(0, p.timeline.spare_nodes) * p.gpus_per_node;
  const double spare_gpu_hours = spare_gpus * st.mean_wall_s / 3600.0;
  const double spare_usd = spare_gpu_hours * s.pricing.usd_per_gpu_hour;
  g->set_total_usd(gpu_hours * s.pricing.usd_per_gpu_hour + spare_usd);
  g->set_wasted_usd(s.num_gpus * (st.mean_wall_s - compute) / 3600.0 * s.pricing.usd_per_gpu_hour +
                    spare_usd);
  if (p.timeline.spare_nodes >= 0) {
    g->set_spare_nodes(p.timeline.spare_nodes);
    g->set_spare_gpu_hours(spare_gpu_hours);
    g->set_spare_usd(spare_usd);
    g->set_spare_shortfalls(st.mean_spare_waits);
  }
  g->set_energy_kwh(RunEnergyKwh(s, *result, compute, st, gpu_hours));
  // Histogram of time-to-train, 20 bins from the fastest to the slowest trial.
  constexpr int kBins = 20;
  const double lo = st.wall_s.front(), hi = std::max(st.wall_s.back(), lo * (1 + 1e-9));
  std::vector<int> counts(kBins, 0);
  for (double w : st.wall_s) {
    ++counts[std::min(kBins - 1, static_cast<int>((w - lo) / (hi - lo) * kBins))];
  }
  for (int b = 0; b <= kBins; ++b)
    g->add_histogram_edges_days((lo + (hi - lo) * b / kBins) / 86400.0);
  for (int c : counts) g->add_histogram_counts(c);
  for (const TimelineEvent& e : st.first_trial) {
    config::RunEvent* ev = g->add_sample_run();
    ev->set_t_hours(e.t_s / 3600.0);
    static constexpr const char* kKinds[] = {"failure", "planned", "checkpoint", "finish"};
    ev->set_kind(kKinds[static_cast<int>(e.kind)]);
    if (e.cause >= 0) ev->set_cause(p.timeline.causes[e.cause].name);
    ev->set_duration_s(e.duration_s);
  }
  g->set_sample_run_days(st.first_trial_wall_s / 86400.0);
  return absl::OkStatus();
}

std::string FormatGoodputText(const config::Result& r) {
  if (!r.has_goodput()) return "";
  const config::Goodput& g = r.goodput();
  std::string out;
  const auto line = [&out](std::string_view label, std::string_view value) {
    absl::StrAppendFormat(&out, "  %-26s %s\n", label, value);
  };
  line("goodput",
       absl::StrFormat("%d trials (seed %d), failures: %s, storage: %s, %s checkpoints", g.trials(),
                       g.seed(), g.failure_profile(), g.storage(), g.checkpoint_mode()));
  const config::GoodputQuantiles& q = g.time_to_train_days();
  line("  time to train", absl::StrFormat("p10 %.2f / p50 %.2f / p90 %.2f days (failure-free %.2f)",
                                          q.p10(), q.p50(), q.p90(), g.compute_days()));
  line("  effective training",
       absl::StrFormat("%.1f%% of wall time", 100 * g.effective_training_time()));
  line("  interruptions", absl::StrFormat("%.1f expected (job MTTF %.2f h unplanned)",
                                          g.expected_interruptions(), g.job_mttf_hours()));
  // The three most frequent causes.
  std::vector<const config::InterruptionsByCause*> by(g.interruptions().size());
  for (int i = 0; i < g.interruptions_size(); ++i) by[i] = &g.interruptions(i);
  std::stable_sort(by.begin(), by.end(),
                   [](const auto* a, const auto* b) { return a->expected() > b->expected(); });
  for (size_t i = 0; i < std::min<size_t>(3, by.size()); ++i) {
    line(absl::StrCat("    ", by[i]->cause()), absl::StrFormat("%.1f", by[i]->expected()));
  }
  line("  checkpoint",
       absl::StrFormat("%.1f GB every %.0f s%s; stall %.2f s, write %.1f s, load %.1f s",
                       g.checkpoint_gb(), g.checkpoint_interval_s(),
                       g.interval_is_young_daly() ? " (Young/Daly)" : "", g.checkpoint_stall_s(),
                       g.checkpoint_write_s(), g.checkpoint_load_s()));
  line("  restart", absl::StrFormat("%.0f s each", g.restart_s()));
  line("  waste per run", absl::StrFormat("checkpoints %.1f h, lost work %.1f h, restarts %.1f h, "
                                          "repairs %.1f h",
                                          g.checkpoint_overhead_hours(), g.lost_work_hours(),
                                          g.restart_hours(), g.repair_wait_hours()));
  line("  GPU-hours", absl::StrFormat("%.0f, $%.0f ($%.0f wasted), %.0f kWh", g.gpu_hours(),
                                      g.total_usd(), g.wasted_usd(), g.energy_kwh()));
  if (g.spare_nodes() > 0 || g.spare_shortfalls() > 0) {
    line("  spares", absl::StrFormat("%d nodes: %.0f GPU-hours, $%.0f (in the total); %.2f "
                                     "failures per run found none free",
                                     g.spare_nodes(), g.spare_gpu_hours(), g.spare_usd(),
                                     g.spare_shortfalls()));
  }
  return out;
}

}  // namespace clustersim::scenarios
