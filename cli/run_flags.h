// File: cli/run_flags.h
//
// Parses `clustersim run` arguments (Boost.Program_options, Megatron-LM flag
// names) into a scenario path, a Scenario of overrides and output options.
// Program_options exceptions are caught here and become INVALID_ARGUMENT
// statuses naming the flag.
//
// Example:
//   absl::StatusOr<RunFlags> f = ParseRunFlags(args);   // args after "run"
#ifndef CLUSTERSIM_CLI_RUN_FLAGS_H_
#define CLUSTERSIM_CLI_RUN_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::cli {

struct RunFlags {
  std::string scenario_path;        // empty: flags only
  config::Scenario overrides;       // only the fields given as flags are set
  std::string format = "text";      // "text" | "json"
  std::string trace_path;           // --trace FILE
  std::string trace_format = "json";  // --trace-format json|perfetto
  std::string trace_ranks;          // --trace-ranks 0-7,64 (parsed by the caller)
  std::string trace_steps;          // --trace-steps
  std::string trace_detail = "op";  // --trace-detail op|layer
  std::string report_path;          // --report FILE.html
  std::string output_dir;           // --output-dir DIR: result.json (+ trace.json)
  bool no_fold = false;             // simulate every data-parallel replica
  bool help = false;
  std::string help_text;
};

absl::StatusOr<RunFlags> ParseRunFlags(const std::vector<std::string>& args);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_RUN_FLAGS_H_
