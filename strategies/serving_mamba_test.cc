// Serving a hybrid Mamba-Transformer model: one block per layer, the SSD
// scan over prefill tokens, each decode step's state read and write, and
// the fixed-size state per sequence in place of a KV cache in its Mamba
// layers.
#include "strategies/serving_mamba.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "models/inference_memory.h"
#include "strategies/serving_cost_testing.h"
#include "strategies/serving_iteration.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

bool HasOp(const std::vector<models::Op>& ops, const std::string& name) {
  for (const models::Op& op : ops) {
    if (op.name == name) return true;
  }
  return false;
}

class ServingMambaTest : public testing::DgxH100Test {
 protected:
  absl::StatusOr<ServingCostModel> Model(int tp) {
    ServingModelSpec spec;
    spec.replica.model = *models::ModelCatalog::Default().Find("nemotron-h-56b");
    spec.replica.tensor_parallel = tp;
    for (int i = 0; i < tp; ++i) spec.gpus.push_back(i);
    return ServingCostModel::Create(spec, *kernels_, *network_);
  }
};

TEST_F(ServingMambaTest, LayersRunOneBlockEachAndDecodeReadsTheState) {
  absl::StatusOr<ServingCostModel> m = Model(8);
  ASSERT_TRUE(m.ok()) << m.status();
  IterationTotals t;
  t.tokens = 16;
  t.sampled = 16;
  const std::vector<models::Op> mamba = m->HybridLayerOps(t, models::LayerKind::kMamba);
  EXPECT_TRUE(HasOp(mamba, "mamba_in_proj_gemm"));
  EXPECT_TRUE(HasOp(mamba, "tp_allreduce_mamba"));
  EXPECT_FALSE(HasOp(mamba, "qkv_gemm"));
  const std::vector<models::Op> mlp = m->HybridLayerOps(t, models::LayerKind::kMlp);
  EXPECT_TRUE(HasOp(mlp, "gate_up_gemm"));
  EXPECT_FALSE(HasOp(mlp, "qkv_gemm"));
  EXPECT_TRUE(HasOp(m->HybridLayerOps(t, models::LayerKind::kAttention), "qkv_gemm"));
  // 16 decode steps: each reads and writes its sequence's state on this GPU,
  // 32 heads x 64 x 256 plus 3 x 2560 conv values, in BF16.
  std::vector<SequenceWork> work(16, {.new_tokens = 1, .context = 4096, .decode = true});
  const std::vector<models::Op> state = m->MambaStateOps(Summarise(work));
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].bytes.count(), 16 * (32 * 64 * 256 + 3 * 2560) * 2 * 2);
  // The iteration's cost grows with the decode batch (its states and KV).
  std::vector<SequenceWork> more(64, {.new_tokens = 1, .context = 4096, .decode = true});
  EXPECT_GT(m->Cost(Summarise(more)).time, m->Cost(Summarise(work)).time);
}

TEST_F(ServingMambaTest, TensorParallelMustSplitTheMixer) {
  // 64 attention heads and 8 query groups allow tp 16 no more than the 8
  // Mamba groups do; the message names the Mamba fields when they are the
  // ones that fail.
  models::ReplicaModel r;
  r.model = *models::ModelCatalog::Default().Find("nemotron-h-56b");
  r.model.mamba_num_groups = 4;
  r.tensor_parallel = 8;
  EXPECT_THAT(ValidateServingMamba(r).message(), HasSubstr("mamba_num_groups=4"));
}

TEST_F(ServingMambaTest, MambaLayersKeepAStatePerSequenceNotAKvCache) {
  const models::TransformerConfig m = *models::ModelCatalog::Default().Find("nemotron-h-56b");
  // K and V in the 10 attention layers only: 10 x 2 x 1 group x 128 x 2 B.
  EXPECT_EQ(models::KvBytesPerToken(m, 8, 1, models::Dtype::kBf16).count(), 10 * 2 * 128 * 2);
  // 54 Mamba layers x (32 x 64 x 256 + 3 x 2560) BF16 values per sequence.
  EXPECT_EQ(models::MambaStateBytesPerSequence(m, 8, 1, models::Dtype::kBf16).count(),
            54 * (32 * 64 * 256 + 3 * 2560) * 2);
  models::InferenceMemoryInputs in;
  in.replica.model = m;
  in.replica.tensor_parallel = 8;
  in.sequence_length = 8192;
  const models::InferenceMemory mem = models::EstimateInferenceMemory(in, sim::Bytes(80LL << 30));
  EXPECT_GT(mem.state_bytes_per_sequence.count(), 0);
  // Each running sequence's blocks and state fit in the cache.
  EXPECT_LE(mem.max_concurrent_sequences * (mem.blocks_per_sequence * mem.kv_block_bytes.count() +
                                            mem.state_bytes_per_sequence.count()),
            mem.kv_cache.count());
}

}  // namespace
}  // namespace clustersim::strategies
