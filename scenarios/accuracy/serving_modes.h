// File: scenarios/accuracy/serving_modes.h
//
// The deployment columns of a serving validation table
// (tests/validation/serving-deployed/runs.csv): the benchmark `mode` a row was
// measured in and the simulator `feature`s it needs, plus the setting columns
// (concurrency, request_rate, ttft_limit_ms, tpot_limit_ms, spec_method,
// spec_tokens, acceptance_len, disagg_prefill, disagg_decode, ep, pp,
// attention_dp, num_nodes, dataset, and the optional max_batch_size,
// max_num_tokens). Their meanings are in that table's README.md.
//
// Modes: "fixed-batch" (a static batch, all requests start together),
// "offline" (all requests queued at once, maximum throughput: trtllm-bench
// throughput, MLPerf Offline), "server" (MLPerf Server: Poisson arrivals at
// request_rate, valid under p99 TTFT/TPOT limits), "concurrency" (a closed loop
// of N clients), "poisson" (open-loop arrivals without limits), "trace"
// (replayed arrivals).
//
// MapServingMode decides how the serving simulator runs a row:
// - fixed-batch: the row's batch;
// - poisson: arrivals at request_rate, batch_or_concurrency requests;
// - offline: workload kind "offline", the number of requests the row's
//   dataset cell states ("..., 3000 requests"), else serve's default (200);
//   rows measured with trtllm-bench run under the scheduler limits the tool
//   picks (trtllm_bench_settings.h), its GUARANTEED_NO_EVICT admission and
//   KV share, and in-flight batching (generation first, then context within
//   max_num_tokens): whole prompts on the PyTorch backend (no chunked
//   prefill), context chunked into the token budget on a built engine;
// - rows served by a TensorRT-LLM engine through Triton's tensorrtllm_backend
//   (framework "... tensorrtllm_backend") or an NVIDIA NIM (framework
//   "NVIDIA NIM ..."; NIM's optimized profiles are TensorRT-LLM engines),
//   whose source states no build limits, run under trtllm-build's defaults
//   (kTrtllmEngineMaxBatch, kTrtllmEngineMaxTokens) with the same in-flight
//   batching;
// - concurrency: one client is a batch of 1 run to the end, repeated; N > 1
//   clients are kind "concurrency" with the stated request count, else
//   AIPerf's default for synthetic data, max(10, 2N) (ai-dynamo/aiperf
//   docs/cli_options.md, --request-count); NIM rows, whose page defers to
//   the NIM benchmarking guide's AIPerf procedure without restating its
//   counts, run 10N measured requests after 2N warm-up requests, the counts
//   of NVIDIA's published genai-perf concurrency sweeps (kNimSweep*);
// - server: kind "server" with the row's p99 TTFT/TPOT limits; the metric
//   is read at the highest rate meeting them. Every probe of the rate search
//   runs as MLPerf's Server scenario does (serve_mode.h): 600 s of Poisson
//   arrivals (kMlperfMinDurationS), at least kMlperfServerMinQueries. A
//   latency row of a server run (any metric but a throughput) runs instead
//   as "poisson" at the run's scheduled rate (request_rate) for the same
//   600 s: the latency belongs to that run, not to the simulated highest rate.
// ShareGPT rows ("ShareGPT N prompts") draw N length pairs from the
// first turns of ShareGPT conversations (kShareGptLengthsFile).
// MLPerf rows (dataset "mlperf <benchmark> ...") take the per-sample token
// lengths of the benchmark's data set (MlperfLengthsFile), the samples of a
// seeded shuffle, cycled. Offline they queue loadgen's Offline query: at
// least the data set's samples (the benchmark's Offline min_query_count) and
// as many as keep the run busy for 600 s (duration_s), or the larger query
// the dataset cell states ("... query of N requests", the samples_per_query
// of the run's log). A Server row's stated "at least N requests" (its log's
// min_query_count) is issued at every rate probed.
// Speculative rows map through serving_row_features.h (refused without a
// stated acceptance length), disaggregated rows to inference.disaggregated
// when both pools' GPU counts and the tp are stated; rows with expert
// parallelism to inference.expert_parallel_size when ep equals the tp and
// attention is data-parallel (the simulator's EP); a mixed split of the
// experts (ep dividing a stated tp, attention not data-parallel) runs as
// tensor parallelism over the tp GPUs; other splits are refused. A row that
// states its GPU count but no tp runs at the tp inferred_tp.h picks.
// FP4 rows run through their weight dtype (nvfp4) and MLA rows through their
// model's catalog preset (inference_runs.cc). Every other row gets
// "needs <feature>; <feature>" naming what it waits for (trace replay,
// dataset-driven lengths, ...).
//
// ApplyServingMode writes a mapping into a row's scenario (model, device,
// tp and formats already set) and adds the settings it takes on faith to
// `assumptions`.
//
// CheckServingDeployedTable is the table's well-formedness check: unique ids,
// a source on every row, a finite numeric value, a known mode, known
// features, numeric setting columns; errors name the row and the column.
//
// Example:
//   ServingModeMapping m = MapServingMode(table, row);
//   if (!m.not_supported.empty()) std::cout << "not supported: " << m.not_supported;
//   else absl::Status s = ApplyServingMode(m, table, row, &scenario, &assumptions);
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {

bool IsKnownServingMode(std::string_view mode);
bool IsKnownServingFeature(std::string_view feature);

// True when the table carries the deployment columns (a `mode` column).
bool HasServingModeColumns(const sim::CsvTable& table);

struct ServingModeMapping {
  // Non-empty: the row cannot run today; says which features it needs.
  std::string not_supported;
  // "fixed-batch", "poisson", "offline", "concurrency" or "server".
  std::string workload_kind;
  // Poisson rows: arrival rate; poisson, offline, concurrency and server
  // rows: number of requests.
  double request_rate = 0;
  int num_requests = 0;
  int concurrency = 0;                          // "concurrency" rows
  int warmup_requests = 0;                      // "concurrency" rows: unmeasured, sent first
  double ttft_limit_ms = 0, tpot_limit_ms = 0;  // "server" rows (0: none)
  double duration_s = 0;                        // "server" rows: seconds of arrivals
  bool trtllm_bench = false;                    // scheduler limits of trtllm-bench (offline rows)
  // trtllm-bench on the PyTorch backend (framework names it), not on a built
  // engine: its token limit also holds the longest prompt and a full batch.
  bool trtllm_bench_pytorch = false;
  // TensorRT-LLM's PyTorch runtime (framework names its PyTorch backend), in
  // any mode: its executor's host work per sequence, overlapped with the GPUs
  // (kTrtllmPytorchHostUsPerSequence).
  bool trtllm_pytorch_runtime = false;
  // A TensorRT-LLM engine served through Triton's tensorrtllm_backend or a
  // NIM: the engine's default build limits and in-flight batching (see above).
  bool trtllm_engine_defaults = false;
  bool chunked_prefill = false;  // the row states a chunked context
  // The request path outside the engine the row's client measured through
  // (inference.frontend.name, models/data/serving_frontends.textproto), from
  // the framework column: "triton-trtllm" for Triton's tensorrtllm_backend,
  // "openai-http" for NIM; empty: none (in-process benchmarks).
  std::string frontend;
  // Speculative decoding (empty method: off).
  std::string spec_method;
  int spec_tokens = 0;
  double spec_acceptance_rate = 0;
  // Expert parallelism with data-parallel attention (0: none); equals the tp.
  int expert_parallel = 0;
  // CUDA graph batch sizes with padding the row states (cuda_graph_batch_sizes
  // column, ';'-separated, per attention rank); empty: none.
  std::vector<int> cuda_graph_batch_sizes;
  // Scheduler limits the row states (max_batch_size, max_num_tokens columns),
  // for the whole replica: the stated per-rank values times the attention
  // ranks (0: not stated; the simulator's defaults or trtllm-bench's).
  int max_batch_size = 0, max_tokens_per_step = 0;
  // The row states its GPU count but no tp: the mapping infers one
  // (inferred_tp.h) and the report counts the row apart.
  bool infer_tp = false;
  // Disaggregated pools (0: colocated).
  int prefill_gpus = 0, decode_gpus = 0, disagg_tp = 0;
  // The data set's per-sample lengths (MLPerf and ShareGPT rows), relative to the table's
  // directory; empty: the row's input_len/output_len.
  std::string lengths_file;
  // The served model's mean output tokens per sample when the file's outputs
  // are another model's (inference.workload.output_tokens_mean); 0: the file's.
  double output_tokens_mean = 0;
  // Requests the dataset cell names (ShareGPT rows); 0: none.
  int dataset_requests = 0;
  // Settings taken on faith, printed under the row.
  std::vector<std::string> assumptions;
};

// trtllm-build's default limits (tensorrt_llm/builder.py, BuildConfig, from
// v0.11 on; read at NVIDIA/TensorRT-LLM commit 008b2b8d).
inline constexpr int kTrtllmEngineMaxBatch = 2048;
inline constexpr int kTrtllmEngineMaxTokens = 8192;

// NVIDIA's published genai-perf concurrency sweeps (e.g. the Dynamo +
// TensorRT-LLM DeepSeek-R1-FP4 benchmark script), taken for the NIM
// benchmarking guide's: per client, measured requests
// (--request-count $(($concurrency*10))) and warm-up requests
// (--warmup-request-count $(($concurrency*2))).
inline constexpr int kNimSweepRequestsPerClient = 10;
inline constexpr int kNimSweepWarmupPerClient = 2;

// MLPerf Inference's run length and Server minimum query count:
// mlcommons/inference loadgen/mlperf.conf (commit 001712e9)
// *.Server.min_duration = *.Offline.min_duration = 600000 ms; no LLM
// benchmark sets a Server min_query_count there, so loadgen's default,
// TestSettings::min_query_count = 100 (loadgen/test_settings.h). The Offline
// min_query_count of each LLM benchmark equals its data set's sample count
// (llama2-70b 24576, mixtral-8x7b 15000, llama3_1-405b 8313, deepseek-r1
// 4388), MlperfDataset::samples.
inline constexpr double kMlperfMinDurationS = 600;
inline constexpr int kMlperfServerMinQueries = 100;

// The lengths file of an MLPerf data set cell ("mlperf llama2-70b OpenOrca
// 24576" -> "datasets/mlperf-llama2-70b.csv", relative to the table) and its
// sample count, or an empty name when the benchmark has none.
// output_tokens_mean: the mean output tokens per sample that the benchmark's
// reference model generates when the file's outputs are another model's
// (inference.workload.output_tokens_mean); 0 when the file's are its own.
struct MlperfDataset {
  std::string lengths_file;
  int samples = 0;
  double output_tokens_mean = 0;
};
MlperfDataset MlperfLengthsFile(std::string_view dataset);

// ShareGPT rows (dataset "ShareGPT N prompts ...", vLLM's benchmarks): the
// first prompt/reply pairs of ShareGPT conversations with vLLM's length
// filter (datasets/README.md), of which N are drawn with the simulator's seed.
inline constexpr std::string_view kShareGptLengthsFile = "datasets/sharegpt-first-turns.csv";
struct ShareGptDataset {
  int prompts = 0;  // N; 0 when the cell names no ShareGPT sample
};
ShareGptDataset ShareGptLengthsFile(std::string_view dataset);

ServingModeMapping MapServingMode(const sim::CsvTable& table, const sim::CsvTable::Row& row);

// Writes the mapping's workload, limits, speculation and pools into
// `scenario`; InvalidArgument when trtllm-bench's limits cannot be derived
// (its weights or one request do not fit).
absl::Status ApplyServingMode(const ServingModeMapping& m, const sim::CsvTable& table,
                              const sim::CsvTable::Row& row, config::Scenario* scenario,
                              std::vector<std::string>* assumptions);

// OK, or InvalidArgument naming the first bad row (id and line) and column.
absl::Status CheckServingDeployedTable(const sim::CsvTable& table, std::string_view origin);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_H_
