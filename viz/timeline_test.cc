#include "viz/timeline.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/engine.h"
#include "sim/simulator.h"

namespace clustersim::viz {
namespace {

struct FakeOp {
  std::string name;
  std::string category;
  int microbatch;
  int layer;
};

// Describes task tags as the ops in `ops`; names processes "gpuG (pp G)" and
// threads by their resource names.
class FakeDescriber : public sim::SpanDescriber {
 public:
  explicit FakeDescriber(std::vector<FakeOp> ops) : ops_(std::move(ops)) {}
  void Describe(const sim::TaskGraph&, const sim::Span& s,
                sim::SpanDescription* out) const override {
    const FakeOp& op = ops_[s.tag];
    out->name = op.name;
    out->category = op.category;
    if (op.microbatch >= 0) out->args.emplace_back("microbatch", int64_t{op.microbatch});
    if (op.layer >= 0) out->args.emplace_back("layer", int64_t{op.layer});
  }
  std::string ProcessName(uint32_t group) const override {
    return absl::StrCat("gpu", group, " (tp 0, pp ", group, ")");
  }
  std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override {
    return g.resource(r).name;
  }

 private:
  std::vector<FakeOp> ops_;
};

// Runs `graph` with `timeline` observing.
void Simulate(const sim::TaskGraph& graph, Timeline* timeline) {
  sim::Simulator simulator;
  sim::Engine engine(graph, simulator);
  engine.AddObserver(timeline);
  ASSERT_TRUE(engine.Run().ok());
}

TEST(TimelineTest, RecordsPhaseKindMicrobatchLayerAndStage) {
  const FakeDescriber d({{"fwd mb2 L5 qkv_gemm", "compute,gemm", 2, 5},
                         {"fwd mb2 L5 all_reduce", "comm,tp", 2, 5},
                         {"step adam", "compute,memory", -1, -1},
                         {"bwd mb0 L1 fc1", "compute,gemm", 0, 1},
                         {"fwd mb0 L0 host_launch", "compute,memory", 0, 0}});
  sim::TaskGraph g;
  const sim::ResourceId c0 = g.AddResource("compute", 0, 0);
  const sim::ResourceId t0 = g.AddResource("comm: tp", 0, 1);
  const sim::ResourceId c1 = g.AddResource("compute", 1, 0);
  const sim::ResourceId h1 = g.AddResource("host: launch", 1, 4);
  const sim::TaskId a = g.AddTask(c0, sim::Microseconds(10), 0);
  const sim::TaskId b = g.AddTask(t0, sim::Microseconds(4), 1);
  g.AddDependency(a, b);
  const sim::TaskId c = g.AddTask(c0, sim::Microseconds(3), 2);
  g.AddDependency(b, c);
  g.AddTask(h1, sim::Microseconds(1), 4);
  g.AddTask(c1, sim::Microseconds(7), 3);
  Timeline timeline(d, {});
  Simulate(g, &timeline);

  ASSERT_EQ(timeline.groups().size(), 2u);
  const TimelineGroup& g0 = timeline.groups().at(0);
  EXPECT_EQ(g0.stage, 0);
  EXPECT_EQ(g0.name, "gpu0 (tp 0, pp 0)");
  ASSERT_EQ(g0.lanes.size(), 2u);
  const std::vector<TimelineSpan>& compute = g0.lanes.at(0).spans;
  ASSERT_EQ(compute.size(), 2u);
  EXPECT_EQ(compute[0].phase, SpanPhase::kForward);
  EXPECT_EQ(compute[0].kind, SpanKind::kCompute);
  EXPECT_EQ(compute[0].microbatch, 2);
  EXPECT_EQ(compute[0].layer, 5);
  EXPECT_EQ(compute[0].start_ps, 0);
  EXPECT_EQ(compute[0].end_ps, sim::Microseconds(10).picoseconds());
  // The optimizer waits for the all-reduce: 10 + 4 us.
  EXPECT_EQ(compute[1].phase, SpanPhase::kStep);
  EXPECT_EQ(compute[1].start_ps, sim::Microseconds(14).picoseconds());
  EXPECT_EQ(compute[1].microbatch, -1);
  const TimelineSpan& tp = g0.lanes.at(1).spans.at(0);
  EXPECT_EQ(tp.kind, SpanKind::kCommTp);
  EXPECT_EQ(g0.lanes.at(1).name, "comm: tp");

  const TimelineGroup& g1 = timeline.groups().at(1);
  EXPECT_EQ(g1.stage, 1);
  EXPECT_EQ(g1.lanes.at(0).spans.at(0).phase, SpanPhase::kBackward);
  // A "host" lane holds host work even though its category says compute.
  EXPECT_EQ(g1.lanes.at(4).spans.at(0).kind, SpanKind::kHost);
  EXPECT_EQ(timeline.end_ps(), sim::Microseconds(17).picoseconds());
}

// One group, `mbs` micro-batches x `layers` layers x `ops` ops of 1 us each
// on the compute lane, in that order; op o of layer l of micro-batch m is
// tag (m * layers + l) * ops + o.
struct Chain {
  std::vector<FakeOp> ops;
  sim::TaskGraph graph;
};

Chain MakeChain(int mbs, int layers, int ops) {
  Chain c;
  const sim::ResourceId r = c.graph.AddResource("compute", 0, 0);
  for (int m = 0; m < mbs; ++m) {
    for (int l = 0; l < layers; ++l) {
      for (int o = 0; o < ops; ++o) {
        c.ops.push_back({absl::StrCat("fwd mb", m, " L", l, " op", o), "compute,gemm", m, l});
        c.graph.AddTask(r, sim::Microseconds(1), static_cast<uint32_t>(c.ops.size() - 1));
      }
    }
  }
  return c;
}

Timeline::Options Cap(int64_t max_spans_per_group) {
  Timeline::Options o;
  o.max_spans_per_group = max_spans_per_group;
  return o;
}

TEST(TimelineTest, KeepsEveryOpUnderTheCap) {
  Chain c = MakeChain(1, 3, 4);
  const FakeDescriber d(c.ops);
  Timeline timeline(d, Cap(12));
  Simulate(c.graph, &timeline);
  const TimelineGroup& g = timeline.groups().at(0);
  EXPECT_EQ(g.detail, TimelineDetail::kOp);
  EXPECT_EQ(g.NumSpans(), 12u);
}

TEST(TimelineTest, CoarsensToLayersWhenOpsWouldExceedTheCap) {
  Chain c = MakeChain(1, 3, 4);
  const FakeDescriber d(c.ops);
  Timeline timeline(d, Cap(5));
  Simulate(c.graph, &timeline);
  const TimelineGroup& g = timeline.groups().at(0);
  EXPECT_EQ(g.detail, TimelineDetail::kLayer);
  const std::vector<TimelineSpan>& spans = g.lanes.at(0).spans;
  ASSERT_EQ(spans.size(), 3u);
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(spans[l].layer, l);
    EXPECT_EQ(spans[l].start_ps, sim::Microseconds(4 * l).picoseconds());
    EXPECT_EQ(spans[l].end_ps, sim::Microseconds(4 * l + 4).picoseconds());
  }
  EXPECT_EQ(g.dropped, 0);
}

TEST(TimelineTest, CoarsensToMicrobatchesThenCountsWhatItDrops) {
  Chain c = MakeChain(2, 3, 2);
  const FakeDescriber d(c.ops);
  Timeline two(d, Cap(2));
  Simulate(c.graph, &two);
  const TimelineGroup& g = two.groups().at(0);
  EXPECT_EQ(g.detail, TimelineDetail::kMicrobatch);
  ASSERT_EQ(g.NumSpans(), 2u);
  EXPECT_EQ(g.lanes.at(0).spans[1].microbatch, 1);
  EXPECT_EQ(g.lanes.at(0).spans[1].layer, -1);  // covers layers 0-2
  EXPECT_EQ(g.lanes.at(0).spans[1].end_ps, sim::Microseconds(12).picoseconds());

  Timeline one(d, Cap(1));
  Simulate(c.graph, &one);
  EXPECT_EQ(one.groups().at(0).NumSpans(), 1u);
  EXPECT_EQ(one.groups().at(0).dropped, 6);  // every op of micro-batch 1
}

TEST(TimelineTest, StageComesFromTheCallbackWhenGiven) {
  Chain c = MakeChain(1, 1, 1);
  const FakeDescriber d(c.ops);
  Timeline::Options options;
  options.stage_of = [](uint32_t) { return 7; };
  Timeline timeline(d, options);
  Simulate(c.graph, &timeline);
  EXPECT_EQ(timeline.groups().at(0).stage, 7);
}

TEST(TimelineTest, StageFromProcessName) {
  EXPECT_EQ(StageFromProcessName("node0/gpu3 (tp 3, cp 0, pp 12, dp 0)"), 12);
  EXPECT_EQ(StageFromProcessName("node0/gpu3"), 0);
  EXPECT_EQ(StageFromProcessName("pp x"), 0);
}

}  // namespace
}  // namespace clustersim::viz
