#include "topology/data_rows.h"

#include "absl/strings/str_cat.h"

namespace clustersim::topology {

absl::Status DataRowError(std::string_view file, std::string_view row, int index,
                          const std::string& name, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(file), " ", std::string(row), "[",
                                                 index, "] '", name, "': ", std::string(what)));
}

}  // namespace clustersim::topology
