// Megatron-Core's MoE all-to-all overlap (overlap_moe_expert_parallel_comm):
// merged forward / backward pairs hide each one's all-to-alls under the
// other's compute; the preconditions Megatron-Core asserts are refused.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "strategies/expert_parallel_test_util.h"
#include "strategies/pipeline_schedule.h"
#include "strategies/step_builder.h"

namespace clustersim::strategies {
namespace {

// All-to-alls cost 100 us, about a layer's forward compute here; other
// collectives 1 us.
class SlowNetwork : public topology::NetworkModel {
 public:
  absl::StatusOr<topology::CollectiveEstimate> Estimate(
      const topology::CollectiveRequest& r) const override {
    topology::CollectiveEstimate e;
    e.time = sim::Microseconds(r.op == topology::Collective::kAllToAll ? 100 : 1);
    e.algorithm = topology::Algorithm::kRing;
    return e;
  }
};

// 16 GPUs, tp 2, ep 4, 4 micro-batches per replica: pp 1, or pp 2 with vp 2.
ParallelConfig Config(bool pipelined, bool overlap) {
  ParallelConfig p = Sixteen(4);
  p.pipeline_parallel = pipelined ? 2 : 1;
  p.virtual_pipeline = pipelined ? 2 : 1;
  p.global_batch_size = pipelined ? 16 : 32;
  p.overlap_moe_expert_parallel_comm = overlap;
  return p;
}

TEST(MergedPairTest, HidesAllToAllsUnderThePairedCompute) {
  const SlowNetwork net;
  for (const bool pipelined : {false, true}) {
    const StepRun off = Step(Config(pipelined, false), 16, net);
    const StepRun on = Step(Config(pipelined, true), 16, net);
    // The same work: as many all-to-alls, the same compute.
    EXPECT_EQ(Named(on.plan, "ep_alltoall").size(), Named(off.plan, "ep_alltoall").size());
    EXPECT_EQ(on.summary.compute, off.summary.compute) << pipelined;
    ASSERT_GT(off.summary.exposed_ep, sim::Duration::Zero());
    // Run under the other pass's compute, far less of it is exposed.
    EXPECT_LT(on.summary.exposed_ep * 10, off.summary.exposed_ep * 8) << pipelined;
    EXPECT_LT(on.summary.step_time, off.summary.step_time) << pipelined;
  }
}

TEST(MergedPairTest, FoldingStaysExact) {
  const SlowNetwork net;
  const StepRun folded = Step(Config(true, true), 16, net);
  const StepRun full = Step(Config(true, true), 16, net, {.fold_dp = false});
  EXPECT_EQ(full.summary.step_time, folded.summary.step_time);
  EXPECT_EQ(full.summary.exposed_ep, folded.summary.exposed_ep);
}

TEST(MergedPairTest, HostLaunchesAndSyncsStillOrderThePasses) {
  // With the dispatcher's host sync: the step still completes and hides
  // all-to-all time.
  const SlowNetwork net;
  const RunOptions host{.host_per_op = sim::Microseconds(5)};
  const StepRun off = Step(Config(true, false), 16, net, host);
  const StepRun on = Step(Config(true, true), 16, net, host);
  EXPECT_LT(on.summary.exposed_ep, off.summary.exposed_ep);
  EXPECT_LT(on.summary.step_time, off.summary.step_time);
}

TEST(MergedPairTest, InterleavedWarmupHasOneExtraForward) {
  // Megatron-Core's get_pp_rank_microbatches: one more warm-up forward.
  const std::vector<PipelineAction> base = ScheduleForStage(Schedule::kInterleaved1F1B, 1, 2, 4, 2);
  const std::vector<PipelineAction> more =
      ScheduleForStage(Schedule::kInterleaved1F1B, 1, 2, 4, 2, /*extra_warmup=*/1);
  auto leading_forwards = [](const std::vector<PipelineAction>& a) {
    size_t n = 0;
    while (n < a.size() && a[n].pass == Pass::kForward) ++n;
    return n;
  };
  EXPECT_EQ(leading_forwards(more), leading_forwards(base) + 1);
  EXPECT_EQ(more.size(), base.size());
}

TEST(MergedPairTest, RefusesWhatMegatronCoreRefuses) {
  const models::TransformerConfig model = SmallMoe();
  auto refused = [&](ParallelConfig p) {
    const absl::Status s = ValidateParallelConfig(model, 16, &p);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(s.message()).find("parallelism.overlap_moe_expert_parallel_comm"),
              std::string::npos)
        << s;
  };
  ParallelConfig no_ep = Config(false, true);
  no_ep.expert_parallel = 1;
  refused(no_ep);
  ParallelConfig no_vp = Config(true, true);
  no_vp.virtual_pipeline = 1;
  refused(no_vp);
  ParallelConfig full = Config(false, true);
  full.recompute = models::Recompute::kFull;
  refused(full);
  ParallelConfig zb = Config(false, true);
  zb.schedule = Schedule::kZeroBubbleH1;
  refused(zb);
  ParallelConfig ok = Config(true, true);
  EXPECT_TRUE(ValidateParallelConfig(model, 16, &ok).ok());
}

}  // namespace
}  // namespace clustersim::strategies
