// File: scenarios/input/loader.h
//
// Reads a Scenario from protobuf text format or JSON. Errors are
// INVALID_ARGUMENT (malformed input, with line and column for text format) or
// NOT_FOUND (missing file), and name the file. Protobuf's own error output is
// captured, never printed.
//
// Example:
//   absl::StatusOr<config::Scenario> s = LoadScenarioFile("scenarios/examples/gpt-22b-a100.textproto");
#ifndef CLUSTERSIM_SCENARIOS_INPUT_LOADER_H_
#define CLUSTERSIM_SCENARIOS_INPUT_LOADER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::scenarios {

// Chooses the format by extension: ".json" is JSON, anything else text format.
absl::StatusOr<config::Scenario> LoadScenarioFile(const std::string& path);

// `origin` names the input in error messages (a path, or "<flags>").
absl::StatusOr<config::Scenario> ParseScenarioText(std::string_view text, std::string_view origin);
absl::StatusOr<config::Scenario> ParseScenarioJson(std::string_view json, std::string_view origin);

// Any message in text format (sweep files too); errors as above, naming the
// message's .proto file.
absl::Status ParseTextMessage(std::string_view text, std::string_view origin,
                              google::protobuf::Message* out);

// Reads a whole file through sim::ReadInputFile: NOT_FOUND names the path
// and the reason; devices, pipes, folders and files over 64 MiB are refused.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_INPUT_LOADER_H_
