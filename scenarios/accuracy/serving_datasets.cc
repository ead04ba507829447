// The data sets a serving row's dataset cell names (serving_modes.h): the
// ShareGPT prompt sample, the MLPerf Inference benchmarks' per-sample length
// files, and the request count a cell states.
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "scenarios/accuracy/serving_modes.h"
#include "scenarios/accuracy/serving_modes_internal.h"

namespace clustersim::scenarios {
namespace {

// The MLPerf Inference data sets whose per-sample token lengths are in
// tests/validation/serving-deployed/datasets/ (SOURCES.md): benchmark name as
// the dataset cell writes it, file, samples, and the reference model's mean
// output tokens per sample where the file's outputs are another model's.
// llama2-70b's outputs are OpenOrca's GPT-4 answers (218.9 tokens on average);
// Llama 2 70B's reference run generates 294.45 per sample (mlcommons/inference
// language/llama2-70b/README.md, "Tokens per sample"), the centre of the
// +-10% band its accuracy check holds every submission to. The other files'
// reference outputs are the benchmark's own (their means equal the accuracy
// targets' TOKENS_PER_SAMPLE).
struct MlperfLengths {
  std::string_view benchmark, file;
  int samples;
  double output_tokens_mean;
};
constexpr MlperfLengths kMlperfLengths[] = {
    {"llama2-70b", "datasets/mlperf-llama2-70b.csv", 24576, 294.45},
    {"mixtral-8x7b", "datasets/mlperf-mixtral-8x7b.csv", 15000, 0},
    {"llama3.1-405b", "datasets/mlperf-llama3.1-405b.csv", 8313, 0},
    {"deepseek-r1", "datasets/mlperf-deepseek-r1.csv", 4388, 0},
};

}  // namespace

namespace serving_modes_internal {

// N of "..., N requests" in a dataset cell ("synthetic fixed 128/128, 30000
// requests"), or 0 when it states none.
int StatedRequests(const std::string& dataset) {
  static const std::regex kRequests(R"((\d+) requests)");
  std::smatch match;
  int n = 0;
  if (!std::regex_search(dataset, match, kRequests) || !absl::SimpleAtoi(match[1].str(), &n)) {
    return 0;
  }
  return n;
}

}  // namespace serving_modes_internal

ShareGptDataset ShareGptLengthsFile(std::string_view dataset) {
  static const std::regex kPrompts(R"(^ShareGPT (\d+) prompts\b)");
  std::smatch match;
  const std::string cell(dataset);
  int n = 0;
  if (!std::regex_search(cell, match, kPrompts) || !absl::SimpleAtoi(match[1].str(), &n)) {
    return {};
  }
  return {n};
}

MlperfDataset MlperfLengthsFile(std::string_view dataset) {
  const std::vector<std::string> words =
      absl::StrSplit(std::string(dataset), ' ', absl::SkipEmpty());
  if (words.size() < 2 || words[0] != "mlperf") return {};
  for (const MlperfLengths& l : kMlperfLengths) {
    if (words[1] == l.benchmark) return {std::string(l.file), l.samples, l.output_tokens_mean};
  }
  return {};
}

}  // namespace clustersim::scenarios
