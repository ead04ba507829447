#include <iostream>

#include "cli/commands.h"

namespace clustersim::cli {

int Fail(const absl::Status& s) {
  std::cerr << "clustersim: error: " << s.message() << std::endl;
  const bool input = s.code() == absl::StatusCode::kInvalidArgument ||
                     s.code() == absl::StatusCode::kNotFound ||
                     s.code() == absl::StatusCode::kUnimplemented ||
                     s.code() == absl::StatusCode::kFailedPrecondition;
  return input ? 2 : 1;
}

}  // namespace clustersim::cli
