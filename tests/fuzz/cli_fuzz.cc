// Fuzz target: `clustersim run` arguments. The input is split at whitespace
// into argv words and goes through what RunCommand does before simulating:
// ParseRunFlags (Boost.Program_options), the trace flags, and Resolve of the
// flags' scenario. A scenario path is not loaded (scenario_text covers it).
// docs/reliability.md says how to run it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "cli/run_flags.h"
#include "scenarios/input/resolve.h"
#include "traces/chrome_trace_writer.h"
#include "traces/id_ranges.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> args =
      absl::StrSplit(text, absl::ByAnyChar(" \t\n\r"), absl::SkipEmpty());
  absl::StatusOr<clustersim::cli::RunFlags> f = clustersim::cli::ParseRunFlags(args);
  if (!f.ok() || f->help) return 0;
  (void)clustersim::traces::IdRanges::Parse(f->trace_ranks, "--trace-ranks");
  (void)clustersim::traces::IdRanges::Parse(f->trace_steps, "--trace-steps");
  (void)clustersim::traces::ParseTraceDetail(f->trace_detail, "--trace-detail");
  if (f->scenario_path.empty()) (void)clustersim::scenarios::Resolve(f->overrides);
  return 0;
}
