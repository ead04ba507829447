#include "sim/span_pipe.h"

#include <utility>

namespace clustersim::sim {

SpanPipe::SpanPipe(const TaskGraph& graph, std::vector<SpanObserver*> observers)
    : graph_(graph), observers_(std::move(observers)), batches_(kBatches) {
  thread_ = std::thread([this] { Run(); });
}

SpanPipe::~SpanPipe() { Finish(); }

void SpanPipe::Send() {
  std::unique_lock<std::mutex> lock(mu_);
  ++sent_;
  changed_.notify_all();
  // The next batch in the ring is free once the thread has delivered the one
  // sent kBatches earlier.
  changed_.wait(lock, [&] { return sent_ - done_ < kBatches; });
  fill_ = sent_ % kBatches;
  batches_[fill_].size = 0;
}

void SpanPipe::Finish() {
  if (!thread_.joinable()) return;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (batches_[fill_].size > 0) ++sent_;
    closing_ = true;
    changed_.notify_all();
  }
  thread_.join();
}

void SpanPipe::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    changed_.wait(lock, [&] { return done_ < sent_ || closing_; });
    if (done_ == sent_) return;  // closing, and everything delivered
    const Batch& b = batches_[done_ % kBatches];
    lock.unlock();
    for (size_t i = 0; i < b.size; ++i) {
      for (SpanObserver* o : observers_) o->OnSpan(graph_, b.spans[i]);
    }
    lock.lock();
    ++done_;
    changed_.notify_all();
  }
}

}  // namespace clustersim::sim
