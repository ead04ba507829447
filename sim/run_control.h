// File: sim/run_control.h
//
// Lets another thread follow and stop a long call while it runs (the Python
// module's waiting thread polls it to report progress and to stop on Ctrl-C).
// The worker stores `done`/`total` (what they count is the caller's: tasks of
// one simulated step, strategies of a search, points of a sweep) and reads
// `cancel` at points where stopping is cheap; a stopped call returns
// CANCELLED. All fields are atomics, read and written relaxed: they carry no
// other data between threads.
//
// Example:
//   sim::RunControl control;
//   options.control = &control;            // scenarios::RunOptions
//   std::thread t([&] { RunScenario(resolved, options); });
//   control.cancel = true;                 // the run returns CANCELLED soon after
#ifndef CLUSTERSIM_SIM_RUN_CONTROL_H_
#define CLUSTERSIM_SIM_RUN_CONTROL_H_

#include <atomic>
#include <cstddef>

namespace clustersim::sim {

struct RunControl {
  std::atomic<bool> cancel{false};
  std::atomic<size_t> done{0};
  std::atomic<size_t> total{0};

  bool Cancelled() const { return cancel.load(std::memory_order_relaxed); }
  void Report(size_t d, size_t t) {
    total.store(t, std::memory_order_relaxed);
    done.store(d, std::memory_order_relaxed);
  }
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_RUN_CONTROL_H_
