#include "scenarios/input/loader.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "sim/input_file.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

// Keeps the first parse error (line and column are 0-based in protobuf).
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      text_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
    }
  }
  void AddWarning(int, int, const std::string&) override {}
  bool has_error() const { return has_error_; }
  const std::string& text() const { return text_; }

 private:
  bool has_error_ = false;
  std::string text_;
};

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return sim::ReadInputFile(path);
}

absl::Status ParseTextMessage(std::string_view text, std::string_view origin,
                              google::protobuf::Message* out) {
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  if (!parser.Parse(&input, out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(origin), ": ", errors.has_error() ? errors.text() : "malformed text format",
        " (see ", out->GetDescriptor()->file()->name(), " for the fields)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<config::Scenario> ParseScenarioText(std::string_view text,
                                                   std::string_view origin) {
  config::Scenario scenario;
  CLUSTERSIM_RETURN_IF_ERROR(ParseTextMessage(text, origin, &scenario));
  return scenario;
}

absl::StatusOr<config::Scenario> ParseScenarioJson(std::string_view json,
                                                   std::string_view origin) {
  config::Scenario scenario;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &scenario, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(origin), ": invalid scenario JSON: ",
                                                   std::string(status.message()),
                                                   " (see scenarios/proto/scenario.proto for the fields)"));
  }
  return scenario;
}

absl::StatusOr<config::Scenario> LoadScenarioFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  if (absl::EndsWith(path, ".json")) return ParseScenarioJson(*text, path);
  return ParseScenarioText(*text, path);
}

}  // namespace clustersim::scenarios
