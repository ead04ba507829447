// File: models/serving_frontend.h
//
// Named serving frontends: the request path outside the engine (HTTP/gRPC
// server, tokenization, detokenization, streaming) and its fixed time per
// request, read once from the embedded data file
// models/data/serving_frontends.textproto, where each row states what the
// number covers, how it was derived and its source. A scenario selects one
// with inference.frontend.name and may override the time
// (inference.frontend.request_overhead_ms).
//
// Example:
//   absl::StatusOr<const models::ServingFrontend*> f = models::FindServingFrontend("triton-trtllm");
//   double ms = (*f)->request_overhead_ms;  // 11.2
//
// Thread-safety: the table parses on first use (thread-safe static) and is
// immutable.
#ifndef CLUSTERSIM_MODELS_SERVING_FRONTEND_H_
#define CLUSTERSIM_MODELS_SERVING_FRONTEND_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clustersim::models {

struct ServingFrontend {
  std::string name;
  double request_overhead_ms = 0;  // client-side time per request outside the engine
};

// Parses a frontends file: unique non-empty names, finite values >= 0, and a
// derivation and source on every row. Errors name the file, the row and the fix.
absl::StatusOr<std::vector<ServingFrontend>> ParseServingFrontends(std::string_view textproto,
                                                                   std::string_view origin);

// The shipped frontend of that name; an unknown name is InvalidArgument naming
// inference.frontend.name and the known names.
absl::StatusOr<const ServingFrontend*> FindServingFrontend(std::string_view name);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_SERVING_FRONTEND_H_
