#include <iostream>

#include "cli/commands.h"
#include "scenarios/input/loader.h"

namespace clustersim::cli {

int ExitCode(const absl::Status& s) {
  if (s.ok()) return 0;
  const bool input = s.code() == absl::StatusCode::kInvalidArgument ||
                     s.code() == absl::StatusCode::kNotFound ||
                     s.code() == absl::StatusCode::kUnimplemented ||
                     s.code() == absl::StatusCode::kFailedPrecondition;
  return input ? 2 : 1;
}

int Fail(const absl::Status& s) {
  std::cerr << "clustersim: error: " << s.message() << std::endl;
  return ExitCode(s);
}

int RunOnStdIo(absl::Status (*command)(const Args&, CommandIo&), const Args& args) {
  CommandIo io;
  const absl::Status s = command(args, io);
  if (!s.ok()) return Fail(s);
  return io.exit_code;
}

absl::StatusOr<config::Scenario> LoadBaseScenario(const std::string& path, const CommandIo& io) {
  if (io.scenario_json != nullptr) {
    return scenarios::ParseScenarioJson(*io.scenario_json, "<scenario>");
  }
  if (path.empty()) return config::Scenario();
  return scenarios::LoadScenarioFile(path);
}

}  // namespace clustersim::cli
