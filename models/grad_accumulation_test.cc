// Memory passes over the gradients after every micro-batch's backward: the
// bf16 optimizer's fp32 gradient accumulation (ShardSpec::grad_accumulate_bytes;
// DeepSpeed's BF16_Optimizer) and FSDP1's FlatParameter handling
// (ShardSpec::flat_grad_bytes, FlatParameterGradBytes).
#include <cstdint>
#include <string>
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

TransformerConfig Bloom() {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("bloom-176b");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

ShardSpec Shard(double bytes) {
  ShardSpec s;
  s.tensor_parallel = 4;
  s.micro_batch_size = 2;
  s.recompute = Recompute::kFull;
  s.grad_accumulate_bytes = bytes;
  return s;
}

// One pass per backward list over the weights its gradients cover: a BLOOM
// layer's four weight matrices, 12 h^2 / tp elements, at 18 bytes each; the
// embedding table (V/tp x h) and the output layer's weight gradient likewise.
TEST(GradAccumulationTest, OnePassOverEachListsWeightsAfterItsBackward) {
  const TransformerConfig c = Bloom();
  absl::StatusOr<Workload> w = BuildWorkload(c, Shard(18));
  ASSERT_TRUE(w.ok()) << w.status();
  const int64_t h = c.hidden_size, tp = 4;
  ASSERT_FALSE(w->layer_backward.empty());
  const Op& layer = w->layer_backward.back();
  EXPECT_EQ(layer.name, "grad_accumulate_fp32");
  EXPECT_EQ(layer.kind, OpKind::kMemoryBound);
  EXPECT_EQ(layer.bytes.count(), 18 * (12 * h * h / tp));
  const int64_t table = int64_t{c.vocab_size} / tp * h;
  EXPECT_EQ(w->embedding_backward.back().bytes.count(), 18 * table);
  EXPECT_EQ(w->head_backward.back().bytes.count(), 18 * table);
  // No forward list and no recomputed op carries it.
  EXPECT_EQ(Count(w->layer_forward, "grad_accumulate_fp32"), 0);
  EXPECT_EQ(Count(w->layer_backward, "grad_accumulate_fp32"), 1);
}

TEST(GradAccumulationTest, ZeroBytesAddsNothingAndBadValuesAreRefused) {
  absl::StatusOr<Workload> w = BuildWorkload(Bloom(), Shard(0));
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::vector<Op>* ops :
       {&w->layer_backward, &w->embedding_backward, &w->head_backward}) {
    EXPECT_EQ(Count(*ops, "grad_accumulate_fp32"), 0);
  }
  absl::StatusOr<Workload> bad = BuildWorkload(Bloom(), Shard(-1));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "grad_accumulate_bytes"));
}

// Megatron-DeepSpeed's profile carries DeepSpeed's BF16_Optimizer pass (cast
// 2 + 4 bytes, add 4 + 4 + 4); Megatron-Core's fused fp32 main_grad has none.
TEST(GradAccumulationTest, OnlyTheDeepSpeedProfileAccumulatesSeparately) {
  const FrameworkCatalog& c = FrameworkCatalog::Default();
  EXPECT_EQ((*c.Find("megatron-deepspeed"))->bf16_grad_accumulate_bytes.value, 18);
  EXPECT_EQ((*c.Find("megatron-core"))->bf16_grad_accumulate_bytes.value, 0);
  EXPECT_EQ((*c.Find("pytorch-fsdp2"))->bf16_grad_accumulate_bytes.value, 0);
}

// Concatenation into the flat gradient (2 + 2), the cast to an fp32 reduce
// dtype (2 + 4) and the pre-division in it (4 + 4); with a bf16 reduce no
// cast and a 16-bit division.
TEST(FlatParameterTest, BytesPerWeightFollowTheReduceDtype) {
  EXPECT_EQ(FlatParameterGradBytes(4), 18);
  EXPECT_EQ(FlatParameterGradBytes(2), 8);
}

// One pass per backward list over the weights its gradients cover, after
// the list's other ops; none in the forward.
TEST(FlatParameterTest, OnePassAfterEachBackwardList) {
  const TransformerConfig c = SmallDense();
  ShardSpec s;
  s.micro_batch_size = 2;
  s.flat_grad_bytes = 18;
  absl::StatusOr<Workload> w = BuildWorkload(c, s);
  ASSERT_TRUE(w.ok()) << w.status();
  const int64_t h = c.hidden_size;
  const Op& layer = w->layer_backward.back();
  EXPECT_EQ(layer.name, "fsdp_flat_grad");
  EXPECT_EQ(layer.kind, OpKind::kMemoryBound);
  EXPECT_EQ(layer.bytes.count(), 18 * (12 * h * h));  // qkv 3h^2, proj h^2, fc1/fc2 8h^2
  EXPECT_EQ(w->embedding_backward.back().bytes.count(), 18 * int64_t{c.vocab_size} * h);
  EXPECT_EQ(Count(w->layer_forward, "fsdp_flat_grad"), 0);
  EXPECT_EQ(Count(w->layer_backward, "fsdp_flat_grad"), 1);
  EXPECT_EQ(Count(w->layer_backward, "grad_accumulate_fp32"), 0);

  s.flat_grad_bytes = 0;
  absl::StatusOr<Workload> none = BuildWorkload(c, s);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(Count(none->layer_backward, "fsdp_flat_grad"), 0);
  EXPECT_EQ(none->layer_backward.size() + 1, w->layer_backward.size());

  s.flat_grad_bytes = 65;
  absl::StatusOr<Workload> bad = BuildWorkload(c, s);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "flat_grad_bytes"));
}

// Only FSDP1's profile shards through a FlatParameter; FSDP2 shards per
// parameter (DTensor) and Megatron / DeepSpeed keep their own buffers.
TEST(FlatParameterTest, OnlyThePytorchFsdpProfileHasIt) {
  const FrameworkCatalog& c = FrameworkCatalog::Default();
  EXPECT_EQ((*c.Find("pytorch-fsdp"))->flat_parameter.value, 1);
  for (const char* other : {"pytorch-fsdp2", "megatron-core", "megatron-deepspeed", "jax-xla"}) {
    EXPECT_EQ((*c.Find(other))->flat_parameter.value, 0) << other;
  }
}

}  // namespace
}  // namespace clustersim::models
