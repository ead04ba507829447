// CUDA-event timing with cold (L2 flushed) and warm launches, and buffer fills.
#include <algorithm>
#include <cmath>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "validator.h"

namespace validator {
namespace {

constexpr int kMinReps = 5;
constexpr int kMaxReps = 50;

__device__ float Hash01(int64_t i) {
  uint32_t x = static_cast<uint32_t>(i * 2654435761u) ^ 0x9e3779b9u;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  return (x & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

__global__ void FillBf16Kernel(__nv_bfloat16* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    p[i] = __float2bfloat16(Hash01(i));
  }
}

__global__ void FillFp32Kernel(float* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    p[i] = Hash01(i);
  }
}

__global__ void FillFp8Kernel(__nv_fp8_e4m3* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    p[i] = __nv_fp8_e4m3(Hash01(i));
  }
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

}  // namespace

void FillBf16(void* p, int64_t n, cudaStream_t s) {
  FillBf16Kernel<<<1024, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n);
  CUDA_OK(cudaGetLastError());
}
void FillFp32(void* p, int64_t n, cudaStream_t s) {
  FillFp32Kernel<<<1024, 256, 0, s>>>(static_cast<float*>(p), n);
  CUDA_OK(cudaGetLastError());
}
void FillFp8(void* p, int64_t n, cudaStream_t s) {
  FillFp8Kernel<<<1024, 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n);
  CUDA_OK(cudaGetLastError());
}

Timer::Timer(cudaStream_t stream, size_t l2_bytes) : stream_(stream), flush_bytes_(2 * l2_bytes) {
  CUDA_OK(cudaMalloc(&flush_, flush_bytes_));
  start_.resize(kMaxReps);
  stop_.resize(kMaxReps);
  for (int i = 0; i < kMaxReps; ++i) {
    CUDA_OK(cudaEventCreate(&start_[i]));
    CUDA_OK(cudaEventCreate(&stop_[i]));
  }
}

Timer::~Timer() {
  for (int i = 0; i < kMaxReps; ++i) {
    cudaEventDestroy(start_[i]);
    cudaEventDestroy(stop_[i]);
  }
  cudaFree(flush_);
}

Stats Timer::Measure(const std::function<void()>& launch, bool cold, double target_ms) {
  // Warm-up: two launches, then an estimate of one launch's time.
  launch();
  launch();
  CUDA_OK(cudaEventRecord(start_[0], stream_));
  launch();
  CUDA_OK(cudaEventRecord(stop_[0], stream_));
  CUDA_OK(cudaEventSynchronize(stop_[0]));
  float estimate_ms = 0;
  CUDA_OK(cudaEventElapsedTime(&estimate_ms, start_[0], stop_[0]));
  // More warm-up for short kernels (clocks ramp up): about 20 ms in all.
  const int extra = std::min(200, static_cast<int>(20.0 / std::max(estimate_ms, 1e-3f)));
  for (int i = 0; i < extra; ++i) launch();
  const int reps = std::clamp(static_cast<int>(target_ms / std::max(estimate_ms, 1e-3f)), kMinReps,
                              kMaxReps);
  for (int i = 0; i < reps; ++i) {
    if (cold) {
      CUDA_OK(cudaMemsetAsync(flush_, ++flush_value_ & 0xff, flush_bytes_, stream_));
    }
    CUDA_OK(cudaEventRecord(start_[i], stream_));
    launch();
    CUDA_OK(cudaEventRecord(stop_[i], stream_));
  }
  CUDA_OK(cudaStreamSynchronize(stream_));
  std::vector<double> us(reps);
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, start_[i], stop_[i]));
    us[i] = ms * 1000.0;
  }
  return Stats{Percentile(us, 0.5), Percentile(us, 0.1), Percentile(us, 0.9), reps};
}

}  // namespace validator
