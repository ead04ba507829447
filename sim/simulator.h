// File: sim/simulator.h
//
// The discrete-event loop. A `Simulator` is an ordinary object (no globals):
// two can run side by side in one process. Callbacks are kept in a slab with a
// free list and scheduled through the (time, seq) EventQueue, so events at the
// same time run in the order they were scheduled, on every run.
//
// Callbacks are absl::AnyInvocable<void()>; keep captures to two pointers so they
// are stored inline (no heap allocation per event on the hot path). The
// hottest callers (the engine's task completions) instead register an
// EventHandler once and schedule (handler, argument) events: no slab slot and
// no callable is built per event, and they share the seq order with callbacks.
//
// Example:
//   Simulator sim;
//   sim.ScheduleAfter(Microseconds(2), [&] { ... sim.Now() ... });
//   sim.Run();
//
// Thread-safety: none; one thread drives one simulator.
#ifndef CLUSTERSIM_SIM_SIMULATOR_H_
#define CLUSTERSIM_SIM_SIMULATOR_H_

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "sim/event_queue.h"
#include "sim/units.h"

namespace clustersim::sim {

// Identifies one scheduled event; used to cancel it. Stale ids are harmless.
struct EventId {
  uint64_t seq = 0;
  uint32_t slot = 0;
};

// Receives the events scheduled with Simulator::ScheduleEvent.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void OnEvent(uint32_t arg) = 0;
};

class Simulator {
 public:
  using Callback = absl::AnyInvocable<void()>;

  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time Now() const { return now_; }

  // Schedules `cb` at absolute time `when`. REQUIRES: when >= Now().
  EventId ScheduleAt(Time when, Callback cb);
  // Schedules `cb` after `delay`. REQUIRES: delay >= 0.
  EventId ScheduleAfter(Duration delay, Callback cb) { return ScheduleAt(now_ + delay, std::move(cb)); }
  // Registers `h` (which must outlive the simulator's run) for ScheduleEvent.
  uint32_t AddHandler(EventHandler* h);
  // Calls handlers_[handler]->OnEvent(arg) at `when`, ordered with all other
  // events by (time, seq). Not cancellable. REQUIRES: when >= Now().
  void ScheduleEvent(Time when, uint32_t handler, uint32_t arg);

  // Calls handlers_[handler]->OnEvent(arg) once every event at Now() has run,
  // before time advances or Run returns; it may schedule events at Now(),
  // which then run after it. Not an event: ExecutedEvents does not count it.
  // Requests of one instant run in the order made; a request made before Run
  // runs at its start, once the events at Now() have run.
  void AtEndOfInstant(uint32_t handler, uint32_t arg);

  // Cancels a pending event lazily: it stays queued but is skipped. Returns
  // false when the event already ran or was cancelled.
  bool Cancel(EventId id);

  // Runs events until none are left. Returns the number of events executed.
  uint64_t Run();
  // Runs events with time <= `until`; later ones stay queued.
  uint64_t RunUntil(Time until);

  // A flag another thread may set to stop the run early: Run/RunUntil look at
  // it every kCancelCheckEvents events (one relaxed load, so the loop stays as
  // fast) and return with the remaining events queued; Cancelled() then says
  // so. `flag` must outlive the runs; null (the default) never stops.
  static constexpr uint64_t kCancelCheckEvents = 4096;
  void SetCancelFlag(const std::atomic<bool>* flag) { cancel_ = flag; }
  bool Cancelled() const { return cancel_ != nullptr && cancel_->load(std::memory_order_relaxed); }

  size_t PendingEvents() const { return queue_.Size(); }
  uint64_t ExecutedEvents() const { return executed_; }

 private:
  struct Slot {
    Callback cb;
    uint64_t seq = 0;  // seq of the event occupying this slot; 0 when free
  };

  Time now_;
  uint64_t next_seq_ = 1;
  uint64_t executed_ = 0;
  EventQueue queue_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<EventHandler*> handlers_;
  std::vector<std::pair<uint32_t, uint32_t>> end_of_instant_;  // (handler, arg)
  std::vector<std::pair<uint32_t, uint32_t>> running_end_of_instant_;
  const std::atomic<bool>* cancel_ = nullptr;
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_SIMULATOR_H_
