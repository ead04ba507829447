#include "sim/event_queue.h"

#include <utility>

#include "sim/check.h"

namespace clustersim::sim {

void EventQueue::Push(const Entry& e) {
  heap_.push_back(e);
  size_t i = heap_.size() - 1;
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!Before(heap_[i], heap_[parent])) break;
    std::swap(heap_[i], heap_[parent]);
    i = parent;
  }
}

EventQueue::Entry EventQueue::Pop() {
  SIM_CHECK(!heap_.empty()) << "Pop on an empty event queue";
  const Entry top = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  size_t i = 0;
  while (true) {
    const size_t l = 2 * i + 1;
    const size_t r = l + 1;
    size_t best = i;
    if (l < n && Before(heap_[l], heap_[best])) best = l;
    if (r < n && Before(heap_[r], heap_[best])) best = r;
    if (best == i) break;
    std::swap(heap_[i], heap_[best]);
    i = best;
  }
  return top;
}

}  // namespace clustersim::sim
