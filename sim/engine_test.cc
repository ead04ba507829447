#include "sim/engine.h"

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace clustersim::sim {
namespace {

class Recorder : public SpanObserver {
 public:
  void OnSpan(const TaskGraph& g, const Span& s) override {
    spans.push_back(s);
    log << g.resource(s.resource).name << ":" << s.task << ":" << s.start.picoseconds() << "-"
        << s.end.picoseconds() << ";";
  }
  std::vector<Span> spans;
  std::ostringstream log;
};

TEST(EngineTest, StreamRunsTasksInProgramOrder) {
  TaskGraph g;
  ResourceId r = g.AddResource("gpu0/compute", 0);
  g.AddTask(r, Microseconds(5), 0);
  g.AddTask(r, Microseconds(3), 1);
  Simulator sim;
  Engine e(g, sim);
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(e.StartOf(1), Time::Zero() + Microseconds(5));
  EXPECT_EQ(e.Makespan(), Time::Zero() + Microseconds(8));
}

TEST(EngineTest, IndependentStreamsOverlap) {
  TaskGraph g;
  ResourceId a = g.AddResource("gpu0/compute", 0);
  ResourceId b = g.AddResource("gpu0/comm", 0, 1);
  g.AddTask(a, Microseconds(5), 0);
  g.AddTask(b, Microseconds(3), 0);
  Simulator sim;
  Engine e(g, sim);
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(e.Makespan(), Time::Zero() + Microseconds(5));
}

TEST(EngineTest, DependencyDelaysStart) {
  TaskGraph g;
  ResourceId a = g.AddResource("a", 0);
  ResourceId b = g.AddResource("b", 1);
  TaskId x = g.AddTask(a, Microseconds(5), 0);
  TaskId y = g.AddTask(b, Microseconds(2), 0);
  g.AddDependency(x, y);
  Simulator sim;
  Engine e(g, sim);
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(e.StartOf(y), Time::Zero() + Microseconds(5));
  EXPECT_EQ(e.EndOf(y), Time::Zero() + Microseconds(7));
}

TEST(EngineTest, HeadOfLineBlocksLaterReadyTask) {
  // Like a CUDA stream: a later task waits behind an earlier one that is not ready.
  TaskGraph g;
  ResourceId a = g.AddResource("a", 0);
  ResourceId b = g.AddResource("b", 1);
  TaskId slow = g.AddTask(a, Microseconds(10), 0);
  TaskId blocked = g.AddTask(b, Microseconds(1), 0);
  TaskId ready = g.AddTask(b, Microseconds(1), 0);
  g.AddDependency(slow, blocked);
  Simulator sim;
  Engine e(g, sim);
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(e.StartOf(ready), Time::Zero() + Microseconds(11));
}

TEST(EngineTest, MultiResourceTaskWaitsForAllParticipants) {
  TaskGraph g;
  ResourceId a = g.AddResource("gpu0/comm", 0, 1);
  ResourceId b = g.AddResource("gpu1/comm", 1, 1);
  g.AddTask(a, Microseconds(4), 0);  // gpu0 busy first
  TaskId coll = g.AddTask({a, b}, Microseconds(2), 1);
  Simulator sim;
  Recorder rec;
  Engine e(g, sim);
  e.AddObserver(&rec);
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(e.StartOf(coll), Time::Zero() + Microseconds(4));
  // One span per occupied resource for the collective, plus the first task.
  EXPECT_EQ(rec.spans.size(), 3u);
}

TEST(EngineTest, TasksKeepTheirOwnResourcesInOrder) {
  TaskGraph g;
  ResourceId a = g.AddResource("gpu0/compute", 0);
  ResourceId b = g.AddResource("gpu1/compute", 1);
  ResourceId c = g.AddResource("gpu2/compute", 2);
  TaskId barrier = g.AddTask(std::span<const ResourceId>(), Duration::Zero(), 0);
  TaskId three = g.AddTask({c, a, b}, Microseconds(1), 1);
  TaskId last = g.AddTask(b, Microseconds(1), 2);
  EXPECT_TRUE(g.ResourcesOf(barrier).empty());
  EXPECT_EQ(std::vector<ResourceId>(g.ResourcesOf(three).begin(), g.ResourcesOf(three).end()),
            (std::vector<ResourceId>{c, a, b}));
  ASSERT_EQ(g.ResourcesOf(last).size(), 1u);
  EXPECT_EQ(g.ResourcesOf(last)[0], b);
}

TEST(EngineTest, GraphMayReleaseItsDependenciesOnceTheEngineIsBuilt) {
  // The same random graph run twice: once as is, once with the graph's
  // dependency list freed after the engine copied it.
  const auto build = [] {
    TaskGraph g;
    std::mt19937 rng(7);
    std::vector<ResourceId> rs;
    for (int i = 0; i < 4; ++i) rs.push_back(g.AddResource("r" + std::to_string(i), i));
    for (int t = 0; t < 200; ++t) {
      g.AddTask(rs[rng() % rs.size()], Nanoseconds(1 + rng() % 50), 0);
      if (t > 0) g.AddDependency(static_cast<TaskId>(rng() % t), static_cast<TaskId>(t));
    }
    return g;
  };
  TaskGraph kept = build();
  TaskGraph released = build();
  Simulator sim_kept, sim_released;
  Recorder rec_kept, rec_released;
  Engine e_kept(kept, sim_kept);
  Engine e_released(released, sim_released);
  released.ReleaseDependencies();
  EXPECT_TRUE(released.edges().empty());
  e_kept.AddObserver(&rec_kept);
  e_released.AddObserver(&rec_released);
  ASSERT_TRUE(e_kept.Run().ok());
  ASSERT_TRUE(e_released.Run().ok());
  EXPECT_EQ(rec_kept.log.str(), rec_released.log.str());
  for (TaskId t = 0; t < 200; ++t) EXPECT_EQ(e_kept.EndOf(t), e_released.EndOf(t));
}

TEST(EngineTest, DetectsDependencyCycle) {
  TaskGraph g;
  ResourceId a = g.AddResource("a", 0);
  ResourceId b = g.AddResource("b", 1);
  TaskId x = g.AddTask(a, Microseconds(1), 0);
  TaskId y = g.AddTask(b, Microseconds(1), 0);
  g.AddDependency(x, y);
  g.AddDependency(y, x);
  Simulator sim;
  Engine e(g, sim);
  absl::Status s = e.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cannot make progress"), std::string::npos) << s;
}

TEST(EngineTest, DetectsCrossedStreamOrder) {
  // Two collectives queued in opposite orders on two streams: a classic deadlock.
  TaskGraph g;
  ResourceId a = g.AddResource("gpu0/comm", 0);
  ResourceId b = g.AddResource("gpu1/comm", 1);
  ResourceId c = g.AddResource("gpu2/comm", 2);
  g.AddTask({a, b}, Microseconds(1), 0);
  g.AddTask({b, c}, Microseconds(1), 1);
  g.AddTask({c, a}, Microseconds(1), 2);
  // a: [t0, t2], b: [t0, t1], c: [t1, t2]: no deadlock. Now add the crossing pair.
  g.AddTask({a, c}, Microseconds(1), 3);  // a: t3 after t2; c: t3 after t2
  g.AddTask({c, a}, Microseconds(1), 4);
  Simulator sim1;
  Engine ok_engine(g, sim1);
  ASSERT_TRUE(ok_engine.Run().ok());

  TaskGraph d;
  ResourceId p = d.AddResource("p", 0);
  ResourceId q = d.AddResource("q", 1);
  ResourceId r = d.AddResource("r", 2);
  d.AddTask({p, q}, Microseconds(1), 0);  // p0 q0
  d.AddTask(r, Microseconds(1), 1);       // r0
  d.AddTask({q, r}, Microseconds(1), 2);  // q1 r1
  TaskId pr = d.AddTask({r, p}, Microseconds(1), 3);  // r2 p1
  // p: [t0, t3]; q: [t0, t2]; r: [t1, t2, t3] — fine. Make p's next task need q after r's:
  TaskId pq = d.AddTask({p, q}, Microseconds(1), 4);  // p2 q2
  d.AddDependency(pq, pr);  // t4 must precede t3, but t3 is ahead of t4 on p: stuck
  Simulator sim2;
  Engine stuck(d, sim2);
  absl::Status s = stuck.Run();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("task"), std::string::npos);
}

class FixedExecutor : public TaskExecutor {
 public:
  void Start(TaskId task, Engine& engine) override {
    Engine* e = &engine;
    engine.simulator().ScheduleAfter(Microseconds(7), [e, task] { e->Finish(task); });
  }
};

TEST(EngineTest, ExternalTaskEndsWhenExecutorFinishesIt) {
  TaskGraph g;
  ResourceId a = g.AddResource("a", 0);
  TaskId ext = g.AddExternalTask(std::span<const ResourceId>(&a, 1), 0);
  TaskId after = g.AddTask(a, Microseconds(1), 0);
  Simulator sim;
  FixedExecutor exec;
  Engine e(g, sim);
  e.SetExecutor(&exec);
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(e.EndOf(ext), Time::Zero() + Microseconds(7));
  EXPECT_EQ(e.EndOf(after), Time::Zero() + Microseconds(8));
}

// Without kept times the spans carry the same starts: a fixed task's from its
// end and duration, an external task's from its rank.
TEST(EngineTest, SpansAreTheSameWithoutKeptTimes) {
  TaskGraph g;
  ResourceId a = g.AddResource("a", 0);
  ResourceId b = g.AddResource("b", 1);
  TaskId first = g.AddTask(a, Microseconds(2), 0);
  TaskId ext = g.AddExternalTask(std::span<const ResourceId>(&b, 1), 1);
  g.AddDependency(first, ext);
  g.AddTask({a, b}, Microseconds(3), 2);
  std::string logs[2];
  for (Engine::Times times : {Engine::Times::kKept, Engine::Times::kNotKept}) {
    Simulator sim;
    FixedExecutor exec;
    Recorder rec;
    Engine e(g, sim, times);
    e.SetExecutor(&exec);
    e.AddObserver(&rec);
    ASSERT_TRUE(e.Run().ok());
    EXPECT_EQ(e.EndOf(ext), Time::Zero() + Microseconds(9));  // external ends are kept
    logs[times == Engine::Times::kKept] = rec.log.str();
  }
  EXPECT_EQ(logs[0], logs[1]);
  EXPECT_EQ(logs[0], "a:0:0-2000000;b:1:2000000-9000000;a:2:9000000-12000000;b:2:9000000-12000000;");
}

std::string RunRandomGraph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  TaskGraph g;
  std::vector<ResourceId> rs;
  for (uint32_t i = 0; i < 8; ++i) rs.push_back(g.AddResource("r" + std::to_string(i), i));
  std::vector<TaskId> ts;
  for (int i = 0; i < 400; ++i) {
    const ResourceId r = rs[rng() % rs.size()];
    const TaskId t = g.AddTask(r, Nanoseconds(static_cast<int64_t>(rng() % 50)), 0);
    if (!ts.empty() && rng() % 2 == 0) g.AddDependency(ts[rng() % ts.size()], t);
    ts.push_back(t);
  }
  Simulator sim;
  Recorder rec;
  Engine e(g, sim);
  e.AddObserver(&rec);
  EXPECT_TRUE(e.Run().ok());
  return rec.log.str();
}

// A chain of `n` tasks on one stream.
TaskGraph Chain(int n) {
  TaskGraph g;
  ResourceId r = g.AddResource("gpu0/compute", 0);
  for (int i = 0; i < n; ++i) g.AddTask(r, Microseconds(1), 0);
  return g;
}

TEST(EngineTest, ControlReportsFinishedTasks) {
  const TaskGraph g = Chain(3000);
  Simulator sim;
  Engine e(g, sim);
  RunControl control;
  e.SetControl(&control);
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(control.done, 3000u);
  EXPECT_EQ(control.total, 3000u);
  EXPECT_EQ(e.Makespan(), Time::Zero() + Microseconds(3000));
}

TEST(EngineTest, CancelFlagStopsTheRun) {
  const TaskGraph g = Chain(3 * Simulator::kCancelCheckEvents);
  Simulator sim;
  Engine e(g, sim);
  RunControl control;
  control.cancel = true;
  e.SetControl(&control);
  const absl::Status s = e.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  EXPECT_LT(e.FinishedTasks(), g.NumTasks());
}

TEST(EngineTest, ControlLeavesTheResultAlone) {
  const TaskGraph g = Chain(5000);
  Simulator plain_sim, controlled_sim;
  Engine plain(g, plain_sim), controlled(g, controlled_sim);
  RunControl control;
  controlled.SetControl(&control);
  ASSERT_TRUE(plain.Run().ok());
  ASSERT_TRUE(controlled.Run().ok());
  EXPECT_EQ(plain.Makespan(), controlled.Makespan());
  EXPECT_EQ(plain_sim.ExecutedEvents(), controlled_sim.ExecutedEvents());
}

TEST(EngineTest, IsDeterministic) {
  const std::string a = RunRandomGraph(7);
  const std::string b = RunRandomGraph(7);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace clustersim::sim
