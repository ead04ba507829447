#include "strategies/step_builder.h"

#include <algorithm>
#include <atomic>

#include "gtest/gtest.h"
#include "models/gpu_catalog.h"
#include "sim/engine.h"
#include "strategies/step_builder_test_util.h"
#include "strategies/step_stats.h"

namespace clustersim::strategies {
namespace {

sim::Duration SumOfComputeCosts(const models::Workload& w, const models::KernelModel& k,
                                int layers) {
  sim::Duration total;
  auto add = [&](const std::vector<models::Op>& ops, int times) {
    for (const models::Op& op : ops) {
      if (op.kind != models::OpKind::kCollective) total += k.Cost(op).time * times;
    }
  };
  add(w.embedding_forward, 1);
  add(w.embedding_backward, 1);
  add(w.layer_forward, layers);
  add(w.layer_backward, layers);
  add(w.head_forward, 1);
  add(w.head_backward, 1);
  return total;
}

TEST(StepBuilderTest, SingleGpuStepIsTheSumOfItsKernels) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 2;  // two micro-batches of gradient accumulation
  const models::TransformerConfig model = SmallGpt();
  SimRun r = Simulate(model, p, 1, true, net);
  const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find("a100-sxm4-80gb");
  const models::KernelModel kernels(*gpu);
  const sim::Duration per_mb = SumOfComputeCosts(r.plan.workload, kernels, model.num_layers);
  // The optimizer is the one compute task outside the micro-batches.
  const sim::Duration optimizer = r.summary.step_time - per_mb * 2;
  EXPECT_GT(optimizer, sim::Duration::Zero());
  EXPECT_EQ(r.summary.compute, r.summary.step_time);
  EXPECT_EQ(r.summary.exposed_comm, sim::Duration::Zero());
  EXPECT_EQ(net.calls, 0);
}

// A set stop flag ends the build with CANCELLED; a clear one builds the step.
TEST(StepBuilderTest, StopFlagCancelsTheBuild) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 2;
  const models::TransformerConfig model = SmallGpt();
  ASSERT_TRUE(ValidateParallelConfig(model, 1, &p).ok());
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  std::atomic<bool> stop{true};
  StepInputs in;
  in.model = &model;
  in.parallel = &p;
  in.kernels = &kernels;
  in.network = &net;
  in.cancel = &stop;
  EXPECT_EQ(BuildStep(in).status().code(), absl::StatusCode::kCancelled);
  stop = false;
  EXPECT_TRUE(BuildStep(in).ok());
}

TEST(StepBuilderTest, TensorParallelCollectivesAreExposed) {
  FixedNetwork net;
  ParallelConfig p;
  p.tensor_parallel = 2;
  SimRun r = Simulate(SmallGpt(), p, 2, true, net);
  int layer_collectives = 0;
  sim::Duration expected;
  for (const TaskInfo& info : r.plan.infos) {
    if (info.is_collective) {
      if (info.layer >= 0 && info.layer < 4) ++layer_collectives;
      expected += sim::Microseconds(10) +
                  sim::TransferTime(info.op->comm_bytes, sim::Bandwidth::GigabytesPerSecond(100));
    }
  }
  // Megatron: 2 all-reduces forward and 2 backward per layer (no recompute);
  // the vocab-parallel embedding and cross-entropy add their own outside layers.
  EXPECT_EQ(layer_collectives, 4 * 4);
  EXPECT_EQ(r.summary.exposed_tp, expected);
  EXPECT_EQ(r.summary.step_time, r.summary.compute + r.summary.exposed_comm);
}

// --tp-comm-overlap: the same collectives and kernels, but each sequence-
// parallel all-gather / reduce-scatter runs beside a GEMM, so less of it is
// exposed; it cannot beat the tensor lane, which still carries every byte.
// The GEMMs that consume a gathered input (QKV and FC1 forward, out_proj and
// FC2 dgrad) run as tp row chunks, 3 at a time (Transformer Engine's ring
// exchange): the compute grows by exactly what the chunking costs them.
TEST(StepBuilderTest, TpCommOverlapHidesCollectivesUnderGemms) {
  FixedNetwork net;
  ParallelConfig p;
  p.tensor_parallel = 4;
  p.sequence_parallel = true;
  const SimRun plain = Simulate(SmallGpt(), p, 4, true, net);
  p.tp_comm_overlap = true;
  const SimRun overlapped = Simulate(SmallGpt(), p, 4, true, net);
  sim::Duration tp_lane;
  int collectives = 0;
  for (const TaskInfo& info : overlapped.plan.infos) {
    if (!info.is_collective) continue;
    ++collectives;
    tp_lane += sim::Microseconds(10) +
               sim::TransferTime(info.op->comm_bytes, sim::Bandwidth::GigabytesPerSecond(100));
  }
  int plain_collectives = 0;
  for (const TaskInfo& info : plain.plan.infos) plain_collectives += info.is_collective ? 1 : 0;
  EXPECT_EQ(collectives, plain_collectives);
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  sim::Duration chunking;
  int chunked = 0;
  for (const TaskInfo& info : overlapped.plan.infos) {
    if (info.is_collective || info.op == nullptr) continue;
    const std::string& name = info.op->name;
    if (name == "qkv_gemm" || name == "fc1_gemm" || name == "out_proj_gemm_dgrad" ||
        name == "fc2_gemm_dgrad") {
      ++chunked;
      chunking += kernels.RowSplitCost(*info.op, 4, 3).time - kernels.Cost(*info.op).time;
    }
  }
  EXPECT_GT(chunked, 0);
  EXPECT_GT(chunking, sim::Duration::Zero());
  EXPECT_EQ(overlapped.summary.compute, plain.summary.compute + chunking);
  EXPECT_LT(overlapped.summary.exposed_tp, plain.summary.exposed_tp / 2);
  EXPECT_LT(overlapped.summary.step_time, plain.summary.step_time);
  EXPECT_GE(overlapped.summary.step_time, tp_lane);
  EXPECT_EQ(overlapped.summary.step_time,
            overlapped.summary.compute + overlapped.summary.exposed_comm);
}

TEST(StepBuilderTest, TpCommOverlapNeedsSequenceParallel) {
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.tp_comm_overlap = true;
  const absl::Status s = ValidateParallelConfig(SmallGpt(), 2, &p);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("parallelism.tp_comm_overlap"), std::string_view::npos) << s;
}

// DeepSpeed's pipeline engine: every stage-to-stage send first blocks its
// sender's host for pipeline_p2p_host; the receiver waits for the send.
TEST(StepBuilderTest, PipelineEngineHostTimeDelaysEverySend) {
  FixedNetwork net;
  ParallelConfig p;
  p.pipeline_parallel = 2;
  p.global_batch_size = 4;
  auto run = [&](sim::Duration engine) {
    const SimRun r = Simulate(SmallGpt(), p, 2, true, net, engine);
    int sends = 0, engine_tasks = 0;
    for (const TaskInfo& info : r.plan.infos) {
      sends += info.op->name.starts_with("pp_send") ? 1 : 0;
      engine_tasks += info.op->name == "pp_engine_p2p" ? 1 : 0;
    }
    EXPECT_EQ(engine_tasks, engine > sim::Duration::Zero() ? sends : 0);
    return std::make_pair(r.summary.step_time, sends);
  };
  const auto [plain, sends] = run(sim::Duration::Zero());
  const auto [slowed, same_sends] = run(sim::Milliseconds(1));
  EXPECT_EQ(sends, 2 * 4);  // 4 micro-batches: an activation and a gradient each
  EXPECT_EQ(same_sends, sends);
  // The first micro-batch's activation and the last one's gradient lie on
  // the critical path whatever the overlap: at least 2 ms, at most 1 ms per send.
  EXPECT_GE(slowed - plain, sim::Milliseconds(2));
  EXPECT_LE(slowed - plain, sim::Milliseconds(sends));
}

TEST(StepBuilderTest, FoldedDataParallelMatchesUnfolded) {
  FixedNetwork net;
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.micro_batch_size = 1;
  p.global_batch_size = 8;
  SimRun folded = Simulate(SmallGpt(), p, 8, true, net);
  SimRun full = Simulate(SmallGpt(), p, 8, false, net);
  EXPECT_TRUE(folded.plan.folded_data_parallel);
  EXPECT_EQ(folded.plan.simulated_gpus.size(), 2u);
  EXPECT_EQ(full.plan.simulated_gpus.size(), 8u);
  EXPECT_EQ(folded.summary.step_time, full.summary.step_time);
  EXPECT_EQ(folded.summary.exposed_dp, full.summary.exposed_dp);
  EXPECT_LT(folded.plan.graph.NumTasks(), full.plan.graph.NumTasks());
}

TEST(StepBuilderTest, OverlappedGradientReductionHidesCommunication) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 4;
  models::TransformerConfig model = SmallGpt();
  model.num_layers = 16;
  SimRun plain = Simulate(model, p, 4, true, net);
  p.overlap_grad_reduce = true;
  SimRun overlapped = Simulate(model, p, 4, true, net);
  EXPECT_GT(plain.summary.exposed_dp, sim::Duration::Zero());
  EXPECT_LT(overlapped.summary.exposed_dp, plain.summary.exposed_dp);
  EXPECT_LT(overlapped.summary.step_time, plain.summary.step_time);
}

// --overlap-param-gather: one all-gather per gradient bucket at the step's
// start, under the first micro-batch's forward, instead of one exposed gather
// after the optimizer step; the same bytes either way, and folding stays exact.
TEST(StepBuilderTest, OverlappedParamGatherRunsUnderTheForward) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 8;
  p.distributed_optimizer = true;
  p.overlap_grad_reduce = true;
  models::TransformerConfig model = SmallGpt();
  model.num_layers = 16;
  auto gathers = [](const StepPlan& plan) {
    std::vector<int64_t> bytes;
    for (const models::Op& op : plan.step_ops) {
      if (op.name == "dp_param_allgather") bytes.push_back(op.comm_bytes.count());
    }
    return bytes;
  };
  SimRun plain = Simulate(model, p, 4, true, net);
  p.overlap_param_gather = true;
  SimRun overlapped = Simulate(model, p, 4, true, net);
  SimRun unfolded = Simulate(model, p, 4, false, net);
  const std::vector<int64_t> one = gathers(plain.plan);
  const std::vector<int64_t> per_bucket = gathers(overlapped.plan);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_GT(per_bucket.size(), 2u);
  int64_t total = 0;
  for (int64_t b : per_bucket) total += b;
  EXPECT_NEAR(static_cast<double>(total), static_cast<double>(one[0]), 1e-6 * one[0]);
  EXPECT_LT(overlapped.summary.exposed_dp, plain.summary.exposed_dp);
  EXPECT_LT(overlapped.summary.step_time, plain.summary.step_time);
  EXPECT_EQ(overlapped.summary.step_time, unfolded.summary.step_time);
  EXPECT_EQ(overlapped.summary.exposed_dp, unfolded.summary.exposed_dp);
}

// The gathers run back to back from the step's start, and the first
// micro-batch's forward starts only once the first bucket (the embedding's)
// has arrived.
TEST(StepBuilderTest, OverlappedParamGatherWaitsForEachBucket) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 4;
  p.distributed_optimizer = true;
  p.overlap_param_gather = true;
  struct Spans : sim::SpanObserver {
    std::vector<sim::Span> spans;
    void OnSpan(const sim::TaskGraph&, const sim::Span& s) override { spans.push_back(s); }
  } rec;
  const SimRun r = Simulate(SmallGpt(), p, 4, true, net, sim::Duration::Zero(), &rec);
  std::vector<std::pair<sim::Time, sim::Time>> gathers;
  sim::Time first_compute = sim::Time::Infinite();
  for (const sim::Span& s : rec.spans) {
    const TaskInfo& info = r.plan.infos[s.tag];
    if (info.op == nullptr) continue;
    if (info.op->name == "dp_param_allgather") gathers.emplace_back(s.start, s.end);
    if (!info.is_collective && info.phase == Phase::kForward) {
      first_compute = std::min(first_compute, s.start);
    }
  }
  ASSERT_GT(gathers.size(), 1u);
  std::sort(gathers.begin(), gathers.end());
  EXPECT_EQ(gathers.front().first, sim::Time());
  for (size_t k = 1; k < gathers.size(); ++k) {
    EXPECT_EQ(gathers[k].first, gathers[k - 1].second);  // back to back
  }
  EXPECT_GE(first_compute, gathers.front().second);
  EXPECT_LT(first_compute, gathers.back().second);  // later buckets overlap it
}

TEST(StepBuilderTest, OverlapParamGatherNeedsTheDistributedOptimizer) {
  ParallelConfig p;
  p.global_batch_size = 4;
  p.overlap_param_gather = true;
  const absl::Status s = ValidateParallelConfig(SmallGpt(), 4, &p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("parallelism.overlap_param_gather"), std::string_view::npos) << s;
}

TEST(StepBuilderTest, FullRecomputeAddsForwardWork) {
  FixedNetwork net;
  ParallelConfig p;
  SimRun none = Simulate(SmallGpt(), p, 1, true, net);
  p.recompute = models::Recompute::kFull;
  SimRun full = Simulate(SmallGpt(), p, 1, true, net);
  EXPECT_GT(full.summary.compute, none.summary.compute);
}

TEST(StepBuilderTest, IsDeterministic) {
  FixedNetwork net;
  ParallelConfig p;
  p.tensor_parallel = 4;
  p.global_batch_size = 4;
  SimRun a = Simulate(SmallGpt(), p, 8, false, net);
  SimRun b = Simulate(SmallGpt(), p, 8, false, net);
  EXPECT_EQ(a.summary.step_time, b.summary.step_time);
  EXPECT_EQ(a.plan.graph.NumTasks(), b.plan.graph.NumTasks());
}

// Without the TaskInfo table (BuildMode::record_task_infos off, as the search runs)
// the graph is the same task for task, edge for edge, and only tag 0 exists.
TEST(StepBuilderTest, TaskInfosOffBuildsTheSameGraph) {
  const models::TransformerConfig model = SmallGpt();
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.pipeline_parallel = 2;
  p.virtual_pipeline = 2;
  p.schedule = Schedule::kInterleaved1F1B;
  p.micro_batch_size = 1;
  p.global_batch_size = 8;
  p.distributed_optimizer = true;
  p.overlap_grad_reduce = true;
  ASSERT_TRUE(ValidateParallelConfig(model, 8, &p).ok());
  const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find("a100-sxm4-80gb");
  const models::KernelModel kernels(*gpu);
  FixedNetwork net;
  StepInputs in;
  in.model = &model;
  in.parallel = &p;
  in.kernels = &kernels;
  in.network = &net;
  in.mode.merge_compute_chains = true;
  absl::StatusOr<StepPlan> with = BuildStep(in);
  in.mode.record_task_infos = false;
  absl::StatusOr<StepPlan> without = BuildStep(in);
  ASSERT_TRUE(with.ok() && without.ok());
  ASSERT_EQ(without->infos.size(), 1u);
  EXPECT_GT(with->infos.size(), 1u);
  const sim::TaskGraph& a = with->graph;
  const sim::TaskGraph& b = without->graph;
  ASSERT_EQ(a.NumTasks(), b.NumTasks());
  ASSERT_EQ(a.NumResources(), b.NumResources());
  EXPECT_EQ(a.edges(), b.edges());
  for (sim::TaskId t = 0; t < a.NumTasks(); ++t) {
    EXPECT_EQ(a.task(t).duration, b.task(t).duration) << t;
    EXPECT_EQ(b.task(t).tag, 0u) << t;
    ASSERT_EQ(a.ResourcesOf(t).size(), b.ResourcesOf(t).size()) << t;
    for (size_t r = 0; r < a.ResourcesOf(t).size(); ++r) {
      EXPECT_EQ(a.ResourcesOf(t)[r], b.ResourcesOf(t)[r]) << t;
    }
  }
}

}  // namespace
}  // namespace clustersim::strategies
