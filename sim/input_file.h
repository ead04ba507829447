// File: sim/input_file.h
//
// The one way clustersim reads a file a user names (scenario, Hugging Face
// config.json, validation CSV, sweep file, measurement and calibration
// files). It refuses, with an error naming the path and a fix, what would
// otherwise hang or exhaust memory: anything that is not a regular file
// (/dev/zero, a FIFO, a folder) and files over kMaxInputFileBytes. A FIFO is
// opened without blocking, so naming one never waits for a writer.
//
// Example:
//   absl::StatusOr<std::string> text = sim::ReadInputFile("scenarios/examples/gpt-22b-a100.textproto");
//   if (!text.ok()) return text.status();  // "…: not a regular file (a device, pipe or folder) …"
#ifndef CLUSTERSIM_SIM_INPUT_FILE_H_
#define CLUSTERSIM_SIM_INPUT_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace clustersim::sim {

// 64 MiB: the largest shipped input is under 1 MiB (vTrain's CSVs, 60 KB).
inline constexpr int64_t kMaxInputFileBytes = int64_t{64} << 20;

// The whole file. NOT_FOUND when it cannot be opened (with strerror),
// INVALID_ARGUMENT when it is not a regular file or exceeds the limit,
// DATA_LOSS on a read error.
absl::StatusOr<std::string> ReadInputFile(const std::string& path);

// ReadInputFile for a file named by a scenario field or flag: an error starts
// with "FIELD=PATH: " and says that relative paths resolve against the
// current directory; the code is ReadInputFile's.
absl::StatusOr<std::string> ReadInputFileFor(const std::string& path, std::string_view field);

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_INPUT_FILE_H_
