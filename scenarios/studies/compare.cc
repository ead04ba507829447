#include "scenarios/studies/compare.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/scenario_edit.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios {
namespace {

absl::Status Prefixed(const absl::Status& s, std::string_view label) {
  return absl::Status(s.code(), absl::StrCat(std::string(label), ": ", s.message()));
}

}  // namespace

absl::StatusOr<std::vector<CompareCase>> BuildCompareCases(const CompareRequest& request) {
  if (request.scenario_paths.empty()) {
    return absl::InvalidArgumentError(
        "compare needs at least one SCENARIO file; e.g. clustersim compare a.textproto "
        "b.textproto, or one file with --variant \"tp=4\"");
  }
  if (request.scenario_paths.size() == 1 && request.variants.empty()) {
    return absl::InvalidArgumentError(
        "compare needs two or more cases: give more SCENARIO files or --variant \"field=value,...\"");
  }
  std::vector<CompareCase> cases;
  for (const std::string& path : request.scenario_paths) {
    absl::StatusOr<config::Scenario> base = LoadScenarioFile(path);
    if (!base.ok()) return base.status();
    for (const std::string& set : request.sets) {
      if (absl::Status s = SetScenarioField(set, &*base); !s.ok()) return Prefixed(s, "--set");
    }
    const std::string stem = std::filesystem::path(path).stem().string();
    cases.push_back({stem, *base});
    for (const std::string& variant : request.variants) {
      if (variant.find('=') == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--variant \"", variant, "\" has no field=value; e.g. --variant \"tp=4,mbs=2\""));
      }
      CompareCase c{absl::StrCat(stem, " [", variant, "]"), *base};
      if (absl::Status s = ApplyAssignments(variant, &c.scenario); !s.ok()) {
        return Prefixed(s, absl::StrCat("--variant \"", variant, "\""));
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

absl::StatusOr<std::vector<StudyRow>> RunCompare(const CompareRequest& request) {
  absl::StatusOr<std::vector<CompareCase>> cases = BuildCompareCases(request);
  if (!cases.ok()) return cases.status();
  std::vector<StudyRow> rows;
  for (const CompareCase& c : *cases) {
    absl::StatusOr<ResolvedScenario> resolved = Resolve(c.scenario);
    if (!resolved.ok()) return Prefixed(resolved.status(), c.label);
    RunOptions options;
    options.control = request.control;
    absl::StatusOr<config::Result> result = RunScenario(*resolved, options);
    if (!result.ok()) return Prefixed(result.status(), c.label);
    rows.push_back({c.label, *std::move(result)});
  }
  return rows;
}

}  // namespace clustersim::scenarios
