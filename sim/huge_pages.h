// File: sim/huge_pages.h
//
// Storage for the few arrays that reach gigabytes in an unfolded step (task
// records, successor lists, resource queues). The engine reads them at
// random, one record per task event, so with 4 KiB pages nearly every read
// also misses the TLB. Blocks of kHugeBlockBytes and more are mapped on
// their own, 2 MiB-aligned, and marked for transparent huge pages
// (MADV_HUGEPAGE), which cuts those misses and makes the kernel fault 2 MiB
// at a time. Smaller blocks come from operator new. Where the kernel grants
// no huge pages (THP "never") the mapping still works with small pages.
//
// Example:
//   sim::HugeVector<uint32_t> succ(n);  // a std::vector with this allocator
//
// Thread-safety: as operator new.
#ifndef CLUSTERSIM_SIM_HUGE_PAGES_H_
#define CLUSTERSIM_SIM_HUGE_PAGES_H_

#include <cstddef>
#include <new>
#include <vector>

namespace clustersim::sim {

inline constexpr size_t kHugeBlockBytes = size_t{4} << 20;

// `bytes` of zeroed, huge-page-advised memory; throws std::bad_alloc when the
// mapping fails. REQUIRES: bytes >= kHugeBlockBytes.
void* AllocateHugeBlock(size_t bytes);
// REQUIRES: `p` came from AllocateHugeBlock(bytes).
void FreeHugeBlock(void* p, size_t bytes);

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kHugeBlockBytes) return static_cast<T*>(AllocateHugeBlock(bytes));
    return static_cast<T*>(::operator new(bytes));
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kHugeBlockBytes) {
      FreeHugeBlock(p, bytes);
    } else {
      ::operator delete(p);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_HUGE_PAGES_H_
