#include "sim/simulator.h"

#include <utility>

#include "sim/check.h"

namespace clustersim::sim {

EventId Simulator::ScheduleAt(Time when, Callback cb) {
  SIM_CHECK(when >= now_) << "event scheduled in the past: " << when.picoseconds()
                          << " ps < now " << now_.picoseconds() << " ps";
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const uint64_t seq = next_seq_++;
  slots_[slot].cb = std::move(cb);
  slots_[slot].seq = seq;
  queue_.Push({when, seq, slot});
  return EventId{seq, slot};
}

bool Simulator::Cancel(EventId id) {
  if (id.slot >= slots_.size() || slots_[id.slot].seq != id.seq || id.seq == 0) return false;
  slots_[id.slot].cb = nullptr;
  slots_[id.slot].seq = 0;
  free_slots_.push_back(id.slot);
  return true;
}

uint64_t Simulator::RunUntil(Time until) {
  uint64_t ran = 0;
  while (!queue_.Empty() && queue_.Top().when <= until) {
    const EventQueue::Entry e = queue_.Pop();
    Slot& s = slots_[e.slot];
    if (s.seq != e.seq) continue;  // cancelled (slot possibly reused)
    now_ = e.when;
    Callback cb = std::move(s.cb);
    s.cb = nullptr;
    s.seq = 0;
    free_slots_.push_back(e.slot);
    cb();
    ++ran;
  }
  executed_ += ran;
  return ran;
}

uint64_t Simulator::Run() { return RunUntil(Time::Infinite()); }

}  // namespace clustersim::sim
