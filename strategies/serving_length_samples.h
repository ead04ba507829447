// File: strategies/serving_length_samples.h
//
// Paired request lengths of a benchmark's data set, for runs whose requests
// take the data set's lengths instead of drawn ones
// (`inference.workload.lengths_file`): e.g. the token lengths of the MLPerf
// Inference samples, whose prompts and reference outputs vary per sample.
//
// The file is a CSV with the header input_length,output_length (any column
// order, other columns ignored), one sample per line, each a token count
// between 1 and 10^7. Bad input is INVALID_ARGUMENT naming the origin (the
// scenario field and path), the line and the column; an unreadable path is
// NOT_FOUND.
//
// Example:
//   absl::StatusOr<std::vector<LengthSample>> s =
//       ReadLengthSamples("lengths.csv", "inference.workload.lengths_file");
#ifndef CLUSTERSIM_STRATEGIES_SERVING_LENGTH_SAMPLES_H_
#define CLUSTERSIM_STRATEGIES_SERVING_LENGTH_SAMPLES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clustersim::strategies {

struct LengthSample {
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
};

// `origin` prefixes every message, e.g. "inference.workload.lengths_file=d.csv".
absl::StatusOr<std::vector<LengthSample>> ParseLengthSamples(std::string_view text,
                                                             std::string_view origin);

// Reads `path` (sim/input_file.h) and parses it; `field` names the scenario
// field that holds the path.
absl::StatusOr<std::vector<LengthSample>> ReadLengthSamples(const std::string& path,
                                                            std::string_view field);

// Scales every sample's output length by mean / (the samples' mean output
// length), rounded to the nearest token and at least 1, so the samples' mean
// output becomes `mean` up to rounding (inference.workload.output_tokens_mean).
// REQUIRES: mean > 0 and samples non-empty.
void ScaleOutputLengths(double mean, std::vector<LengthSample>& samples);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_LENGTH_SAMPLES_H_
