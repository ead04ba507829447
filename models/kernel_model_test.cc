#include "models/kernel_model.h"

#include <cmath>
#include <cstdio>

#include "gtest/gtest.h"
#include "models/calibration.h"

namespace clustersim::models {
namespace {

const GpuSpec& Gpu(std::string_view name) {
  absl::StatusOr<const GpuSpec*> g = GpuCatalog::Default().Find(name);
  EXPECT_TRUE(g.ok()) << g.status();
  return **g;
}

Op BfGemm(int64_t m, int64_t n, int64_t k) {
  Op op;
  op.name = "gemm";
  op.kind = OpKind::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = sim::Flops(2.0 * m * n * k);
  op.bytes = sim::Bytes((m * k + k * n + m * n) * 2);
  return op;
}

double Tflops(const Op& op, const OpCost& c) { return op.flops.count() / c.time.ToSeconds() / 1e12; }

// A non-causal attention op over `batch` heads of seq x seq, head dim 128,
// counted as workload.h does (unmasked FLOPs, Q/K/V/O bytes).
Op Attention(const char* name, int64_t batch, int64_t seq) {
  Op op;
  op.name = name;
  op.kind = OpKind::kAttention;
  op.batch = batch;
  op.m = op.n = seq;
  op.k = 128;
  op.flops = sim::Flops(4.0 * op.batch * op.m * op.n * op.k);
  op.bytes = sim::Bytes(4 * op.batch * op.m * op.k * 2);
  return op;
}

// Its backward: 2.5x the forward's FLOPs (dQ, dK, dV and the recomputed scores).
Op AttentionBackward(int64_t batch, int64_t seq) {
  Op op = Attention("attention_bwd", batch, seq);
  op.flops = sim::Flops(2.5 * op.flops.count());
  return op;
}

// [VLLM-49363] (hardware-and-prices.md §2): H100 BF16 small-M GEMMs at
// N=12288, K=5376 reach 2.87 / 46.5 / 182.6 / 352.6 TFLOPS at M = 1/16/64/128.
// The memory roofline must reproduce the shape of this curve within 10%.
TEST(KernelModelTest, ReproducesH100SmallMPoints) {
  KernelModel model(Gpu("h100-sxm5-80gb"));
  const std::pair<int64_t, double> points[] = {{1, 2.87}, {16, 46.5}, {64, 182.6}, {128, 352.6}};
  for (const auto& [m, measured] : points) {
    const Op op = BfGemm(m, 12288, 5376);
    const double predicted = Tflops(op, model.Cost(op));
    std::printf("H100 M=%-4lld predicted %7.2f TFLOPS, measured %7.2f (%+.1f%%)\n",
                static_cast<long long>(m), predicted, measured,
                100 * (predicted - measured) / measured);
    EXPECT_NEAR(predicted / measured, 1.0, 0.10) << "M=" << m;
  }
}

// A GEMM run as row chunks (TP ring-exchange overlap): the same FLOPs, each
// chunk with its own wave quantisation and kernel overhead. The tp-8 QKV GEMM
// of a 7168-wide model (4096 x 2688 x 7168) as 8 chunks of 512 rows fills the
// 132 H100 SMs worse than whole, so the split is slower.
TEST(KernelModelTest, RowSplitCostsEachChunkAsItsOwnGemm) {
  KernelModel model(Gpu("h100-sxm5-80gb"));
  const Op op = BfGemm(4096, 2688, 7168);
  const OpCost whole = model.Cost(op);
  EXPECT_EQ(model.RowSplitCost(op, 1).time, whole.time);
  Op chunk = BfGemm(512, 2688, 7168);
  chunk.bytes = sim::Bytes(op.bytes.count() / 8);
  const OpCost split = model.RowSplitCost(op, 8);
  EXPECT_EQ(split.time, model.Cost(chunk).time * 8);
  EXPECT_GT(split.time, whole.time);
  const double peak = Gpu("h100-sxm5-80gb").PeakFlops(Dtype::kBf16);
  EXPECT_NEAR(split.efficiency, op.flops.count() / (split.time.ToSeconds() * peak), 1e-9);
  // Three streams: chunks 1-3 and 4-6 run together (1536 rows each), then
  // chunks 7-8 (1024 rows); as many chunks as streams is the whole GEMM.
  Op three = BfGemm(1536, 2688, 7168), two = BfGemm(1024, 2688, 7168);
  three.bytes = sim::Bytes(op.bytes.count() * 3 / 8);
  two.bytes = sim::Bytes(op.bytes.count() / 4);
  const OpCost streams = model.RowSplitCost(op, 8, 3);
  EXPECT_EQ(streams.time, model.Cost(three).time * 2 + model.Cost(two).time);
  EXPECT_LT(streams.time, split.time);
  EXPECT_GE(streams.time, whole.time);
  EXPECT_EQ(model.RowSplitCost(op, 3, 3).time, whole.time);
  std::printf("4096x2688x7168 whole %.1f us, as 8 row chunks %.1f us, 3 at a time %.1f us\n",
              whole.time.ToSeconds() * 1e6, split.time.ToSeconds() * 1e6,
              streams.time.ToSeconds() * 1e6);
}

// MAMF best shapes (hardware-and-prices.md §2): the model must land near the
// measured maximum. The wave model costs the H100 shape 3% (128 tiles on 132
// SMs) that the measured ceiling already includes, hence 6%.
TEST(KernelModelTest, ReachesMeasuredCeilingOnBestShapes) {
  struct Point { const char* gpu; int64_t m, n, k; double tflops; };
  for (const Point& p : {Point{"a100-sxm4-80gb", 1024, 10240, 5120, 271.2},
                         Point{"h100-sxm5-80gb", 2048, 2048, 13312, 794.5},
                         Point{"b200-sxm-180gb", 1792, 16128, 3072, 1745.0}}) {
    KernelModel model(Gpu(p.gpu));
    const Op op = BfGemm(p.m, p.n, p.k);
    const OpCost c = model.Cost(op);
    std::printf("%s %lldx%lldx%lld predicted %7.1f TFLOPS, measured %7.1f\n", p.gpu,
                static_cast<long long>(p.m), static_cast<long long>(p.n),
                static_cast<long long>(p.k), Tflops(op, c), p.tflops);
    EXPECT_NEAR(Tflops(op, c) / p.tflops, 1.0, 0.06) << p.gpu;
    EXPECT_LE(c.efficiency, Gpu(p.gpu).gemm_ceiling_fraction);
    EXPECT_EQ(c.source, CostSource::kSpecFallback);
  }
}

TEST(KernelModelTest, WaveQuantisation) {
  // 12 x 11 = 132 tiles of 128x256 fill an H100 once; one more row of tiles
  // needs a second, mostly idle wave.
  EXPECT_DOUBLE_EQ(WaveUtilization(1536, 2816, 1, 128, 256, 132), 1.0);
  EXPECT_DOUBLE_EQ(WaveUtilization(1537, 2816, 1, 128, 256, 132), 143.0 / 264.0);
  EXPECT_DOUBLE_EQ(WaveUtilization(128, 256, 66, 128, 256, 132), 0.5);
  KernelModel model(Gpu("h100-sxm5-80gb"));
  const Op full = BfGemm(1536, 2816, 8192), spill = BfGemm(1664, 2816, 8192);
  // 8% more work, but the tail wave makes it much slower than 8%.
  EXPECT_GT(model.Cost(spill).time.ToSeconds() / model.Cost(full).time.ToSeconds(), 1.3);
}

// Batch of `experts` GEMMs, each m x n x k, counted as workload.h does.
Op Grouped(int64_t experts, int64_t m, int64_t n, int64_t k, int streams) {
  Op op = BfGemm(m, n, k);
  op.batch = experts;
  op.flops = sim::Flops(op.flops.count() * experts);
  op.bytes = op.bytes * experts;
  op.streams = streams;
  return op;
}

TEST(KernelModelTest, GroupedGemmRunsInRoundsOfStreams) {
  KernelModel model(Gpu("h100-sxm5-80gb"));
  // 1024 x 1536 per expert: 8 x 6 = 48 tiles of 128x256; four at a time fill
  // 192 of 264 slots (two waves on 132 SMs), where all 16 batched fill 768 of
  // 792 (128x128 tiles do better on both, the gap stays above 10%).
  const Op batched = Grouped(16, 1024, 1536, 2048, 0);
  const Op streamed = Grouped(16, 1024, 1536, 2048, 4);
  const OpCost one = model.Cost(batched), per_stream = model.Cost(streamed);
  const double four = model.Cost(Grouped(4, 1024, 1536, 2048, 0)).time.ToSeconds();
  EXPECT_NEAR(per_stream.time.ToSeconds(), 4 * four, 1e-12);
  EXPECT_GT(per_stream.time.ToSeconds(), one.time.ToSeconds() * 1.1);
  EXPECT_LT(per_stream.efficiency, one.efficiency);
  // A remainder round: 18 experts = four rounds of 4 and one of 2.
  const double two = model.Cost(Grouped(2, 1024, 1536, 2048, 0)).time.ToSeconds();
  EXPECT_NEAR(model.Cost(Grouped(18, 1024, 1536, 2048, 4)).time.ToSeconds(), 4 * four + two,
              1e-12);
  // No more experts than streams: one round, as the batched kernel.
  EXPECT_EQ(model.Cost(Grouped(4, 1024, 1536, 2048, 4)).time,
            model.Cost(Grouped(4, 1024, 1536, 2048, 0)).time);
}

TEST(KernelModelTest, RooflineOverlapBlendsComputeAndMemoryTimes) {
  EXPECT_DOUBLE_EQ(RooflineSeconds(3e-6, 4e-6, 0), 4e-6);
  EXPECT_NEAR(RooflineSeconds(3e-6, 4e-6, 2), 5e-6, 1e-18);
  EXPECT_NEAR(RooflineSeconds(4e-6, 4e-6, 3), std::cbrt(2.0) * 4e-6, 1e-18);
  // One term dominating: nearly the max.
  EXPECT_NEAR(RooflineSeconds(1e-6, 10e-6, 3), 10e-6, 0.01 * 10e-6);
  KernelModel model(Gpu("h100-sxm5-80gb"));
  // 512 x 4096 x 7168 BF16: compute and weight streaming within a factor of two.
  Op op = BfGemm(512, 4096, 7168);
  const OpCost max_cost = model.Cost(op);
  op.roofline_overlap = 3;
  const OpCost blended = model.Cost(op);
  EXPECT_GT(blended.time, max_cost.time);
  EXPECT_LT(blended.time.ToSeconds(), std::cbrt(2.0) * max_cost.time.ToSeconds());
  EXPECT_EQ(blended.detail, max_cost.detail);
}

TEST(KernelModelTest, Fp8GemmUsesFp8PeakAndCeiling) {
  KernelModel model(Gpu("h100-sxm5-80gb"));
  Op bf16 = BfGemm(8192, 8192, 8192);
  Op fp8 = bf16;
  fp8.dtype = Dtype::kFp8;
  fp8.bytes = sim::Bytes(bf16.bytes.count() / 2);
  const double speedup = model.Cost(bf16).time.ToSeconds() / model.Cost(fp8).time.ToSeconds();
  EXPECT_NEAR(speedup, 2.0 * 0.709 / 0.803, 0.05);  // MAMF FP8 1402.6 vs BF16 794.5
}

TEST(KernelModelTest, CausalAttentionCostsAboutHalf) {
  KernelModel model(Gpu("a100-sxm4-80gb"));
  Op attn = Attention("attention_fwd", 16, 8192);
  const OpCost full = model.Cost(attn);
  // Non-causal, compute-bound: FlashAttention-2 fraction of the 312 TFLOPS peak.
  EXPECT_NEAR(full.efficiency, model.params().attention_efficiency, 0.01);
  attn.causal = true;
  const OpCost causal = model.Cost(attn);
  EXPECT_NEAR(causal.time.ToSeconds() / full.time.ToSeconds(), (64.0 + 1) / (2 * 64), 0.01);
  EXPECT_FALSE(causal.detail.empty());
}

// The in-framework factor scales attention efficiencies a calibration fitted
// to standalone kernels (H100: cuDNN microbenchmarks), in both directions,
// and leaves the spec fallback (A100 has no fitted attention) and GEMMs alone.
TEST(KernelModelTest, FrameworkAttentionFactorScalesOnlyCalibratedAttention) {
  const Op fwd = Attention("attention_fwd", 32, 8192), bwd = AttentionBackward(32, 8192);
  const Op gemm = BfGemm(8192, 8192, 8192);
  KernelModelParams slow;
  slow.framework_attention_factor = 0.5;

  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  const Calibration* cal = Calibration::Shipped(h100.name);
  ASSERT_NE(cal, nullptr);
  const KernelModel standalone(h100, {}, cal), in_framework(h100, slow, cal);
  for (const Op& op : {fwd, bwd}) {
    const OpCost a = standalone.Cost(op), b = in_framework.Cost(op);
    EXPECT_NE(a.source, CostSource::kSpecFallback) << op.name;  // fitted or measured
    EXPECT_NEAR(b.efficiency / a.efficiency, 0.5, 0.01) << op.name;
  }
  EXPECT_EQ(standalone.Cost(gemm).time, in_framework.Cost(gemm).time);

  const GpuSpec& a100 = Gpu("a100-sxm4-80gb");
  const KernelModel fallback(a100, {}, Calibration::Shipped(a100.name)),
      fallback_slow(a100, slow, Calibration::Shipped(a100.name));
  EXPECT_EQ(fallback.Cost(fwd).time, fallback_slow.Cost(fwd).time);

  // A measured attention shape also ran standalone: its time scales too.
  const Calibration measured(h100.name, {}, {Measurement{fwd, sim::Microseconds(1000)}}, "test");
  const KernelModel measured_slow(h100, slow, &measured);
  EXPECT_EQ(measured_slow.Cost(fwd).source, CostSource::kMeasured);
  EXPECT_EQ(measured_slow.Cost(fwd).time, sim::Microseconds(2000));
}

// The stack's kernel against FlashAttention-2 scales the attention rate per
// direction on every GPU: the spec fallback (A100), the calibrated rate (H100)
// and a measured shape alike; GEMMs keep their times.
TEST(KernelModelTest, AttentionKernelRatioScalesEveryAttentionRatePerDirection) {
  const Op fwd = Attention("attention_fwd", 32, 8192), bwd = AttentionBackward(32, 8192);
  const Op gemm = BfGemm(8192, 8192, 8192);
  KernelModelParams triton;
  triton.attention_kernel_forward = 0.7;
  triton.attention_kernel_backward = 0.5;
  for (const char* name : {"a100-sxm4-80gb", "h100-sxm5-80gb"}) {
    const GpuSpec& gpu = Gpu(name);
    const Calibration* cal = Calibration::Shipped(gpu.name);
    const KernelModel flash2(gpu, {}, cal), slower(gpu, triton, cal);
    EXPECT_NEAR(slower.Cost(fwd).efficiency / flash2.Cost(fwd).efficiency, 0.7, 0.01) << name;
    EXPECT_NEAR(slower.Cost(bwd).efficiency / flash2.Cost(bwd).efficiency, 0.5, 0.01) << name;
    EXPECT_EQ(slower.Cost(gemm).time, flash2.Cost(gemm).time) << name;
  }
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  const Calibration measured(h100.name, {}, {Measurement{bwd, sim::Microseconds(1000)}}, "test");
  EXPECT_EQ(KernelModel(h100, triton, &measured).Cost(bwd).time, sim::Microseconds(2000));
}

// With attention_at_sustained_clock, attention takes the sustained ratio of
// its input type on every rate: calibrated (H100), spec fallback (A100) and
// measured shapes; GEMMs keep their times. Without it attention runs at the
// burst rate whatever the ratio.
TEST(KernelModelTest, AttentionAtSustainedClockTakesTheSustainedRatio) {
  const Op fwd = Attention("attention_fwd", 32, 8192), bwd = AttentionBackward(32, 8192);
  const Op gemm = BfGemm(8192, 8192, 8192);
  KernelModelParams burst, sustained;
  burst.sustained_gemm_ratio[DtypeIndex(Dtype::kBf16)] = 0.8;
  sustained.sustained_gemm_ratio[DtypeIndex(Dtype::kBf16)] = 0.8;
  sustained.attention_at_sustained_clock = true;
  for (const char* name : {"a100-sxm4-80gb", "h100-sxm5-80gb"}) {
    const GpuSpec& gpu = Gpu(name);
    const Calibration* cal = Calibration::Shipped(gpu.name);
    const KernelModel a(gpu, burst, cal), b(gpu, sustained, cal), plain(gpu, {}, cal);
    for (const Op& op : {fwd, bwd}) {
      EXPECT_EQ(a.Cost(op).time, plain.Cost(op).time) << name << " " << op.name;
      EXPECT_NEAR(b.Cost(op).efficiency / a.Cost(op).efficiency, 0.8, 0.01)
          << name << " " << op.name;
    }
    EXPECT_EQ(a.Cost(gemm).time, b.Cost(gemm).time) << name;
  }
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  const Calibration measured(h100.name, {}, {Measurement{fwd, sim::Microseconds(800)}}, "test");
  EXPECT_EQ(KernelModel(h100, sustained, &measured).Cost(fwd).time, sim::Microseconds(1000));
}

// The sustained-GEMM factor scales the compute roofline of every GEMM
// (catalog, fitted or measured ceiling) and nothing else: memory-bound GEMMs,
// attention and memory-bound ops keep their times.
TEST(KernelModelTest, FrameworkGemmFactorScalesOnlyTheGemmComputeRoofline) {
  KernelModelParams slow;
  slow.framework_gemm_factor = 0.5;
  for (const char* name : {"a100-sxm4-80gb", "h100-sxm5-80gb"}) {
    const GpuSpec& gpu = Gpu(name);
    const Calibration* cal = Calibration::Shipped(gpu.name);
    const KernelModel base(gpu, {}, cal), sustained(gpu, slow, cal);
    const Op big = BfGemm(8192, 8192, 8192);
    const OpCost a = base.Cost(big), b = sustained.Cost(big);
    EXPECT_NEAR(b.efficiency / a.efficiency, 0.5, 0.01) << name;
    const Op skinny = BfGemm(2, 12288, 5376);  // streams its weight: memory-bound
    EXPECT_EQ(base.Cost(skinny).time, sustained.Cost(skinny).time) << name;
    const Op attn = Attention("attention_fwd", 16, 8192);
    EXPECT_EQ(base.Cost(attn).time, sustained.Cost(attn).time) << name;
  }
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  const Op gemm = BfGemm(4096, 4096, 4096);
  const Calibration measured(h100.name, {}, {Measurement{gemm, sim::Microseconds(300)}}, "test");
  const KernelModel measured_slow(h100, slow, &measured);
  EXPECT_EQ(measured_slow.Cost(gemm).source, CostSource::kMeasured);
  EXPECT_EQ(measured_slow.Cost(gemm).time, sim::Microseconds(600));
}

// The sustained ratio multiplies the GEMM ceilings with the stack's factor:
// their product is what the compute roofline sees, fitted and measured alike.
TEST(KernelModelTest, SustainedGemmRatioMultipliesTheStackFactor) {
  KernelModelParams both, product;
  both.framework_gemm_factor = 0.9;
  both.sustained_gemm_ratio.fill(0.8);
  product.framework_gemm_factor = 0.72;
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  const Calibration* cal = Calibration::Shipped(h100.name);
  const KernelModel a(h100, both, cal), b(h100, product, cal), base(h100, {}, cal);
  const Op big = BfGemm(8192, 8192, 8192);
  EXPECT_NEAR(a.Cost(big).time.ToSeconds(), b.Cost(big).time.ToSeconds(), 1e-9);
  EXPECT_NEAR(a.Cost(big).efficiency / base.Cost(big).efficiency, 0.72, 0.01);
  const Op attn = Attention("attention_fwd", 16, 8192);
  EXPECT_EQ(a.Cost(attn).time, base.Cost(attn).time);
  const Op gemm = BfGemm(4096, 4096, 4096);
  const Calibration measured(h100.name, {}, {Measurement{gemm, sim::Microseconds(360)}}, "test");
  EXPECT_EQ(KernelModel(h100, both, &measured).Cost(gemm).time, sim::Microseconds(500));
}

// `fp8_half` halves FP8 GEMMs on `gpu` (fitted and measured alike) and leaves
// BF16 GEMMs alone.
void ExpectFp8GemmsOnlyHalved(const GpuSpec& gpu, const KernelModelParams& fp8_half) {
  const Calibration* cal = Calibration::Shipped(gpu.name);
  const KernelModel base(gpu, {}, cal), slow(gpu, fp8_half, cal);
  const Op bf16 = BfGemm(8192, 8192, 8192);
  Op fp8 = bf16;
  fp8.dtype = Dtype::kFp8;
  fp8.bytes = sim::Bytes(3LL * 8192 * 8192);
  ASSERT_TRUE(base.IsComputeBound(fp8));
  EXPECT_NEAR(slow.Cost(fp8).efficiency / base.Cost(fp8).efficiency, 0.5, 0.01);
  EXPECT_EQ(slow.Cost(bf16).time, base.Cost(bf16).time);
  const Calibration measured(gpu.name, {}, {Measurement{fp8, sim::Microseconds(400)}}, "test");
  EXPECT_EQ(KernelModel(gpu, fp8_half, &measured).Cost(fp8).time, sim::Microseconds(800));
}

// Each GEMM takes the sustained ratio of its input type.
TEST(KernelModelTest, SustainedGemmRatioIsPerInputType) {
  KernelModelParams fp8_slow;
  fp8_slow.sustained_gemm_ratio[DtypeIndex(Dtype::kFp8)] = 0.5;
  ExpectFp8GemmsOnlyHalved(Gpu("h100-sxm5-80gb"), fp8_slow);
}

// The FP8 recipe's kernel rate scales FP8 GEMMs only.
TEST(KernelModelTest, Fp8RecipeGemmFactorScalesOnlyFp8Gemms) {
  KernelModelParams block_scaled;
  block_scaled.fp8_recipe_gemm_factor = 0.5;
  ExpectFp8GemmsOnlyHalved(Gpu("b200-sxm-180gb"), block_scaled);
}

// Memory-bound: 1 GB at 85% of 2039 GB/s plus the kernel overhead.
TEST(KernelModelTest, MemoryBoundOpsRunAtAchievedBandwidth) {
  KernelModel model(Gpu("a100-sxm4-80gb"));
  Op op;
  op.name = "layernorm1";
  op.kind = OpKind::kMemoryBound;
  op.bytes = sim::Bytes(1000000000);
  const OpCost c = model.Cost(op);
  EXPECT_NEAR(c.time.ToSeconds(), 1e9 / (2039e9 * 0.85) + 2e-6, 1e-9);
  EXPECT_LT(c.efficiency, 0.85);
  EXPECT_GT(c.efficiency, 0.84);
  op.bytes = sim::Bytes(0);
  EXPECT_EQ(model.Cost(op).time, model.params().kernel_overhead);
  op.kernels = 8;  // an eager composite: one overhead per kernel
  EXPECT_EQ(model.Cost(op).time, model.params().kernel_overhead * 8);
}

TEST(KernelModelTest, EveryOpOfAWorkloadHasAPositiveSourcedCost) {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("llama3-70b");
  ASSERT_TRUE(c.ok());
  absl::StatusOr<Workload> w =
      BuildWorkload(*c, {.tensor_parallel = 8, .sequence_parallel = true,
                         .recompute = Recompute::kSelective});
  ASSERT_TRUE(w.ok());
  KernelModel model(Gpu("h100-sxm5-80gb"));
  double layer_s = 0;
  for (const std::vector<Op>* ops : {&w->layer_forward, &w->layer_backward, &w->head_forward,
                                     &w->head_backward, &w->embedding_forward,
                                     &w->embedding_backward}) {
    for (const Op& op : *ops) {
      if (op.kind == OpKind::kCollective) continue;
      const OpCost cost = model.Cost(op);
      EXPECT_GT(cost.time, sim::Duration::Zero()) << op.name;
      EXPECT_GT(cost.efficiency, 0) << op.name;
      EXPECT_LT(cost.efficiency, 1) << op.name;
      EXPECT_EQ(CostSourceName(cost.source), "spec_fallback");
      if (ops == &w->layer_forward || ops == &w->layer_backward) layer_s += cost.time.ToSeconds();
    }
  }
  std::printf("llama3-70b layer fwd+bwd (tp8 sp selective, mbs1, H100): %.3f ms\n", layer_s * 1e3);
}

// Unfused attention (training.attention=unfused) at Llama 3 8B's 8192 tokens
// on an H100: the softmax and dropout stream ~9 bytes per score, so the
// memory-bound ops outweigh both batched GEMMs, and the core takes several
// times FlashAttention's single kernel, which also skips the causal half.
TEST(KernelModelTest, UnfusedAttentionCoreIsMemoryBoundAtLongSequences) {
  KernelModel model(Gpu("h100-sxm5-80gb"));
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("llama3-8b");
  ASSERT_TRUE(c.ok()) << c.status();
  auto core_seconds = [&](AttentionBackend backend, OpKind kind) {
    c->attention_backend = backend;
    absl::StatusOr<Workload> w = BuildWorkload(*c, {});
    EXPECT_TRUE(w.ok()) << w.status();
    double seconds = 0;
    for (const Op& op : w->layer_forward) {
      if (op.name.starts_with("attention") && op.kind == kind) {
        seconds += model.Cost(op).time.ToSeconds();
      }
    }
    return seconds;
  };
  const double gemms = core_seconds(AttentionBackend::kUnfused, OpKind::kGemm);
  const double scores = core_seconds(AttentionBackend::kUnfused, OpKind::kMemoryBound);
  const double flash = core_seconds(AttentionBackend::kFlash, OpKind::kAttention);
  std::printf("llama3-8b attention core fwd, H100: unfused GEMMs %.2f ms + softmax/dropout "
              "%.2f ms; flash %.2f ms\n", gemms * 1e3, scores * 1e3, flash * 1e3);
  EXPECT_GT(gemms, 0);
  EXPECT_GT(scores, gemms);
  EXPECT_GT(gemms + scores, 3 * flash);
}

TEST(KernelModelDeathTest, CollectivesAreNotKernelCosts) {
  KernelModel model(Gpu("h100-sxm5-80gb"));
  Op op;
  op.name = "tp_allreduce_attn";
  op.kind = OpKind::kCollective;
  EXPECT_DEATH(model.Cost(op), "network model");
}

}  // namespace
}  // namespace clustersim::models
