// File: sim/span_pipe.h
//
// Hands the spans of a run to observers on a second thread. On a huge step
// the observers that only summarise (step statistics, time per kernel kind,
// memory over time) cost a fifth of the simulation thread's time; behind a
// SpanPipe they run beside it instead. The simulation thread appends each
// span to a batch; full batches go to the pipe's thread, which calls every
// observer on every span in the order they were pushed, so each observer
// sees exactly the sequence it would have seen inline, only later. Finish
// waits for the last span.
//
// Only for observers that share no state with anything else running during
// the simulation (they may read the graph, which is not changed during a
// run) and whose results are read after Finish.
//
// Example:
//   SpanPipe pipe(graph, {&stats, &kinds});
//   for (...) pipe.Push(span);  // the simulation thread
//   pipe.Finish();              // every observer has seen every span
//
// Thread-safety: Push and Finish from one thread (the simulation's).
#ifndef CLUSTERSIM_SIM_SPAN_PIPE_H_
#define CLUSTERSIM_SIM_SPAN_PIPE_H_

#include <array>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/span.h"
#include "sim/task_graph.h"

namespace clustersim::sim {

class SpanPipe {
 public:
  // Starts the pipe's thread. `graph` and the observers must outlive the pipe.
  SpanPipe(const TaskGraph& graph, std::vector<SpanObserver*> observers);
  SpanPipe(const SpanPipe&) = delete;
  SpanPipe& operator=(const SpanPipe&) = delete;
  ~SpanPipe();  // Finish

  void Push(const Span& span) {
    Batch& b = batches_[fill_];
    b.spans[b.size++] = span;
    if (b.size == kBatchSpans) Send();
  }

  // Sends the last partial batch and waits until the observers have seen
  // every span pushed. Idempotent; no Push after it.
  void Finish();

 private:
  static constexpr size_t kBatchSpans = 8192;  // 256 KiB of spans
  static constexpr size_t kBatches = 4;
  struct Batch {
    std::array<Span, kBatchSpans> spans;
    size_t size = 0;
  };
  // Hands batches_[fill_] to the thread and waits for a free one to fill.
  void Send();
  void Run();

  const TaskGraph& graph_;
  const std::vector<SpanObserver*> observers_;
  std::vector<Batch> batches_;
  size_t fill_ = 0;  // the batch the simulation thread fills
  std::mutex mu_;
  std::condition_variable changed_;
  size_t sent_ = 0;       // batches handed over, in ring order (guarded by mu_)
  size_t done_ = 0;       // batches the thread has delivered (guarded by mu_)
  bool closing_ = false;  // no more batches will come (guarded by mu_)
  std::thread thread_;
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_SPAN_PIPE_H_
