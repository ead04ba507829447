// Memory-bound kernels, achieved copy bandwidth and kernel launch overhead.
#include <cstdio>
#include <functional>

#include "memory_bound.cuh"
#include "validator.h"

namespace validator {
namespace {

int GridFor(int64_t n) {
  int dev = 0, sms = 0;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int64_t blocks = (n + 255) / 256;
  return static_cast<int>(blocks < sms * 8 ? blocks : sms * 8);
}

void Time(Context& ctx, Record base, const std::function<void()>& launch) {
  for (bool cold : {false, true}) {
    Record r = base;
    r.cold_l2 = cold;
    if (ctx.out->Has(r)) continue;
    const Stats st = ctx.timer->Measure(launch, cold);
    r.median_us = st.median_us;
    r.p10_us = st.p10_us;
    r.p90_us = st.p90_us;
    r.iterations = st.iterations;
    ctx.out->Add(r);
  }
}

Record MemRecord(const std::string& op, const std::string& dtype, int64_t bytes,
                 const std::string& impl) {
  Record r;
  r.kind = "KERNEL_MEMORY_BOUND";
  r.op = op;
  r.dtype = dtype;
  r.bytes = bytes;
  r.implementation = impl;
  return r;
}

}  // namespace

void MeasureSoftmax(Context& ctx, const std::string& op, int64_t rows, int64_t cols, bool causal,
                    bool backward) {
  const cudaStream_t s = ctx.timer->stream();
  const int64_t n = rows * cols;
  // Forward reads and writes P; backward reads P and dP and writes dS.
  const Record base = MemRecord(op, "bf16", (backward ? 3 : 2) * n * 2,
                                backward ? "validator row kernel: dS = P*(dP - rowsum(dP*P))"
                                         : "validator row kernel: in-place softmax, fp32 math");
  Record warm = base, cold = base;
  cold.cold_l2 = true;
  if (ctx.out->Has(warm) && ctx.out->Has(cold)) return;
  void *p = nullptr, *dp = nullptr, *ds = nullptr;
  CUDA_OK(cudaMallocAsync(&p, n * 2, s));
  FillBf16(p, n, s);
  if (backward) {
    CUDA_OK(cudaMallocAsync(&dp, n * 2, s));
    CUDA_OK(cudaMallocAsync(&ds, n * 2, s));
    FillBf16(dp, n, s);
  }
  auto* pb = static_cast<__nv_bfloat16*>(p);
  Time(ctx, base, [&] {
    if (backward) {
      SoftmaxBackwardKernel<<<rows, kRowThreads, 0, s>>>(pb, static_cast<__nv_bfloat16*>(dp),
                                                         static_cast<__nv_bfloat16*>(ds), cols);
    } else {
      SoftmaxKernel<<<rows, kRowThreads, 0, s>>>(pb, cols, causal, 0.088f);
    }
  });
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaFreeAsync(p, s));
  if (backward) {
    CUDA_OK(cudaFreeAsync(dp, s));
    CUDA_OK(cudaFreeAsync(ds, s));
  }
}

void RunMemoryBound(Context& ctx, double budget_fraction) {
  const cudaStream_t s = ctx.timer->stream();
  // 2^20 ... 2^28 elements: inside L2 (warm) up to well beyond it.
  for (int64_t n : {int64_t{1} << 20, int64_t{1} << 22, int64_t{1} << 24, int64_t{1} << 26,
                    int64_t{1} << 28}) {
    if (ctx.budget->Exhausted(budget_fraction)) break;
    void *x = nullptr, *y = nullptr, *z = nullptr, *v = nullptr;
    CUDA_OK(cudaMallocAsync(&x, n * 4, s));  // room for fp32 (Adam) and bf16
    CUDA_OK(cudaMallocAsync(&y, n * 4, s));
    CUDA_OK(cudaMallocAsync(&z, n * 4, s));
    CUDA_OK(cudaMallocAsync(&v, n * 4, s));
    FillFp32(x, n, s);
    FillFp32(y, n, s);
    FillFp32(z, n, s);
    FillFp32(v, n, s);
    const int grid = GridFor(n / 8);
    Time(ctx, MemRecord("copy", "bf16", 2 * n * 2, "cudaMemcpyAsync device to device"), [&] {
      CUDA_OK(cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice, s));
    });
    Time(ctx, MemRecord("elementwise", "bf16", 3 * n * 2, "validator kernel: z = x + y, 16-byte accesses"),
         [&] {
           AddKernel<<<grid, 256, 0, s>>>(static_cast<uint4*>(x), static_cast<uint4*>(y),
                                          static_cast<uint4*>(z), n / 8);
         });
    for (int64_t cols : {int64_t{4096}, int64_t{8192}}) {
      const int64_t rows = n / cols;
      auto* xb = static_cast<__nv_bfloat16*>(x);
      auto* yb = static_cast<__nv_bfloat16*>(y);
      Time(ctx, MemRecord("rmsnorm h" + std::to_string(cols), "bf16", 2 * n * 2,
                          "validator kernel: one block per row, fp32 math"),
           [&] { NormKernel<<<rows, kRowThreads, 0, s>>>(xb, yb, cols, false); });
      Time(ctx, MemRecord("layernorm h" + std::to_string(cols), "bf16", 2 * n * 2,
                          "validator kernel: one block per row, fp32 math"),
           [&] { NormKernel<<<rows, kRowThreads, 0, s>>>(xb, yb, cols, true); });
    }
    MeasureSoftmax(ctx, "softmax s4096", n / 4096, 4096, false, false);
    Time(ctx, MemRecord("adam", "fp32", 7 * n * 4,
                        "validator kernel: fused Adam, fp32 param/grad/m/v, reads 4 writes 3"),
         [&] {
           AdamKernel<<<GridFor(n), 256, 0, s>>>(static_cast<float*>(x), static_cast<float*>(y),
                                                 static_cast<float*>(z), static_cast<float*>(v), n);
         });
    CUDA_OK(cudaGetLastError());
    for (void* p : {x, y, z, v}) CUDA_OK(cudaFreeAsync(p, s));
  }
  std::printf("memory-bound kernels done at %.0f s\n", ctx.budget->ElapsedSeconds());
}

void RunLaunchOverhead(Context& ctx) {
  // Back-to-back empty kernels: the per-kernel cost on a busy stream, which is
  // what the kernel model's overhead stands for. Reported per kernel.
  constexpr int kBurst = 1000;
  const cudaStream_t s = ctx.timer->stream();
  Record r;
  r.kind = "KERNEL_LAUNCH";
  r.op = "back-to-back empty kernel";
  if (ctx.out->Has(r)) return;
  const Stats st = ctx.timer->Measure([&] {
    for (int i = 0; i < kBurst; ++i) EmptyKernel<<<1, 32, 0, s>>>();
  }, false);
  CUDA_OK(cudaGetLastError());
  r.median_us = st.median_us / kBurst;
  r.p10_us = st.p10_us / kBurst;
  r.p90_us = st.p90_us / kBurst;
  r.iterations = st.iterations * kBurst;
  r.implementation = "1000 launches of <<<1, 32>>> between two events, divided by 1000";
  ctx.out->Add(r);
}

}  // namespace validator
