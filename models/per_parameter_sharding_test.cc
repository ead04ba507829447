// FSDP2's per-parameter copy passes (ShardSpec::gather_copy_bytes,
// grad_copy_bytes; PerParameterGatherCopyBytes, PerParameterGradCopyBytes):
// the all-gather copy-out before each forward and backward list and the
// reduce-scatter copy-in after each backward list.
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/framework_profile.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Count;
using testing::SmallDense;

// The copy-out reads and writes each gathered 16-bit parameter (2 + 2); the
// copy-in reads the 16-bit gradient and writes it in the reduce dtype.
TEST(PerParameterShardingTest, BytesPerWeight) {
  EXPECT_EQ(PerParameterGatherCopyBytes(2), 4);
  EXPECT_EQ(PerParameterGatherCopyBytes(1), 2);
  EXPECT_EQ(PerParameterGradCopyBytes(4), 6);
  EXPECT_EQ(PerParameterGradCopyBytes(2), 4);
}

// The forward and the backward of each unit begin with the copy-out of its
// gathered weights; the backward ends with the copy-in of their gradients.
// Full recompute replays the forward after the backward's copy-out, without
// a second one (the backward gathers once).
TEST(PerParameterShardingTest, CopyOutFirstAndCopyInLast) {
  const TransformerConfig c = SmallDense();
  ShardSpec s;
  s.micro_batch_size = 2;
  s.tensor_parallel = 2;
  s.recompute = Recompute::kFull;
  s.gather_copy_bytes = 4;
  s.grad_copy_bytes = 6;
  absl::StatusOr<Workload> w = BuildWorkload(c, s);
  ASSERT_TRUE(w.ok()) << w.status();
  const int64_t h = c.hidden_size;
  const int64_t layer_weights = 12 * h * h / 2;  // qkv 3h^2, proj h^2, fc1/fc2 8h^2; tp 2
  const Op& out = w->layer_forward.front();
  EXPECT_EQ(out.name, "fsdp_gather_copy_out");
  EXPECT_EQ(out.kind, OpKind::kMemoryBound);
  EXPECT_EQ(out.bytes.count(), 4 * layer_weights);
  EXPECT_EQ(w->layer_backward.front().name, "fsdp_gather_copy_out");
  EXPECT_EQ(w->layer_backward.front().bytes.count(), 4 * layer_weights);
  EXPECT_EQ(w->layer_backward.back().name, "fsdp_grad_copy_in");
  EXPECT_EQ(w->layer_backward.back().bytes.count(), 6 * layer_weights);
  EXPECT_EQ(Count(w->layer_forward, "fsdp_gather_copy_out"), 1);
  EXPECT_EQ(Count(w->layer_backward, "fsdp_gather_copy_out"), 1);
  const int64_t table = int64_t{c.vocab_size} / 2 * h;
  EXPECT_EQ(w->embedding_forward.front().bytes.count(), 4 * table);
  EXPECT_EQ(w->embedding_backward.back().bytes.count(), 6 * table);
  EXPECT_EQ(w->head_forward.front().name, "fsdp_gather_copy_out");
  EXPECT_EQ(w->head_backward.back().name, "fsdp_grad_copy_in");

  s.gather_copy_bytes = 0;
  s.grad_copy_bytes = 0;
  absl::StatusOr<Workload> none = BuildWorkload(c, s);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->layer_forward.size() + 1, w->layer_forward.size());
  EXPECT_EQ(none->layer_backward.size() + 2, w->layer_backward.size());

  s.grad_copy_bytes = 65;
  absl::StatusOr<Workload> bad = BuildWorkload(c, s);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "grad_copy_bytes"));
}

// Routed experts count only when their expert-data-parallel group shards
// them (copy_experts); the router and attention weights always do.
TEST(PerParameterShardingTest, ExpertsOnlyWhereSharded) {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("mixtral-8x7b");
  ASSERT_TRUE(c.ok()) << c.status();
  ShardSpec s;
  s.expert_parallel = 8;
  s.gather_copy_bytes = 4;
  absl::StatusOr<Workload> dense_only = BuildWorkload(*c, s);
  s.copy_experts = true;
  absl::StatusOr<Workload> all = BuildWorkload(*c, s);
  ASSERT_TRUE(dense_only.ok() && all.ok());
  const int64_t h = c->hidden_size, f = c->ffn_hidden_size;
  const int64_t experts = int64_t{c->num_experts} / 8 * 3 * h * f;  // one local expert: w1, w3, w2
  EXPECT_EQ(all->layer_forward.front().bytes.count() -
                dense_only->layer_forward.front().bytes.count(),
            4 * experts);
}

// Only FSDP2's profile shards per parameter.
TEST(PerParameterShardingTest, OnlyThePytorchFsdp2ProfileHasIt) {
  const FrameworkCatalog& c = FrameworkCatalog::Default();
  EXPECT_EQ((*c.Find("pytorch-fsdp2"))->per_parameter_sharding.value, 1);
  for (const char* other : {"pytorch-fsdp", "megatron-core", "megatron-deepspeed", "jax-xla"}) {
    EXPECT_EQ((*c.Find(other))->per_parameter_sharding.value, 0) << other;
  }
}

}  // namespace
}  // namespace clustersim::models
