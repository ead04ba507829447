#include "sim/event_queue.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::sim {

// The heap is 4-ary: half the levels of a binary one, and a node's four
// children lie in two cache lines. Nodes are totally ordered (seqs are
// unique), so any heap shape pops the same order.
namespace {
constexpr size_t kArity = 4;

// std heap order for the side heap: the earliest entry on top.
bool After(const EventQueue::Entry& a, const EventQueue::Entry& b) {
  return EventQueue::Before(b, a);
}
}  // namespace

void EventQueue::Push(const Entry& e) {
  ++size_;
  if (e.seq < max_seq_) {
    side_.push_back(e);
    std::push_heap(side_.begin(), side_.end(), After);
    return;
  }
  max_seq_ = e.seq;
  Recent& recent = recent_[RecentSlot(e.when)];
  if (recent.bucket != kNoBucket && recent.when == e.when) {
    buckets_[recent.bucket].later.push_back(e);
    return;
  }
  uint32_t b;
  if (free_buckets_.empty()) {
    b = static_cast<uint32_t>(buckets_.size());
    buckets_.emplace_back();
  } else {
    b = free_buckets_.back();
    free_buckets_.pop_back();
  }
  recent = {e.when, b};
  heap_.push_back({e, b});
  SiftUp(heap_.size() - 1);
}

bool EventQueue::SideFirst() const {
  if (side_.empty()) return false;
  return heap_.empty() || Before(side_.front(), heap_.front().first);
}

const EventQueue::Entry& EventQueue::Top() const {
  SIM_CHECK(size_ > 0) << "Top on an empty event queue";
  return SideFirst() ? side_.front() : heap_.front().first;
}

EventQueue::Entry EventQueue::Pop() {
  SIM_CHECK(size_ > 0) << "Pop on an empty event queue";
  --size_;
  if (SideFirst()) {
    std::pop_heap(side_.begin(), side_.end(), After);
    const Entry top = side_.back();
    side_.pop_back();
    return top;
  }
  Node& root = heap_.front();
  const Entry top = root.first;
  Bucket& bucket = buckets_[root.bucket];
  if (bucket.head < bucket.later.size()) {
    // The next entry of the same time, with a seq below every other
    // bucket's of that time: still the least, so the root stays.
    root.first = bucket.later[bucket.head++];
    return top;
  }
  Recent& recent = recent_[RecentSlot(top.when)];
  if (recent.bucket == root.bucket) recent.bucket = kNoBucket;
  bucket.later.clear();
  bucket.head = 0;
  free_buckets_.push_back(root.bucket);
  PopHeap();
  return top;
}

void EventQueue::SiftUp(size_t i) {
  const Node k = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!NodeBefore(k, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = k;
}

void EventQueue::PopHeap() {
  const Node last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return;
  // Sift `last` down from the root: move the earliest child up while it is
  // before `last`.
  size_t i = 0;
  while (true) {
    const size_t first = kArity * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + kArity, n);
    for (size_t c = first + 1; c < end; ++c) {
      if (NodeBefore(heap_[c], heap_[best])) best = c;
    }
    if (!NodeBefore(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

}  // namespace clustersim::sim
