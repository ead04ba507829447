// File: models/workload_testing.h
//
// Helpers for models/ tests: a catalog preset and a built workload, each
// failing the calling test (not crashing it) when the catalog or the builder
// refuses; the names of a list of ops, for ElementsAre.
#ifndef CLUSTERSIM_MODELS_WORKLOAD_TESTING_H_
#define CLUSTERSIM_MODELS_WORKLOAD_TESTING_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/transformer_config.h"
#include "models/workload.h"

namespace clustersim::models::testing {

inline TransformerConfig Preset(std::string_view name) {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find(name);
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

inline Workload Build(const TransformerConfig& c, const ShardSpec& s) {
  absl::StatusOr<Workload> w = BuildWorkload(c, s);
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

inline std::vector<std::string> Names(const std::vector<Op>& ops) {
  std::vector<std::string> names;
  for (const Op& op : ops) names.push_back(op.name);
  return names;
}

}  // namespace clustersim::models::testing

#endif  // CLUSTERSIM_MODELS_WORKLOAD_TESTING_H_
