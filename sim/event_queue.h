// File: sim/event_queue.h
//
// A priority queue of small POD entries ordered by (time, seq). `seq` is a
// per-simulator counter stamped at insertion, so events at equal times pop in
// insertion order and every run pops the same sequence: the order is total.
//
// Layout: a 4-ary min-heap with one node per pending (time, bucket): the
// node holds the bucket's earliest entry and the bucket the later entries of
// that time, in seq order. Simulated steps are symmetric (replicas start and
// end the same work at the same instant), so several events usually share a
// time: a push whose time has the newest bucket in a small direct-mapped
// table of recent times appends to it, and a pop that leaves entries in its
// bucket moves the next one into the root without sifting. A bucket only
// takes entries whose seq exceeds every seq pushed before (the simulator's
// counter), so buckets of one time hold disjoint, ordered seq ranges;
// entries pushed out of seq order (never by the simulator) wait in a plain
// heap beside the nodes.
//
// Ordering invariants (strict weak ordering of Entry by `Before`):
//   - irreflexive: !Before(a, a);
//   - transitive, and total because no two live entries share a `seq`.
//
// Cost per operation and memory (b: buckets pending):
//   | operation | time      | note                                            |
//   | Push      | O(log b)  | O(1) when its time's bucket is in the table     |
//   | Pop       | O(log b)  | O(1) unless it takes its bucket's last entry    |
//   | Top/Empty/Size | O(1) |                                                 |
//   | memory    | 24 bytes per pending entry, 40 more per bucket              |
//
// Example:
//   EventQueue q;
//   q.Push({Time::Zero() + Nanoseconds(5), /*seq=*/0, /*slot=*/7, /*arg=*/0});
//   EventQueue::Entry e = q.Pop();   // e.slot == 7
#ifndef CLUSTERSIM_SIM_EVENT_QUEUE_H_
#define CLUSTERSIM_SIM_EVENT_QUEUE_H_

#include <cstdint>
#include <vector>

#include "sim/units.h"

namespace clustersim::sim {

class EventQueue {
 public:
  struct Entry {
    Time when;
    uint64_t seq;   // insertion order, unique per simulator
    uint32_t slot;  // index of the callback in the simulator's slab, or a handler
    uint32_t arg;   // the handler's argument (handler events only)
  };
  static bool Before(const Entry& a, const Entry& b) {
    return a.when < b.when || (a.when == b.when && a.seq < b.seq);
  }

  void Push(const Entry& e);
  // REQUIRES: !Empty().
  Entry Pop();
  // REQUIRES: !Empty().
  const Entry& Top() const;
  bool Empty() const { return size_ == 0; }
  size_t Size() const { return size_; }
  void Reserve(size_t n) { heap_.reserve(n); }

 private:
  // The entries of a node's time after its own, in seq order.
  struct Bucket {
    std::vector<Entry> later;  // [head, end) pending
    size_t head = 0;
  };
  struct Node {
    Entry first;
    uint32_t bucket;
  };
  static bool NodeBefore(const Node& a, const Node& b) { return Before(a.first, b.first); }
  // The newest bucket of a recent time, by a hash of the time.
  struct Recent {
    Time when;
    uint32_t bucket = kNoBucket;
  };
  static constexpr uint32_t kNoBucket = ~uint32_t{0};
  static constexpr int kRecentBits = 10;
  static size_t RecentSlot(Time when) {
    return static_cast<size_t>((static_cast<uint64_t>(when.picoseconds()) *
                                0x9E3779B97F4A7C15ull) >>
                               (64 - kRecentBits));
  }
  // Whether the earliest entry is in the side heap rather than a bucket.
  bool SideFirst() const;
  void SiftUp(size_t i);
  void PopHeap();

  std::vector<Node> heap_;  // one per bucket in use
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  std::vector<Recent> recent_ = std::vector<Recent>(size_t{1} << kRecentBits);
  std::vector<Entry> side_;  // entries pushed out of seq order: a binary heap
  uint64_t max_seq_ = 0;  // the highest seq a bucket took (any first seq passes)
  size_t size_ = 0;
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_EVENT_QUEUE_H_
