#include "sim/event_queue.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::sim {

// A 4-ary heap: half the levels of a binary one, and a node's four children
// (96 bytes) lie in two cache lines, so a pop misses the cache about half as
// often. Entries are totally ordered (seq is unique): any heap pops the same
// sequence.
namespace {
constexpr size_t kArity = 4;
}  // namespace

void EventQueue::Push(const Entry& e) {
  heap_.push_back(e);
  size_t i = heap_.size() - 1;
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!Before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

EventQueue::Entry EventQueue::Pop() {
  SIM_CHECK(!heap_.empty()) << "Pop on an empty event queue";
  const Entry top = heap_.front();
  const Entry last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  // Sift `last` down from the root: move the least child up while it is
  // before `last`.
  size_t i = 0;
  while (true) {
    const size_t first = kArity * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + kArity, n);
    for (size_t c = first + 1; c < end; ++c) {
      if (Before(heap_[c], heap_[best])) best = c;
    }
    if (!Before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

}  // namespace clustersim::sim
