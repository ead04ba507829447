// ChromeTraceWriter's filters (ranks, steps, layer detail), sort order and
// network counters; every trace written here passes the trace checker.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "sim/engine.h"
#include "sim/simulator.h"
#include "traces/chrome_trace_writer.h"
#include "traces/trace_checker.h"

namespace clustersim::traces {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using ::testing::HasSubstr;

// Tag t of group g: "fwd mb0 L<layer> <op>" with flops = 10 * (t + 1).
// Tags 0, 1: layer 0 (ops qkv, fc1); tag 2: layer 1 (qkv); tag 3: comm on lane 1.
class LayerDescriber : public sim::SpanDescriber {
 public:
  void Describe(const sim::TaskGraph&, const sim::Span& s, sim::SpanDescription* out) const override {
    static constexpr const char* kOps[] = {"qkv", "fc1", "qkv", "all_reduce"};
    const int layer = s.tag == 2 ? 1 : 0;
    out->name = absl::StrCat("fwd mb0 L", layer, " ", kOps[s.tag]);
    out->category = s.tag == 3 ? "comm,tp" : "compute,gemm";
    out->args.emplace_back("microbatch", int64_t{0});
    out->args.emplace_back("layer", int64_t{layer});
    out->args.emplace_back("flops", 10.0 * (s.tag + 1));
  }
  std::string ProcessName(uint32_t group) const override { return absl::StrCat("gpu", group); }
  std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override {
    return g.resource(r).name;
  }
};

class TraceFiltersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/trace_filters_test.XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    // Three GPUs; each: qkv, fc1 (layer 0), qkv (layer 1) on compute, 2 us each,
    // and an all-reduce on lane 1 after fc1.
    for (uint32_t gpu = 0; gpu < 3; ++gpu) {
      const sim::ResourceId c = graph_.AddResource("compute", gpu, 0);
      const sim::ResourceId m = graph_.AddResource("comm: tp", gpu, 1);
      graph_.AddTask(c, sim::Microseconds(2), 0);
      const sim::TaskId fc1 = graph_.AddTask(c, sim::Microseconds(2), 1);
      graph_.AddTask(c, sim::Microseconds(2), 2);
      const sim::TaskId ar = graph_.AddTask(m, sim::Microseconds(1), 3);
      graph_.AddDependency(fc1, ar);
    }
  }
  void TearDown() override {
    for (const std::string& p : written_) ::unlink(p.c_str());
    ::rmdir(dir_.c_str());
  }

  // Writes `steps` simulated steps of the graph (BeginStep before each),
  // plus a flow 0 -> 1, a counter on GPU 1 and a network counter.
  std::string Write(const std::string& name, const ChromeTraceWriter::Options& options,
                    int steps = 1) {
    const std::string path = dir_ + "/" + name;
    written_.push_back(path);
    absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> w =
        ChromeTraceWriter::Open(path, describer_, options);
    EXPECT_TRUE(w.ok()) << w.status();
    for (int step = 0; step < steps; ++step) {
      (*w)->BeginStep(step);
      sim::Simulator simulator;
      sim::Engine engine(graph_, simulator);
      engine.AddObserver(w->get());
      EXPECT_TRUE(engine.Run().ok());
    }
    (*w)->AddFlow("pp send", 0, 0, sim::Time::Zero() + sim::Microseconds(1), 1, 0,
                  sim::Time::Zero() + sim::Microseconds(3));
    (*w)->AddCounter(1, "hbm_gib", sim::Time::Zero(), {{"weights", 3}});
    (*w)->AddNetworkCounter("link utilisation", sim::Time::Zero(), {{"leaf0-spine0 up", 0.75}});
    EXPECT_TRUE((*w)->Finish().ok());
    absl::StatusOr<TraceStats> stats = CheckChromeTraceFile(path);
    EXPECT_TRUE(stats.ok()) << stats.status();
    return path;
  }

  static Struct Parse(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    Struct root;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text.str(), &root).ok());
    return root;
  }

  static std::vector<const Struct*> Events(const Struct& root, const std::string& ph) {
    std::vector<const Struct*> out;
    for (const Value& v : root.fields().at("traceEvents").list_value().values()) {
      if (v.struct_value().fields().at("ph").string_value() == ph) out.push_back(&v.struct_value());
    }
    return out;
  }

  static double Num(const Struct* e, const std::string& key) {
    return e->fields().at(key).number_value();
  }

  std::string dir_;
  std::vector<std::string> written_;
  LayerDescriber describer_;
  sim::TaskGraph graph_;
};

TEST_F(TraceFiltersTest, RanksKeepOnlyListedGpusAndTheirFlowsAndCounters) {
  ChromeTraceWriter::Options options;
  options.ranks = *IdRanges::Parse("0,2", "--trace-ranks");
  const Struct root = Parse(Write("ranks.json", options));
  const std::vector<const Struct*> xs = Events(root, "X");
  EXPECT_EQ(xs.size(), 8u);  // 4 spans on each of GPUs 0 and 2
  for (const Struct* e : xs) EXPECT_NE(Num(e, "pid"), 1);
  EXPECT_TRUE(Events(root, "s").empty());  // its receiving end (GPU 1) is filtered out
  const std::vector<const Struct*> counters = Events(root, "C");
  ASSERT_EQ(counters.size(), 1u);  // the network counter only
  EXPECT_EQ(Num(counters[0], "pid"), ChromeTraceWriter::kNetworkPid);
}

TEST_F(TraceFiltersTest, LayerDetailWritesOneEventPerLayerRunWithSummedArgs) {
  ChromeTraceWriter::Options options;
  options.detail = TraceDetail::kLayer;
  const Struct root = Parse(Write("layer.json", options));
  std::vector<const Struct*> gpu0_compute;
  for (const Struct* e : Events(root, "X")) {
    if (Num(e, "pid") == 0 && Num(e, "tid") == 1) gpu0_compute.push_back(e);
  }
  ASSERT_EQ(gpu0_compute.size(), 2u);
  const Struct* l0 = gpu0_compute[0];
  EXPECT_EQ(l0->fields().at("name").string_value(), "fwd mb0 L0");
  EXPECT_EQ(Num(l0, "ts"), 0);
  EXPECT_EQ(Num(l0, "dur"), 4);  // qkv + fc1, 2 us each
  const auto& args = l0->fields().at("args").struct_value().fields();
  EXPECT_EQ(args.at("ops").number_value(), 2);
  EXPECT_EQ(args.at("flops").number_value(), 30);  // 10 + 20
  EXPECT_EQ(args.at("layer").number_value(), 0);
  EXPECT_EQ(gpu0_compute[1]->fields().at("name").string_value(), "fwd mb0 L1");
  EXPECT_EQ(Events(root, "X").size(), 9u);  // 3 GPUs x (2 compute + 1 comm)
}

TEST_F(TraceFiltersTest, StepsKeepOnlyTheListedSteps) {
  ChromeTraceWriter::Options options;
  options.steps = *IdRanges::Parse("1", "--trace-steps");
  // Both steps start at time zero: keeping both would overlap on every
  // track, which the checker in Write rejects.
  const Struct root = Parse(Write("steps.json", options, /*steps=*/2));
  EXPECT_EQ(Events(root, "X").size(), 12u);
}

TEST_F(TraceFiltersTest, ProcessesSortByTheCallerKeyAndTheNetworkComesLast) {
  ChromeTraceWriter::Options options;
  options.process_sort_index = [](uint32_t group) { return int64_t{10} - group; };
  const Struct root = Parse(Write("sort.json", options));
  int checked = 0;
  for (const Struct* m : Events(root, "M")) {
    const auto& args = m->fields().at("args").struct_value().fields();
    const double pid = Num(m, "pid");
    if (m->fields().at("name").string_value() == "process_sort_index") {
      EXPECT_EQ(args.at("sort_index").number_value(),
                pid == ChromeTraceWriter::kNetworkPid ? pid : 10 - pid);
      ++checked;
    }
    if (m->fields().at("name").string_value() == "process_name" &&
        pid == ChromeTraceWriter::kNetworkPid) {
      EXPECT_EQ(args.at("name").string_value(), "network");
    }
  }
  EXPECT_EQ(checked, 4);
}

TEST(TraceDetailTest, ParsesOpAndLayerOnly) {
  EXPECT_EQ(*ParseTraceDetail("op", "--trace-detail"), TraceDetail::kOp);
  EXPECT_EQ(*ParseTraceDetail("layer", "--trace-detail"), TraceDetail::kLayer);
  absl::StatusOr<TraceDetail> bad = ParseTraceDetail("kernel", "--trace-detail");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("--trace-detail=\"kernel\""));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("op"));
}

}  // namespace
}  // namespace clustersim::traces
