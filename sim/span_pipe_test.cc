#include "sim/span_pipe.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine.h"

namespace clustersim::sim {
namespace {

// Records what it is told and on which thread.
struct Recorder : SpanObserver {
  std::vector<Span> spans;
  std::vector<std::thread::id> threads;
  void OnSpan(const TaskGraph&, const Span& s) override {
    spans.push_back(s);
    threads.push_back(std::this_thread::get_id());
  }
};

bool Same(const Span& a, const Span& b) {
  return a.resource == b.resource && a.task == b.task && a.tag == b.tag && a.start == b.start &&
         a.end == b.end;
}

TEST(SpanPipeTest, EveryObserverSeesEverySpanInOrderOnTheOtherThread) {
  TaskGraph g;
  Recorder first, second;
  const int n = 100003;  // many full batches and a partial last one
  {
    SpanPipe pipe(g, {&first, &second});
    for (int i = 0; i < n; ++i) {
      pipe.Push(Span{static_cast<ResourceId>(i % 7), static_cast<TaskId>(i),
                     static_cast<uint32_t>(i * 3), Time::Zero() + Nanoseconds(i),
                     Time::Zero() + Nanoseconds(2 * i)});
    }
    pipe.Finish();
    ASSERT_EQ(first.spans.size(), static_cast<size_t>(n));
    pipe.Finish();  // a second Finish is harmless
  }
  ASSERT_EQ(second.spans.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(first.spans[i].task, static_cast<TaskId>(i));
    ASSERT_EQ(first.spans[i].end, Time::Zero() + Nanoseconds(2 * i));
    ASSERT_TRUE(Same(first.spans[i], second.spans[i]));
    ASSERT_NE(first.threads[i], std::this_thread::get_id());
  }
}

TEST(SpanPipeTest, AnEmptyPipeFinishes) {
  TaskGraph g;
  Recorder r;
  SpanPipe pipe(g, {&r});
  pipe.Finish();
  EXPECT_TRUE(r.spans.empty());
}

// A chain over three resources of `tasks` tasks, with a cross dependency now and then.
TaskGraph Chain(size_t tasks) {
  TaskGraph g;
  const ResourceId r[3] = {g.AddResource("a", 0), g.AddResource("b", 1), g.AddResource("c", 2)};
  for (size_t t = 0; t < tasks; ++t) {
    g.AddTask(r[t % 3], Nanoseconds(1 + t % 5), static_cast<uint32_t>(t));
    if (t >= 4 && t % 4 == 0) g.AddDependency(static_cast<TaskId>(t - 4), static_cast<TaskId>(t));
  }
  return g;
}

TEST(SpanPipeTest, DeferredObserversOfAHugeGraphSeeWhatInlineOnesSee) {
  const TaskGraph g = Chain(Engine::kDeferredTasks + 5);
  Simulator sim;
  Engine e(g, sim);
  Recorder inline_rec, deferred_rec;
  e.AddObserver(&inline_rec);
  e.AddObserver(&deferred_rec, Engine::Delivery::kDeferred);
  ASSERT_TRUE(e.Run().ok());
  ASSERT_EQ(inline_rec.spans.size(), g.NumTasks());
  ASSERT_EQ(deferred_rec.spans.size(), g.NumTasks());
  for (size_t i = 0; i < g.NumTasks(); ++i) {
    ASSERT_TRUE(Same(inline_rec.spans[i], deferred_rec.spans[i])) << i;
  }
  EXPECT_NE(deferred_rec.threads.back(), std::this_thread::get_id());
}

TEST(SpanPipeTest, DeferredObserversOfASmallGraphAreToldInline) {
  const TaskGraph g = Chain(1000);
  Simulator sim;
  Engine e(g, sim);
  Recorder rec;
  e.AddObserver(&rec, Engine::Delivery::kDeferred);
  ASSERT_TRUE(e.Run().ok());
  ASSERT_EQ(rec.spans.size(), 1000u);
  EXPECT_EQ(rec.threads.back(), std::this_thread::get_id());
}

}  // namespace
}  // namespace clustersim::sim
