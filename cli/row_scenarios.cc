#include "cli/row_scenarios.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "sim/atomic_file.h"

namespace clustersim::cli {
namespace {

std::string FileName(const std::string& id) {
  std::string name = id;
  for (char& c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return name + ".textproto";
}

// Text on comment lines: every line break starts a new "# " line.
std::string Commented(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\n", "\n#   "}});
}

}  // namespace

absl::Status PrepareScenarioDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--write-scenarios ", dir, " is not a directory that can be created (",
        ec ? ec.message() : "a file of that name exists", "); give a new or existing directory"));
  }
  return absl::OkStatus();
}

std::string RowScenarioText(const std::string& path, const std::string& table,
                            const scenarios::ValidationRow& row) {
  std::string out = absl::StrCat("# Validation row ", row.id, " (source ", row.source, ") of ",
                                 table, ".\n");
  absl::StrAppend(&out, "# measured ", row.metric, " = ", absl::StrFormat("%.6g", row.measured),
                  "\n");
  if (row.supported) {
    absl::StrAppend(&out, "# predicted ", absl::StrFormat("%.6g", row.predicted), " (",
                    absl::StrFormat("%+.1f", 100 * row.error), "%)",
                    row.metric == "iteration_time_s"
                        ? ": the step time of `clustersim run` on this file"
                        : ", derived from the step time of `clustersim run` on this file in the "
                          "source's own convention",
                    "\n");
  } else {
    absl::StrAppend(&out, "# not run: ", Commented(row.reason), "\n");
  }
  if (!row.assumptions.empty()) {
    absl::StrAppend(&out, "# assumptions: ", Commented(row.assumptions), "\n");
  }
  absl::StrAppend(&out, "# rerun: clustersim run ", path, "\n",
                  "# proto-file: scenarios/proto/scenario.proto\n",
                  "# proto-message: clustersim.config.Scenario\n", row.scenario);
  return out;
}

absl::StatusOr<int> WriteRowScenarios(const std::string& dir, const std::string& table,
                                      const std::vector<scenarios::ValidationRow>& rows) {
  int written = 0;
  for (const scenarios::ValidationRow& row : rows) {
    if (row.scenario.empty()) continue;
    const std::string path = (std::filesystem::path(dir) / FileName(row.id)).string();
    if (absl::Status s = sim::WriteFileAtomically(path, RowScenarioText(path, table, row));
        !s.ok()) {
      return s;
    }
    ++written;
  }
  return written;
}

}  // namespace clustersim::cli
