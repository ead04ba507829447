#include "sim/simulator.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace clustersim::sim {
namespace {

TEST(SimulatorTest, RunsEventsInTimeThenScheduleOrder) {
  Simulator sim;
  std::vector<std::string> log;
  sim.ScheduleAfter(Nanoseconds(5), [&] { log.push_back("b"); });
  sim.ScheduleAfter(Nanoseconds(1), [&] { log.push_back("a"); });
  sim.ScheduleAfter(Nanoseconds(5), [&] { log.push_back("c"); });
  EXPECT_EQ(sim.Run(), 3u);
  EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(sim.Now(), Time::Zero() + Nanoseconds(5));
}

TEST(SimulatorTest, CallbacksCanScheduleMore) {
  Simulator sim;
  int count = 0;
  std::function<void()> tick = [&] {
    if (++count < 10) sim.ScheduleAfter(Microseconds(1), [&] { tick(); });
  };
  sim.ScheduleAfter(Duration::Zero(), [&] { tick(); });
  sim.Run();
  EXPECT_EQ(count, 10);
  EXPECT_EQ(sim.Now(), Time::Zero() + Microseconds(9));
}

TEST(SimulatorTest, CancelSkipsEvent) {
  Simulator sim;
  bool ran = false;
  EventId id = sim.ScheduleAfter(Nanoseconds(1), [&] { ran = true; });
  EXPECT_TRUE(sim.Cancel(id));
  EXPECT_FALSE(sim.Cancel(id));
  sim.Run();
  EXPECT_FALSE(ran);
  EXPECT_EQ(sim.ExecutedEvents(), 0u);
}

TEST(SimulatorTest, StaleIdDoesNotCancelReusedSlot) {
  Simulator sim;
  EventId first = sim.ScheduleAfter(Nanoseconds(1), [] {});
  sim.Run();
  bool ran = false;
  sim.ScheduleAfter(Nanoseconds(1), [&] { ran = true; });  // reuses the slot
  EXPECT_FALSE(sim.Cancel(first));
  sim.Run();
  EXPECT_TRUE(ran);
}

TEST(SimulatorTest, RunUntilLeavesLaterEvents) {
  Simulator sim;
  int ran = 0;
  sim.ScheduleAfter(Nanoseconds(1), [&] { ++ran; });
  sim.ScheduleAfter(Nanoseconds(10), [&] { ++ran; });
  sim.RunUntil(Time::Zero() + Nanoseconds(5));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(sim.PendingEvents(), 1u);
}

TEST(SimulatorTest, TwoSimulatorsAreIndependent) {
  Simulator a, b;
  a.ScheduleAfter(Seconds(1), [] {});
  b.ScheduleAfter(Seconds(2), [] {});
  a.Run();
  b.Run();
  EXPECT_EQ(a.Now(), Time::Zero() + Seconds(1));
  EXPECT_EQ(b.Now(), Time::Zero() + Seconds(2));
}

TEST(SimulatorDeathTest, SchedulingInThePastAborts) {
  Simulator sim;
  sim.ScheduleAfter(Nanoseconds(10), [&] { sim.ScheduleAt(Time::Zero(), [] {}); });
  EXPECT_DEATH(sim.Run(), "event scheduled in the past");
}

}  // namespace
}  // namespace clustersim::sim
