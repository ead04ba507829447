// File: sim/check.h
//
// SIM_CHECK(cond) << "actionable message": aborts with file, line, the failed
// condition and the message when `cond` is false. For invariants (bugs), never
// for bad input (use absl::Status for that).
//
// Example:
//   SIM_CHECK(task < tasks_.size()) << "unknown task id " << task;
#ifndef CLUSTERSIM_SIM_CHECK_H_
#define CLUSTERSIM_SIM_CHECK_H_

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace clustersim::sim::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond) {
    stream_ << file << ":" << line << ": check failed: " << cond << ": ";
  }
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  [[noreturn]] ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace clustersim::sim::internal

#define SIM_CHECK(cond) \
  if (cond) {           \
  } else                \
    ::clustersim::sim::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()

#endif  // CLUSTERSIM_SIM_CHECK_H_
