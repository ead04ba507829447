#include "sim/simulator.h"

#include <utility>

#include "sim/check.h"

namespace clustersim::sim {
namespace {
// Queue entries whose slot has this bit name a handler, not a slab slot.
constexpr uint32_t kHandlerBit = 0x80000000u;
}  // namespace

EventId Simulator::ScheduleAt(Time when, Callback cb) {
  SIM_CHECK(when >= now_) << "event scheduled in the past: " << when.picoseconds()
                          << " ps < now " << now_.picoseconds() << " ps";
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    SIM_CHECK((slot & kHandlerBit) == 0) << "too many pending events";
    slots_.emplace_back();
  }
  const uint64_t seq = next_seq_++;
  slots_[slot].cb = std::move(cb);
  slots_[slot].seq = seq;
  queue_.Push({when, seq, slot, 0});
  return EventId{seq, slot};
}

uint32_t Simulator::AddHandler(EventHandler* h) {
  handlers_.push_back(h);
  return static_cast<uint32_t>(handlers_.size() - 1) | kHandlerBit;
}

void Simulator::ScheduleEvent(Time when, uint32_t handler, uint32_t arg) {
  SIM_CHECK(when >= now_) << "event scheduled in the past: " << when.picoseconds()
                          << " ps < now " << now_.picoseconds() << " ps";
  SIM_CHECK((handler & kHandlerBit) != 0 && (handler & ~kHandlerBit) < handlers_.size())
      << "unknown event handler " << handler;
  queue_.Push({when, next_seq_++, handler, arg});
}

void Simulator::AtEndOfInstant(uint32_t handler, uint32_t arg) {
  SIM_CHECK((handler & kHandlerBit) != 0 && (handler & ~kHandlerBit) < handlers_.size())
      << "unknown event handler " << handler;
  end_of_instant_.push_back({handler, arg});
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
  while (true) {
    if (!end_of_instant_.empty() && (queue_.Empty() || queue_.Top().when > now_)) {
      running_end_of_instant_.swap(end_of_instant_);
      for (const auto& [handler, arg] : running_end_of_instant_) {
        handlers_[handler & ~kHandlerBit]->OnEvent(arg);
      }
      running_end_of_instant_.clear();
      continue;
    }
    if (queue_.Empty() || queue_.Top().when > until) break;
    if (cancel_ != nullptr && ran % kCancelCheckEvents == 0 && Cancelled()) break;
    const EventQueue::Entry e = queue_.Pop();
    if ((e.slot & kHandlerBit) != 0) {
      now_ = e.when;
      handlers_[e.slot & ~kHandlerBit]->OnEvent(e.arg);
      ++ran;
      continue;
    }
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
