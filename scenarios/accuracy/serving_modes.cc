#include "scenarios/accuracy/serving_modes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "scenarios/accuracy/serving_modes_internal.h"
#include "scenarios/accuracy/serving_row_features.h"
#include "scenarios/accuracy/trtllm_bench_settings.h"

namespace clustersim::scenarios {

using serving_modes_internal::Count;
using serving_modes_internal::Features;
using serving_modes_internal::StatedRequests;

namespace {

constexpr std::string_view kModes[] = {"fixed-batch", "offline", "server",
                                       "concurrency", "poisson", "trace"};
constexpr std::string_view kFeatures[] = {
    "fixed-batch", "offline", "server", "concurrency", "poisson", "trace",       "spec",
    "disagg",      "moe",     "mla",    "fp4",         "fp8-kv",  "prefix-cache",
    "chunked-context"};
template <size_t N>
bool Contains(const std::string_view (&list)[N], std::string_view s) {
  for (std::string_view x : list) {
    if (x == s) return true;
  }
  return false;
}

// "a, b, c" of a list of names.
template <size_t N>
std::string Join(const std::string_view (&list)[N]) {
  std::string out;
  for (std::string_view x : list) absl::StrAppend(&out, out.empty() ? "" : ", ", std::string(x));
  return out;
}

// A number > 0 in `column`, or 0 when empty or not a number.
double Number(const sim::CsvTable& t, const sim::CsvTable::Row& row, std::string_view column) {
  double x = 0;
  return absl::SimpleAtod(t.Get(row, column), &x) && x > 0 ? x : 0;
}

// Requests of an offline row whose source states none: serve's default
// (scenarios/serve/serve_mode.h).
constexpr int kDefaultOfflineRequests = 200;

}  // namespace

namespace serving_modes_internal {

std::set<std::string> Features(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  std::set<std::string> out;
  for (absl::string_view f : absl::StrSplit(t.Get(row, "feature"), ';', absl::SkipEmpty())) {
    out.insert(std::string(f));
  }
  return out;
}

// A whole count > 0 in `column`, or 0 when empty or not a count.
int Count(const sim::CsvTable& t, const sim::CsvTable::Row& row, std::string_view column) {
  int n = 0;
  return absl::SimpleAtoi(t.Get(row, column), &n) && n > 0 ? n : 0;
}

std::string KnownModes() { return Join(kModes); }
std::string KnownFeatures() { return Join(kFeatures); }

}  // namespace serving_modes_internal

bool IsKnownServingMode(std::string_view mode) { return Contains(kModes, mode); }
bool IsKnownServingFeature(std::string_view feature) { return Contains(kFeatures, feature); }

bool HasServingModeColumns(const sim::CsvTable& table) { return table.Column("mode") >= 0; }

ServingModeMapping MapServingMode(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  ServingModeMapping m;
  const std::string& mode = t.Get(row, "mode");
  const std::set<std::string> features = Features(t, row);
  std::vector<std::string> needs;
  if (!IsKnownServingMode(mode)) {
    m.not_supported = absl::StrCat("mode '", mode, "' is not one of ", Join(kModes));
    return m;
  }
  // The benchmark mode first: what drives the requests.
  const int concurrency = Count(t, row, "concurrency");
  if (mode == "trace") needs.push_back("trace replay");
  if (mode == "concurrency" && concurrency == 0) {
    needs.push_back("closed-loop clients at a stated concurrency (not stated)");
  }
  if (mode == "server") {
    m.ttft_limit_ms = Number(t, row, "ttft_limit_ms");
    m.tpot_limit_ms = Number(t, row, "tpot_limit_ms");
    if (m.ttft_limit_ms <= 0 && m.tpot_limit_ms <= 0) {
      needs.push_back("the server run's p99 TTFT/TPOT limits (not stated)");
    }
  }
  // Then what the row leaves unstated that the run depends on.
  const MlperfDataset mlperf = MlperfLengthsFile(t.Get(row, "dataset"));
  if (!mlperf.lengths_file.empty()) {
    m.lengths_file = mlperf.lengths_file;
    m.output_tokens_mean = mlperf.output_tokens_mean;
    m.assumptions.push_back(
        mlperf.output_tokens_mean > 0
            ? absl::StrCat("request lengths: the ", mlperf.samples, " samples of ",
                           mlperf.lengths_file,
                           " (input tokens; reference outputs, another model's, scaled to the "
                           "benchmark model's ",
                           mlperf.output_tokens_mean, " tokens per sample)")
            : absl::StrCat("request lengths: the ", mlperf.samples, " samples of ",
                           mlperf.lengths_file,
                           " (input tokens and the data set's reference output tokens)"));
  } else if (const ShareGptDataset sharegpt = ShareGptLengthsFile(t.Get(row, "dataset"));
             features.count("trace") && sharegpt.prompts > 0) {
    m.lengths_file = std::string(kShareGptLengthsFile);
    m.dataset_requests = sharegpt.prompts;
    m.assumptions.push_back(absl::StrCat(
        "request lengths: ", sharegpt.prompts, " pairs drawn (seeded) from ",
        std::string(kShareGptLengthsFile),
        " (ShareGPT first prompts and replies, Llama 2 tokenizer, vLLM's length filter; the "
        "benchmark's own fixed-seed sample is not reproduced)"));
  } else if (features.count("trace")) {
    needs.push_back(absl::StrCat("dataset-driven request lengths (", t.Get(row, "dataset"), ")"));
  } else if (t.Get(row, "input_len").empty() || t.Get(row, "output_len").empty()) {
    needs.push_back(
        absl::StrCat("the request lengths of '", t.Get(row, "dataset"), "' (the row states none)"));
  }
  // A row that states its GPU count but not the split runs at the tp a
  // deployment would pick (inferred_tp.h), once the model and GPU are known.
  if (t.Get(row, "tp").empty() && !features.count("disagg")) {
    if (Count(t, row, "num_devices") > 0) {
      m.infer_tp = true;
    } else {
      needs.push_back(
          "the tensor-parallel size the source does not state (nor the GPU count to infer it "
          "from)");
    }
  }
  // Then the features.
  if (features.count("spec")) {
    SpeculativeRow spec = MapSpeculativeRow(t, row);
    if (!spec.needs.empty()) {
      needs.push_back(spec.needs);
    } else {
      m.spec_method = spec.method;
      m.spec_tokens = spec.num_tokens;
      m.spec_acceptance_rate = spec.acceptance_rate;
      m.assumptions.push_back(absl::StrFormat(
          "%s, k %d: acceptance rate %.3f solved from the stated %g tokens per step", spec.method,
          spec.num_tokens, spec.acceptance_rate, spec.acceptance_length));
    }
  }
  if (features.count("disagg")) {
    DisaggregatedRow pools = MapDisaggregatedRow(t, row);
    if (!pools.needs.empty()) {
      needs.push_back(pools.needs);
    } else {
      m.prefill_gpus = pools.prefill_gpus;
      m.decode_gpus = pools.decode_gpus;
      m.disagg_tp = pools.tp;
    }
  }
  // MLA comes with the model (a catalog preset with kv_lora_rank), FP4 with
  // the weight dtype (nvfp4): inference_runs.cc checks both.
  if (features.count("prefix-cache")) needs.push_back("prefix caching");
  // The simulator's expert parallelism is SGLang's / TensorRT-LLM's
  // data-parallel attention with the experts split over the same GPUs
  // (inference.expert_parallel_size = tensor_parallel_size).
  const int ep = Count(t, row, "ep");
  const bool attention_dp = t.Get(row, "attention_dp") == "true";
  int tp = 0;
  const bool tp_stated = absl::SimpleAtoi(t.Get(row, "tp"), &tp);
  if (ep > 1 && !attention_dp && tp_stated && ep < tp && tp % ep == 0) {
    // TensorRT-LLM's mixed split (attention tp, experts ep x tp/ep over the
    // same GPUs): each GPU holds 1/tp of the expert weights either way, so
    // the row runs as tensor parallelism over all of them.
    m.assumptions.push_back(absl::StrCat(
        "MoE experts split ep ", ep, " x tp ", tp / ep, " run as tp ", tp,
        " (the same expert bytes per GPU; the load imbalance between expert groups is not "
        "modelled)"));
  } else if (ep > 1 && (!attention_dp || !tp_stated || ep != tp)) {
    needs.push_back(absl::StrCat(
        "expert parallelism (ep ", ep, ", tp '", t.Get(row, "tp"), "', attention_dp '",
        t.Get(row, "attention_dp"),
        "'): only ep = tp with data-parallel attention is modelled (an MoE tensor x expert split "
        "is not)"));
  } else if (ep > 1) {
    m.expert_parallel = ep;
    m.assumptions.push_back(absl::StrCat(
        "ep ", ep, " with data-parallel attention: decode steps balanced over the ", ep,
        " attention ranks, each prompt whole on one rank"));
  } else if (attention_dp) {
    needs.push_back("data-parallel attention without expert parallelism");
  }
  if (const int pp = Count(t, row, "pp"); pp > 1) {
    needs.push_back(absl::StrCat("pipeline-parallel serving (pp ", pp, ")"));
  }
  if (const std::string& sizes = t.Get(row, "cuda_graph_batch_sizes"); !sizes.empty()) {
    for (absl::string_view part : absl::StrSplit(sizes, ';')) {
      int size = 0;
      if (!absl::SimpleAtoi(part, &size) || size < 1 ||
          (!m.cuda_graph_batch_sizes.empty() && size <= m.cuda_graph_batch_sizes.back())) {
        needs.push_back(absl::StrCat("cuda_graph_batch_sizes '", sizes,
                                     "' as ascending ';'-separated batch sizes >= 1"));
        m.cuda_graph_batch_sizes.clear();
        break;
      }
      m.cuda_graph_batch_sizes.push_back(size);
    }
    if (!m.cuda_graph_batch_sizes.empty()) {
      m.assumptions.push_back(absl::StrCat("CUDA graphs padded to the captured batches ", sizes,
                                           " per attention rank (decode-only iterations)"));
    }
  }
  if (!needs.empty()) {
    m.not_supported = absl::StrCat("needs ", absl::StrJoin(needs, "; "));
    return m;
  }
  // Scheduler limits the run set itself: per attention rank under
  // data-parallel attention (TensorRT-LLM schedules each rank alone), so the
  // replica's limits are ep times them.
  // The run's engine chunks prompts into the token budget (TensorRT-LLM's
  // enable_chunked_context, stated in the submission's configuration).
  m.chunked_prefill = features.count("chunked-context") > 0;
  if (const int batch = Count(t, row, "max_batch_size"); batch > 0) {
    const int ranks = std::max(1, m.expert_parallel);
    m.max_batch_size = batch * ranks;
    m.max_tokens_per_step = Count(t, row, "max_num_tokens") * ranks;
    m.assumptions.push_back(absl::StrCat(
        "the run's own limits: max batch ", batch,
        m.max_tokens_per_step > 0 ? absl::StrCat(", max tokens ", m.max_tokens_per_step / ranks)
                                  : std::string(),
        ranks > 1 ? absl::StrCat(" per attention rank (x", ranks, ")") : std::string()));
  }
  // A TensorRT-LLM engine served through Triton, or behind an NVIDIA NIM
  // (whose optimized profiles for a stated GPU, precision and tp are
  // TensorRT-LLM engines, preferred over vLLM), runs under its build limits;
  // the sources state none, so trtllm-build's defaults.
  const std::string& framework = t.Get(row, "framework");
  const bool nim = absl::StrContains(framework, "NVIDIA NIM");
  m.trtllm_pytorch_runtime = absl::StrContains(framework, "TensorRT-LLM") &&
                             absl::StrContains(framework, "PyTorch backend");
  if (m.trtllm_pytorch_runtime) {
    m.assumptions.push_back(absl::StrFormat(
        "TensorRT-LLM PyTorch runtime: host work of %.1f us per sequence and iteration beside "
        "the per-iteration part, overlapped with the GPUs (overlap scheduler, on by default)%s",
        kTrtllmPytorchHostUsPerSequence,
        m.cuda_graph_batch_sizes.empty()
            ? ""
            : absl::StrFormat("; an iteration with a prompt on any rank, or above the largest "
                              "CUDA graph, runs eagerly at %.0f us of host dispatch per kernel",
                              kTrtllmPytorchEagerUsPerKernel)));
  }
  if ((absl::StrContains(framework, "tensorrtllm_backend") || nim) && m.max_batch_size == 0) {
    m.trtllm_engine_defaults = true;
    m.assumptions.push_back(
        absl::StrCat(nim ? "NIM's optimized profile taken as a TensorRT-LLM engine; " : "",
                     "TensorRT-LLM engine limits not stated: trtllm-build's defaults, max batch ",
                     kTrtllmEngineMaxBatch, ", max tokens ", kTrtllmEngineMaxTokens,
                     "; in-flight batching (generation first, context within the token budget)"));
  }
  // The client measured through the server's request path: Triton's
  // generate_stream endpoint of the tensorrtllm_backend ensemble, or NIM's
  // OpenAI-compatible HTTP server.
  if (absl::StrContains(framework, "tensorrtllm_backend") || nim) {
    m.frontend = nim ? "openai-http" : "triton-trtllm";
    m.assumptions.push_back(absl::StrCat("frontend ", m.frontend,
                                         ": the client's time per request outside the engine "
                                         "(models/data/serving_frontends.textproto)"));
  }
  const int stated_requests = StatedRequests(t.Get(row, "dataset"));
  if (mode == "poisson") {
    double rate = 0;
    const int requests = Count(t, row, "batch_or_concurrency");
    if (!absl::SimpleAtod(t.Get(row, "request_rate"), &rate) || !(rate > 0) || requests == 0) {
      m.not_supported =
          absl::StrCat("poisson row needs request_rate > 0 (is '", t.Get(row, "request_rate"),
                       "') and the number of requests in batch_or_concurrency");
      return m;
    }
    m.workload_kind = "poisson";
    m.request_rate = rate;
    m.num_requests = requests;
    return m;
  }
  if (mode == "offline") {
    m.workload_kind = "offline";
    // An MLPerf row's stated query ("N requests": the samples_per_query its
    // log records, which a submission may raise above the data set) is the
    // query loadgen issued.
    m.num_requests = mlperf.samples > 0       ? std::max(mlperf.samples, stated_requests)
                     : m.dataset_requests > 0 ? m.dataset_requests
                                              : stated_requests;
    if (m.num_requests == 0) {
      m.num_requests = kDefaultOfflineRequests;
      m.assumptions.push_back(absl::StrCat("offline: the number of requests is not stated: ",
                                           kDefaultOfflineRequests, " (serve's default)"));
    }
    if (mlperf.samples > 0) {
      m.duration_s = kMlperfMinDurationS;
      const std::string query =
          stated_requests > mlperf.samples
              ? absl::StrCat("query of the run's ", stated_requests,
                             " samples (its log's samples_per_query), at least")
              : absl::StrCat("query, at least the ", mlperf.samples,
                             " samples of min_query_count and");
      m.assumptions.push_back(absl::StrCat("offline: loadgen's ", query, " enough for ",
                                           kMlperfMinDurationS,
                                           " s (1.1 x 600 s x the simulated rate, as for an "
                                           "expected QPS)"));
    }
    m.trtllm_bench = absl::StrContains(framework, "trtllm-bench");
    m.trtllm_bench_pytorch = m.trtllm_bench && absl::StrContains(framework, "PyTorch");
    return m;
  }
  const std::string& metric = t.Get(row, "metric");
  double scheduled = 0;
  if (mode == "server" && !absl::StartsWith(metric, "output_tokens_per_s") &&
      absl::SimpleAtod(t.Get(row, "request_rate"), &scheduled) && scheduled > 0) {
    // A latency of a server run belongs to the run at its scheduled rate:
    // the same 600 s of Poisson arrivals at that rate, without the search.
    m.workload_kind = "poisson";
    m.request_rate = scheduled;
    m.num_requests = std::max(kMlperfServerMinQueries,
                              static_cast<int>(std::ceil(scheduled * kMlperfMinDurationS)));
    m.ttft_limit_ms = m.tpot_limit_ms = 0;
    m.assumptions.push_back(absl::StrCat(
        "server latency: the run at its scheduled ", scheduled, " req/s (request_rate), ",
        kMlperfMinDurationS, " s of Poisson arrivals, not at the simulated highest rate"));
    return m;
  }
  if (mode == "server") {
    // A stated query count ("N requests": the min_query_count the run's
    // log records) replaces loadgen's default minimum.
    m.workload_kind = "server";
    m.num_requests = std::max(kMlperfServerMinQueries, stated_requests);
    m.duration_s = kMlperfMinDurationS;
    m.assumptions.push_back(absl::StrCat(
        "server: each rate probed runs ", kMlperfMinDurationS,
        " s of Poisson arrivals (MLPerf's min_duration), at least ", m.num_requests, " queries",
        stated_requests > kMlperfServerMinQueries ? " (the run's min_query_count)" : "",
        "; requests routed to the replicas at random"));
    return m;
  }
  if (mode == "concurrency" && concurrency > 1) {
    m.workload_kind = "concurrency";
    m.concurrency = concurrency;
    m.num_requests = stated_requests;
    if (m.num_requests == 0 && nim) {
      m.num_requests = kNimSweepRequestsPerClient * concurrency;
      m.warmup_requests = kNimSweepWarmupPerClient * concurrency;
      m.assumptions.push_back(absl::StrCat(
          "concurrency ", concurrency, ": ", m.num_requests, " requests after ", m.warmup_requests,
          " warm-up requests (not stated on the page; NVIDIA's genai-perf sweep counts, 10 and 2 "
          "per client)"));
    } else if (m.num_requests == 0) {
      m.num_requests = std::max(10, 2 * concurrency);
      m.assumptions.push_back(absl::StrCat(
          "concurrency ", concurrency, ": ", m.num_requests,
          " requests (not stated; AIPerf's default for synthetic data, max(10, 2 x clients))"));
    }
    return m;
  }
  m.workload_kind = "fixed-batch";
  if (mode == "concurrency") {
    // One client sends its next request when the last one finishes: every
    // request runs alone, so the row is a batch of 1.
    m.assumptions.push_back("a closed loop of one client runs one request at a time: a batch of 1");
  }
  return m;
}

}  // namespace clustersim::scenarios
