#include "strategies/step_builder.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "strategies/step_builder_test_util.h"

namespace clustersim::strategies {
namespace {

// The plan of one step of `model` under `p`, with the fields of `in` that a
// test varies (everything but the model, parallelism, kernels and network).
StepPlan PlanWith(StepInputs in, const models::TransformerConfig& model, const ParallelConfig& p,
                  const models::KernelModel& kernels, const FixedNetwork& net) {
  in.model = &model;
  in.parallel = &p;
  in.kernels = &kernels;
  in.network = &net;
  in.mode.record_task_infos = true;
  absl::StatusOr<StepPlan> plan = BuildStep(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : StepPlan{};
}

// The plan of one step with ZeRO gradients reduced in `reduce_bytes`.
StepPlan ZeroPlan(const models::TransformerConfig& model, const ParallelConfig& p,
                  const models::KernelModel& kernels, const FixedNetwork& net, int reduce_bytes,
                  bool flat_parameter) {
  StepInputs in;
  in.zero3_grad_reduce_bytes = reduce_bytes;
  in.flat_parameter = flat_parameter;
  return PlanWith(in, model, p, kernels, net);
}

TEST(StepBuilderTest, ZeroThreeGathersEveryLayerAndReducesPerMicrobatch) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 8;  // dp 4, 2 micro-batches
  p.zero_stage = 3;
  const models::TransformerConfig model = SmallGpt();
  SimRun zero3 = Simulate(model, p, 4, true, net);
  int gathers = 0, reduces = 0;
  for (const TaskInfo& info : zero3.plan.infos) {
    if (!info.is_collective) continue;
    if (info.op->name == "zero3_param_allgather") ++gathers;
    if (info.op->name == "zero3_grad_reduce_scatter") ++reduces;
  }
  // Per micro-batch: (layers + embedding + head) gathers for forward and for
  // backward, and as many reduce-scatters.
  const int pieces = model.num_layers + 2;
  EXPECT_EQ(gathers, 2 * 2 * pieces);
  EXPECT_EQ(reduces, 2 * pieces);
  p.zero_stage = 1;
  SimRun zero1 = Simulate(model, p, 4, true, net);
  // Sharding parameters costs communication: ZeRO-3 moves 1.5x ZeRO-1's bytes.
  EXPECT_GT(zero3.summary.step_time, zero1.summary.step_time);
}

// Hybrid sharding over 8 data-parallel ranks in shard groups of 2: the
// gathers and reduce-scatters run over 2 ranks, and every reduce-scatter is
// followed by an all-reduce of its half-size shard over the 4 replicas.
TEST(StepBuilderTest, HybridShardingGathersInTheShardGroupAndReducesOverReplicas) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 16;  // dp 8, 2 micro-batches
  p.zero_stage = 3;
  p.data_parallel_shard = 2;
  const models::TransformerConfig model = SmallGpt();
  const SimRun hybrid = Simulate(model, p, 8, true, net);
  int gathers = 0, reduces = 0, replica = 0;
  int64_t reduce_bytes = 0, replica_bytes = 0;
  for (const TaskInfo& info : hybrid.plan.infos) {
    if (!info.is_collective) continue;
    const std::string& name = info.op->name;
    if (name == "zero3_param_allgather") {
      ++gathers;
      EXPECT_EQ(info.group_size, 2);
    } else if (name == "zero3_grad_reduce_scatter") {
      ++reduces;
      EXPECT_EQ(info.group_size, 2);
      if (info.layer == 0) reduce_bytes = info.op->comm_bytes.count();
    } else if (name == "zero3_grad_replica_allreduce") {
      ++replica;
      EXPECT_EQ(info.group_size, 4);
      if (info.layer == 0) replica_bytes = info.op->comm_bytes.count();
    }
  }
  const int pieces = model.num_layers + 2;
  EXPECT_EQ(gathers, 2 * 2 * pieces);
  EXPECT_EQ(reduces, 2 * pieces);
  EXPECT_EQ(replica, reduces);
  ASSERT_GT(replica_bytes, 0);
  EXPECT_EQ(replica_bytes * 2, reduce_bytes);
  // A shard group of every rank is plain ZeRO-3: no replica all-reduce.
  p.data_parallel_shard = 8;
  for (const TaskInfo& info : Simulate(model, p, 8, true, net).plan.infos) {
    EXPECT_FALSE(info.op != nullptr && info.op->name == "zero3_grad_replica_allreduce");
  }
}

// FSDP MixedPrecision with reduce_dtype float32 (torchtitan, Composer's
// DEFAULT) reduce-scatters 4-byte gradients: twice the 16-bit bytes, while
// the parameter all-gathers stay 16-bit.
TEST(StepBuilderTest, ZeroThreeReducesGradientsInTheStacksDtype) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 4;
  p.zero_stage = 3;
  const models::TransformerConfig model = SmallGpt();
  ASSERT_TRUE(ValidateParallelConfig(model, 4, &p).ok());
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  auto bytes_of = [&](int reduce_bytes, const char* name) {
    const StepPlan plan = ZeroPlan(model, p, kernels, net, reduce_bytes, false);
    for (const TaskInfo& info : plan.infos) {
      if (info.is_collective && info.op->name == name && info.layer == 0) {
        return info.op->comm_bytes.count();
      }
    }
    return int64_t{0};
  };
  const int64_t reduce16 = bytes_of(2, "zero3_grad_reduce_scatter");
  ASSERT_GT(reduce16, 0);
  EXPECT_EQ(bytes_of(4, "zero3_grad_reduce_scatter"), 2 * reduce16);
  EXPECT_EQ(bytes_of(4, "zero3_param_allgather"), bytes_of(2, "zero3_param_allgather"));
  EXPECT_EQ(bytes_of(2, "zero3_param_allgather"), reduce16);
}

// FSDP1's FlatParameter (StepInputs::flat_parameter): every micro-batch's
// backward of each layer ends with the flat-gradient pass, sized by the reduce
// dtype, but only where parameters are sharded over two or more ranks.
TEST(StepBuilderTest, FlatParameterPassOnlyWhereParametersAreSharded) {
  FixedNetwork net;
  const models::TransformerConfig model = SmallGpt();
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  auto passes = [&](int zero_stage, int gpus, int reduce_bytes, int64_t* bytes) {
    ParallelConfig p;
    p.micro_batch_size = 1;
    p.global_batch_size = 2 * gpus;  // 2 micro-batches
    p.zero_stage = zero_stage;
    EXPECT_TRUE(ValidateParallelConfig(model, gpus, &p).ok());
    const StepPlan plan = ZeroPlan(model, p, kernels, net, reduce_bytes, true);
    int n = 0;
    for (const TaskInfo& info : plan.infos) {
      if (info.op != nullptr && info.op->name == "fsdp_flat_grad" && info.layer == 0) {
        ++n;
        *bytes = info.op->bytes.count();
      }
    }
    return n;
  };
  int64_t fp32 = 0, bf16 = 0, unused = 0;
  EXPECT_EQ(passes(3, 4, 4, &fp32), 2);  // one per micro-batch
  EXPECT_EQ(passes(3, 4, 2, &bf16), 2);
  EXPECT_EQ(fp32 * 8, bf16 * 18);        // FlatParameterGradBytes: 18 and 8
  EXPECT_EQ(passes(2, 4, 4, &unused), 2);
  EXPECT_EQ(passes(1, 4, 4, &unused), 0);  // parameters whole
  EXPECT_EQ(passes(3, 1, 4, &unused), 0);  // one rank holds every shard
}

// FSDP2's per-parameter sharding (StepInputs::per_parameter_sharding): each
// micro-batch's forward and backward of a layer copy its gathered parameters
// out, and the backward copies its gradients in, sized by the reduce dtype;
// only where ZeRO-3 gathers per micro-batch over two or more ranks.
TEST(StepBuilderTest, PerParameterCopiesOnlyWhereZeroThreeGathers) {
  FixedNetwork net;
  const models::TransformerConfig model = SmallGpt();
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  auto copies = [&](int zero_stage, int gpus, int reduce_bytes, const char* name, int64_t* bytes) {
    ParallelConfig p;
    p.micro_batch_size = 1;
    p.global_batch_size = 2 * gpus;  // 2 micro-batches
    p.zero_stage = zero_stage;
    EXPECT_TRUE(ValidateParallelConfig(model, gpus, &p).ok());
    StepInputs in;
    in.zero3_grad_reduce_bytes = reduce_bytes;
    in.per_parameter_sharding = true;
    const StepPlan plan = PlanWith(in, model, p, kernels, net);
    int n = 0;
    for (const TaskInfo& info : plan.infos) {
      if (info.op != nullptr && info.op->name == name && info.layer == 0) {
        ++n;
        *bytes = info.op->bytes.count();
      }
    }
    return n;
  };
  int64_t out = 0, fp32 = 0, bf16 = 0, unused = 0;
  EXPECT_EQ(copies(3, 4, 4, "fsdp_gather_copy_out", &out), 4);  // forward and backward, x2
  EXPECT_EQ(copies(3, 4, 4, "fsdp_grad_copy_in", &fp32), 2);
  EXPECT_EQ(copies(3, 4, 2, "fsdp_grad_copy_in", &bf16), 2);
  EXPECT_EQ(fp32 * 4, bf16 * 6);  // PerParameterGradCopyBytes: 6 and 4
  EXPECT_EQ(out * 6, fp32 * 4);   // PerParameterGatherCopyBytes(2): 4
  EXPECT_EQ(copies(2, 4, 4, "fsdp_gather_copy_out", &unused), 0);  // gathered once per step
  EXPECT_EQ(copies(3, 1, 4, "fsdp_gather_copy_out", &unused), 0);  // one rank holds it whole
}

// ZeRO-3 / FSDP on a pipeline: every stage gathers its own layers before each
// micro-batch's forward and backward and reduce-scatters their gradients after
// each micro-batch's backward (DeepSpeed's default; strategies/step_builder.h).
TEST(StepBuilderTest, ZeroThreeWithPipelineGathersPerStageAndMicrobatch) {
  FixedNetwork net;
  ParallelConfig p;
  p.pipeline_parallel = 2;
  p.micro_batch_size = 1;
  p.global_batch_size = 8;  // dp 2, 4 micro-batches
  p.zero_stage = 3;
  const models::TransformerConfig model = SmallGpt();
  const int pieces = model.num_layers + 2;  // layers, embedding, head
  for (Schedule schedule : {Schedule::k1F1B, Schedule::kZeroBubbleH1}) {
    p.schedule = schedule;
    SimRun zero3 = Simulate(model, p, 4, true, net);
    int gathers = 0, reduces = 0;
    sim::Duration gather_time;
    for (const TaskInfo& info : zero3.plan.infos) {
      if (!info.is_collective) continue;
      if (info.op->name == "zero3_param_allgather") {
        ++gathers;
        EXPECT_EQ(info.group_size, 2);
        if (info.stage == 0) {
          gather_time += sim::Microseconds(10) +
                         sim::TransferTime(info.op->comm_bytes,
                                           sim::Bandwidth::GigabytesPerSecond(100));
        }
      }
      if (info.op->name == "zero3_grad_reduce_scatter") ++reduces;
      EXPECT_NE(info.op->name, "dp_grad_reduce_scatter");
    }
    EXPECT_EQ(gathers, 2 * 4 * pieces) << ScheduleName(schedule);
    EXPECT_EQ(reduces, 4 * pieces);
    // Prefetch: the next layer's gather runs under the current layer's compute.
    EXPECT_LT(zero3.summary.exposed_dp, gather_time);
    p.zero_stage = 1;
    SimRun zero1 = Simulate(model, p, 4, true, net);
    EXPECT_GT(zero3.summary.step_time, zero1.summary.step_time);
    p.zero_stage = 3;
  }
}

// Megatron-FSDP (StepInputs::megatron_fsdp): the transformer layers are
// gathered before every micro-batch's forward and backward, the embedding and
// head only at the first micro-batch's forward; every piece's gradients are
// still reduce-scattered after each backward. The backward's gathers are
// prefetched ahead of the reduce-scatters, so less of them is exposed.
TEST(StepBuilderTest, MegatronFsdpKeepsNonLayersGatheredAndPrefetchesInBackward) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 12;  // dp 4, 3 micro-batches
  p.zero_stage = 3;
  const models::TransformerConfig model = SmallGpt();
  ASSERT_TRUE(ValidateParallelConfig(model, 4, &p).ok());
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  auto count = [&](bool keep, int layer, const char* name) {
    StepInputs in;
    in.megatron_fsdp = keep;
    int n = 0;
    for (const TaskInfo& info : PlanWith(in, model, p, kernels, net).infos) {
      n += info.is_collective && info.op->name == name && info.layer == layer;
    }
    return n;
  };
  const int L = model.num_layers;
  for (int layer : {-1, L}) {
    EXPECT_EQ(count(false, layer, "zero3_param_allgather"), 2 * 3) << layer;
    EXPECT_EQ(count(true, layer, "zero3_param_allgather"), 1) << layer;
    EXPECT_EQ(count(true, layer, "zero3_grad_reduce_scatter"), 3) << layer;
  }
  EXPECT_EQ(count(true, 0, "zero3_param_allgather"), 2 * 3);
  EXPECT_EQ(count(true, 0, "zero3_grad_reduce_scatter"), 3);
  auto exposed_dp = [&](bool megatron_fsdp) {
    StepInputs in;
    in.megatron_fsdp = megatron_fsdp;
    const StepPlan plan = PlanWith(in, model, p, kernels, net);
    sim::Simulator sim;
    sim::Engine engine(plan.graph, sim);
    StepStats stats(plan);
    engine.AddObserver(&stats);
    EXPECT_TRUE(engine.Run().ok());
    return stats.Summarize(engine.Makespan()).exposed_dp;
  };
  EXPECT_LT(exposed_dp(true), exposed_dp(false));
  // On a pipeline, with and without deferred weight gradients: every stage
  // still gathers each of its layers once per micro-batch and pass.
  p.pipeline_parallel = 2;
  p.data_parallel = 0;      // derived: 2
  p.global_batch_size = 8;  // 4 micro-batches
  for (Schedule schedule : {Schedule::k1F1B, Schedule::kZeroBubbleH1}) {
    p.schedule = schedule;
    const absl::Status valid = ValidateParallelConfig(model, 4, &p);
    ASSERT_TRUE(valid.ok()) << valid;
    int layer_gathers = 0;
    for (int layer = 0; layer < L; ++layer) {
      layer_gathers += count(true, layer, "zero3_param_allgather");
    }
    EXPECT_EQ(layer_gathers, 2 * 4 * L) << ScheduleName(schedule);
    EXPECT_EQ(count(true, L, "zero3_param_allgather"), 1) << ScheduleName(schedule);
    EXPECT_LT(exposed_dp(true), exposed_dp(false)) << ScheduleName(schedule);
  }
  // Without ZeRO-3 the setting changes nothing.
  p.zero_stage = 1;
  EXPECT_EQ(count(true, -1, "zero3_param_allgather"), 0);
}

// DeepSpeed's BF16_Optimizer (grad_accumulate_bytes > 0): every micro-batch's
// backward ends each layer with the fp32 accumulation pass, and the whole fp32
// gradients are all-reduced before the sharded step, whose bf16 shards are
// then all-gathered; without it ZeRO-1 reduce-scatters.
TEST(StepBuilderTest, Bf16OptimizerAccumulatesInFp32AndAllReducesWholeGradients) {
  FixedNetwork net;
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 8;  // dp 4, 2 micro-batches
  p.zero_stage = 1;
  const models::TransformerConfig model = SmallGpt();
  ASSERT_TRUE(ValidateParallelConfig(model, 4, &p).ok());
  const models::KernelModel kernels(*models::GpuCatalog::Default().Find("a100-sxm4-80gb").value());
  auto count = [&](double accumulate_bytes, std::string_view name) {
    StepInputs in;
    in.grad_accumulate_bytes = accumulate_bytes;
    int n = 0;
    for (const TaskInfo& info : PlanWith(in, model, p, kernels, net).infos) {
      n += info.op != nullptr && info.op->name == name;
    }
    return n;
  };
  EXPECT_EQ(count(0, "grad_accumulate_fp32"), 0);
  EXPECT_GT(count(0, "dp_grad_reduce_scatter"), 0);
  EXPECT_EQ(count(0, "dp_grad_allreduce"), 0);
  // Layers, embedding and head, each once per micro-batch.
  EXPECT_EQ(count(18, "grad_accumulate_fp32"), 2 * (model.num_layers + 2));
  EXPECT_EQ(count(18, "dp_grad_reduce_scatter"), 0);
  EXPECT_GT(count(18, "dp_grad_allreduce"), 0);
  EXPECT_GT(count(18, "dp_param_allgather"), 0);
}

}  // namespace
}  // namespace clustersim::strategies
