#include "models/fitted_constants.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "models/proto/fitted_constants.pb.h"
#include "sim/check.h"

namespace clustersim::embedded {
std::string_view FittedConstantsData();
}  // namespace clustersim::embedded

namespace clustersim::models {
namespace {

struct Field {
  std::string_view name;
  double FittedConstants::*member;
};

constexpr Field kFields[] = {
    {"serving_host_us_per_iteration", &FittedConstants::serving_host_us_per_iteration},
    {"decode_attention_flops_per_sm_cycle",
     &FittedConstants::decode_attention_flops_per_sm_cycle},
};

}  // namespace

absl::StatusOr<FittedConstants> ParseFittedConstants(std::string_view textproto,
                                                     std::string_view origin_view) {
  const std::string origin(origin_view);
  config::FittedConstantFile file;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &file)) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a FittedConstantFile (models/proto/fitted_constants.proto)"));
  }
  FittedConstants out;
  bool seen[std::size(kFields)] = {};
  for (int i = 0; i < file.constant_size(); ++i) {
    const config::FittedConstant& c = file.constant(i);
    const std::string row = absl::StrCat(origin, " constant[", i, "] '", c.name(), "'");
    size_t k = 0;
    while (k < std::size(kFields) && kFields[k].name != c.name()) ++k;
    if (k == std::size(kFields)) {
      return absl::InvalidArgumentError(
          absl::StrCat(row, ": unknown name; the simulator reads only the constants of "
                            "models/fitted_constants.h"));
    }
    if (seen[k]) return absl::InvalidArgumentError(absl::StrCat(row, ": duplicate name"));
    if (!std::isfinite(c.value()) || c.value() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(row, ": value=", c.value(), " must be finite and >= 0"));
    }
    if (c.training_split().empty() || c.fit_script().empty() || c.source().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(row, ": every fitted constant states its training_split, fit_script "
                            "and source"));
    }
    seen[k] = true;
    out.*kFields[k].member = c.value();
  }
  for (size_t k = 0; k < std::size(kFields); ++k) {
    if (!seen[k]) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": no row for '", std::string(kFields[k].name), "'; add it"));
    }
  }
  return out;
}

const FittedConstants& Fitted() {
  static const FittedConstants kTable = [] {
    absl::StatusOr<FittedConstants> parsed = ParseFittedConstants(
        embedded::FittedConstantsData(), "models/data/fitted_constants.textproto");
    SIM_CHECK(parsed.ok()) << "embedded " << parsed.status().message();
    return *parsed;
  }();
  return kTable;
}

}  // namespace clustersim::models
