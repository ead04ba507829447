#include "scenarios/serve/serve_trace.h"

#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "models/quantization.h"
#include "sim/span_describer.h"
#include "sim/task_graph.h"
#include "traces/chrome_trace_writer.h"

namespace clustersim::scenarios {
namespace {

class IterationDescriber : public sim::SpanDescriber {
 public:
  explicit IterationDescriber(const strategies::ServingRun& run) : run_(run) {}

  void Describe(const sim::TaskGraph&, const sim::Span& s,
                sim::SpanDescription* out) const override {
    const strategies::IterationRecord& it = run_.iterations[s.tag];
    if (it.prefill_tokens > 0 && it.decode_seqs > 0) {
      out->name =
          absl::StrCat("mixed ", it.decode_seqs, " decode + ", it.prefill_tokens, " prefill tok");
      out->category = "mixed";
    } else if (it.prefill_tokens > 0) {
      out->name = absl::StrCat("prefill ", it.batch, " seq ", it.prefill_tokens, " tok");
      out->category = "prefill";
    } else {
      out->name = absl::StrCat("decode ", it.decode_seqs, " seq");
      out->category = "decode";
    }
    out->args.emplace_back("iteration", static_cast<int64_t>(s.tag));
    out->args.emplace_back("prefill_tokens", it.prefill_tokens);
    out->args.emplace_back("decode_seqs", it.decode_seqs);
    out->args.emplace_back("batch", it.batch);
    out->args.emplace_back("running", it.running);
    out->args.emplace_back("waiting", it.waiting);
    out->args.emplace_back("kv_blocks_used", it.kv_blocks_used);
  }
  std::string ProcessName(uint32_t group) const override { return absl::StrCat("gpu", group); }
  std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override {
    return g.resource(r).name;
  }

 private:
  const strategies::ServingRun& run_;
};

}  // namespace

absl::Status WriteServeTrace(const std::string& path, const strategies::ServingRun& run,
                             const ResolvedServe& s) {
  const models::ReplicaModel& replica = s.memory.replica;
  IterationDescriber describer(run);
  traces::ChromeTraceWriter::Options options;
  options.other_data = {
      {"simulator", "clustersim serve"},
      {"scenario", s.name},
      {"model", replica.model.name},
      {"gpu", s.gpu->name},
      {"weight_dtype", std::string(models::WeightFormatName(replica.weight_format))},
      {"replicas", absl::StrCat(s.replicas, " (one simulated)")}};
  absl::StatusOr<std::unique_ptr<traces::ChromeTraceWriter>> w =
      traces::ChromeTraceWriter::Open(path, describer, options);
  if (!w.ok()) return w.status();
  sim::TaskGraph graph;
  const int gpus = replica.tensor_parallel * replica.pipeline_parallel;
  for (int g = 0; g < gpus; ++g) graph.AddResource("iterations", static_cast<uint32_t>(g));
  for (size_t i = 0; i < run.iterations.size(); ++i) {
    const strategies::IterationRecord& it = run.iterations[i];
    for (int g = 0; g < gpus; ++g) {
      (*w)->OnSpan(graph, sim::Span{.resource = static_cast<sim::ResourceId>(g),
                                    .task = 0,
                                    .tag = static_cast<uint32_t>(i),
                                    .start = it.start,
                                    .end = it.end});
    }
    (*w)->AddCounter(0, "sequences", it.start,
                     {{"running", static_cast<double>(it.running)},
                      {"waiting", static_cast<double>(it.waiting)}});
    (*w)->AddCounter(0, "kv_blocks_used", it.start,
                     {{"blocks", static_cast<double>(it.kv_blocks_used)}});
  }
  return (*w)->Finish();
}

}  // namespace clustersim::scenarios
