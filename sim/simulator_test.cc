#include "sim/simulator.h"

#include <functional>
#include <string>
#include <utility>
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

// Records "name:arg" for each handler event.
class LogHandler : public EventHandler {
 public:
  LogHandler(std::string name, std::vector<std::string>* log) : name_(std::move(name)), log_(log) {}
  void OnEvent(uint32_t arg) override { log_->push_back(name_ + ":" + std::to_string(arg)); }

 private:
  std::string name_;
  std::vector<std::string>* log_;
};

TEST(SimulatorTest, HandlerEventsShareTheTimeThenScheduleOrder) {
  Simulator sim;
  std::vector<std::string> log;
  LogHandler h("h", &log), k("k", &log);
  const uint32_t hid = sim.AddHandler(&h);
  const uint32_t kid = sim.AddHandler(&k);
  EXPECT_NE(hid, kid);
  sim.ScheduleEvent(Time::Zero() + Nanoseconds(5), hid, 7);
  sim.ScheduleAfter(Nanoseconds(5), [&] { log.push_back("cb"); });
  sim.ScheduleEvent(Time::Zero() + Nanoseconds(1), kid, 3);
  sim.ScheduleEvent(Time::Zero() + Nanoseconds(5), kid, 9);
  EXPECT_EQ(sim.Run(), 4u);
  EXPECT_EQ(log, (std::vector<std::string>{"k:3", "h:7", "cb", "k:9"}));
  EXPECT_EQ(sim.Now(), Time::Zero() + Nanoseconds(5));
  EXPECT_EQ(sim.ExecutedEvents(), 4u);
}

TEST(SimulatorTest, EndOfInstantRunsAfterTheInstantsEventsAndIsNoEvent) {
  Simulator sim;
  std::vector<std::string> log;
  LogHandler end("end", &log);
  const uint32_t end_id = sim.AddHandler(&end);
  sim.ScheduleAfter(Nanoseconds(1), [&] {
    log.push_back("a");
    sim.AtEndOfInstant(end_id, 1);
    // Scheduled during the instant: still runs before its end.
    sim.ScheduleAfter(Duration::Zero(), [&] { log.push_back("a0"); });
  });
  sim.ScheduleAfter(Nanoseconds(1), [&] {
    log.push_back("b");
    sim.AtEndOfInstant(end_id, 2);
  });
  sim.ScheduleAfter(Nanoseconds(2), [&] { log.push_back("c"); });
  EXPECT_EQ(sim.Run(), 4u);
  EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "a0", "end:1", "end:2", "c"}));
  EXPECT_EQ(sim.ExecutedEvents(), 4u);
}

TEST(SimulatorTest, EndOfInstantMayScheduleAtTheSameInstant) {
  Simulator sim;
  std::vector<std::string> log;
  LogHandler end("end", &log);
  const uint32_t end_id = sim.AddHandler(&end);
  sim.AtEndOfInstant(end_id, 0);  // before Run: at instant zero, once its events ran
  sim.ScheduleAfter(Duration::Zero(), [&] { log.push_back("zero"); });
  sim.ScheduleAfter(Nanoseconds(3), [&] {
    log.push_back("x");
    sim.AtEndOfInstant(end_id, 3);
  });
  // A hook that schedules an event at 3 ns: that event, and the hook it asks
  // for, still run before the instant ends.
  struct Chain : EventHandler {
    Simulator* sim;
    uint32_t end_id;
    std::vector<std::string>* log;
    void OnEvent(uint32_t) override {
      log->push_back("chain");
      sim->ScheduleAfter(Duration::Zero(), [this] {
        log->push_back("y");
        sim->AtEndOfInstant(end_id, 4);
      });
    }
  } chain;
  chain.sim = &sim;
  chain.end_id = end_id;
  chain.log = &log;
  const uint32_t chain_id = sim.AddHandler(&chain);
  sim.ScheduleAfter(Nanoseconds(3), [&] { sim.AtEndOfInstant(chain_id, 0); });
  sim.RunUntil(Time::Zero() + Nanoseconds(3));
  EXPECT_EQ(log, (std::vector<std::string>{"zero", "end:0", "x", "end:3", "chain", "y", "end:4"}));
  EXPECT_EQ(sim.Now(), Time::Zero() + Nanoseconds(3));
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
