// Memory-bound kernels timed by the validator (bf16 activations, fp32 optimizer state).
#ifndef CLUSTERSIM_MODELS_VALIDATOR_MEMORY_BOUND_CUH_
#define CLUSTERSIM_MODELS_VALIDATOR_MEMORY_BOUND_CUH_

#include <cuda_bf16.h>

namespace validator {

constexpr int kRowThreads = 256;

// z = x + y, 8 bf16 per 16-byte access.
__global__ void AddKernel(const uint4* x, const uint4* y, uint4* z, int64_t n8) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n8;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint4 a = x[i], b = y[i], c;
    const __nv_bfloat162* pa = reinterpret_cast<const __nv_bfloat162*>(&a);
    const __nv_bfloat162* pb = reinterpret_cast<const __nv_bfloat162*>(&b);
    __nv_bfloat162* pc = reinterpret_cast<__nv_bfloat162*>(&c);
    for (int j = 0; j < 4; ++j) pc[j] = __hadd2(pa[j], pb[j]);
    z[i] = c;
  }
}

__device__ float BlockSum(float v, float* scratch) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < kRowThreads / 32; ++w) total += scratch[w];
  __syncthreads();
  return total;
}

__device__ float BlockMax(float v, float* scratch) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float m = -INFINITY;
  for (int w = 0; w < kRowThreads / 32; ++w) m = fmaxf(m, scratch[w]);
  __syncthreads();
  return m;
}

// One block per row: RMSNorm (layer_norm = false) or LayerNorm with unit weight.
__global__ void NormKernel(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t cols, bool layer_norm) {
  __shared__ float scratch[kRowThreads / 32];
  const __nv_bfloat16* row = x + blockIdx.x * cols;
  float sum = 0, sq = 0;
  for (int64_t c = threadIdx.x; c < cols; c += kRowThreads) {
    const float v = __bfloat162float(row[c]);
    sum += v;
    sq += v * v;
  }
  const float mean = layer_norm ? BlockSum(sum, scratch) / cols : 0.0f;
  const float var = BlockSum(sq, scratch) / cols - mean * mean;
  const float inv = rsqrtf(var + 1e-5f);
  for (int64_t c = threadIdx.x; c < cols; c += kRowThreads) {
    y[blockIdx.x * cols + c] = __float2bfloat16((__bfloat162float(row[c]) - mean) * inv);
  }
}

// One block per row, in place; causal rows keep columns <= row % cols.
__global__ void SoftmaxKernel(__nv_bfloat16* p, int64_t cols, bool causal, float scale) {
  __shared__ float scratch[kRowThreads / 32];
  __nv_bfloat16* row = p + blockIdx.x * cols;
  const int64_t limit = causal ? (blockIdx.x % cols) + 1 : cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < limit; c += kRowThreads) {
    m = fmaxf(m, __bfloat162float(row[c]) * scale);
  }
  m = BlockMax(m, scratch);
  float sum = 0;
  for (int64_t c = threadIdx.x; c < limit; c += kRowThreads) {
    sum += __expf(__bfloat162float(row[c]) * scale - m);
  }
  const float inv = 1.0f / BlockSum(sum, scratch);
  for (int64_t c = threadIdx.x; c < cols; c += kRowThreads) {
    const float v = c < limit ? __expf(__bfloat162float(row[c]) * scale - m) * inv : 0.0f;
    row[c] = __float2bfloat16(v);
  }
}

// dS = P * (dP - sum(dP * P)), one block per row.
__global__ void SoftmaxBackwardKernel(const __nv_bfloat16* prob, const __nv_bfloat16* dprob,
                                      __nv_bfloat16* ds, int64_t cols) {
  __shared__ float scratch[kRowThreads / 32];
  const int64_t base = blockIdx.x * cols;
  float dot = 0;
  for (int64_t c = threadIdx.x; c < cols; c += kRowThreads) {
    dot += __bfloat162float(prob[base + c]) * __bfloat162float(dprob[base + c]);
  }
  dot = BlockSum(dot, scratch);
  for (int64_t c = threadIdx.x; c < cols; c += kRowThreads) {
    const float pv = __bfloat162float(prob[base + c]);
    ds[base + c] = __float2bfloat16(pv * (__bfloat162float(dprob[base + c]) - dot));
  }
}

// Fused Adam (fp32 params, grads, moments), step 10, with weight decay.
__global__ void AdamKernel(float* param, const float* grad, float* m, float* v, int64_t n) {
  const float b1 = 0.9f, b2 = 0.95f, lr = 3e-4f, eps = 1e-8f, wd = 0.1f;
  const float c1 = 1.0f - powf(b1, 10.0f), c2 = 1.0f - powf(b2, 10.0f);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float g = grad[i];
    const float mi = b1 * m[i] + (1 - b1) * g;
    const float vi = b2 * v[i] + (1 - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    param[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * param[i]);
  }
}

__global__ void EmptyKernel() {}

}  // namespace validator

#endif  // CLUSTERSIM_MODELS_VALIDATOR_MEMORY_BOUND_CUH_
