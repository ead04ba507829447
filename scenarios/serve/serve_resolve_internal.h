// File: scenarios/serve/serve_resolve_internal.h
//
// Private to ResolveServe (serve_resolve.h); include it only from the
// serve_*resolve.cc files. The token limit and error helper both files share,
// and the `inference.workload` resolution (serve_workload_resolve.cc).
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_RESOLVE_INTERNAL_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_RESOLVE_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/serve/serve_mode.h"
#include "strategies/serving_workload.h"

namespace clustersim::scenarios::serve_resolve_internal {

// Longer requests than this are a typo, not a workload (and keep token
// arithmetic far from overflow).
inline constexpr int64_t kMaxTokens = 10'000'000;

// INVALID_ARGUMENT "field=value rule".
inline absl::Status Bad(std::string_view field, const auto& value, std::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), "=", value, " ", std::string(rule)));
}

// Resolves `inference.workload` `w`: its kind (into mode->kind and the
// benchmark-mode fields), the request rate or batch, and the prompt and output
// lengths (fixed, uniform, normal or a lengths_file's samples) into `sw`,
// echoing each into `ew`. Errors name the inference.workload field and a fix.
absl::Status ResolveServeWorkload(const config::InferenceWorkload& w,
                                  config::InferenceWorkload* ew, ServeMode* mode,
                                  strategies::ServingWorkload* sw);

}  // namespace clustersim::scenarios::serve_resolve_internal

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_RESOLVE_INTERNAL_H_
