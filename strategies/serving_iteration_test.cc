#include "strategies/serving_iteration.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "strategies/serving_cost_testing.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

class ServingIterationTest : public testing::DgxH100Test {
 protected:
  ServingCostModel Model(int tp, models::WeightFormat f = models::WeightFormat::kBf16,
                         std::string_view preset = "llama3-8b") {
    ServingModelSpec spec;
    spec.replica.model = *models::ModelCatalog::Default().Find(preset);
    spec.replica.tensor_parallel = tp;
    spec.replica.weight_format = f;
    for (int i = 0; i < tp; ++i) spec.gpus.push_back(i);
    absl::StatusOr<ServingCostModel> m = ServingCostModel::Create(spec, *kernels_, *network_);
    EXPECT_TRUE(m.ok()) << m.status();
    return *std::move(m);
  }

  // Llama 3 8B on GPU 0 with `spec`'s host settings, once with a serial and
  // once with an overlapped host.
  struct HostPair {
    absl::StatusOr<ServingCostModel> serial, overlapped;
  };
  HostPair SerialAndOverlapped(ServingModelSpec spec) {
    spec.replica.model = *models::ModelCatalog::Default().Find("llama3-8b");
    spec.gpus = {0};
    spec.host_overlapped = false;
    absl::StatusOr<ServingCostModel> serial = ServingCostModel::Create(spec, *kernels_, *network_);
    spec.host_overlapped = true;
    return {std::move(serial), ServingCostModel::Create(spec, *kernels_, *network_)};
  }

  static IterationTotals Decode(int64_t seqs, int64_t context) {
    std::vector<SequenceWork> w(seqs, {.new_tokens = 1, .context = context, .decode = true});
    return Summarise(w);
  }
};

// First principles: a batch-1 decode step of Llama 3 8B in BF16 reads its
// 16.06 GB of weights; at the H100's 3.35 TB/s that is 4.8 ms at best, and
// ~5.6 ms at the 86% of spec that streaming kernels reach ([VLLM-49363], the
// kernel model's memory_bandwidth_fraction).
// The host's per-iteration time adds to the GPU work, once per iteration.
TEST_F(ServingIterationTest, HostTimeAddsOncePerIteration) {
  ServingModelSpec spec;
  spec.replica.model = *models::ModelCatalog::Default().Find("llama3-8b");
  spec.gpus = {0};
  absl::StatusOr<ServingCostModel> none = ServingCostModel::Create(spec, *kernels_, *network_);
  spec.host_per_iteration = sim::Microseconds(1250);
  absl::StatusOr<ServingCostModel> host = ServingCostModel::Create(spec, *kernels_, *network_);
  ASSERT_TRUE(none.ok() && host.ok());
  const IterationCost a = none->Cost(Decode(8, 512)), b = host->Cost(Decode(8, 512));
  EXPECT_EQ(b.time - a.time, sim::Microseconds(1250));
  EXPECT_EQ(b.host, sim::Microseconds(1250));
  EXPECT_EQ(b.compute, a.compute);
  spec.host_per_iteration = sim::Microseconds(-1);
  absl::StatusOr<ServingCostModel> bad = ServingCostModel::Create(spec, *kernels_, *network_);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("inference.host_overhead_us_per_iteration"));
}

// Per-sequence host work scales with the iteration's sequences; an overlapped
// host (TensorRT-LLM's overlap scheduler) costs the longer of host and GPU
// work instead of their sum, so it binds only when the host is the slower.
TEST_F(ServingIterationTest, HostPerSequenceAndOverlap) {
  ServingModelSpec spec;
  spec.host_per_iteration = sim::Microseconds(1000);
  spec.host_per_sequence = sim::Microseconds(30);
  auto [serial, overlapped] = SerialAndOverlapped(spec);
  ASSERT_TRUE(serial.ok() && overlapped.ok());
  std::vector<SequenceWork> w(8, {.new_tokens = 1, .context = 512, .decode = true});
  w.push_back({.new_tokens = 100, .context = 0, .decode = false});
  const IterationTotals t = Summarise(w);
  EXPECT_EQ(t.decode_seqs, 8);
  EXPECT_EQ(t.prefill_seqs, 1);
  const IterationCost a = serial->Cost(t), b = overlapped->Cost(t);
  EXPECT_EQ(a.host_work, sim::Microseconds(1000 + 9 * 30));
  EXPECT_EQ(a.host, a.host_work);
  EXPECT_EQ(a.time, a.compute + a.communication + a.host);
  // A few sequences: the GPU step (several ms of weights) hides the host.
  EXPECT_EQ(b.host_work, a.host_work);
  EXPECT_EQ(b.host, sim::Duration::Zero());
  EXPECT_EQ(b.time, b.compute + b.communication);
  // Thousands of short-context sequences: the host's 30 us each decide.
  const IterationCost c = overlapped->Cost(Decode(4096, 16));
  EXPECT_EQ(c.host_work, sim::Microseconds(1000 + 4096 * 30));
  EXPECT_GT(c.host, sim::Duration::Zero());
  EXPECT_EQ(c.time, c.host_work);
  EXPECT_EQ(c.time, c.compute + c.communication + c.host);
  spec.host_per_sequence = sim::Microseconds(-1);
  const absl::StatusOr<ServingCostModel> bad = SerialAndOverlapped(spec).serial;
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("inference.host_overhead_us_per_sequence"));
}

// An iteration that cannot replay a CUDA graph dispatches every kernel from
// the host (IterationTotals::eager): per-kernel time x the ops of every layer
// and of the iteration. The kernels run while later ones are dispatched, so
// an overlapped host costs max(GPU, host work) and a serial one adds only
// what the dispatch exceeds the GPU work by; a graph replay pays none of it.
TEST_F(ServingIterationTest, EagerIterationsDispatchEveryKernel) {
  ServingModelSpec spec;
  spec.host_per_iteration = sim::Microseconds(1000);
  spec.eager_dispatch_per_kernel = sim::Microseconds(35);
  auto [serial, overlapped] = SerialAndOverlapped(spec);
  ASSERT_TRUE(serial.ok() && overlapped.ok());
  IterationTotals graph = Decode(64, 512);
  IterationTotals eager = graph;
  eager.eager = true;
  const int64_t kernels = 32 * static_cast<int64_t>(overlapped->LayerOps(eager).size()) +
                          static_cast<int64_t>(overlapped->IterationOps(eager).size());
  const IterationCost g = overlapped->Cost(graph), e = overlapped->Cost(eager);
  EXPECT_EQ(g.eager_dispatch, sim::Duration::Zero());
  EXPECT_EQ(e.eager_dispatch, sim::Microseconds(35) * kernels);
  EXPECT_EQ(e.host_work, sim::Microseconds(1000) + e.eager_dispatch);
  EXPECT_EQ(e.compute, g.compute);
  // A 64-sequence Llama 3 8B step (~6 ms) is shorter than ~11 ms of dispatch.
  EXPECT_EQ(e.time, std::max(e.compute + e.communication, e.host_work));
  EXPECT_GT(e.time, g.time);
  const IterationCost s = serial->Cost(eager);
  EXPECT_EQ(s.host, sim::Microseconds(1000) + e.eager_dispatch - (s.compute + s.communication));
  EXPECT_EQ(s.time, sim::Microseconds(1000) + e.eager_dispatch);
  spec.eager_dispatch_per_kernel = sim::Microseconds(-1);
  const absl::StatusOr<ServingCostModel> bad = SerialAndOverlapped(spec).serial;
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("inference.eager_dispatch_us_per_kernel"));
}

// Decode attention's CUDA-core arithmetic (models/data/fitted_constants.textproto) is the
// slower of bytes and arithmetic, so it only ever adds time. Llama 2 7B (MHA)
// at batch 896 with 192 cached tokens does 32 x 4·4096·192·896 = 90.2 GFLOP
// per step and reads 45.1 GB of FP8 KV (~15 ms on an H100); at 8 FLOPs per SM
// per clock (132 SMs x 1.83 GHz: 1.93 TFLOP/s) the arithmetic takes 46.7 ms
// and decides. GQA models are bound only with a per-query-head kernel.
TEST_F(ServingIterationTest, DecodeAttentionIsTheSlowerOfBytesAndArithmetic) {
  auto cost = [&](std::string_view preset, double flops_per_sm_cycle, bool grouped) {
    ServingModelSpec spec;
    spec.replica.model = *models::ModelCatalog::Default().Find(preset);
    spec.replica.weight_format = models::WeightFormat::kFp8;
    spec.replica.kv_cache_dtype = models::Dtype::kFp8;
    spec.gpus = {0};
    spec.decode_attention_flops_per_sm_cycle = flops_per_sm_cycle;
    spec.decode_attention_grouped_gqa = grouped;
    absl::StatusOr<ServingCostModel> m = ServingCostModel::Create(spec, *kernels_, *network_);
    EXPECT_TRUE(m.ok()) << m.status();
    return m->Cost(Decode(896, 191)).compute;
  };
  const sim::Duration bytes = cost("llama2-7b", 0, true);
  EXPECT_GE(cost("llama2-7b", 32, true), bytes);
  const sim::Duration slow = cost("llama2-7b", 8, true);
  const double arithmetic_s = 32 * 4.0 * 4096 * 192 * 896 / (8 * 132 * 1830e6);  // 46.7 ms
  EXPECT_GT((slow - bytes).ToSeconds(), 0.5 * arithmetic_s);  // arithmetic minus the KV time
  EXPECT_LT((slow - bytes).ToSeconds(), arithmetic_s);
  // GQA (Llama 3 8B): grouped kernels stay bound by bytes; per-head ones not.
  EXPECT_EQ(cost("llama3-8b", 8, true), cost("llama3-8b", 0, true));
  EXPECT_GT(cost("llama3-8b", 8, false), cost("llama3-8b", 0, true));
  // A negative rate is refused, naming the field.
  ServingModelSpec spec;
  spec.replica.model = *models::ModelCatalog::Default().Find("llama3-8b");
  spec.gpus = {0};
  spec.decode_attention_flops_per_sm_cycle = -1;
  absl::StatusOr<ServingCostModel> bad = ServingCostModel::Create(spec, *kernels_, *network_);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("inference.decode_attention_flops_per_sm_cycle"));
}

// An FP8 cache's values count 4/3 of a byte each in decode attention's read
// (2/3 of the 16-bit read's time, TensorRT-LLM's XQA on an H100); other
// formats their size.
TEST(DecodeKvReadBytesTest, Fp8ReadsAtTwoThirdsOfTheSixteenBitTime) {
  EXPECT_EQ(DecodeKvReadBytes(300, models::Dtype::kBf16), 600);
  EXPECT_EQ(DecodeKvReadBytes(300, models::Dtype::kFp16), 600);
  EXPECT_EQ(DecodeKvReadBytes(300, models::Dtype::kFp8), 400);
  EXPECT_EQ(DecodeKvReadBytes(300, models::Dtype::kInt8), 300);
  EXPECT_EQ(DecodeKvReadBytes(0, models::Dtype::kFp8), 0);
}

// Llama 3 8B at batch 256 with 2,047 cached tokens reads 256 x 2,048 x 32
// layers x 2 x 8 x 128 x 2 B = 68.7 GB of 16-bit KV per step (~24 ms on an
// H100); an FP8 cache takes 2/3 of that time, not half, and its GQA decode
// stays bound by the read.
TEST_F(ServingIterationTest, Fp8CacheDecodeTakesTwoThirdsOfTheSixteenBitRead) {
  auto attention = [&](models::Dtype kv) {
    ServingModelSpec spec;
    spec.replica.model = *models::ModelCatalog::Default().Find("llama3-8b");
    spec.replica.weight_format = models::WeightFormat::kFp8;
    spec.replica.kv_cache_dtype = kv;
    spec.gpus = {0};
    absl::StatusOr<ServingCostModel> m = ServingCostModel::Create(spec, *kernels_, *network_);
    EXPECT_TRUE(m.ok()) << m.status();
    for (const models::Op& op : m->LayerOps(Decode(256, 2047))) {
      if (op.name == "attention_decode") return op.bytes.count();
    }
    ADD_FAILURE() << "no attention_decode op";
    return int64_t{0};
  };
  const int64_t kv16 = int64_t{256} * 2048 * 2 * 8 * 128 * 2, q = int64_t{256} * 32 * 128 * 2 * 2;
  EXPECT_EQ(attention(models::Dtype::kBf16), kv16 + q);
  EXPECT_EQ(attention(models::Dtype::kFp8), kv16 * 2 / 3 + q);
}

// Uniform top-k routing: one token touches exactly k experts, a large batch
// all of them, and in between E·(1 − (1 − k/E)^T).
TEST(ExpectedExpertsTouchedTest, OccupancyOfTopKRouting) {
  EXPECT_DOUBLE_EQ(ExpectedExpertsTouched(8, 2, 1), 2.0);
  EXPECT_NEAR(ExpectedExpertsTouched(8, 2, 8), 8 * (1 - std::pow(0.75, 8)), 1e-12);  // 7.20
  EXPECT_NEAR(ExpectedExpertsTouched(128, 8, 1), 8.0, 1e-9);
  EXPECT_NEAR(ExpectedExpertsTouched(8, 2, 1000), 8.0, 1e-9);
  EXPECT_EQ(ExpectedExpertsTouched(0, 0, 16), 0);
  EXPECT_EQ(ExpectedExpertsTouched(8, 2, 0), 0);
}

// A batch-1 decode step of Mixtral 8x7B reads its ~12.7B active parameters
// (attention, 2 of 8 experts per layer, the LM head), not all 46.7B: 25.5 GB in
// BF16 is 7.6 ms at 3.35 TB/s. A batch of 32 touches every expert (all 8 with
// probability 1 − 32·0.75^32 ≈ 0.997 per layer) and reads ~3.6x the expert
// weights, so the step is several times longer.
TEST_F(ServingIterationTest, MoeDecodeReadsTheExpertsTheBatchTouches) {
  ServingCostModel m = Model(1, models::WeightFormat::kBf16, "mixtral-8x7b");
  const IterationCost one = m.Cost(Decode(1, 512));
  EXPECT_GT(one.time.ToMilliseconds(), 25.5e9 / 3.35e12 * 1e3);
  EXPECT_LT(one.time.ToMilliseconds(), 1.3 * 25.5e9 / 3.35e12 * 1e3);
  const IterationCost many = m.Cost(Decode(32, 512));
  const double ratio = many.time.ToSeconds() / one.time.ToSeconds();
  EXPECT_GT(ratio, 2.5);
  EXPECT_LT(ratio, 4.0);
  bool router = false;
  for (const models::Op& op : m.LayerOps(Decode(1, 512))) {
    router = router || op.name == "router_gemm";
    EXPECT_NE(op.name, "gate_up_gemm");
  }
  EXPECT_TRUE(router);
}

TEST_F(ServingIterationTest, BatchOneDecodeIsBoundByReadingTheWeights) {
  ServingCostModel m = Model(1);
  const IterationCost c = m.Cost(Decode(1, 1024));
  EXPECT_GT(c.time.ToMilliseconds(), 16.06e9 / 3.35e12 * 1e3);
  EXPECT_LT(c.time.ToMilliseconds(), 6.5);
  EXPECT_EQ(c.communication, sim::Duration::Zero());
}

TEST_F(ServingIterationTest, FourBitWeightsSpeedUpDecodeAboutThreefold) {
  const double bf16 = Model(1).Cost(Decode(1, 1024)).time.ToSeconds();
  const double q4 = Model(1, models::WeightFormat::kInt4Awq).Cost(Decode(1, 1024)).time.ToSeconds();
  // Linear weights shrink 3.85x; embeddings and LM head stay 16-bit, and the
  // kernel model's fixed per-kernel time (a few µs per op, hundreds of ops)
  // does not shrink: by bytes alone the speed-up would be ~3.4x.
  EXPECT_GT(bf16 / q4, 2.2);
  EXPECT_LT(bf16 / q4, 3.85);
}

// A 2048-token prefill is compute-bound: 2 x 6.98e9 (the parameters of the
// layers; the LM head runs for the one sampled row only) x 2048 = 28.6 TFLOP
// of GEMMs plus attention, at a fraction of the 989 TFLOP/s BF16 peak.
TEST_F(ServingIterationTest, PrefillIsComputeBound) {
  ServingCostModel m = Model(1);
  const IterationCost c =
      m.Cost(Summarise({{.new_tokens = 2048, .context = 0, .decode = false, .samples = true}}));
  // Attention: 4 x h x layers x the 2048 x 1024.5 causal query-key pairs.
  const double expected = 2 * 6.98e9 * 2048 + 4.0 * 4096 * 32 * 2048 * 1024.5;
  EXPECT_NEAR(c.flops, expected, 0.01 * expected);
  const double achieved = c.flops / c.time.ToSeconds() / gpu_->PeakFlops(models::Dtype::kBf16);
  EXPECT_GT(achieved, 0.4);
  EXPECT_LT(achieved, 0.9);
}

TEST_F(ServingIterationTest, DecodeAttentionGrowsWithContext) {
  ServingCostModel m = Model(1);
  const double short_ctx = m.Cost(Decode(64, 128)).time.ToSeconds();
  const double long_ctx = m.Cost(Decode(64, 8192)).time.ToSeconds();
  // 64 x 8192 tokens x 128 KiB = 64 GiB more KV read: ~25 ms at ~2.9 TB/s.
  EXPECT_GT(long_ctx - short_ctx, 0.020);
  EXPECT_LT(long_ctx - short_ctx, 0.030);
  // The memoised part is reused: the same shape costs the same again.
  EXPECT_EQ(m.Cost(Decode(64, 8192)).time, m.Cost(Decode(64, 8192)).time);
}

TEST_F(ServingIterationTest, TensorParallelAddsAllReducesOverNvlink) {
  const IterationCost one = Model(1).Cost(Decode(8, 1024));
  ServingCostModel tp2 = Model(2);
  const IterationCost two = tp2.Cost(Decode(8, 1024));
  EXPECT_GT(two.communication, sim::Duration::Zero());
  EXPECT_LT(two.time, one.time);
  EXPECT_GT(two.time * 2, one.time);  // not a perfect halving: all-reduces and overheads
  int allreduces = 0;
  for (const models::Op& op : tp2.LayerOps(Decode(8, 1024))) {
    if (op.kind == models::OpKind::kCollective) ++allreduces;
  }
  EXPECT_EQ(allreduces, 2);
}

TEST_F(ServingIterationTest, RejectsFp8OnA100AndABadTp) {
  const models::GpuSpec* a100 = *models::GpuCatalog::Default().Find("a100-sxm4-80gb");
  models::KernelModel kernels(*a100);
  ServingModelSpec spec;
  spec.replica.model = *models::ModelCatalog::Default().Find("llama3-8b");
  spec.replica.weight_format = models::WeightFormat::kFp8;
  spec.gpus = {0};
  absl::StatusOr<ServingCostModel> m = ServingCostModel::Create(spec, kernels, *network_);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("inference.weight_dtype=fp8"));
  spec.replica.weight_format = models::WeightFormat::kBf16;
  spec.replica.tensor_parallel = 3;
  spec.gpus = {0, 1, 2};
  m = ServingCostModel::Create(spec, kernels, *network_);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("inference.tensor_parallel_size=3"));
}

// gpt-oss's 128-token windows on half its layers: a decode step at 8k tokens
// of context reads 128 KV tokens in those layers, and a prompt attends to at
// most 128 keys per query, so both cost less than with the window off.
TEST_F(ServingIterationTest, SlidingWindowLayersReadOnlyTheWindow) {
  ServingCostModel windowed = Model(1, models::WeightFormat::kBf16, "gpt-oss-20b");
  ServingModelSpec spec;
  spec.replica.model = *models::ModelCatalog::Default().Find("gpt-oss-20b");
  spec.replica.model.sliding_window = 0;
  spec.replica.model.sliding_window_layers = 0;
  spec.gpus = {0};
  absl::StatusOr<ServingCostModel> full = ServingCostModel::Create(spec, *kernels_, *network_);
  ASSERT_TRUE(full.ok()) << full.status();
  std::vector<SequenceWork> decode(64, {.new_tokens = 1, .context = 8191, .decode = true});
  const IterationTotals w = Summarise(decode, 128);
  EXPECT_EQ(w.window_decode_kv_tokens, 64 * 128);
  EXPECT_EQ(w.window_decode_pairs, 64 * 128);
  EXPECT_EQ(w.decode_kv_tokens, 64 * 8192);
  EXPECT_LT(windowed.Cost(w).time, full->Cost(Summarise(decode)).time);
  const std::vector<SequenceWork> prompt = {{.new_tokens = 8192, .context = 0}};
  const IterationTotals p = Summarise(prompt, 128);
  EXPECT_EQ(p.window_prefill_pairs, 128.0 * 129 / 2 + (8192.0 - 128) * 128);
  EXPECT_LT(windowed.Cost(p).time, full->Cost(Summarise(prompt)).time);
  EXPECT_LT(windowed.Cost(p).flops, full->Cost(Summarise(prompt)).flops);
}

}  // namespace
// A windowed layer's view swaps in the windowed sums; the decode-only view
// keeps the decode steps and drops the prompt chunks.
TEST(IterationTotalsTest, WindowedAndDecodeOnlyViews) {
  std::vector<SequenceWork> work(4, {.new_tokens = 1, .context = 1023, .decode = true});
  work.push_back({.new_tokens = 512, .context = 0});
  const IterationTotals t = Summarise(work, 128);
  const IterationTotals w = t.Windowed();
  EXPECT_EQ(w.decode_kv_tokens, t.window_decode_kv_tokens);
  EXPECT_EQ(w.decode_pairs, t.window_decode_pairs);
  EXPECT_EQ(w.prefill_kv_tokens, t.window_prefill_kv_tokens);
  EXPECT_EQ(w.prefill_pairs, t.window_prefill_pairs);
  EXPECT_EQ(w.tokens, t.tokens);
  EXPECT_LT(w.decode_kv_tokens, t.decode_kv_tokens);
  const IterationTotals d = t.DecodeOnly();
  EXPECT_EQ(d.tokens, 4);
  EXPECT_EQ(d.sampled, 4);
  EXPECT_EQ(d.decode_kv_tokens, 4 * 1024);
  EXPECT_EQ(d.window_decode_kv_tokens, t.window_decode_kv_tokens);
  EXPECT_EQ(d.prefill_tokens, 0);
  EXPECT_EQ(d.prefill_pairs, 0);
  EXPECT_EQ(d.prefill_seqs, 0);
}

}  // namespace clustersim::strategies
