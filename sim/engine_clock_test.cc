// The picosecond clock's end: a run whose simulated time would pass
// Duration::Max() ends with an OUT_OF_RANGE error naming the task, never with
// a wrapped-around (negative) time. Through the public API: a TaskGraph whose
// tasks' durations sum past the clock. (Scenarios that would get there are
// refused up front by scenarios/input/limits.cc; tests/bad_input_test.cc covers that.)
#include <string>

#include "gtest/gtest.h"
#include "sim/engine.h"

namespace clustersim::sim {
namespace {

// Half the clock, twice in a row on one stream, plus one picosecond: the
// third task's end would be 2^63 ps, one past the largest int64.
TEST(EngineClockTest, OverflowOfTheClockIsAnErrorNotAWrapAround) {
  const Duration half = Picoseconds(Duration::Max().picoseconds() / 2);
  TaskGraph g;
  const ResourceId r = g.AddResource("gpu0/compute", 0);
  g.AddTask(r, half, 0);
  g.AddTask(r, half, 0);
  g.AddTask(r, Picoseconds(2), 0);
  Simulator sim;
  Engine e(g, sim);
  const absl::Status s = e.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  const std::string msg(s.message());
  EXPECT_NE(msg.find("overflows the picosecond clock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("task 2 on gpu0/compute"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad input"), std::string::npos) << msg;
  // The two tasks before it ran; nothing ended at a negative time.
  EXPECT_EQ(e.FinishedTasks(), 2u);
  EXPECT_GE(e.Makespan(), Time::Zero());
}

// A duration of Duration::Max() (what an out-of-range conversion saturates
// to) from time zero would end exactly at Time::Infinite(): also an error.
TEST(EngineClockTest, ADurationAtTheClocksEndIsAnError) {
  TaskGraph g;
  const ResourceId r = g.AddResource("link", 0);
  g.AddTask(r, TransferTime(Bytes(int64_t{1} << 62), Bandwidth::BitsPerSecond(1)), 0);
  Simulator sim;
  Engine e(g, sim);
  EXPECT_EQ(e.Run().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(e.FinishedTasks(), 0u);
}

// The last representable end still runs: the check is not off by one.
TEST(EngineClockTest, EndingJustBeforeTheClocksEndRuns) {
  TaskGraph g;
  const ResourceId r = g.AddResource("gpu0/compute", 0);
  g.AddTask(r, Picoseconds(Duration::Max().picoseconds() - 1), 0);
  Simulator sim;
  Engine e(g, sim);
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(e.Makespan(), Time::Infinite() - Picoseconds(1));
}

}  // namespace
}  // namespace clustersim::sim
