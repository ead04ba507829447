// File: sim/event_queue.h
//
// A 4-ary min-heap of small POD entries ordered by (time, seq). `seq` is a
// per-simulator counter stamped at insertion, so events at equal times pop in
// insertion order and every run pops the same sequence: the order is total.
//
// Ordering invariants (strict weak ordering of Entry by `Before`):
//   - irreflexive: !Before(a, a);
//   - transitive, and total because no two live entries share a `seq`.
//
// Cost per operation and memory:
//   | operation | time      | note                                   |
//   | Push      | O(log n)  | amortised; the vector grows by doubling |
//   | Pop       | O(log n)  |                                        |
//   | Top/Empty/Size | O(1) |                                        |
//   | memory    | 24 bytes per pending entry                         |
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
  const Entry& Top() const { return heap_.front(); }
  bool Empty() const { return heap_.empty(); }
  size_t Size() const { return heap_.size(); }
  void Reserve(size_t n) { heap_.reserve(n); }

 private:
  std::vector<Entry> heap_;
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_EVENT_QUEUE_H_
