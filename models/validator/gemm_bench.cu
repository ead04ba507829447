// GEMMs with cuBLASLt (heuristic top-1 algorithm, 32 MiB workspace, FP32
// accumulation), over the per-layer shapes of the model presets.
#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>
#include <vector>

#include "validator.h"

namespace validator {
namespace {

// Per-layer shapes of a few models/data/models.textproto presets.
struct Preset {
  const char* name;
  int64_t hidden, ffn, heads, groups, head_dim;
  bool gated;  // SwiGLU: fc1 produces 2 x ffn
};
constexpr Preset kPresets[] = {
    {"llama3-8b", 4096, 14336, 32, 8, 128, true},
    {"llama3-70b", 8192, 28672, 64, 8, 128, true},
    {"gpt3-175b", 12288, 49152, 96, 96, 128, false},
};
constexpr int kTensorParallel[] = {1, 8};
// Token counts (micro-batch x sequence per GEMM): 1000 and 4097 are not
// multiples of the 128-wide tiles; 4097 is not 16-byte aligned in bf16.
constexpr int64_t kTokens[] = {1, 16, 128, 1000, 2048, 4096, 4097, 8192, 16384};

cudaDataType_t InType(const std::string& dtype) {
  if (dtype == "fp16") return CUDA_R_16F;
  if (dtype == "fp8") return CUDA_R_8F_E4M3;
  return CUDA_R_16BF;
}
cudaDataType_t OutType(const std::string& dtype) {
  return dtype == "fp16" ? CUDA_R_16F : CUDA_R_16BF;  // fp8 GEMMs write bf16
}
int64_t InBytes(const std::string& dtype) { return dtype == "fp8" ? 1 : 2; }

void SetBatch(cublasLtMatrixLayout_t l, int64_t batch, int64_t stride) {
  const int32_t count = static_cast<int32_t>(batch);
  CUBLAS_OK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                             sizeof count));
  CUBLAS_OK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride));
}

uint64_t Mix(uint64_t x) {  // splitmix64: a fixed, deterministic measurement order
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

bool MeasureGemm(Context& ctx, const std::string& op, const std::string& dtype, int64_t m,
                 int64_t n, int64_t k, int64_t batch) {
  Record warm;
  warm.kind = "KERNEL_GEMM";
  warm.op = op;
  warm.dtype = dtype;
  warm.m = m;
  warm.n = n;
  warm.k = k;
  warm.batch = batch;
  Record cold = warm;
  cold.cold_l2 = true;
  if (ctx.out->Has(warm) && ctx.out->Has(cold)) return true;
  const cudaStream_t s = ctx.timer->stream();
  const cudaDataType_t in = InType(dtype), out = OutType(dtype);
  // Column-major "TN" (what FP8 requires): D[m x n] = A^T[m x k] · B[k x n].
  cublasLtMatmulDesc_t desc;
  CUBLAS_OK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  CUBLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  CUBLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
  cublasLtMatrixLayout_t a, b, d;
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&a, in, k, m, k));
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&b, in, k, n, k));
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&d, out, m, n, m));
  if (batch > 1) {
    SetBatch(a, batch, k * m);
    SetBatch(b, batch, k * n);
    SetBatch(d, batch, m * n);
  }
  cublasLtMatmulPreference_t pref;
  CUBLAS_OK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = ctx.workspace_bytes;
  CUBLAS_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(ctx.lt, desc, a, b, d, d, pref, 1, &result, &found);
  bool ok = hs == CUBLAS_STATUS_SUCCESS && found > 0;
  if (ok) {
    const int64_t nb = std::max<int64_t>(batch, 1);
    void *pa = nullptr, *pb = nullptr, *pd = nullptr;
    CUDA_OK(cudaMallocAsync(&pa, nb * m * k * InBytes(dtype), s));
    CUDA_OK(cudaMallocAsync(&pb, nb * k * n * InBytes(dtype), s));
    CUDA_OK(cudaMallocAsync(&pd, nb * m * n * 2, s));
    if (dtype == "fp8") {
      FillFp8(pa, nb * m * k, s);
      FillFp8(pb, nb * k * n, s);
    } else {  // bf16 and fp16 bit patterns of small values are both valid inputs
      FillBf16(pa, nb * m * k, s);
      FillBf16(pb, nb * k * n, s);
    }
    const float alpha = 1.0f, beta = 0.0f;
    auto launch = [&] {
      CUBLAS_OK(cublasLtMatmul(ctx.lt, desc, &alpha, pa, a, pb, b, &beta, pd, d, pd, d,
                               &result.algo, ctx.workspace, ctx.workspace_bytes, s));
    };
    for (Record* r : {&warm, &cold}) {
      if (ctx.out->Has(*r)) continue;
      const Stats st = ctx.timer->Measure(launch, r->cold_l2);
      r->median_us = st.median_us;
      r->p10_us = st.p10_us;
      r->p90_us = st.p90_us;
      r->iterations = st.iterations;
      r->implementation = "cublasLt heuristic top-1, TN, fp32 accumulate, 32 MiB workspace";
      ctx.out->Add(*r);
    }
    CUDA_OK(cudaFreeAsync(pa, s));
    CUDA_OK(cudaFreeAsync(pb, s));
    CUDA_OK(cudaFreeAsync(pd, s));
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(d);
  cublasLtMatmulDescDestroy(desc);
  return ok;
}

void RunGemmGrid(Context& ctx, double budget_fraction) {
  std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
  for (const Preset& p : kPresets) {
    for (int tp : kTensorParallel) {
      for (int64_t t : kTokens) {
        const int64_t qkv = (p.heads + 2 * p.groups) * p.head_dim / tp;
        const int64_t ffn = p.ffn / tp;
        const std::tuple<int64_t, int64_t, int64_t> fwd[] = {
            {t, qkv, p.hidden},
            {t, p.hidden, p.heads * p.head_dim / tp},
            {t, p.gated ? 2 * ffn : ffn, p.hidden},
            {t, p.hidden, ffn}};
        for (const auto& [m, n, k] : fwd) {
          shapes.insert({m, n, k});  // forward
          shapes.insert({m, k, n});  // dgrad
          shapes.insert({k, n, m});  // wgrad
        }
      }
    }
  }
  std::vector<std::string> dtypes = {"bf16", "fp16"};
  if (ctx.fp8) dtypes.push_back("fp8");
  struct Item {
    uint64_t order;
    std::string dtype;
    int64_t m, n, k;
  };
  std::vector<Item> items;
  for (const std::string& dt : dtypes) {
    for (const auto& [m, n, k] : shapes) {
      // FP8 cuBLASLt kernels need every dimension a multiple of 16.
      if (dt == "fp8" && (m % 16 || n % 16 || k % 16)) continue;
      const uint64_t h = Mix(Mix(Mix(m) ^ n) ^ k) ^ (dt == "bf16" ? 0 : dt == "fp16" ? 1 : 2);
      items.push_back({h, dt, m, n, k});
    }
  }
  // A fixed pseudo-random order: a run cut short by the budget still spreads
  // over every model, token count and dtype.
  std::sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.order < y.order; });
  int done = 0, skipped = 0;
  for (const Item& it : items) {
    if (ctx.budget->Exhausted(budget_fraction)) break;
    if (MeasureGemm(ctx, "gemm", it.dtype, it.m, it.n, it.k, 1)) {
      ++done;
    } else {
      ++skipped;
      std::printf("  no cuBLASLt algorithm for %s %lldx%lldx%lld; skipped\n", it.dtype.c_str(),
                  static_cast<long long>(it.m), static_cast<long long>(it.n),
                  static_cast<long long>(it.k));
    }
  }
  std::printf("gemm: %d of %zu shapes measured (%d without an algorithm) at %.0f s\n", done,
              items.size(), skipped, ctx.budget->ElapsedSeconds());
}

}  // namespace validator
