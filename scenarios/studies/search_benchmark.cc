// The strategy search loop end to end (resolve, build, simulate, rank) on a
// small fixed space: Llama 3 8B on 128 H100, global batch 64, one thread.
// Reports the strategies simulated and their rate per CPU second (Google
// Benchmark divides kIsRate counters by CPU time); above 64 GPUs the step builder's
// tensor- and context-parallel folds apply as in the README benchmark
// (Llama 3 70B on 1,024 H100, `clustersim search`).
#include <string>

#include "benchmark/benchmark.h"
#include "scenarios/studies/search.h"

namespace clustersim::scenarios {
namespace {

void BM_SearchLlama3_8bOn128(benchmark::State& state) {
  SearchRequest req;
  req.base.mutable_model()->set_preset("llama3-8b");
  req.base.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  req.base.mutable_training()->set_global_batch_size(64);
  req.gpu_counts = {128};
  req.top_k = 1;
  req.threads = 1;
  size_t simulated = 0;
  for (auto _ : state) {
    absl::StatusOr<SearchReport> r = RunSearch(req);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    simulated += r->simulated;
  }
  state.counters["strategies"] = static_cast<double>(simulated);
  state.counters["strategies_per_s"] =
      benchmark::Counter(static_cast<double>(simulated), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SearchLlama3_8bOn128)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace clustersim::scenarios
