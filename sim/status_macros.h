// File: sim/status_macros.h
//
// Early returns for absl::Status and absl::StatusOr, the one set of such
// macros in the project.
//
// Example:
//   absl::StatusOr<Plan> Build(const Inputs& in) {
//     CLUSTERSIM_RETURN_IF_ERROR(Validate(in));         // returns the error
//     CLUSTERSIM_ASSIGN_OR_RETURN(Graph g, MakeGraph(in));  // declares g
//     CLUSTERSIM_ASSIGN_OR_RETURN(plan.cost, Cost(g));      // assigns
//     ...
//   }
#ifndef CLUSTERSIM_SIM_STATUS_MACROS_H_
#define CLUSTERSIM_SIM_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) and returns it from the enclosing
// function when it is an error.
#define CLUSTERSIM_RETURN_IF_ERROR(expr)                                    \
  do {                                                                      \
    if (::absl::Status clustersim_status_ = (expr); !clustersim_status_.ok()) \
      return clustersim_status_;                                            \
  } while (0)

// Evaluates `expr` (an absl::StatusOr<T>); returns its status from the
// enclosing function when it is an error, else moves its value into `lhs`
// (a declaration such as `auto x` or an existing lvalue).
#define CLUSTERSIM_ASSIGN_OR_RETURN(lhs, expr) \
  CLUSTERSIM_ASSIGN_OR_RETURN_IMPL_(CLUSTERSIM_STATUS_CONCAT_(clustersim_or_, __LINE__), lhs, expr)

#define CLUSTERSIM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                      \
  if (!tmp.ok()) return std::move(tmp).status();          \
  lhs = *std::move(tmp)

#define CLUSTERSIM_STATUS_CONCAT_(a, b) CLUSTERSIM_STATUS_CONCAT_IMPL_(a, b)
#define CLUSTERSIM_STATUS_CONCAT_IMPL_(a, b) a##b

#endif  // CLUSTERSIM_SIM_STATUS_MACROS_H_
