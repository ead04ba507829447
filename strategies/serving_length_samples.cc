#include "strategies/serving_length_samples.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "sim/csv_table.h"
#include "sim/input_file.h"

namespace clustersim::strategies {
namespace {

constexpr int64_t kMaxTokens = 10'000'000;

}  // namespace

absl::StatusOr<std::vector<LengthSample>> ParseLengthSamples(std::string_view text,
                                                             std::string_view origin) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(text, origin);
  if (!t.ok()) return t.status();
  for (std::string_view c : {"input_length", "output_length"}) {
    if (t->Column(c) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(origin), ": column '", std::string(c),
                       "' is missing; the header must name input_length and output_length"));
    }
  }
  if (t->rows.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(origin),
                     ": no samples; add one line of input_length,output_length per sample"));
  }
  std::vector<LengthSample> out;
  out.reserve(t->rows.size());
  for (size_t i = 0; i < t->rows.size(); ++i) {
    LengthSample s;
    for (auto [column, value] : {std::pair{"input_length", &s.prompt_tokens},
                                 std::pair{"output_length", &s.output_tokens}}) {
      const std::string& cell = t->Get(t->rows[i], column);
      if (!absl::SimpleAtoi(cell, value) || *value < 1 || *value > kMaxTokens) {
        return absl::InvalidArgumentError(
            absl::StrCat(std::string(origin), " line ", t->row_lines[i], ": ", column, " '", cell,
                         "' is not a token count between 1 and 10000000"));
      }
    }
    out.push_back(s);
  }
  return out;
}

absl::StatusOr<std::vector<LengthSample>> ReadLengthSamples(const std::string& path,
                                                            std::string_view field) {
  const std::string origin = absl::StrCat(std::string(field), "=", path);
  absl::StatusOr<std::string> text = sim::ReadInputFileFor(path, field);
  if (!text.ok()) return text.status();
  return ParseLengthSamples(*text, origin);
}

void ScaleOutputLengths(double mean, std::vector<LengthSample>& samples) {
  double total = 0;
  for (const LengthSample& x : samples) total += static_cast<double>(x.output_tokens);
  const double scale = mean * static_cast<double>(samples.size()) / total;
  for (LengthSample& x : samples) {
    x.output_tokens =
        std::max<int64_t>(1, std::llround(static_cast<double>(x.output_tokens) * scale));
  }
}

}  // namespace clustersim::strategies
