// Mixture-of-experts steps: expert-parallel all-to-alls on the expert lane,
// expert gradients over the expert-data-parallel group, folding exactness,
// the dispatcher's host sync and grouped-GEMM launches, and ZeRO-3 sharding.
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "strategies/expert_parallel_test_util.h"
#include "strategies/step_builder.h"

namespace clustersim::strategies {
namespace {

// Every collective costs 10 us plus its bytes at 100 GB/s.
class FlatNetwork : public topology::NetworkModel {
 public:
  absl::StatusOr<topology::CollectiveEstimate> Estimate(
      const topology::CollectiveRequest& r) const override {
    topology::CollectiveEstimate e;
    e.time = Cost(r.bytes);
    e.algorithm = topology::Algorithm::kRing;
    return e;
  }
  static sim::Duration Cost(sim::Bytes b) {
    return sim::Microseconds(10) + sim::TransferTime(b, sim::Bandwidth::GigabytesPerSecond(100));
  }
};

TEST(ExpertParallelStepTest, AllToAllsRunOnTheExpertLaneAndAreMeasured) {
  const FlatNetwork net;
  StepRun r = Step(Sixteen(4), 16, net);
  // Folded: dp replica 0 of 2 tp ranks x 2 stages. Each of the 4 layers per
  // micro-batch dispatches and combines forward and backward: 4 all-to-alls.
  EXPECT_EQ(r.plan.simulated_gpus.size(), 4u);
  const std::vector<const TaskInfo*> a2a = Named(r.plan, "ep_alltoall");
  ASSERT_EQ(a2a.size(), 2u /*tp*/ * 4u /*layers*/ * 2u /*mb*/ * 4u);
  for (const TaskInfo* info : a2a) {
    EXPECT_EQ(info->group_size, 4);
    EXPECT_EQ(info->op->group, models::CommGroup::kExpert);
  }
  // Megatron-core's dispatcher blocks the compute stream: every all-to-all of
  // the critical GPU (2 layers x 2 micro-batches x 4) is exposed, in full.
  EXPECT_EQ(r.summary.exposed_ep, FlatNetwork::Cost(a2a[0]->op->comm_bytes) * 16);
  EXPECT_GT(r.summary.exposed_ep, sim::Duration::Zero());
  // ep = 1 has no all-to-all and a faster step under this network.
  StepRun one = Step(Sixteen(1), 16, net);
  EXPECT_TRUE(Named(one.plan, "ep_alltoall").empty());
  EXPECT_EQ(one.summary.exposed_ep, sim::Duration::Zero());
}

TEST(ExpertParallelStepTest, FoldingIsExact) {
  const FlatNetwork net;
  for (bool dist_opt : {false, true}) {
    for (bool overlap : {false, true}) {
      const RunOptions base{.distributed_optimizer = dist_opt, .overlap = overlap};
      RunOptions unfolded = base;
      unfolded.fold_dp = false;
      RunOptions both = base;
      both.fold_tp = true;
      StepRun folded = Step(Sixteen(2), 16, net, base);
      StepRun full = Step(Sixteen(2), 16, net, unfolded);
      StepRun folded_tp = Step(Sixteen(2), 16, net, both);
      EXPECT_EQ(full.plan.simulated_gpus.size(), 16u);
      EXPECT_EQ(folded_tp.plan.simulated_gpus.size(), 2u);
      for (const StepRun* r : {&full, &folded_tp}) {
        EXPECT_EQ(r->summary.step_time, folded.summary.step_time) << dist_opt << overlap;
        EXPECT_EQ(r->summary.exposed_ep, folded.summary.exposed_ep);
        EXPECT_EQ(r->summary.exposed_dp, folded.summary.exposed_dp);
        EXPECT_EQ(r->summary.compute, folded.summary.compute);
      }
    }
  }
}

TEST(ExpertParallelStepTest, ExpertGradientsReduceOverExpertDataParallelGroup) {
  const FlatNetwork net;
  // dp 4, ep 2: expert-data-parallel groups of 2.
  StepRun r = Step(Sixteen(2), 16, net, {.distributed_optimizer = true});
  const models::ParameterCounts pc = models::CountParameters(SmallMoe());
  double expert_bytes = 0, dense_layer_bytes = 0;
  int expert_gathers = 0;
  for (const TaskInfo& info : r.plan.infos) {
    // Stage 0, tp rank 0 (simulated GPU 0).
    if (info.stage != 0 || info.phase != Phase::kOptimizer || !info.is_collective) continue;
    if (info.op->name == "expert_dp_grad_reduce_scatter") {
      EXPECT_EQ(info.group_size, 2);
      expert_bytes += info.op->comm_bytes.count();
    } else if (info.op->name == "dp_grad_reduce_scatter") {
      EXPECT_EQ(info.group_size, 4);
      dense_layer_bytes += info.op->comm_bytes.count();
    } else if (info.op->name == "expert_dp_param_allgather") {
      EXPECT_EQ(info.group_size, 2);
      ++expert_gathers;
    }
  }
  // Two tp ranks on stage 0, each with 2 layers of experts / (tp 2 x ep 2),
  // in fp32 main gradients.
  EXPECT_NEAR(expert_bytes, 2 * 2 * pc.expert_per_layer / 4 * 4, 2 * 4 * 8);
  const double dense = 2 * (2 * (pc.per_layer - pc.expert_per_layer) + pc.embedding) / 2 * 4;
  EXPECT_NEAR(dense_layer_bytes, dense, 2 * 4 * 8);
  EXPECT_EQ(expert_gathers, 2);
  // ep 4 leaves expert-data-parallel groups of one: no expert reduction.
  StepRun ep4 = Step(Sixteen(4), 16, net, {.distributed_optimizer = true});
  EXPECT_TRUE(Named(ep4.plan, "expert_dp_").empty());
}

// MoE parallel folding (expert TP 1): the all-to-all spans tensor ranks (ep 8
// on tp 2 x dp 4), no tp collectives wrap the experts, the expert gradients
// reduce over tp·dp/ep ranks, and folding stays exact.
TEST(ExpertParallelStepTest, ParallelFoldingSpansTensorRanks) {
  const FlatNetwork net;
  ParallelConfig p = Sixteen(8);
  p.expert_tensor_parallel = 1;
  StepRun r = Step(p, 16, net, {.distributed_optimizer = true});
  const std::vector<const TaskInfo*> a2a = Named(r.plan, "ep_alltoall");
  ASSERT_FALSE(a2a.empty());
  for (const TaskInfo* info : a2a) EXPECT_EQ(info->group_size, 8);
  EXPECT_TRUE(Named(r.plan, "tp_allgather_moe").empty());
  EXPECT_TRUE(Named(r.plan, "expert_dp_").empty());  // tp·dp/ep = 1
  for (bool fold_tp : {false, true}) {
    StepRun full = Step(p, 16, net, {.fold_dp = false, .distributed_optimizer = true});
    StepRun folded = Step(p, 16, net, {.fold_tp = fold_tp, .distributed_optimizer = true});
    EXPECT_EQ(folded.summary.step_time, full.summary.step_time) << fold_tp;
    EXPECT_EQ(folded.summary.exposed_ep, full.summary.exposed_ep) << fold_tp;
  }
  // ep 2: expert-data-parallel groups of tp·dp/ep = 4 ranks, each reducing
  // whole experts (not split over tp).
  p = Sixteen(2);
  p.expert_tensor_parallel = 1;
  StepRun ep2 = Step(p, 16, net, {.distributed_optimizer = true});
  const models::ParameterCounts pc = models::CountParameters(SmallMoe());
  double expert_bytes = 0;
  for (const TaskInfo& info : ep2.plan.infos) {
    if (info.stage != 0 || info.op->name != "expert_dp_grad_reduce_scatter") continue;
    EXPECT_EQ(info.group_size, 4);
    expert_bytes += info.op->comm_bytes.count();
  }
  // Stage 0's two simulated GPUs (tp 0 and 1, dp 0) each reduce 2 layers of
  // whole experts / ep 2, in fp32.
  EXPECT_NEAR(expert_bytes, 2 * 2 * pc.expert_per_layer / 2 * 4, 2 * 4 * 8);
}

// The dropless dispatcher's host sync: after moe_permute the host launches
// the rest of the pass op by op, the first launch only once the GPU has
// reached the sync. That is the one place a launch waits for the GPU.
TEST(ExpertParallelStepTest, DispatcherSyncHoldsTheHostUntilTheGpuReachesIt) {
  const FlatNetwork net;
  StepRun r = Step(Sixteen(4), 16, net, {.host_per_op = sim::Microseconds(20)});
  const int synced = HostWaits(r.plan);
  // Simulated: 2 tp ranks x 2 stages; each stage runs 2 MoE layers x 2
  // micro-batches forward (no recompute).
  EXPECT_EQ(synced, 2 * 2 * 2 * 2);
  // Without launches modelled nothing waits.
  StepRun free = Step(Sixteen(4), 16, net);
  for (const auto& [before, after] : free.plan.graph.edges()) {
    EXPECT_NE(free.plan.infos[free.plan.graph.task(after).tag].op->name, "host_launch");
  }
  EXPECT_LT(free.summary.step_time, r.summary.step_time);
}

// An op marked host_sync_before (Megatron-Core's quick-GELU GLU copies its
// offset to the device with a synchronising torch.tensor) is a second point
// where the host waits for the GPU in each MoE forward, and it costs time.
TEST(ExpertParallelStepTest, ASecondHostSyncBeforeTheExpertActivation) {
  const FlatNetwork net;
  auto synced = [](const StepRun& r) { return HostWaits(r.plan); };
  const RunOptions plain{.host_per_op = sim::Microseconds(20)};
  RunOptions glu = plain;
  glu.quick_gelu_glu = true;
  const StepRun one = Step(Sixteen(4), 16, net, plain);
  const StepRun two = Step(Sixteen(4), 16, net, glu);
  EXPECT_EQ(synced(two), 2 * synced(one));
  EXPECT_GT(two.summary.step_time, one.summary.step_time);
}

// After the sync the grouped expert GEMMs launch one cuBLAS GEMM per local
// expert, each at the host time per op: SmallMoe's 8 experts over ep 2 are 4
// launches per grouped GEMM, over ep 4 two.
TEST(ExpertParallelStepTest, GroupedGemmLaunchesOnePerLocalExpert) {
  const FlatNetwork net;
  const sim::Duration per_op = sim::Microseconds(20);
  auto forward_host = [&](int ep) {
    ParallelConfig p = Sixteen(ep);
    p.expert_tensor_parallel = 1;
    StepRun r = Step(p, 16, net, {.host_per_op = per_op});
    sim::Duration total = sim::Duration::Zero();
    for (sim::TaskId t = 0; t < r.plan.graph.NumTasks(); ++t) {
      const sim::TaskGraph::Task& task = r.plan.graph.task(t);
      const TaskInfo& info = r.plan.infos[task.tag];
      if (info.op->name == "host_launch" && info.phase == Phase::kForward) total += task.duration;
    }
    return total;
  };
  // 4 simulated GPUs (2 tp ranks x 2 stages) x 2 layers x 2 micro-batches,
  // each forward pass 2 x (4 - 2) more launches at ep 2.
  EXPECT_EQ(forward_host(2) - forward_host(4), per_op * (4 * 2 * 2 * 4));
}

// ZeRO-3 / FSDP on an MoE model: each layer's dense shard is gathered and
// reduced over the data-parallel group, its experts over the
// expert-data-parallel group, per micro-batch and pass, with no bucketed
// reduction or parameter gather at the end of the step.
TEST(ExpertParallelStepTest, ZeroThreeShardsDenseOverDataAndExpertsOverExpertDataGroup) {
  const FlatNetwork net;
  // dp 4, ep 2: expert-data-parallel groups of 2.
  StepRun r = Step(Sixteen(2), 16, net, {.zero_stage = 3});
  const models::ParameterCounts pc = models::CountParameters(SmallMoe());
  std::map<std::string, int> count;
  for (const TaskInfo& info : r.plan.infos) {
    if (!info.is_collective || info.stage != 0) continue;
    ++count[info.op->name];
    if (info.op->name == "zero3_expert_param_allgather" ||
        info.op->name == "zero3_expert_grad_reduce_scatter") {
      EXPECT_EQ(info.group_size, 2);
      // The rank's experts of one layer (/ tp 2 / ep 2), 16-bit.
      EXPECT_NEAR(info.op->comm_bytes.count(), pc.expert_per_layer / 4 * 2, 2);
    } else if (info.op->name.rfind("zero3_", 0) == 0) {
      EXPECT_EQ(info.group_size, 4) << info.op->name;
    }
    if (info.op->name == "zero3_param_allgather" && info.layer == 0) {
      EXPECT_NEAR(info.op->comm_bytes.count(), (pc.per_layer - pc.expert_per_layer) / 2 * 2, 2);
    }
  }
  // Stage 0 (2 simulated tp ranks): 2 layers + the embedding, 2 micro-batches,
  // gathered before forward and backward, reduced after backward.
  EXPECT_EQ(count["zero3_param_allgather"], 2 * 2 * 2 * 3);
  EXPECT_EQ(count["zero3_grad_reduce_scatter"], 2 * 2 * 3);
  EXPECT_EQ(count["zero3_expert_param_allgather"], 2 * 2 * 2 * 2);
  EXPECT_EQ(count["zero3_expert_grad_reduce_scatter"], 2 * 2 * 2);
  for (const char* bucketed : {"dp_grad_reduce_scatter", "dp_param_allgather",
                               "expert_dp_grad_reduce_scatter", "expert_dp_param_allgather"}) {
    EXPECT_EQ(count[bucketed], 0) << bucketed;
  }
  // Sharding parameters costs communication: slower than the distributed optimizer.
  StepRun distopt = Step(Sixteen(2), 16, net, {.distributed_optimizer = true});
  EXPECT_GT(r.summary.step_time, distopt.summary.step_time);
  EXPECT_GT(r.summary.exposed_dp, distopt.summary.exposed_dp);
  // ep 4: expert-data groups of one rank, whose experts stay whole.
  StepRun ep4 = Step(Sixteen(4), 16, net, {.zero_stage = 3});
  EXPECT_TRUE(Named(ep4.plan, "zero3_expert_").empty());
  EXPECT_FALSE(Named(ep4.plan, "zero3_param_allgather").empty());
}

TEST(ExpertParallelStepTest, ZeroThreeFoldingIsExact) {
  const FlatNetwork net;
  StepRun folded = Step(Sixteen(2), 16, net, {.zero_stage = 3});
  StepRun full = Step(Sixteen(2), 16, net, {.fold_dp = false, .zero_stage = 3});
  StepRun folded_tp = Step(Sixteen(2), 16, net, {.fold_tp = true, .zero_stage = 3});
  EXPECT_EQ(full.plan.simulated_gpus.size(), 16u);
  for (const StepRun* r : {&full, &folded_tp}) {
    EXPECT_EQ(r->summary.step_time, folded.summary.step_time);
    EXPECT_EQ(r->summary.exposed_dp, folded.summary.exposed_dp);
    EXPECT_EQ(r->summary.exposed_ep, folded.summary.exposed_ep);
  }
}

}  // namespace
}  // namespace clustersim::strategies
