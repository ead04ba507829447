#include "sim/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

#include "sim/prefault.h"

namespace clustersim::sim {
namespace {
constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
}  // namespace

void* AllocateHugeBlock(size_t bytes) {
  // Map one huge page more than needed and unmap the unaligned head and the
  // tail, so the block starts on a 2 MiB boundary.
  const size_t size = RoundUp(bytes);
  void* raw =
      mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = aligned + size;
  const uintptr_t end = start + size + kHugePage;
  if (end > tail) munmap(reinterpret_cast<void*>(tail), end - tail);
  void* block = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(block, size, MADV_HUGEPAGE);  // advice only: small pages if refused
#endif
  return block;
}

void FreeHugeBlock(void* p, size_t bytes) {
  CancelPrefault(p, RoundUp(bytes));  // the background thread must not touch it once unmapped
  munmap(p, RoundUp(bytes));
}

}  // namespace clustersim::sim
