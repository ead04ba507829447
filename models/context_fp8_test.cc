// Context-parallel ring shapes and FP8 op dtypes in the workload, and their
// memory terms.
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/memory_model.h"
#include "models/transformer_config.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Get;

TransformerConfig Llama() { return testing::SmallGqaLlama(); }

TEST(ContextRingTest, StepsComputeHalfOfTheUnmaskedAttention) {
  const int cp = 4;
  absl::StatusOr<Workload> w = BuildWorkload(Llama(), {.context_parallel = cp});
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(w->context_ring.has_value());
  const ContextRing& r = *w->context_ring;
  EXPECT_EQ(r.steps, cp);
  const int64_t s_local = 16384 / cp;
  EXPECT_EQ(r.forward_diagonal.m, s_local);
  EXPECT_EQ(r.forward_diagonal.n, s_local);
  EXPECT_TRUE(r.forward_diagonal.causal);
  EXPECT_EQ(r.forward_step.n, s_local / 2);
  EXPECT_FALSE(r.forward_step.causal);
  // Computed work: half the causal diagonal block plus cp - 1 half blocks is
  // half of the whole attention (queries s/cp against all s keys, unmasked).
  const Op& whole = Get(w->layer_forward, "attention_fwd");
  const double computed =
      0.5 * r.forward_diagonal.flops.count() + (cp - 1) * r.forward_step.flops.count();
  EXPECT_DOUBLE_EQ(computed, 0.5 * whole.flops.count());
  // K and V of one chunk: 2 x b·(s/cp)·g·d 16-bit values; backward adds dK/dV.
  EXPECT_EQ(r.forward_exchange.comm_bytes.count(), 2 * s_local * 8 * 128 * 2);
  EXPECT_EQ(r.backward_exchange.comm_bytes.count(), 2 * r.forward_exchange.comm_bytes.count());
  EXPECT_EQ(r.forward_exchange.group, CommGroup::kContext);
  EXPECT_FALSE(BuildWorkload(Llama(), {}).value().context_ring.has_value());
}

TEST(Fp8WorkloadTest, LayerGemmsInFp8AttentionAndHeadInBf16) {
  absl::StatusOr<Workload> w = BuildWorkload(Llama(), {.dtype = Dtype::kFp8});
  ASSERT_TRUE(w.ok()) << w.status();
  for (const char* name : {"qkv_gemm", "out_proj_gemm", "fc1_gemm", "fc2_gemm"}) {
    EXPECT_EQ(Get(w->layer_forward, name).dtype, Dtype::kFp8) << name;
  }
  EXPECT_EQ(Get(w->layer_backward, "fc1_gemm_wgrad").dtype, Dtype::kFp8);
  EXPECT_EQ(Get(w->layer_backward, "qkv_gemm_dgrad").dtype, Dtype::kFp8);
  EXPECT_EQ(Get(w->layer_forward, "attention_fwd").dtype, Dtype::kBf16);
  EXPECT_EQ(Get(w->layer_backward, "attention_bwd").dtype, Dtype::kBf16);
  EXPECT_EQ(Get(w->head_forward, "lm_head_gemm").dtype, Dtype::kBf16);
  // cast_transpose of the four GEMM inputs: tokens x (h + a·d + h + f) x 4 B.
  const int64_t tokens = 16384;
  EXPECT_EQ(Get(w->layer_forward, "fp8_cast_fwd").bytes.count(),
            tokens * (4096 + 4096 + 4096 + 11008) * 4);
  EXPECT_GT(Get(w->layer_backward, "fp8_cast_bwd").bytes.count(), 0);
  absl::StatusOr<Workload> bf16 = BuildWorkload(Llama(), {});
  for (const Op& op : bf16->layer_forward) EXPECT_NE(op.name, "fp8_cast_fwd");
}

// The input and gradient casts move the recipe's bytes per element: 4 under
// delayed scaling, 6 with current scaling's amax pass, 4 + 2/32 with MXFP8's
// block scales, 8 with torchao's rowwise casts (models/fp8_recipe.h).
TEST(Fp8WorkloadTest, CastBytesFollowTheRecipe) {
  const int64_t elements = int64_t{16384} * (4096 + 4096 + 4096 + 11008);
  for (const auto& [recipe, per_element] :
       std::vector<std::pair<Fp8Recipe, double>>{{Fp8Recipe::kDelayed, 4},
                                                 {Fp8Recipe::kCurrent, 6},
                                                 {Fp8Recipe::kMxfp8, 4.0625},
                                                 {Fp8Recipe::kRowwise, 8}}) {
    absl::StatusOr<Workload> w =
        BuildWorkload(Llama(), {.dtype = Dtype::kFp8, .fp8_recipe = recipe});
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(Get(w->layer_forward, "fp8_cast_fwd").bytes.count(),
              static_cast<int64_t>(elements * per_element))
        << Fp8RecipeName(recipe);
    // A dense layer's casts stay one kernel and one host launch.
    EXPECT_EQ(Get(w->layer_forward, "fp8_cast_fwd").kernels, 1) << Fp8RecipeName(recipe);
    EXPECT_EQ(Get(w->layer_backward, "fp8_cast_bwd").HostLaunches(), 1);
  }
  absl::StatusOr<Workload> delayed = BuildWorkload(Llama(), {.dtype = Dtype::kFp8});
  absl::StatusOr<Workload> current =
      BuildWorkload(Llama(), {.dtype = Dtype::kFp8, .fp8_recipe = Fp8Recipe::kCurrent});
  EXPECT_EQ(Get(current->layer_backward, "fp8_cast_bwd").bytes.count(),
            Get(delayed->layer_backward, "fp8_cast_bwd").bytes.count() / 4 * 6);
}

// Rowwise scaling rescales both backward outputs of each FP8 GEMM, the input
// gradient (m x k) and the weight gradient (k x n), reading and writing 16
// bits; no other recipe has the pass.
TEST(Fp8WorkloadTest, RowwiseRescalesTheBackwardGemmOutputs) {
  absl::StatusOr<Workload> w =
      BuildWorkload(Llama(), {.dtype = Dtype::kFp8, .fp8_recipe = Fp8Recipe::kRowwise});
  ASSERT_TRUE(w.ok()) << w.status();
  int64_t elements = 0;
  for (const Op& op : w->layer_forward) {
    if (op.IsFp8Gemm()) elements += op.batch * (op.m * op.k + op.k * op.n);
  }
  EXPECT_GT(elements, 0);
  EXPECT_EQ(Get(w->layer_backward, "fp8_rescale_bwd").bytes.count(), elements * 4);
  absl::StatusOr<Workload> delayed = BuildWorkload(Llama(), {.dtype = Dtype::kFp8});
  for (const Op& op : delayed->layer_backward) EXPECT_NE(op.name, "fp8_rescale_bwd");
}

TEST(ContextFp8MemoryTest, CpShrinksActivationsAndFp8AddsWeightCopies) {
  MemoryInputs in{.model = Llama(), .shard = {.recompute = Recompute::kSelective}};
  ASSERT_TRUE(ValidateMemoryInputs(in).ok());
  const MemoryBreakdown one = EstimateMemory(in);
  in.shard.context_parallel = 2;
  const MemoryBreakdown two = EstimateMemory(in);
  // Selective recompute: activations linear in s/cp, plus the ring buffers.
  const double kv_buffers = 2.0 * 2.0 * (2.0 * 8192 * 8 * 128 * 2);
  EXPECT_NEAR(static_cast<double>(two.activations.count()),
              one.activations.count() / 2.0 + kv_buffers, 1.0);
  in.shard.context_parallel = 1;
  in.shard.dtype = Dtype::kFp8;
  const MemoryBreakdown fp8 = EstimateMemory(in);
  const double linear = CountParameters(Llama()).linear_per_layer * 8;
  EXPECT_NEAR(static_cast<double>((fp8.weights - one.weights).count()), 2.0 * linear, 1.0);
  EXPECT_EQ(fp8.optimizer, one.optimizer);
  EXPECT_EQ(fp8.gradients, one.gradients);
}

}  // namespace
}  // namespace clustersim::models
