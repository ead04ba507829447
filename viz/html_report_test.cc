#include "viz/html_report.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/engine.h"
#include "sim/simulator.h"
#include "viz/html_text.h"
#include "viz/pipeline_diagram.h"

namespace clustersim::viz {
namespace {

// Tags: 0 "fwd mb0", 1 "fwd mb1", 2 "bwd mb0", 3 "bwd mb1", 4 "step adam", 5 pp send.
class TwoStageDescriber : public sim::SpanDescriber {
 public:
  void Describe(const sim::TaskGraph&, const sim::Span& s,
                sim::SpanDescription* out) const override {
    static constexpr const char* kNames[] = {"fwd mb0 L0 gemm", "fwd mb1 L0 gemm",
                                             "bwd mb0 L0 gemm", "bwd mb1 L0 gemm",
                                             "step adam",       "fwd mb0 send"};
    out->name = kNames[s.tag];
    out->category = s.tag == 5 ? "comm,pp" : "compute,gemm";
    if (s.tag < 4) out->args.emplace_back("microbatch", int64_t{s.tag % 2});
  }
  std::string ProcessName(uint32_t group) const override {
    return absl::StrCat("node0/gpu", group, " (tp 0, cp 0, pp ", group, ", dp 0)");
  }
  std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override {
    return g.resource(r).name;
  }
};

// GPipe over two stages, two micro-batches, 10 us per pass, then a 5 us optimizer.
class HtmlReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const sim::ResourceId c0 = graph_.AddResource("compute", 0, 0);
    const sim::ResourceId p0 = graph_.AddResource("comm: pp", 0, 3);
    const sim::ResourceId c1 = graph_.AddResource("compute", 1, 0);
    const sim::Duration pass = sim::Microseconds(10);
    const sim::TaskId f00 = graph_.AddTask(c0, pass, 0);
    const sim::TaskId f01 = graph_.AddTask(c0, pass, 1);
    const sim::TaskId send = graph_.AddTask(p0, sim::Microseconds(1), 5);
    graph_.AddDependency(f00, send);
    const sim::TaskId f10 = graph_.AddTask(c1, pass, 0);
    graph_.AddDependency(send, f10);
    const sim::TaskId f11 = graph_.AddTask(c1, pass, 1);
    graph_.AddDependency(f01, f11);
    const sim::TaskId b10 = graph_.AddTask(c1, pass, 2);
    const sim::TaskId b11 = graph_.AddTask(c1, pass, 3);
    graph_.AddTask(c1, sim::Microseconds(5), 4);
    const sim::TaskId b00 = graph_.AddTask(c0, pass, 2);
    graph_.AddDependency(b10, b00);
    const sim::TaskId b01 = graph_.AddTask(c0, pass, 3);
    graph_.AddDependency(b11, b01);
    graph_.AddTask(c0, sim::Microseconds(5), 4);
    sim::Simulator simulator;
    sim::Engine engine(graph_, simulator);
    engine.AddObserver(&timeline_);
    ASSERT_TRUE(engine.Run().ok());

    result_.set_step_time_s(static_cast<double>(timeline_.end_ps()) * 1e-12);
    result_.set_compute_s(45e-6);
    result_.set_bubble_ratio(20e-6 / result_.step_time_s());
    result_.mutable_exposed_comm_breakdown_s()->set_pp_s(1e-6);
    result_.set_exposed_comm_s(1e-6);
    result_.set_peak_memory_gib(70);
    result_.set_memory_capacity_gib(80);
    result_.set_fits_in_memory(true);
    config::MemoryBreakdownGib* m = result_.mutable_memory_breakdown_gib();
    m->set_weights(10);
    m->set_gradients(10);
    m->set_optimizer(30);
    m->set_activations(15);
    m->set_other(5);
    result_.mutable_scenario()->set_name("two-stage");
    result_.mutable_scenario()->mutable_parallelism()->set_pipeline_model_parallel_size(2);
  }

  std::string Render() {
    absl::StatusOr<std::string> html = RenderHtmlReport(result_, timeline_);
    EXPECT_TRUE(html.ok()) << html.status();
    return html.ok() ? *html : "";
  }

  TwoStageDescriber describer_;
  sim::TaskGraph graph_;
  Timeline timeline_{describer_, {}};
  config::Result result_;
};

TEST_F(HtmlReportTest, HasEverySectionAndNeedsNoNetwork) {
  const std::string html = Render();
  for (const char* id : {"pipeline", "breakdown", "memory", "numbers", "scenario"}) {
    EXPECT_NE(html.find(absl::StrCat("id=\"", id, "\"")), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.rfind("</html>\n"), html.size() - 8);
}

TEST_F(HtmlReportTest, DrawsOneBandPerStageWithLabelledMicrobatches) {
  const std::string svg = PipelineDiagramSvg(timeline_);
  EXPECT_NE(svg.find(">stage 0</text>"), std::string::npos);
  EXPECT_NE(svg.find(">stage 1</text>"), std::string::npos);
  // 10 us of a ~67 us step is about 160 px: wide enough for labels.
  for (const char* label : {">F0<", ">F1<", ">B0<", ">B1<", ">opt<"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
  // Stage 1 waits for stage 0's first forward and the send: that idle time
  // shows through as the hatched background.
  EXPECT_NE(svg.find("url(#idle)"), std::string::npos);
  EXPECT_NE(svg.find(">comm: pp</text>"), std::string::npos);
}

TEST_F(HtmlReportTest, BreakdownTakesTheOptimizerFromTheTimelineAndFillsTheStep) {
  const std::vector<BarSegment> b = StepBreakdown(result_, timeline_);
  double sum = 0;
  for (const BarSegment& s : b) {
    sum += s.value;
    if (s.label == "optimizer") {
      EXPECT_DOUBLE_EQ(s.value, 5e-6);
    } else if (s.label == "compute") {
      EXPECT_DOUBLE_EQ(s.value, 40e-6);
    } else if (s.label == "exposed pp") {
      EXPECT_DOUBLE_EQ(s.value, 1e-6);
    }
  }
  EXPECT_NEAR(sum, result_.step_time_s(), 1e-15);
}

TEST_F(HtmlReportTest, MemoryVerdictFollowsTheResult) {
  EXPECT_NE(MemoryBars(result_)[0].note.find("fits"), std::string::npos);
  result_.set_fits_in_memory(false);
  EXPECT_NE(MemoryBars(result_)[0].note.find("DOES NOT FIT"), std::string::npos);
  EXPECT_NE(Render().find("capacity 80.0 GiB"), std::string::npos);
}

TEST_F(HtmlReportTest, OneMemoryBarPerStageWithVerdictAndSimulatedPeak) {
  for (int stage = 0; stage < 2; ++stage) {
    config::StageMemoryGib* st = result_.add_memory_per_stage_gib();
    st->set_stage(stage);
    st->mutable_breakdown()->set_weights(10);
    st->mutable_breakdown()->set_activations(stage == 0 ? 75 : 40);
    st->set_total_gib(stage == 0 ? 85 : 50);
    st->set_fits(stage != 0);
    st->set_simulated_peak_gib(stage == 0 ? 85 : 50);
  }
  const std::vector<BarRow> rows = MemoryBars(result_);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].label, "stage 0");
  EXPECT_EQ(rows[0].note, "85.0 GiB: DOES NOT FIT; simulated peak 85.0 (over capacity)");
  EXPECT_EQ(rows[1].note, "50.0 GiB: fits; simulated peak 50.0");
  EXPECT_EQ(rows[1].segments[3].label, "activations");
  EXPECT_EQ(rows[1].segments[3].value, 40);
  const std::string html = Render();
  EXPECT_NE(html.find(">stage 1</text>"), std::string::npos);
  EXPECT_EQ(html.find("id=\"memory-curve\""), std::string::npos) << "no curves given";
  absl::StatusOr<std::string> with_curves =
      RenderHtmlReport(result_, timeline_, {{"first stage", {{0, 20}, {0.5, 85}}}});
  ASSERT_TRUE(with_curves.ok());
  EXPECT_NE(with_curves->find("id=\"memory-curve\""), std::string::npos);
  EXPECT_NE(with_curves->find("first stage: peak 85.0 GiB"), std::string::npos);
}

TEST_F(HtmlReportTest, EscapesTextFromTheScenario) {
  result_.mutable_scenario()->set_name("<script>alert('x')</script> & co");
  const std::string html = Render();
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"),
            std::string::npos);
}

TEST_F(HtmlReportTest, SameInputsGiveTheSameBytes) { EXPECT_EQ(Render(), Render()); }

TEST_F(HtmlReportTest, WritesTheFileAtomicallyAndNamesABadPath) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("report_test.", ::getpid(), ".html"))
                               .string();
  ASSERT_TRUE(WriteHtmlReport(path, result_, timeline_).ok());
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), Render());
  std::filesystem::remove(path);
  const absl::Status bad = WriteHtmlReport("/nonexistent-dir/r.html", result_, timeline_);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("/nonexistent-dir/r.html"), std::string::npos);
}

TEST(HtmlTextTest, EscapesAndFormats) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(FixedNumber(-0.0001, 2), "0.00");
  EXPECT_EQ(FixedNumber(12.345, 1), "12.3");
  EXPECT_EQ(HumanSeconds(1.42), "1.420 s");
  EXPECT_EQ(HumanSeconds(0.01234), "12.34 ms");
  EXPECT_EQ(HumanSeconds(812e-6), "812 us");
}

}  // namespace
}  // namespace clustersim::viz
