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

TEST(EventQueueTest, SharedTimesAndLateSeqsPopInOrderWhilePushing) {
  // Few distinct times (buckets shared by many entries, recent-time table
  // collisions), pops interleaved with pushes, and some entries pushed with
  // a seq below ones already pushed (the side heap): the pops must follow
  // (time, seq) among the entries pending at each pop.
  std::mt19937_64 rng(7);
  EventQueue q;
  std::vector<EventQueue::Entry> pending;
  uint64_t seq = 1000;
  int64_t now = 0;
  for (uint32_t i = 0; i < 20000; ++i) {
    const bool late = rng() % 10 == 0;
    const uint64_t s = late ? rng() % 1000 * 100000 + i : ++seq * 100000;
    const EventQueue::Entry e{Time::Zero() + Picoseconds(now + static_cast<int64_t>(rng() % 40)),
                              s, i, 0};
    q.Push(e);
    pending.push_back(e);
    if (rng() % 3 == 0) {
      const auto least = std::min_element(pending.begin(), pending.end(), EventQueue::Before);
      ASSERT_EQ(q.Top().seq, least->seq);
      const EventQueue::Entry got = q.Pop();
      ASSERT_EQ(got.seq, least->seq);
      now = got.when.picoseconds();
      pending.erase(least);
    }
    ASSERT_EQ(q.Size(), pending.size());
  }
  std::sort(pending.begin(), pending.end(), EventQueue::Before);
  for (const auto& e : pending) ASSERT_EQ(q.Pop().seq, e.seq);
  EXPECT_TRUE(q.Empty());
}

}  // namespace
}  // namespace clustersim::sim
