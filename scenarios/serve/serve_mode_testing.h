// File: scenarios/serve/serve_mode_testing.h
//
// Helpers for the scenarios/serve benchmark-mode tests: the one-H100 Llama 3
// 8B deployment of a workload kind, one serve run of a scenario (resolve and
// run, no curve), and a temporary file.
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_MODE_TESTING_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_MODE_TESTING_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/proto/serve_result.pb.h"
#include "scenarios/serve/serve_resolve.h"
#include "scenarios/serve/serve_runner.h"

namespace clustersim::scenarios::serve_mode_testing {

// Llama 3 8B BF16 on one H100, the shipped serving example's deployment.
inline config::Scenario Base(std::string_view kind) {
  config::Scenario s;
  s.set_name("modes");
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  s.mutable_model()->set_preset("llama3-8b");
  config::InferenceWorkload* w = s.mutable_inference()->mutable_workload();
  w->set_kind(std::string(kind));
  if (kind != "trace") {
    w->mutable_prompt_length()->set_value(256);
    w->mutable_output_length()->set_value(32);
  }
  return s;
}

inline absl::StatusOr<config::ServeResult> Serve(const config::Scenario& s) {
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  if (!r.ok()) return r.status();
  return RunServe(*r, {.curve = false});
}

// A file of `text` in the temporary directory, named after the process and
// `name`; its path.
inline std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace clustersim::scenarios::serve_mode_testing

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_MODE_TESTING_H_
