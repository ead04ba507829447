// File: models/workload_testing.h
//
// Helpers for models/ tests: a catalog preset and a built workload, each
// failing the calling test (not crashing it) when the catalog or the builder
// refuses; the names of a list of ops, for ElementsAre; an op of a list by
// name; how often an op occurs in a list; a small hand-built dense model.
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

// The first op `name` in `ops`; fails the calling test (and returns the first
// op) when there is none. REQUIRES: `ops` is not empty.
inline const Op& Get(const std::vector<Op>& ops, std::string_view name) {
  for (const Op& op : ops) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no op " << name;
  return ops.front();
}

// Occurrences of the op `name` in `ops`.
inline int Count(const std::vector<Op>& ops, std::string_view name) {
  int n = 0;
  for (const Op& op : ops) n += op.name == name ? 1 : 0;
  return n;
}

// A small dense GPT-style model, not from the catalog: 4 layers, hidden 1024,
// FFN 4096, 8 heads, 2,048 tokens, no linear biases.
inline TransformerConfig SmallDense() {
  TransformerConfig c;
  c.name = "small-dense";
  c.num_layers = 4;
  c.hidden_size = 1024;
  c.ffn_hidden_size = 4096;
  c.num_attention_heads = 8;
  c.num_query_groups = 8;
  c.seq_length = 2048;
  c.vocab_size = 50368;
  c.add_bias_linear = false;
  return c;
}

// Llama 2 7B cut to 8 layers, with GQA (8 groups) and 16K tokens: the
// shapes the FP8 and NVFP4 workload tests check cast bytes on.
inline TransformerConfig SmallGqaLlama() {
  TransformerConfig c = Preset("llama2-7b");
  c.num_layers = 8;
  c.num_query_groups = 8;
  c.seq_length = 16384;
  return c;
}

}  // namespace clustersim::models::testing

#endif  // CLUSTERSIM_MODELS_WORKLOAD_TESTING_H_
