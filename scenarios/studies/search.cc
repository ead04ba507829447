#include "scenarios/studies/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "models/dtype.h"
#include "models/gpu_catalog.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/scenario_edit.h"
#include "scenarios/run/runner.h"
#include "sim/status_macros.h"
#include "strategies/search_space.h"
#include "topology/analytic_network.h"
#include "topology/memo_network.h"

namespace clustersim::scenarios {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string_view RecomputeName(models::Recompute r) {
  switch (r) {
    case models::Recompute::kNone:
      return "none";
    case models::Recompute::kSelective:
      return "selective";
    case models::Recompute::kFull:
      return "full";
  }
  return "none";
}

// The base scenario with `c` as its strategy on `num_gpus` GPUs.
config::Scenario WithStrategy(const config::Scenario& base, const strategies::ParallelConfig& c,
                              int num_gpus) {
  config::Scenario s = base;
  s.mutable_cluster()->set_num_gpus(num_gpus);
  s.mutable_network()->set_tier("analytic");
  config::ParallelismConfig* p = s.mutable_parallelism();
  p->Clear();
  p->set_tensor_model_parallel_size(c.tensor_parallel);
  p->set_pipeline_model_parallel_size(c.pipeline_parallel);
  p->set_virtual_pipeline_model_parallel_size(c.virtual_pipeline);
  p->set_context_parallel_size(c.context_parallel);
  p->set_expert_model_parallel_size(c.expert_parallel);
  p->set_pipeline_schedule(std::string(strategies::ScheduleName(c.schedule)));
  p->set_sequence_parallel(c.sequence_parallel);
  p->set_use_distributed_optimizer(c.distributed_optimizer);
  p->set_zero_stage(c.zero_stage);
  if (c.data_parallel_shard > 0) p->set_data_parallel_shard_size(c.data_parallel_shard);
  p->set_overlap_grad_reduce(c.overlap_grad_reduce);
  if (c.overlap_param_gather) p->set_overlap_param_gather(true);
  config::TrainingConfig* t = s.mutable_training();
  t->set_micro_batch_size(c.micro_batch_size);
  t->set_global_batch_size(c.global_batch_size);
  t->set_recompute_granularity(std::string(RecomputeName(c.recompute)));
  t->clear_recompute_method();
  t->clear_recompute_num_layers();
  if (c.recompute == models::Recompute::kFull &&
      c.recompute_method == models::RecomputeMethod::kBlock) {
    t->set_recompute_method("block");
    t->set_recompute_num_layers(c.recompute_num_layers);
  }
  return s;
}

// The global batch the strategies divide: the scenario's, else one sequence per GPU.
int SearchBatch(const config::Scenario& base, int num_gpus) {
  return base.training().has_global_batch_size() ? base.training().global_batch_size() : num_gpus;
}

// What the search needs from the base scenario: resolved once at one GPU
// count (model, GPU, finetune, precision, pricing) with a trivial strategy,
// data parallel over every GPU with one sequence each, so that a count the
// batch does not divide (3 in 1:8:1) resolves too; the enumerated strategies
// divide the real batch (SearchBatch) and are rejected where it does not.
absl::StatusOr<ResolvedScenario> ResolveBase(const config::Scenario& base, int num_gpus) {
  config::Scenario s = base;
  s.mutable_cluster()->set_num_gpus(num_gpus);
  s.clear_parallelism();
  s.mutable_training()->clear_micro_batch_size();
  s.mutable_training()->clear_recompute_granularity();
  s.mutable_training()->clear_recompute_method();
  s.mutable_training()->clear_recompute_num_layers();
  s.mutable_training()->set_global_batch_size(num_gpus);
  return Resolve(s);
}

std::string ScenarioPrecision(const config::Scenario& s) {
  return s.training().has_precision() ? s.training().precision() : "bf16";
}

// The base with `precision` as its training precision.
config::Scenario WithPrecision(const config::Scenario& base, const std::string& precision) {
  config::Scenario s = base;
  if (precision != ScenarioPrecision(base)) s.mutable_training()->set_precision(precision);
  return s;
}

// The precisions to enumerate: request.precisions expanded ("auto": the
// scenario's, plus fp8 where the GPU has an FP8 peak, models::CheckDtypeSupported,
// and nvfp4 where it has FP4 tensor cores) without repeats. A requested precision other than the scenario's that the
// GPU or the training stack cannot run (its trivial strategy does not resolve
// on `num_gpus`) is dropped with a note saying why.
std::vector<std::string> PrecisionsToSearch(const SearchRequest& request, int num_gpus,
                                            const ResolvedScenario& base,
                                            std::vector<std::string>* notes) {
  const std::string own = ScenarioPrecision(request.base);
  std::vector<std::string> wanted = request.precisions;
  if (wanted.empty()) wanted = {own};
  if (wanted.size() == 1 && wanted[0] == "auto") {
    wanted = {own};
    if (models::CheckDtypeSupported(*base.gpu, models::Dtype::kFp8).ok()) wanted.push_back("fp8");
    if (base.gpu->Supports(models::Dtype::kFp4)) wanted.push_back("nvfp4");
  }
  std::vector<std::string> out;
  for (const std::string& p : wanted) {
    if (std::find(out.begin(), out.end(), p) != out.end()) continue;
    if (p != own) {
      absl::StatusOr<ResolvedScenario> r = ResolveBase(WithPrecision(request.base, p), num_gpus);
      if (!r.ok()) {
        notes->push_back(absl::StrCat(p, " not searched: ", r.status().message()));
        continue;
      }
    }
    out.push_back(p);
  }
  return out;
}

double RankKey(const config::Result& r, std::string_view rank_by) {
  if (rank_by == "cost") return r.cost().usd_per_million_tokens();
  if (rank_by == "time-to-train") return r.train().time_to_train_s();
  // With failures, checkpoints and restarts (scenarios/goodput/): the mean over trials.
  if (rank_by == "goodput-time-to-train") return r.goodput().time_to_train_days().mean();
  if (rank_by == "goodput-cost") return r.goodput().total_usd();
  return r.step_time_s();
}

struct Slot {
  config::Scenario scenario;
  // Shared by the slots of one GPU count.
  const topology::Cluster* cluster;
  const topology::NetworkModel* network;
  std::optional<config::Result> result;
  std::string error_reason;
};

void SimulateAll(std::vector<Slot>& slots, const SearchRequest& request) {
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex progress_mu;
  const auto worker = [&] {
    for (size_t i = next++; i < slots.size(); i = next++) {
      if (request.control != nullptr && request.control->Cancelled()) break;
      Slot& slot = slots[i];
      absl::StatusOr<ResolvedScenario> resolved = Resolve(slot.scenario);
      RunOptions options;
      options.cluster = slot.cluster;
      options.network = slot.network;
      // The ranked table needs no per-op tasks and no simulated memory curve.
      options.merge_compute_chains = true;
      options.memory_timeline = false;
      absl::StatusOr<config::Result> result =
          resolved.ok() ? RunScenario(*resolved, options) : resolved.status();
      if (result.ok()) {
        slot.result = *std::move(result);
      } else {
        const bool unsupported = result.status().code() == absl::StatusCode::kUnimplemented;
        slot.error_reason = unsupported ? "unsupported: simulator" : "simulation error";
      }
      const size_t d = ++done;
      if (request.control != nullptr) request.control->Report(d, slots.size());
      if (request.progress) {
        std::lock_guard<std::mutex> lock(progress_mu);
        request.progress(d, slots.size());
      }
    }
  };
  const int threads = std::max(1, request.threads);
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

absl::Status CheckRequest(const SearchRequest& r) {
  if (r.gpu_counts.empty()) {
    return absl::InvalidArgumentError("--num-gpus (or --num-gpus-range a:b) is required");
  }
  const bool goodput_rank = r.rank_by == "goodput-time-to-train" || r.rank_by == "goodput-cost";
  if (r.rank_by != "time" && r.rank_by != "cost" && r.rank_by != "time-to-train" &&
      !goodput_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rank-by=", r.rank_by,
                     " is not known; use time, cost, time-to-train, goodput-time-to-train or "
                     "goodput-cost"));
  }
  if (goodput_rank && !r.base.has_reliability()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--rank-by ", r.rank_by, " needs the run simulated with failures; add --goodput"));
  }
  const config::PricingConfig& p = r.base.pricing();
  const bool has_length = p.has_train_tokens() || p.has_train_steps();
  if ((r.rank_by == "time-to-train" || goodput_rank || r.budget_usd > 0) && !has_length) {
    return absl::InvalidArgumentError(
        "--rank-by time-to-train and --budget-usd need the run length; add --train-tokens N "
        "(e.g. 1e12) or --train-steps N");
  }
  if (r.base.training().has_global_batch_size() && r.base.training().global_batch_size() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.global_batch_size=", r.base.training().global_batch_size(),
        " must be >= 1; set --global-batch-size to the sequences per step, e.g. 1024"));
  }
  for (const std::string& p : r.precisions) {
    if (p == "auto" && r.precisions.size() == 1) continue;
    if (p != "bf16" && p != "fp16" && p != "fp8" && p != "nvfp4") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--search-precisions=", absl::StrJoin(r.precisions, ","), ": \"", p,
          "\" is not a training precision; use a list of bf16, fp16, fp8 and nvfp4 (e.g. "
          "bf16,fp8), or auto (the scenario's, plus fp8 and nvfp4 where the GPU has them)"));
    }
  }
  if (r.budget_usd < 0) return absl::InvalidArgumentError("--budget-usd must be >= 0");
  if (r.top_k < 1) return absl::InvalidArgumentError("--top-k must be >= 1");
  if (r.threads < 1) return absl::InvalidArgumentError("--threads must be >= 1");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SearchReport> RunSearch(const SearchRequest& request) {
  CLUSTERSIM_RETURN_IF_ERROR(CheckRequest(request));
  SearchReport report;
  std::map<std::string, size_t> rejections;
  std::vector<Slot> slots;
  std::vector<std::unique_ptr<topology::Cluster>> clusters;
  std::vector<std::unique_ptr<topology::AnalyticNetwork>> analytic;
  std::vector<std::unique_ptr<topology::MemoNetwork>> networks;
  const Clock::time_point prune_start = Clock::now();
  for (int num_gpus : request.gpu_counts) {
    absl::StatusOr<ResolvedScenario> base = ResolveBase(request.base, num_gpus);
    if (!base.ok()) return base.status();
    absl::StatusOr<topology::Cluster> cluster = topology::BuildCluster(base->cluster);
    if (!cluster.ok()) return cluster.status();
    clusters.push_back(std::make_unique<topology::Cluster>(*std::move(cluster)));
    analytic.push_back(std::make_unique<topology::AnalyticNetwork>(*clusters.back()));
    networks.push_back(std::make_unique<topology::MemoNetwork>(*analytic.back()));
    if (num_gpus == request.gpu_counts.front()) {
      report.precisions = PrecisionsToSearch(request, num_gpus, *base, &report.notes);
    }
    for (const std::string& precision : report.precisions) {
      const config::Scenario with_precision = WithPrecision(request.base, precision);
      strategies::SearchSpace space;
      space.num_gpus = num_gpus;
      space.global_batch_size = SearchBatch(request.base, num_gpus);
      space.gpus_per_node = base->echo.cluster().gpus_per_node();
      // nvfp4 trains on the FP4 tensor cores, as Resolve maps it.
      absl::StatusOr<models::Dtype> dtype =
          precision == "nvfp4" ? models::Dtype::kFp4 : models::ParseDtype(precision);
      if (!dtype.ok()) return dtype.status();
      space.precision = *dtype;
      for (strategies::ParallelConfig& c : strategies::EnumerateStrategies(base->model, space)) {
        ++report.enumerated;
        const strategies::Pruning why =
            strategies::PruneStrategy(base->model, base->gpu->memory, base->finetune, num_gpus, &c,
                                      base->megatron_fsdp);
        if (why.reason.empty()) {
          slots.push_back({WithStrategy(with_precision, c, num_gpus), clusters.back().get(),
                           networks.back().get(), std::nullopt, ""});
          continue;
        }
        ++rejections[why.reason];
        // Too big without recompute: try the same strategy recomputing the
        // fewest layers per chunk that fit (strategies/search_space.h).
        if (c.recompute != models::Recompute::kNone || why.reason.rfind("memory: ", 0) != 0) {
          continue;
        }
        const std::optional<strategies::ParallelConfig> block = strategies::BlockRecomputeVariant(
            base->model, base->gpu->memory, base->finetune, num_gpus, c, why,
            base->megatron_fsdp);
        if (block) {
          ++report.enumerated;
          slots.push_back({WithStrategy(with_precision, *block, num_gpus), clusters.back().get(),
                           networks.back().get(), std::nullopt, ""});
        }
      }
    }
  }
  report.prune_seconds = SecondsSince(prune_start);
  report.feasible = slots.size();
  if (request.prune_only) slots.clear();

  const Clock::time_point sim_start = Clock::now();
  const std::clock_t cpu_start = std::clock();
  SimulateAll(slots, request);
  if (request.control != nullptr && request.control->Cancelled()) {
    return absl::CancelledError("search cancelled");
  }
  report.simulate_seconds = SecondsSince(sim_start);
  report.simulate_cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;

  std::vector<size_t> ranked;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].result) {
      ++rejections[slots[i].error_reason];
      continue;
    }
    ++report.simulated;
    if (request.budget_usd > 0 && slots[i].result->train().total_usd() > request.budget_usd) {
      ++rejections["over budget"];
      continue;
    }
    ranked.push_back(i);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    return RankKey(*slots[a].result, request.rank_by) < RankKey(*slots[b].result, request.rank_by);
  });
  for (size_t k = 0; k < ranked.size() && k < static_cast<size_t>(request.top_k); ++k) {
    const config::Result& r = *slots[ranked[k]].result;
    report.top.push_back({absl::StrCat("#", k + 1), r, report.precisions.size() > 1});
  }
  report.rejections.assign(rejections.begin(), rejections.end());
  std::stable_sort(report.rejections.begin(), report.rejections.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return report;
}

absl::StatusOr<std::string> ExplainStrategy(const SearchRequest& request,
                                            std::string_view assignments) {
  CLUSTERSIM_RETURN_IF_ERROR(CheckRequest(request));
  const int num_gpus = request.gpu_counts.front();
  absl::StatusOr<ResolvedScenario> base = ResolveBase(request.base, num_gpus);
  if (!base.ok()) return base.status();
  // The search's defaults (sp with tp > 1, overlapped reduction), then the edits.
  strategies::ParallelConfig defaults;
  defaults.global_batch_size = SearchBatch(request.base, num_gpus);
  defaults.overlap_grad_reduce = true;
  config::Scenario s = WithStrategy(request.base, defaults, num_gpus);
  s.mutable_parallelism()->clear_sequence_parallel();
  CLUSTERSIM_RETURN_IF_ERROR(ApplyAssignments(assignments, &s));
  if (!s.parallelism().has_sequence_parallel()) {
    s.mutable_parallelism()->set_sequence_parallel(s.parallelism().tensor_model_parallel_size() > 1);
  }
  const std::string head = absl::StrCat("strategy \"", std::string(assignments), "\" on ",
                                        num_gpus, " GPUs: ");
  absl::StatusOr<ResolvedScenario> resolved = Resolve(s);
  if (!resolved.ok()) {
    const bool unsupported = resolved.status().code() == absl::StatusCode::kUnimplemented;
    return absl::StrCat(head, "rejected (", unsupported ? "unsupported" : "invalid", "): ",
                        resolved.status().message(), "\n");
  }
  strategies::ParallelConfig c = resolved->parallel;
  const strategies::Pruning why = strategies::PruneStrategy(
      resolved->model, resolved->gpu->memory, resolved->finetune, num_gpus, &c,
      resolved->megatron_fsdp);
  if (!why.reason.empty()) {
    return absl::StrCat(head, "rejected (", why.reason, "): ", why.detail, "\n");
  }
  absl::StatusOr<config::Result> result = RunScenario(*resolved, RunOptions{});
  if (!result.ok()) {
    return absl::StrCat(head, "rejected (simulation): ", result.status().message(), "\n");
  }
  absl::StatusOr<std::string> table =
      FormatStudyTable({{"explained", *result}}, "text", /*side_by_side=*/true);
  if (!table.ok()) return table.status();
  return absl::StrCat(head, "feasible, simulated:\n", *table);
}

absl::StatusOr<std::string> FormatSearchReport(const SearchReport& r, std::string_view format) {
  absl::StatusOr<std::string> table = FormatStudyTable(r.top, format, /*side_by_side=*/false);
  if (!table.ok() || format != "text") return table;
  std::string out = *table;
  size_t rejected = 0;
  for (const auto& [reason, count] : r.rejections) rejected += count;
  absl::StrAppendFormat(&out, "\n%d strategies enumerated, %d simulated; rejections by reason (%d):\n",
                        r.enumerated, r.simulated, rejected);
  for (const auto& [reason, count] : r.rejections) {
    absl::StrAppendFormat(&out, "  %8d  %s\n", count, reason);
  }
  if (r.precisions.size() > 1) {
    absl::StrAppend(&out, "precisions searched: ", absl::StrJoin(r.precisions, ", "), "\n");
  }
  for (const std::string& note : r.notes) absl::StrAppend(&out, note, "\n");
  return out;
}

}  // namespace clustersim::scenarios
