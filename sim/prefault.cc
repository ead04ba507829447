#include "sim/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14+; older kernels answer EINVAL
#endif

namespace clustersim::sim {
namespace {

// One madvise call: long enough to amortise the lock, short enough that a
// cancel waits little.
constexpr uintptr_t kChunk = uintptr_t{8} << 20;

struct Range {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool Overlaps(uintptr_t b, uintptr_t e) const { return begin < e && b < end; }
};

class Prefaulter {
 public:
  void Post(uintptr_t begin, uintptr_t end) {
    if (begin >= end) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!supported_) return;
      AdoptAfterFork();
      if (!worker_.joinable()) {
        owner_ = getpid();
        worker_ = std::thread([this] { Run(); });
      }
      pending_.push_back({begin, end});
    }
    work_.notify_one();
  }

  void Cancel(uintptr_t begin, uintptr_t end) {
    std::unique_lock<std::mutex> lock(mu_);
    AdoptAfterFork();
    std::deque<Range> kept;
    for (const Range& r : pending_) {
      // Keep the parts outside [begin, end).
      if (!r.Overlaps(begin, end)) {
        kept.push_back(r);
        continue;
      }
      if (r.begin < begin) kept.push_back({r.begin, begin});
      if (end < r.end) kept.push_back({end, r.end});
    }
    pending_.swap(kept);
    idle_.wait(lock, [&] { return !busy_ || !current_.Overlaps(begin, end); });
  }

  void WaitAll() {
    std::unique_lock<std::mutex> lock(mu_);
    AdoptAfterFork();
    idle_.wait(lock, [&] { return pending_.empty() && !busy_; });
  }

 private:
  // A forked child inherits the state but not the thread: it starts afresh.
  void AdoptAfterFork() {
    if (!worker_.joinable() || owner_ == getpid()) return;
    worker_.detach();
    pending_.clear();
    busy_ = false;
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      work_.wait(lock, [&] { return !pending_.empty(); });
      Range& front = pending_.front();
      current_ = {front.begin, std::min(front.end, front.begin + kChunk)};
      front.begin = current_.end;
      if (front.begin >= front.end) pending_.pop_front();
      busy_ = true;
      lock.unlock();
      const int rc = madvise(reinterpret_cast<void*>(current_.begin), current_.end - current_.begin,
                             MADV_POPULATE_WRITE);
      lock.lock();
      if (rc != 0 && errno == EINVAL) {  // no such advice here: stop asking
        supported_ = false;
        pending_.clear();
      }
      busy_ = false;
      idle_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_;  // pending_ gained a range
  std::condition_variable idle_;  // a chunk finished
  std::deque<Range> pending_;
  Range current_;
  bool busy_ = false;  // current_ is being populated
  bool supported_ = true;
  pid_t owner_ = 0;  // the process whose thread worker_ is
  std::thread worker_;
};

Prefaulter& Instance() {
  // Never destroyed: blocks freed by static destructors still cancel here,
  // and the thread simply ends with the process.
  static Prefaulter* const p = new Prefaulter;
  return *p;
}

uintptr_t PageDown(uintptr_t a) { return a & ~uintptr_t{4095}; }
uintptr_t PageUp(uintptr_t a) { return (a + 4095) & ~uintptr_t{4095}; }

}  // namespace

void PrefaultAsync(void* p, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  // Whole pages inside the range only: a page shared with memory outside it
  // is left to whoever writes it.
  Instance().Post(PageUp(a), PageDown(a + bytes));
}

void CancelPrefault(void* p, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  Instance().Cancel(PageDown(a), PageUp(a + bytes));
}

void WaitForPrefaults() { Instance().WaitAll(); }

}  // namespace clustersim::sim
