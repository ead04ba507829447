#include "traces/id_ranges.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace clustersim::traces {
namespace {

absl::Status Bad(std::string_view flag, std::string_view item, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(flag), ": \"", std::string(item),
                                                 "\" ", std::string(why),
                                                 "; write ids and inclusive ranges separated by "
                                                 "commas, e.g. 0-7,64"));
}

}  // namespace

absl::StatusOr<IdRanges> IdRanges::Parse(std::string_view text, std::string_view flag) {
  IdRanges out;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), ',')) {
    const absl::string_view item = absl::StripAsciiWhitespace(raw);
    const std::string_view item_sv(item.data(), item.size());
    if (item.empty()) return Bad(flag, std::string(text), "has an empty item");
    const size_t dash = item.find('-');
    int64_t first = 0;
    int64_t last = 0;
    if (dash == absl::string_view::npos) {
      if (!absl::SimpleAtoi(item, &first) || first < 0) {
        return Bad(flag, item_sv, "is not a non-negative integer");
      }
      last = first;
    } else {
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(item.substr(0, dash)), &first) ||
          !absl::SimpleAtoi(absl::StripAsciiWhitespace(item.substr(dash + 1)), &last) ||
          first < 0) {
        return Bad(flag, item_sv, "is not a range of non-negative integers");
      }
      if (first > last) return Bad(flag, item_sv, "starts after it ends");
    }
    out.ranges_.emplace_back(first, last);
  }
  std::sort(out.ranges_.begin(), out.ranges_.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& r : out.ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  out.ranges_ = std::move(merged);
  return out;
}

bool IdRanges::Contains(int64_t id) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::make_pair(id, INT64_MAX));
  if (it == ranges_.begin()) return false;
  --it;
  return id >= it->first && id <= it->second;
}

std::string IdRanges::ToString() const {
  std::string out;
  for (const auto& [first, last] : ranges_) {
    if (!out.empty()) out += ',';
    absl::StrAppend(&out, first);
    if (last != first) absl::StrAppend(&out, "-", last);
  }
  return out;
}

}  // namespace clustersim::traces
