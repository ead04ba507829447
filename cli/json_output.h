// File: cli/json_output.h
//
// The JSON form of a result message as the commands print it: indented,
// every field present (zeros included), proto field names.
//
// Example:
//   absl::StatusOr<std::string> json = ToJson(result);
#ifndef CLUSTERSIM_CLI_JSON_OUTPUT_H_
#define CLUSTERSIM_CLI_JSON_OUTPUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace clustersim::cli {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& m);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_JSON_OUTPUT_H_
