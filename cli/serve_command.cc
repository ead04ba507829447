// `clustersim serve [SCENARIO] [flags]`: load the scenario, override its
// `inference` section (and model, cluster, price) from flags, resolve,
// simulate serving, and print the summary (text) or the ServeResult (JSON);
// --trace and --report write files atomically.
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/parse_args.h"
#include "scenarios/serve/deployment_search.h"
#include "scenarios/serve/serve_disagg_resolve.h"
#include "scenarios/serve/serve_disagg_runner.h"
#include "scenarios/serve/serve_resolve.h"
#include "scenarios/serve/serve_runner.h"
#include "sim/atomic_file.h"
#include "viz/deployment_search_report.h"
#include "viz/serve_disagg_summary.h"
#include "viz/serve_report.h"

namespace clustersim::cli {
namespace po = boost::program_options;
namespace {

struct ServeValues {
  std::optional<std::string> model, model_config, gpu, node, weight_dtype, kv_dtype, price_source,
      trace_file, trace_format, mlperf, lengths_file;
  std::optional<int> num_gpus, tp, pp, ep, batch, num_requests, prompt, output, max_batch,
      max_tokens, group_size, block_size, concurrency, warmup_requests;
  std::optional<double> rate, memory_utilization, target_tpot, target_ttft, price, think_time,
      trace_time_scale, prefix_hit_rate, duration, output_tokens_mean;
  std::optional<uint64_t> seed;
  bool offline = false, server = false, prefix_caching = false;

  // The workload kinds the flags ask for (at most one may be given).
  std::vector<std::string> Kinds() const {
    std::vector<std::string> k;
    if (batch) k.push_back("--batch-size");
    if (rate) k.push_back("--request-rate");
    if (offline) k.push_back("--offline");
    if (server) k.push_back("--server");
    if (concurrency) k.push_back("--concurrency");
    if (trace_file) k.push_back("--trace-file");
    return k;
  }
  std::optional<std::string> speculative_method, draft_model;
  std::optional<int> speculative_tokens;
  std::optional<double> acceptance_rate;
};

void SetLength(int v, config::LengthDistribution* d) {
  d->Clear();
  d->set_kind("fixed");
  d->set_value(v);
}

config::Scenario Overrides(const ServeValues& v, bool chunked) {
  config::Scenario o;
  if (v.model) o.mutable_model()->set_preset(*v.model);
  if (v.model_config) o.mutable_model()->set_model_config_file(*v.model_config);
  if (v.gpu) o.mutable_cluster()->set_gpu(*v.gpu);
  if (v.num_gpus) o.mutable_cluster()->set_num_gpus(*v.num_gpus);
  if (v.node) o.mutable_cluster()->set_node(*v.node);
  if (v.price_source) o.mutable_pricing()->set_price_source(*v.price_source);
  if (v.price) o.mutable_pricing()->set_usd_per_gpu_hour(*v.price);
  config::InferenceConfig* i = o.mutable_inference();
  if (v.tp) i->set_tensor_parallel_size(*v.tp);
  if (v.pp) i->set_pipeline_parallel_size(*v.pp);
  if (v.ep) i->set_expert_parallel_size(*v.ep);
  if (v.weight_dtype) i->set_weight_dtype(*v.weight_dtype);
  if (v.kv_dtype) i->set_kv_cache_dtype(*v.kv_dtype);
  if (v.group_size) i->set_quant_group_size(*v.group_size);
  if (v.max_batch) i->set_max_batch_size(*v.max_batch);
  if (v.max_tokens) i->set_max_tokens_per_step(*v.max_tokens);
  if (v.block_size) i->set_kv_block_size(*v.block_size);
  if (v.memory_utilization) i->set_memory_utilization(*v.memory_utilization);
  if (v.target_tpot) i->set_target_time_per_output_token_ms(*v.target_tpot);
  if (v.target_ttft) i->set_target_time_to_first_token_ms(*v.target_ttft);
  if (chunked) i->set_chunked_prefill(true);
  if (v.speculative_method || v.draft_model || v.speculative_tokens || v.acceptance_rate) {
    config::SpeculativeConfig* sp = i->mutable_speculative();
    if (v.speculative_method) sp->set_method(*v.speculative_method);
    if (v.draft_model) sp->mutable_draft_model()->set_preset(*v.draft_model);
    if (v.speculative_tokens) sp->set_num_speculative_tokens(*v.speculative_tokens);
    if (v.acceptance_rate) sp->set_acceptance_rate(*v.acceptance_rate);
  }
  config::InferenceWorkload* w = i->mutable_workload();
  if (v.batch) {
    w->set_kind("fixed-batch");
    w->set_batch_size(*v.batch);
  }
  if (v.rate) {
    w->set_kind("poisson");
    w->set_request_rate_per_s(*v.rate);
  }
  if (v.offline) w->set_kind("offline");
  if (v.server) w->set_kind("server");
  if (v.concurrency) {
    w->set_kind("concurrency");
    w->set_concurrency(*v.concurrency);
  }
  if (v.think_time) w->set_think_time_ms(*v.think_time);
  if (v.warmup_requests) w->set_warmup_requests(*v.warmup_requests);
  if (v.duration) w->set_duration_s(*v.duration);
  if (v.trace_file) {
    w->set_kind("trace");
    w->set_trace_file(*v.trace_file);
  }
  if (v.trace_format) w->set_trace_format(*v.trace_format);
  if (v.lengths_file) w->set_lengths_file(*v.lengths_file);
  if (v.output_tokens_mean) w->set_output_tokens_mean(*v.output_tokens_mean);
  if (v.trace_time_scale) w->set_trace_time_scale(*v.trace_time_scale);
  if (v.prefix_hit_rate) i->set_prefix_cache_hit_rate(*v.prefix_hit_rate);
  if (v.prefix_caching) i->set_enable_prefix_caching(true);
  if (v.mlperf) i->set_mlperf_benchmark(*v.mlperf);
  if (v.num_requests) w->set_num_requests(*v.num_requests);
  if (v.seed) w->set_seed(*v.seed);
  if (v.prompt) SetLength(*v.prompt, w->mutable_prompt_length());
  if (v.output) SetLength(*v.output, w->mutable_output_length());
  return o;
}

// Writes `report` to report_path when one is given, then `result` as JSON or
// as `text` followed by `footer`.
template <typename Result>
absl::Status WriteServeOutput(const Result& result, const std::string& format,
                              const std::string& report_path, const std::string& report,
                              const std::string& text, const std::string& footer, CommandIo& io) {
  if (!report_path.empty()) {
    if (absl::Status st = sim::WriteFileAtomically(report_path, report); !st.ok()) return st;
  }
  if (format == "json") {
    absl::StatusOr<std::string> json = ToJson(result);
    if (!json.ok()) return json.status();
    *io.out << *json;
  } else {
    *io.out << text << footer;
  }
  return absl::OkStatus();
}

// A scenario with inference.disaggregated: two pools, the KV transfers
// between them, goodput, and (--disagg-search) the ratio search.
absl::Status ServeDisaggregated(const config::Scenario& scenario, const std::string& format,
                                bool files, CommandIo& io) {
  if (files) {
    return absl::InvalidArgumentError(
        "--trace and --report are not available for a disaggregated deployment "
        "(inference.disaggregated); drop them or use --format json");
  }
  absl::StatusOr<scenarios::ResolvedDisagg> resolved = scenarios::ResolveDisagg(scenario);
  if (!resolved.ok()) return resolved.status();
  absl::StatusOr<config::ServeResult> result =
      scenarios::RunDisaggServe(*resolved, scenario, {.control = io.control});
  if (!result.ok()) return result.status();
  return WriteServeOutput(*result, format, "", "", viz::FormatDisaggSummary(*result), "", io);
}

// The deployment search's flags (inference.deployment_search).
struct SearchValues {
  bool search = false, aggregated_only = false;
  std::optional<std::string> gpus;
  std::optional<std::string> gpu_prices;
  std::optional<int> max_gpus, top, requests;
  bool Any() const {
    return search || aggregated_only || gpus || gpu_prices || max_gpus || top || requests;
  }
};

// Reads --search-gpu-prices NAME=USD,NAME=USD into `prices`; the values are
// checked with the rest of the search space.
absl::Status ParseGpuPrices(const std::string& flag,
                            google::protobuf::Map<std::string, double>* prices) {
  for (absl::string_view item : absl::StrSplit(flag, ',')) {
    const std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    double usd = 0;
    if (kv.size() != 2 || absl::StripAsciiWhitespace(kv[0]).empty() ||
        !absl::SimpleAtod(kv[1], &usd)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--search-gpu-prices=\"", flag, "\": \"", item,
          "\" is not NAME=USD; give comma-separated GPU prices, e.g. "
          "h100-sxm5-80gb=2.49,b200-sxm-180gb=5.5"));
    }
    (*prices)[std::string(absl::StripAsciiWhitespace(kv[0]))] = usd;
  }
  return absl::OkStatus();
}

// Writes the flags into `scenario`; the flags that set a dimension the search
// chooses are refused.
absl::Status ApplySearchFlags(const SearchValues& sv, const ServeValues& v,
                              config::Scenario* scenario) {
  const std::vector<std::pair<const char*, bool>> chosen = {
      {"--gpu", v.gpu.has_value()},
      {"--num-gpus", v.num_gpus.has_value()},
      {"--tp", v.tp.has_value()},
      {"--pp", v.pp.has_value()},
      {"--ep", v.ep.has_value()},
      {"--weight-dtype", v.weight_dtype.has_value()},
      {"--kv-cache-dtype", v.kv_dtype.has_value()},
      {"--max-batch-size", v.max_batch.has_value()}};
  for (const auto& [flag, given] : chosen) {
    if (given) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag,
                       " is chosen by --search; remove it (narrow the search with --search-gpus, "
                       "--search-max-gpus or inference.deployment_search)"));
    }
  }
  config::DeploymentSearchConfig* ds = scenario->mutable_inference()->mutable_deployment_search();
  ds->set_enabled(true);
  if (sv.gpus) {
    ds->clear_gpus();
    for (absl::string_view g : absl::StrSplit(*sv.gpus, ',')) {
      g = absl::StripAsciiWhitespace(g);
      if (g.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--search-gpus=\"", *sv.gpus,
                         "\" has an empty name; give comma-separated GPU names, e.g. "
                         "h100-sxm5-80gb,h200-sxm-141gb"));
      }
      ds->add_gpus(std::string(g));
    }
  }
  if (sv.gpu_prices) {
    absl::Status s = ParseGpuPrices(*sv.gpu_prices, ds->mutable_gpu_prices());
    if (!s.ok()) return s;
  }
  if (sv.max_gpus) ds->set_max_gpus(*sv.max_gpus);
  if (sv.top) ds->set_top(*sv.top);
  if (sv.requests) ds->set_requests_per_replica(*sv.requests);
  if (sv.aggregated_only) ds->set_disaggregated(false);
  return absl::OkStatus();
}

absl::Status ServeSearch(const config::Scenario& scenario, const std::string& format,
                         const std::string& report_path, CommandIo& io) {
  absl::StatusOr<config::DeploymentSearchResult> result =
      scenarios::SearchDeployments(scenario, io.control ? &io.control->cancel : nullptr);
  if (!result.ok()) return result.status();
  return WriteServeOutput(
      *result, format, report_path,
      report_path.empty() ? "" : viz::RenderDeploymentSearchReport(*result),
      viz::FormatDeploymentSearch(*result),
      report_path.empty() ? "" : absl::StrCat("  report    ", report_path, "\n"), io);
}

}  // namespace

absl::Status ServeCommand(const Args& args, CommandIo& io) {
  ServeValues v;
  std::string scenario_path, format = "text", trace_path, report_path;
  bool chunked = false, help = false, no_curve = false, disagg_search = false;
  std::optional<int> disagg_search_gpus;
  SearchValues sv;
  po::options_description deploy("Deployment (override the scenario)");
  Opt(deploy, "model", &v.model, "model preset (clustersim list models)");
  Opt(deploy, "model-config", &v.model_config, "a Hugging Face config.json");
  Opt(deploy, "gpu", &v.gpu, "GPU name (clustersim list gpus)");
  Opt(deploy, "num-gpus", &v.num_gpus, "GPUs in the deployment (default: one replica)");
  Opt(deploy, "node", &v.node, "node preset (clustersim list clusters)");
  Opt(deploy, "tp", &v.tp, "tensor-parallel size of a replica");
  Opt(deploy, "pp", &v.pp, "pipeline-parallel size of a replica");
  Opt(deploy, "ep", &v.ep,
      "MoE: expert-parallel size, = tp (data-parallel attention, experts over the GPUs)");
  Opt(deploy, "weight-dtype", &v.weight_dtype, "bf16|fp16|fp8|int8|int4-gptq|int4-awq|nvfp4");
  Opt(deploy, "quant-group-size", &v.group_size, "4-bit group size (default 128)");
  Opt(deploy, "kv-cache-dtype", &v.kv_dtype, "bf16|fp16|fp8|int8");
  Opt(deploy, "memory-utilization", &v.memory_utilization, "fraction of GPU memory (default 0.9)");
  Opt(deploy, "price-source", &v.price_source, "price catalog entry (clustersim list prices)");
  Opt(deploy, "usd-per-gpu-hour", &v.price, "price per GPU-hour");
  po::options_description sched("Scheduler (vLLM names in brackets)");
  Opt(sched, "max-batch-size", &v.max_batch, "running sequences at most [max_num_seqs]");
  Opt(sched, "max-tokens-per-step", &v.max_tokens, "tokens per iteration [max_num_batched_tokens]");
  Opt(sched, "kv-block-size", &v.block_size, "tokens per paged KV block (default 16)");
  sched.add_options()("chunked-prefill", po::bool_switch(&chunked),
                      "mix prompt chunks with decode steps [enable_chunked_prefill]");
  Opt(sched, "prefix-cache-hit-rate", &v.prefix_hit_rate,
      "fraction of each prompt already in the KV cache [enable_prefix_caching]");
  sched.add_options()("enable-prefix-caching", po::bool_switch(&v.prefix_caching),
                      "LRU prefix cache over a Mooncake trace's hash_ids");
  po::options_description spec("Speculative decoding (docs/serving.md)");
  Opt(spec, "speculative-method", &v.speculative_method, "draft|mtp|eagle");
  Opt(spec, "draft-model", &v.draft_model, "draft model preset (method draft)");
  Opt(spec, "num-speculative-tokens", &v.speculative_tokens, "tokens drafted per step, k");
  Opt(spec, "acceptance-rate", &v.acceptance_rate, "per-token acceptance probability, alpha");
  po::options_description work("Workload");
  Opt(work, "batch-size", &v.batch, "a fixed batch of this many requests per replica");
  Opt(work, "request-rate", &v.rate, "Poisson arrivals, requests per second (all replicas)");
  Opt(work, "num-requests", &v.num_requests, "requests to simulate (default 200)");
  Opt(work, "prompt-len", &v.prompt, "prompt tokens (default 1024)");
  Opt(work, "output-len", &v.output, "output tokens (default 128)");
  Opt(work, "seed", &v.seed, "random seed of arrivals and lengths");
  work.add_options()("offline", po::bool_switch(&v.offline),
                     "every request queued at time zero (MLPerf Offline)")(
      "server", po::bool_switch(&v.server),
      "the highest Poisson rate meeting the p99 targets (MLPerf Server)");
  Opt(work, "mlperf-benchmark", &v.mlperf, "targets from MLPerf's limits, e.g. llama2-70b");
  Opt(work, "duration-s", &v.duration,
      "server: seconds of arrivals per run (default 600, MLPerf's); offline: queue enough for it");
  Opt(work, "concurrency", &v.concurrency, "clients in a closed loop (--max-concurrency)");
  Opt(work, "think-time-ms", &v.think_time, "a client's pause between requests (default 0)");
  Opt(work, "warmup-requests", &v.warmup_requests,
      "closed loop: measure after this many warm-up requests, with the clients kept busy");
  Opt(work, "trace-file", &v.trace_file, "replay an Azure CSV or Mooncake JSONL trace");
  Opt(work, "trace-format", &v.trace_format, "azure|mooncake (default: from the extension)");
  Opt(work, "trace-time-scale", &v.trace_time_scale, "multiply the trace's arrival times");
  Opt(work, "lengths-file", &v.lengths_file,
      "take request lengths from a CSV of input_length,output_length samples");
  Opt(work, "output-tokens-mean", &v.output_tokens_mean,
      "scale the lengths file's outputs to this mean (the served model's own)");
  Opt(work, "target-tpot-ms", &v.target_tpot, "p99 time-per-output-token target");
  Opt(work, "target-ttft-ms", &v.target_ttft, "p99 time-to-first-token target");
  po::options_description disagg("Disaggregated prefill/decode (inference.disaggregated)");
  disagg.add_options()("disagg-search", po::bool_switch(&disagg_search),
                       "rank prefill:decode instance counts and tp by goodput per GPU");
  Opt(disagg, "disagg-search-gpus", &disagg_search_gpus,
      "GPUs the search splits (default: the pools' GPUs)");
  po::options_description search(
      "Deployment search (inference.deployment_search; needs --request-rate and a target)");
  search.add_options()("search", po::bool_switch(&sv.search),
                       "find the cheapest deployment meeting the p99 targets at the rate")(
      "search-aggregated-only", po::bool_switch(&sv.aggregated_only),
      "skip disaggregated prefill/decode candidates");
  Opt(search, "search-gpus", &sv.gpus,
      "comma-separated GPUs (default: every catalog GPU with a price)");
  Opt(search, "search-gpu-prices", &sv.gpu_prices,
      "price per GPU-hour by GPU, replacing the catalog's: NAME=USD,... (also searches them)");
  Opt(search, "search-max-gpus", &sv.max_gpus, "GPUs of a deployment at most (default 16)");
  Opt(search, "search-requests", &sv.requests,
      "requests simulated per replica of a candidate (default: --num-requests)");
  Opt(search, "search-top", &sv.top, "rows of the text table (default 15)");
  po::options_description output("Output");
  output.add_options()("format", po::value<std::string>(&format)->default_value("text"),
                       "text|json")(
      "trace", po::value<std::string>(&trace_path),
      "write a Chrome trace of the iterations (open in ui.perfetto.dev)")(
      "report", po::value<std::string>(&report_path),
      "write the HTML inference page (latency-vs-throughput curve)")(
      "no-curve", po::bool_switch(&no_curve), "skip the curve's 10 re-simulations")(
      "help,h", po::bool_switch(&help), "show this help");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>(&scenario_path), "scenario file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::options_description all;
  all.add(deploy).add(sched).add(spec).add(work).add(disagg).add(search).add(output).add(hidden);
  po::options_description visible;
  visible.add(deploy).add(sched).add(spec).add(work).add(disagg).add(search).add(output);

  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, all, &pos, "serve", &vm); !s.ok()) return s;
  if (help) {
    std::ostringstream text;
    text << "usage: clustersim serve [SCENARIO] [flags]\n\n" << visible;
    *io.out << text.str();
    return absl::OkStatus();
  }
  if (format != "text" && format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", format, " is not known; use text or json"));
  }
  if (const std::vector<std::string> kinds = v.Kinds(); kinds.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(absl::StrJoin(kinds, ", "), " each set the workload kind; keep one"));
  }
  absl::StatusOr<config::Scenario> loaded = LoadBaseScenario(scenario_path, io);
  if (!loaded.ok()) return loaded.status();
  config::Scenario scenario = *std::move(loaded);
  const config::Scenario overrides = Overrides(v, chunked);
  if (!v.Kinds().empty()) {
    // A workload kind from the flags replaces the scenario's kind-specific fields.
    config::InferenceWorkload* w = scenario.mutable_inference()->mutable_workload();
    w->clear_batch_size();
    w->clear_request_rate_per_s();
    w->clear_concurrency();
    w->clear_think_time_ms();
    w->clear_warmup_requests();
    w->clear_duration_s();
    w->clear_trace_file();
    w->clear_trace_format();
    w->clear_trace_time_scale();
    // A trace gives every request's lengths.
    if (v.trace_file) {
      w->clear_prompt_length();
      w->clear_output_length();
    }
  }
  // A lengths file gives every request's lengths.
  if (v.lengths_file) {
    scenario.mutable_inference()->mutable_workload()->clear_prompt_length();
    scenario.mutable_inference()->mutable_workload()->clear_output_length();
  }
  if (v.prompt) scenario.mutable_inference()->mutable_workload()->clear_prompt_length();
  if (v.output) scenario.mutable_inference()->mutable_workload()->clear_output_length();
  scenario.MergeFrom(overrides);
  if (sv.Any()) {
    if (absl::Status st = ApplySearchFlags(sv, v, &scenario); !st.ok()) return st;
  }
  if (scenario.inference().has_deployment_search() &&
      (!scenario.inference().deployment_search().has_enabled() ||
       scenario.inference().deployment_search().enabled())) {
    if (!trace_path.empty() || disagg_search || disagg_search_gpus) {
      return absl::InvalidArgumentError(
          "--trace, --disagg-search and --disagg-search-gpus do not apply to the deployment "
          "search (--search, inference.deployment_search); drop them");
    }
    return ServeSearch(scenario, format, report_path, io);
  }
  if (disagg_search || disagg_search_gpus) {
    if (!scenario.inference().has_disaggregated()) {
      return absl::InvalidArgumentError(
          "--disagg-search needs a disaggregated deployment: add inference.disaggregated "
          "{ prefill {...} decode {...} } to the scenario");
    }
    config::DisaggSearch* search =
        scenario.mutable_inference()->mutable_disaggregated()->mutable_search();
    search->set_enabled(true);
    if (disagg_search_gpus) search->set_total_gpus(*disagg_search_gpus);
  }
  if (scenario.inference().has_disaggregated()) {
    return ServeDisaggregated(scenario, format, !trace_path.empty() || !report_path.empty(), io);
  }
  absl::StatusOr<scenarios::ResolvedServe> resolved = scenarios::ResolveServe(scenario);
  if (!resolved.ok()) return resolved.status();
  const scenarios::ServeOptions options{
      .trace_path = trace_path, .curve = !no_curve || !report_path.empty(), .control = io.control};
  absl::StatusOr<config::ServeResult> result = scenarios::RunServe(*resolved, options);
  if (!result.ok()) return result.status();
  std::string footer;
  if (!trace_path.empty())
    absl::StrAppend(&footer, "  trace                       ", trace_path, "\n");
  if (!report_path.empty()) {
    absl::StrAppend(&footer, "  report                      ", report_path, "\n");
  }
  return WriteServeOutput(*result, format, report_path,
                          report_path.empty() ? "" : viz::RenderServeReport(*result),
                          viz::FormatServeSummary(*result), footer, io);
}

int ServeCommand(const Args& args) { return RunOnStdIo(ServeCommand, args); }

}  // namespace clustersim::cli
