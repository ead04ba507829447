#include "sim/event_queue.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace clustersim::sim {
namespace {

TEST(EventQueueTest, PopsInTimeOrder) {
  EventQueue q;
  q.Push({Time::Zero() + Nanoseconds(30), 1, 0, 0});
  q.Push({Time::Zero() + Nanoseconds(10), 2, 1, 0});
  q.Push({Time::Zero() + Nanoseconds(20), 3, 2, 0});
  EXPECT_EQ(q.Size(), 3u);
  EXPECT_EQ(q.Pop().slot, 1u);
  EXPECT_EQ(q.Pop().slot, 2u);
  EXPECT_EQ(q.Pop().slot, 0u);
  EXPECT_TRUE(q.Empty());
}

TEST(EventQueueTest, PopsEqualTimesInInsertionOrder) {
  EventQueue q;
  const Time t = Time::Zero() + Microseconds(1);
  for (uint32_t i = 0; i < 100; ++i) q.Push({t, 1000 - static_cast<uint64_t>(i) * 3, i, 0});
  // Lower seq first: the last pushed (smallest seq) pops first.
  uint32_t expected = 99;
  while (!q.Empty()) EXPECT_EQ(q.Pop().slot, expected--);
}

TEST(EventQueueTest, MatchesSortedOrderOnRandomInput) {
  std::mt19937_64 rng(42);
  EventQueue q;
  std::vector<EventQueue::Entry> all;
  for (uint32_t i = 0; i < 5000; ++i) {
    EventQueue::Entry e{Time::Zero() + Picoseconds(static_cast<int64_t>(rng() % 500)), i, i};
    all.push_back(e);
    q.Push(e);
  }
  std::sort(all.begin(), all.end(), EventQueue::Before);
  for (const auto& e : all) {
    ASSERT_FALSE(q.Empty());
    EXPECT_EQ(q.Pop().seq, e.seq);
  }
}

}  // namespace
}  // namespace clustersim::sim
