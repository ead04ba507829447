// File: sim/prefault.h
//
// Commits the pages of the huge arrays (huge_pages.h) on a background thread,
// ahead of the thread that fills them. A page's first write is a fault in
// which the kernel finds and zeroes a fresh page; on virtual machines whose
// host takes free memory back, that costs 1-5 s per GiB, paid on the one
// thread that builds a huge step's task graph and engine. The background
// thread asks the kernel to populate the next part of an array
// (MADV_POPULATE_WRITE: the fault without the write, so the contents never
// change), so the filling thread mostly finds its pages already there and the
// second core does the zeroing.
//
// Purely a speed-up: the memory and its contents are the same with or without
// it, and where the kernel lacks MADV_POPULATE_WRITE (before Linux 5.14) the
// requests do nothing. Requests run in the order given, in chunks; freeing a
// block cancels its requests and waits for a chunk in flight
// (FreeHugeBlock does this), so the thread never touches memory that has been
// returned.
//
// Example:
//   HugeVector<Task> tasks;
//   tasks.reserve(n);
//   PrefaultElements(tasks, 0, n);  // tasks.push_back(...) then finds the pages
//   PrefaultAhead(tasks);           // or: after each push_back, keep ahead of it
//
// Thread-safety: all functions may be called from any thread.
#ifndef CLUSTERSIM_SIM_PREFAULT_H_
#define CLUSTERSIM_SIM_PREFAULT_H_

#include <cstddef>

#include "sim/huge_pages.h"

namespace clustersim::sim {

// Asks the background thread to populate [p, p + bytes), writable.
// REQUIRES: the range lies in one live block from AllocateHugeBlock.
void PrefaultAsync(void* p, size_t bytes);

// Drops the requests on [p, p + bytes) and waits for the chunk in flight, if
// it overlaps. After it returns the thread no longer touches that range.
void CancelPrefault(void* p, size_t bytes);

// Blocks until every request so far has been done (tests and benchmarks).
void WaitForPrefaults();

// Asks for the pages of elements [from, to) of v's capacity when its storage
// is a huge block (smaller storage is left alone).
template <typename T>
void PrefaultElements(const HugeVector<T>& v, size_t from, size_t to) {
  to = to < v.capacity() ? to : v.capacity();
  if (from >= to || v.capacity() * sizeof(T) < kHugeBlockBytes) return;
  PrefaultAsync(const_cast<T*>(v.data() + from), (to - from) * sizeof(T));
}

// Bytes the growing arrays keep populated ahead of their size.
inline constexpr size_t kPrefaultAheadBytes = size_t{32} << 20;

// For a vector filled by push_back into reserved capacity: each time its size
// crosses a multiple of half the look-ahead (and once when it is empty), asks
// for the next kPrefaultAheadBytes of its capacity. Otherwise costs one test.
template <typename T>
void PrefaultAhead(const HugeVector<T>& v) {
  constexpr size_t kStep = kPrefaultAheadBytes / 2 / sizeof(T);
  if (v.size() % kStep == 0) PrefaultElements(v, v.size(), v.size() + 2 * kStep);
}

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_PREFAULT_H_
