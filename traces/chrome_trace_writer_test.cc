#include "traces/chrome_trace_writer.h"

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
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
#include "sim/task_graph.h"
#include "traces/trace_checker.h"

namespace clustersim::traces {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using ::testing::HasSubstr;

// Names spans after their task and tag; the label carries characters that
// need escaping so that every trace exercises the writer's JSON strings.
class TestDescriber : public sim::SpanDescriber {
 public:
  void Describe(const sim::TaskGraph& g, const sim::Span& s, sim::SpanDescription* out) const override {
    EXPECT_TRUE(out->name.empty() && out->category.empty() && out->args.empty());
    out->name = absl::StrCat("task", s.task, " tag", s.tag);
    out->category = g.ResourcesOf(s.task).size() > 1 ? "comm,tp" : "compute";
    out->args.emplace_back("task", int64_t{s.task});
    out->args.emplace_back("flops", 1.5e12 * (s.tag + 1));
    out->args.emplace_back("label", std::string("say \"hi\"\\\n\t\x01"));
  }
  std::string ProcessName(uint32_t group) const override {
    return absl::StrCat("node0/gpu", group, " \"rank\" ", group);
  }
  std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override {
    return g.resource(r).name;
  }
};

// Two GPUs, each with a compute and a comm stream; a two-GPU collective on
// the comm streams between compute phases, and a pipeline-style send/recv.
struct Scenario {
  Scenario() {
    const sim::ResourceId c0 = g.AddResource("compute", 0, 0);
    const sim::ResourceId m0 = g.AddResource("comm: TP", 0, 1);
    const sim::ResourceId c1 = g.AddResource("compute", 1, 0);
    const sim::ResourceId m1 = g.AddResource("comm: TP", 1, 1);
    const sim::TaskId a0 = g.AddTask(c0, sim::Microseconds(5), 0);
    const sim::TaskId a1 = g.AddTask(c1, sim::Microseconds(7) + sim::Picoseconds(1), 1);
    allreduce = g.AddTask({m0, m1}, sim::Microseconds(3) + sim::Picoseconds(123456), 2);
    g.AddDependency(a0, allreduce);
    g.AddDependency(a1, allreduce);
    const sim::TaskId b0 = g.AddTask(c0, sim::Microseconds(4), 3);
    const sim::TaskId b1 = g.AddTask(c1, sim::Nanoseconds(2500), 4);
    g.AddDependency(allreduce, b0);
    g.AddDependency(allreduce, b1);
    send = g.AddTask(m0, sim::Microseconds(1), 5);
    g.AddDependency(b0, send);
    recv = g.AddTask(c1, sim::Microseconds(6), 6);
    g.AddDependency(send, recv);
  }
  sim::TaskGraph g;
  sim::TaskId allreduce, send, recv;
};

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ChromeTraceWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/chrome_trace_writer_test.XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    for (const std::string& p : written_) ::unlink(p.c_str());
    ::rmdir(dir_.c_str());
  }

  // Runs the scenario through the engine into a trace at dir_/name; returns the path.
  std::string RunScenario(const std::string& name, sim::Time* send_end = nullptr,
                          sim::Time* recv_start = nullptr) {
    const std::string path = dir_ + "/" + name;
    written_.push_back(path);
    ChromeTraceWriter::Options options;
    options.other_data = {{"simulator", "clustersim test"}, {"seed", "7"}};
    absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> w =
        ChromeTraceWriter::Open(path, describer_, options);
    EXPECT_TRUE(w.ok()) << w.status();
    if (!w.ok()) return path;
    sim::Simulator simulator;
    sim::Engine engine(scenario_.g, simulator);
    engine.AddObserver(w->get());
    EXPECT_TRUE(engine.Run().ok());
    const sim::Time from = engine.EndOf(scenario_.send);
    const sim::Time to = engine.StartOf(scenario_.recv);
    (*w)->AddFlow("pp send", 0, 1, from, 1, 0, to);
    (*w)->AddCounter(0, "hbm_bytes", sim::Time::Zero(), {{"weights", 3.4e9}, {"activations", 0}});
    (*w)->AddCounter(0, "hbm_bytes", engine.Makespan(),
                     {{"weights", 3.4e9}, {"activations", 1.25e9}});
    EXPECT_TRUE((*w)->Finish().ok());
    for (sim::TaskId t = 0; t < scenario_.g.NumTasks(); ++t) {
      start_[t] = engine.StartOf(t);
      end_[t] = engine.EndOf(t);
    }
    if (send_end != nullptr) *send_end = from;
    if (recv_start != nullptr) *recv_start = to;
    return path;
  }

  static Struct ParseJson(const std::string& text) {
    Struct root;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &root).ok());
    return root;
  }

  static std::vector<const Struct*> EventsWithPhase(const Struct& root, const std::string& ph) {
    std::vector<const Struct*> out;
    for (const Value& v : root.fields().at("traceEvents").list_value().values()) {
      if (v.struct_value().fields().at("ph").string_value() == ph) out.push_back(&v.struct_value());
    }
    return out;
  }

  static int64_t Ps(const Struct& e, const std::string& key) {
    return std::llround(e.fields().at(key).number_value() * 1e6);
  }

  std::string dir_;
  std::vector<std::string> written_;
  TestDescriber describer_;
  Scenario scenario_;
  std::map<sim::TaskId, sim::Time> start_, end_;
};

TEST_F(ChromeTraceWriterTest, TracePassesCheckerWithExpectedCounts) {
  const std::string path = RunScenario("trace.json");
  absl::StatusOr<TraceStats> stats = CheckChromeTraceFile(path);
  ASSERT_TRUE(stats.ok()) << stats.status();
  int64_t spans = 0;
  for (sim::TaskId t = 0; t < scenario_.g.NumTasks(); ++t) {
    spans += static_cast<int64_t>(scenario_.g.ResourcesOf(t).size());
  }
  EXPECT_EQ(stats->complete_events, spans);
  EXPECT_EQ(stats->processes, 2);
  EXPECT_EQ(stats->threads, 4);
  EXPECT_EQ(stats->flows, 1);
}

TEST_F(ChromeTraceWriterTest, CompleteEventsCarryEngineTimesExactly) {
  const std::string path = RunScenario("trace.json");
  const std::string text = Read(path);
  const Struct root = ParseJson(text);
  const std::vector<const Struct*> xs = EventsWithPhase(root, "X");
  ASSERT_FALSE(xs.empty());
  for (const Struct* e : xs) {
    const auto task = static_cast<sim::TaskId>(
        e->fields().at("args").struct_value().fields().at("task").number_value());
    EXPECT_EQ(Ps(*e, "ts"), start_[task].picoseconds()) << "task " << task;
    EXPECT_EQ(Ps(*e, "dur"), (end_[task] - start_[task]).picoseconds()) << "task " << task;
    // pid/tid are (group, lane + 1) of one of the task's resources.
    int matches = 0;
    for (const sim::ResourceId r : scenario_.g.ResourcesOf(task)) {
      const sim::TaskGraph::Resource& res = scenario_.g.resource(r);
      matches += e->fields().at("pid").number_value() == res.group &&
                 e->fields().at("tid").number_value() == res.lane + 1;
    }
    EXPECT_EQ(matches, 1) << "task " << task;
    EXPECT_EQ(e->fields().at("args").struct_value().fields().at("label").string_value(),
              "say \"hi\"\\\n\t\x01");
  }
  // 3 us + 123456 ps, written from integers: no rounding in the last digit.
  EXPECT_THAT(text, HasSubstr("\"dur\":3.123456"));
  // task1 lasts 7 us + 1 ps.
  EXPECT_THAT(text, HasSubstr("\"dur\":7.000001"));
}

TEST_F(ChromeTraceWriterTest, MetadataNamesAndSortsEveryTrack) {
  const Struct root = ParseJson(Read(RunScenario("trace.json")));
  std::vector<std::string> seen;
  for (const Struct* m : EventsWithPhase(root, "M")) {
    const auto& f = m->fields();
    const std::string name = f.at("name").string_value();
    const int pid = static_cast<int>(f.at("pid").number_value());
    const auto& args = f.at("args").struct_value().fields();
    if (name == "process_name") {
      EXPECT_EQ(args.at("name").string_value(), describer_.ProcessName(pid));
    } else if (name == "process_sort_index") {
      EXPECT_EQ(args.at("sort_index").number_value(), pid);
    } else if (name == "thread_name") {
      EXPECT_EQ(args.at("name").string_value(),
                f.at("tid").number_value() == 1 ? "compute" : "comm: TP");
    } else if (name == "thread_sort_index") {
      EXPECT_EQ(args.at("sort_index").number_value(), f.at("tid").number_value() - 1);
    }
    seen.push_back(
        absl::StrCat(name, "/", pid, "/", f.contains("tid") ? f.at("tid").number_value() : 0));
  }
  // Processes by group, then threads by (group, lane), regardless of span order.
  EXPECT_THAT(seen, ::testing::ElementsAre(
                        "process_name/0/0", "process_sort_index/0/0", "process_name/1/0",
                        "process_sort_index/1/0", "thread_name/0/1", "thread_sort_index/0/1",
                        "thread_name/0/2", "thread_sort_index/0/2", "thread_name/1/1",
                        "thread_sort_index/1/1", "thread_name/1/2", "thread_sort_index/1/2"));
  const auto& other = root.fields().at("otherData").struct_value().fields();
  EXPECT_EQ(other.at("simulator").string_value(), "clustersim test");
  EXPECT_EQ(other.at("seed").string_value(), "7");
}

TEST_F(ChromeTraceWriterTest, FlowAndCounterEventsArePlacedAsAsked) {
  sim::Time send_end, recv_start;
  const Struct root = ParseJson(Read(RunScenario("trace.json", &send_end, &recv_start)));
  const std::vector<const Struct*> s = EventsWithPhase(root, "s");
  const std::vector<const Struct*> f = EventsWithPhase(root, "f");
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(s[0]->fields().at("id").number_value(), f[0]->fields().at("id").number_value());
  EXPECT_EQ(Ps(*s[0], "ts"), send_end.picoseconds());
  EXPECT_EQ(Ps(*f[0], "ts"), recv_start.picoseconds());
  EXPECT_EQ(s[0]->fields().at("tid").number_value(), 2);  // lane 1
  EXPECT_EQ(f[0]->fields().at("pid").number_value(), 1);
  EXPECT_EQ(f[0]->fields().at("bp").string_value(), "e");
  const std::vector<const Struct*> c = EventsWithPhase(root, "C");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1]->fields().at("args").struct_value().fields().at("activations").number_value(),
            1.25e9);
}

TEST_F(ChromeTraceWriterTest, OutputIsByteIdenticalAcrossRuns) {
  const std::string first = Read(RunScenario("a.json"));
  const std::string second = Read(RunScenario("b.json"));
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first, second);
}

TEST_F(ChromeTraceWriterTest, UnfinishedWriterLeavesNoFile) {
  const std::string path = dir_ + "/unfinished.json";
  {
    absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> w =
        ChromeTraceWriter::Open(path, describer_, {});
    ASSERT_TRUE(w.ok()) << w.status();
    sim::Simulator simulator;
    sim::Engine engine(scenario_.g, simulator);
    engine.AddObserver(w->get());
    ASSERT_TRUE(engine.Run().ok());
    EXPECT_GT((*w)->events_written(), 0);
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  EXPECT_NE(::access((path + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), 0);
}

TEST_F(ChromeTraceWriterTest, EmptyTraceIsValid) {
  const std::string path = dir_ + "/empty.json";
  written_.push_back(path);
  absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> w =
      ChromeTraceWriter::Open(path, describer_, {});
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Finish().ok());
  absl::StatusOr<TraceStats> stats = CheckChromeTraceFile(path);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->complete_events, 0);
}

TEST_F(ChromeTraceWriterTest, OpenFailsForMissingDirectory) {
  absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> w =
      ChromeTraceWriter::Open(dir_ + "/missing/t.json", describer_, {});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(std::string(w.status().message()), HasSubstr("missing/t.json"));
}

}  // namespace
}  // namespace clustersim::traces
