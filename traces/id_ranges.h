// File: traces/id_ranges.h
//
// A set of non-negative ids written as ranges, for trace filters:
// `--trace-ranks 0-7,64` keeps GPUs 0 to 7 and 64; `--trace-steps 2-3` keeps
// steps 2 and 3. Ranges are inclusive, separated by commas, in any order, and
// may overlap; whitespace around items is ignored.
//
// Example:
//   absl::StatusOr<IdRanges> r = IdRanges::Parse("0-7,64", "--trace-ranks");
//   if (!r.ok()) return r.status();   // "--trace-ranks: ..." with a fix
//   r->Contains(5);    // true
//   r->Contains(63);   // false
#ifndef CLUSTERSIM_TRACES_ID_RANGES_H_
#define CLUSTERSIM_TRACES_ID_RANGES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace clustersim::traces {

class IdRanges {
 public:
  // Error (INVALID_ARGUMENT) naming `flag`, the bad item and the expected
  // form, for empty text, empty items, non-numbers, or start > end.
  static absl::StatusOr<IdRanges> Parse(std::string_view text, std::string_view flag);

  // O(log ranges).
  bool Contains(int64_t id) const;
  // Merged, sorted, disjoint [first, last] ranges.
  const std::vector<std::pair<int64_t, int64_t>>& ranges() const { return ranges_; }
  // "0-7,64": the canonical text.
  std::string ToString() const;

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

}  // namespace clustersim::traces

#endif  // CLUSTERSIM_TRACES_ID_RANGES_H_
