#include "cli/serve_flags.h"

#include <exception>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "boost/program_options.hpp"
#include "cli/parse_args.h"
#include "sim/status_macros.h"

namespace clustersim::cli {
namespace po = boost::program_options;
namespace {

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
  if (v.frontend) i->mutable_frontend()->set_name(*v.frontend);
  if (v.frontend_overhead) i->mutable_frontend()->set_request_overhead_ms(*v.frontend_overhead);
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

}  // namespace

absl::StatusOr<ServeFlags> ParseServeFlags(const std::vector<std::string>& args) {
  ServeFlags f;
  po::options_description deploy("Deployment (override the scenario)");
  Opt(deploy, "model", &f.values.model, "model preset (clustersim list models)");
  Opt(deploy, "model-config", &f.values.model_config, "a Hugging Face config.json");
  Opt(deploy, "gpu", &f.values.gpu, "GPU name (clustersim list gpus)");
  Opt(deploy, "num-gpus", &f.values.num_gpus, "GPUs in the deployment (default: one replica)");
  Opt(deploy, "node", &f.values.node, "node preset (clustersim list clusters)");
  Opt(deploy, "tp", &f.values.tp, "tensor-parallel size of a replica");
  Opt(deploy, "pp", &f.values.pp, "pipeline-parallel size of a replica");
  Opt(deploy, "ep", &f.values.ep,
      "MoE: expert-parallel size, = tp (data-parallel attention, experts over the GPUs)");
  Opt(deploy, "weight-dtype", &f.values.weight_dtype,
      "bf16|fp16|fp8|int8|int4-gptq|int4-awq|nvfp4|fp8-mixed");
  Opt(deploy, "quant-group-size", &f.values.group_size, "4-bit group size (default 128)");
  Opt(deploy, "kv-cache-dtype", &f.values.kv_dtype, "bf16|fp16|fp8|int8");
  Opt(deploy, "memory-utilization", &f.values.memory_utilization, "fraction of GPU memory (default 0.9)");
  Opt(deploy, "price-source", &f.values.price_source, "price catalog entry (clustersim list prices)");
  Opt(deploy, "usd-per-gpu-hour", &f.values.price, "price per GPU-hour");
  po::options_description sched("Scheduler (vLLM names in brackets)");
  Opt(sched, "max-batch-size", &f.values.max_batch, "running sequences at most [max_num_seqs]");
  Opt(sched, "max-tokens-per-step", &f.values.max_tokens, "tokens per iteration [max_num_batched_tokens]");
  Opt(sched, "kv-block-size", &f.values.block_size, "tokens per paged KV block (default 16)");
  sched.add_options()("chunked-prefill", po::bool_switch(&f.chunked_prefill),
                      "mix prompt chunks with decode steps [enable_chunked_prefill]");
  Opt(sched, "prefix-cache-hit-rate", &f.values.prefix_hit_rate,
      "fraction of each prompt already in the KV cache [enable_prefix_caching]");
  sched.add_options()("enable-prefix-caching", po::bool_switch(&f.values.prefix_caching),
                      "LRU prefix cache over a Mooncake trace's hash_ids");
  po::options_description spec("Speculative decoding (docs/serving.md)");
  Opt(spec, "speculative-method", &f.values.speculative_method, "draft|mtp|eagle");
  Opt(spec, "draft-model", &f.values.draft_model, "draft model preset (method draft)");
  Opt(spec, "num-speculative-tokens", &f.values.speculative_tokens, "tokens drafted per step, k");
  Opt(spec, "acceptance-rate", &f.values.acceptance_rate, "per-token acceptance probability, alpha");
  po::options_description work("Workload");
  Opt(work, "batch-size", &f.values.batch, "a fixed batch of this many requests per replica");
  Opt(work, "request-rate", &f.values.rate, "Poisson arrivals, requests per second (all replicas)");
  Opt(work, "num-requests", &f.values.num_requests, "requests to simulate (default 200)");
  Opt(work, "prompt-len", &f.values.prompt, "prompt tokens (default 1024)");
  Opt(work, "output-len", &f.values.output, "output tokens (default 128)");
  Opt(work, "seed", &f.values.seed, "random seed of arrivals and lengths");
  work.add_options()("offline", po::bool_switch(&f.values.offline),
                     "every request queued at time zero (MLPerf Offline)")(
      "server", po::bool_switch(&f.values.server),
      "the highest Poisson rate meeting the p99 targets (MLPerf Server)");
  Opt(work, "mlperf-benchmark", &f.values.mlperf, "targets from MLPerf's limits, e.g. llama2-70b");
  Opt(work, "duration-s", &f.values.duration,
      "server: seconds of arrivals per run (default 600, MLPerf's); offline: queue enough for it");
  Opt(work, "concurrency", &f.values.concurrency, "clients in a closed loop (--max-concurrency)");
  Opt(work, "think-time-ms", &f.values.think_time, "a client's pause between requests (default 0)");
  Opt(work, "frontend", &f.values.frontend,
      "the request path outside the engine: none|triton-trtllm|openai-http (default none)");
  Opt(work, "frontend-overhead-ms", &f.values.frontend_overhead,
      "the frontend's time per request, ms (overrides the named value)");
  Opt(work, "warmup-requests", &f.values.warmup_requests,
      "closed loop: measure after this many warm-up requests, with the clients kept busy");
  Opt(work, "trace-file", &f.values.trace_file, "replay an Azure CSV or Mooncake JSONL trace");
  Opt(work, "trace-format", &f.values.trace_format, "azure|mooncake (default: from the extension)");
  Opt(work, "trace-time-scale", &f.values.trace_time_scale, "multiply the trace's arrival times");
  Opt(work, "lengths-file", &f.values.lengths_file,
      "take request lengths from a CSV of input_length,output_length samples");
  Opt(work, "output-tokens-mean", &f.values.output_tokens_mean,
      "scale the lengths file's outputs to this mean (the served model's own)");
  Opt(work, "target-tpot-ms", &f.values.target_tpot, "p99 time-per-output-token target");
  Opt(work, "target-ttft-ms", &f.values.target_ttft, "p99 time-to-first-token target");
  po::options_description disagg("Disaggregated prefill/decode (inference.disaggregated)");
  disagg.add_options()("disagg-search", po::bool_switch(&f.disagg_search),
                       "rank prefill:decode instance counts and tp by goodput per GPU");
  Opt(disagg, "disagg-search-gpus", &f.disagg_search_gpus,
      "GPUs the search splits (default: the pools' GPUs)");
  po::options_description search(
      "Deployment search (inference.deployment_search; needs --request-rate and a target)");
  search.add_options()("search", po::bool_switch(&f.search.search),
                       "find the cheapest deployment meeting the p99 targets at the rate")(
      "search-aggregated-only", po::bool_switch(&f.search.aggregated_only),
      "skip disaggregated prefill/decode candidates");
  Opt(search, "search-gpus", &f.search.gpus,
      "comma-separated GPUs (default: every catalog GPU with a price)");
  Opt(search, "search-gpu-prices", &f.search.gpu_prices,
      "price per GPU-hour by GPU, replacing the catalog's: NAME=USD,... (also searches them)");
  Opt(search, "search-max-gpus", &f.search.max_gpus, "GPUs of a deployment at most (default 16)");
  Opt(search, "search-requests", &f.search.requests,
      "requests simulated per replica of a candidate (default: --num-requests)");
  Opt(search, "search-top", &f.search.top, "rows of the text table (default 15)");
  po::options_description output("Output");
  output.add_options()("format", po::value<std::string>(&f.format)->default_value("text"),
                       "text|json")(
      "trace", po::value<std::string>(&f.trace_path),
      "write a Chrome trace of the iterations (open in ui.perfetto.dev)")(
      "report", po::value<std::string>(&f.report_path),
      "write the HTML inference page (latency-vs-throughput curve)")(
      "no-curve", po::bool_switch(&f.no_curve), "skip the curve's 10 re-simulations")(
      "help,h", po::bool_switch(&f.help), "show this help");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>(&f.scenario_path), "scenario file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::options_description all;
  all.add(deploy).add(sched).add(spec).add(work).add(disagg).add(search).add(output).add(hidden);
  po::options_description visible;
  visible.add(deploy).add(sched).add(spec).add(work).add(disagg).add(search).add(output);

  std::ostringstream help;
  help << "usage: clustersim serve [SCENARIO] [flags]\n\n" << visible;
  f.help_text = help.str();

  po::variables_map vm;
  CLUSTERSIM_RETURN_IF_ERROR(ParseArgs(args, all, &pos, "serve", &vm));
  if (f.help) return f;
  if (f.format != "text" && f.format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", f.format, " is not known; use text or json"));
  }
  if (const std::vector<std::string> kinds = f.values.Kinds(); kinds.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(absl::StrJoin(kinds, ", "), " each set the workload kind; keep one"));
  }
  return f;
}

absl::Status ApplyServeFlags(const ServeFlags& flags, config::Scenario* scenario) {
  const ServeValues& v = flags.values;
  const config::Scenario overrides = Overrides(v, flags.chunked_prefill);
  if (!v.Kinds().empty()) {
    // A workload kind from the flags replaces the scenario's kind-specific fields.
    config::InferenceWorkload* w = scenario->mutable_inference()->mutable_workload();
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
    scenario->mutable_inference()->mutable_workload()->clear_prompt_length();
    scenario->mutable_inference()->mutable_workload()->clear_output_length();
  }
  if (v.prompt) scenario->mutable_inference()->mutable_workload()->clear_prompt_length();
  if (v.output) scenario->mutable_inference()->mutable_workload()->clear_output_length();
  scenario->MergeFrom(overrides);
  if (flags.search.Any()) return ApplySearchFlags(flags.search, v, scenario);
  return absl::OkStatus();
}

}  // namespace clustersim::cli
