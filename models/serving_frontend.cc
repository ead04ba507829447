#include "models/serving_frontend.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "models/proto/serving_frontend.pb.h"
#include "sim/check.h"

namespace clustersim::embedded {
std::string_view ServingFrontendsData();
}  // namespace clustersim::embedded

namespace clustersim::models {

absl::StatusOr<std::vector<ServingFrontend>> ParseServingFrontends(std::string_view textproto,
                                                                   std::string_view origin_view) {
  const std::string origin(origin_view);
  config::ServingFrontendFile file;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &file)) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": not a ServingFrontendFile (models/proto/serving_frontend.proto)"));
  }
  std::vector<ServingFrontend> out;
  for (int i = 0; i < file.frontend_size(); ++i) {
    const config::ServingFrontendProfile& f = file.frontend(i);
    const std::string row = absl::StrCat(origin, " frontend[", i, "] '", f.name(), "'");
    if (f.name().empty()) return absl::InvalidArgumentError(absl::StrCat(row, ": name is empty"));
    for (const ServingFrontend& seen : out) {
      if (seen.name == f.name()) {
        return absl::InvalidArgumentError(absl::StrCat(row, ": duplicate name"));
      }
    }
    if (!std::isfinite(f.request_overhead_ms()) || f.request_overhead_ms() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          row, ": request_overhead_ms=", f.request_overhead_ms(), " must be finite and >= 0"));
    }
    if (f.derivation().empty() || f.source().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(row, ": every frontend states its derivation and source"));
    }
    out.push_back({.name = f.name(), .request_overhead_ms = f.request_overhead_ms()});
  }
  return out;
}

absl::StatusOr<const ServingFrontend*> FindServingFrontend(std::string_view name) {
  static const std::vector<ServingFrontend> kTable = [] {
    absl::StatusOr<std::vector<ServingFrontend>> parsed = ParseServingFrontends(
        embedded::ServingFrontendsData(), "models/data/serving_frontends.textproto");
    SIM_CHECK(parsed.ok()) << "embedded " << parsed.status().message();
    return *std::move(parsed);
  }();
  std::vector<std::string> names;
  for (const ServingFrontend& f : kTable) {
    if (f.name == name) return &f;
    names.push_back(f.name);
  }
  return absl::InvalidArgumentError(absl::StrCat("inference.frontend.name='", std::string(name),
                                                 "' is not a known frontend; use one of ",
                                                 absl::StrJoin(names, ", "),
                                                 " (models/data/serving_frontends.textproto)"));
}

}  // namespace clustersim::models
