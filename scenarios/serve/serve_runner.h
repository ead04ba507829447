// File: scenarios/serve/serve_runner.h
//
// Runs `clustersim serve` for a resolved scenario (serve_resolve.h): judges
// the memory of one GPU (models/inference_memory.h; a model that does not fit
// is an INVALID_ARGUMENT error carrying the verdict and the remedies); builds
// the cluster, the network model and the kernel model (with the GPU's shipped
// calibration), the iteration cost model (strategies/serving_iteration.h);
// simulates one replica's share of the requests on the continuous-batching
// scheduler (strategies/serving_scheduler.h); and assembles the ServeResult.
//
// Replicas: num_gpus / (tp x pp) identical replicas; requests are spread
// evenly (random routing of a Poisson stream gives each replica a Poisson
// stream at rate / replicas), so one replica is simulated with
// ceil(num_requests / replicas) requests and the throughputs are multiplied.
//
// Figures (vLLM's benchmark_serving.py definitions): TTFT = first token -
// arrival; TPOT = (finish - first token) / (output tokens - 1) over requests
// with more than one output token; E2E = finish - arrival; percentiles by
// linear interpolation between ranks (numpy's default). Throughputs count
// tokens over the time from the first arrival to the last finish.
//
// Capacity and saturation: the capacity is the request rate served when every
// request arrives at once (the scheduler's best batching); an offered rate at
// or above it is reported as saturated (the queue, and TTFT, then grow for as
// long as requests arrive), never simulated forever: every simulation has a
// finite number of requests.
//
// Sustainable rate: the largest rate whose p99 TPOT and p99 TTFT meet the
// targets (MLPerf Inference's server-scenario criterion for LLMs, which
// bounds TTFT and TPOT at the 99th percentile), by bisection over
// re-simulations with the same requests (common random numbers) between 1%
// of the capacity and the capacity. A "server" run's probes are each a full
// run as MLPerf's (serve_requests.h: duration_s of arrivals, the request
// count growing with the rate), and its upper bound rises by quarters while
// the targets still hold there (a burst's drain puts the capacity below the
// rate a long stream sustains).
//
// Timed runs ("server", and "offline" with inference.workload.duration_s):
// the capacity burst holds as many requests as keep the replica busy for
// duration_s, sized as MLPerf's loadgen sizes its Offline query (1.1 x the
// duration x the expected rate, here the rate a smaller burst reached); a
// timed offline run is that burst.
//
// The latency-vs-throughput curve: re-simulations at 10%, 20%, ... 100% of
// the capacity, Poisson arrivals (a fixed-batch workload's lengths, 200
// requests).
//
// Money and energy: $/hour = GPUs x $/GPU-hour (models/pricing.h via
// scenarios/input/train_cost.h); $/million output tokens = $/hour / (output
// tokens/s x 3600) x 1e6; power = GPUs x TDP x pricing.utilisation x PUE (an
// upper bound at TDP unless pricing.utilisation says otherwise).
//
// Example:
//   absl::StatusOr<config::ServeResult> r = RunServe(resolved, {.trace_path = "t.json"});
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_RUNNER_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_RUNNER_H_

#include <string>

#include "absl/status/statusor.h"
#include "scenarios/proto/serve_result.pb.h"
#include "scenarios/serve/serve_resolve.h"
#include "sim/run_control.h"

namespace clustersim::scenarios {

struct ServeOptions {
  std::string trace_path;  // Chrome trace of the iterations; empty: none
  // The latency-vs-throughput curve's 10 re-simulations (the HTML page,
  // viz/serve_report.h, draws it).
  bool curve = true;
  // Another thread's stop flag and progress view (sim/run_control.h): done /
  // total count the simulations (the asked workload, then the curve's);
  // once cancelled, RunServe returns CANCELLED. Null: none.
  sim::RunControl* control = nullptr;
};

absl::StatusOr<config::ServeResult> RunServe(const ResolvedServe& s, const ServeOptions& options);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_RUNNER_H_
