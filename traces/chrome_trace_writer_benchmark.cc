// Spans written per second by ChromeTraceWriter, end to end: describing,
// formatting, buffering and writing to a file in the temp directory.
//
// Run: build-*/traces/chrome_trace_writer_benchmark
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "sim/engine.h"
#include "sim/task_graph.h"
#include "traces/chrome_trace_writer.h"

namespace clustersim::traces {
namespace {

// A describer shaped like a step builder's: a formatted name and a few args.
class BenchDescriber : public sim::SpanDescriber {
 public:
  void Describe(const sim::TaskGraph&, const sim::Span& s, sim::SpanDescription* out) const override {
    out->name = absl::StrCat("fwd mb", s.tag % 8, " L", s.tag % 80, " qkv_gemm");
    out->category = "compute,gemm";
    out->args.emplace_back("M", int64_t{8192});
    out->args.emplace_back("N", int64_t{3072});
    out->args.emplace_back("K", int64_t{4096});
    out->args.emplace_back("flops", 2.0 * 8192 * 3072 * 4096);
    out->args.emplace_back("source", std::string("table"));
  }
  std::string ProcessName(uint32_t group) const override { return absl::StrCat("gpu", group); }
  std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override {
    return g.resource(r).name;
  }
};

// $TMPDIR (or /tmp)/chrome_trace_writer_benchmark.<pid>.json
std::string TempPath() {
  const char* dir = ::getenv("TMPDIR");
  return absl::StrCat(dir != nullptr && *dir != '\0' ? dir : "/tmp",
                      "/chrome_trace_writer_benchmark.", ::getpid(), ".json");
}

void BM_WriteSpans(benchmark::State& state) {
  const int64_t num_spans = state.range(0);
  constexpr uint32_t kGpus = 64;
  constexpr uint32_t kLanes = 4;
  sim::TaskGraph g;
  for (uint32_t gpu = 0; gpu < kGpus; ++gpu) {
    for (uint32_t lane = 0; lane < kLanes; ++lane) {
      g.AddResource(absl::StrCat("gpu", gpu, "/lane", lane), gpu, lane);
    }
  }
  const uint32_t resources = kGpus * kLanes;
  const BenchDescriber describer;
  const std::string path = TempPath();
  int64_t bytes = 0;
  for (auto _ : state) {
    auto writer = ChromeTraceWriter::Open(path, describer, {});
    if (!writer.ok()) {
      state.SkipWithError(std::string(writer.status().message()).c_str());
      return;
    }
    for (int64_t i = 0; i < num_spans; ++i) {
      const uint32_t r = static_cast<uint32_t>(i % resources);
      const int64_t slot = i / resources;
      const sim::Span span{
          r, static_cast<sim::TaskId>(i), static_cast<uint32_t>(i),
          sim::Time::Zero() + sim::Nanoseconds(1500) * slot,
          sim::Time::Zero() + sim::Nanoseconds(1500) * slot + sim::Picoseconds(1234567)};
      (*writer)->OnSpan(g, span);
    }
    bytes = (*writer)->bytes_written();
    if (absl::Status s = (*writer)->Finish(); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  ::unlink(path.c_str());
  state.SetItemsProcessed(state.iterations() * num_spans);
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["bytes_per_span"] = static_cast<double>(bytes) / static_cast<double>(num_spans);
}
BENCHMARK(BM_WriteSpans)->Arg(10000)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace clustersim::traces
