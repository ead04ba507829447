// kernel_validator: measures kernels on the current GPU and writes a
// MeasurementFile (models/proto/calibration.proto) for `clustersim calibrate`.
// Usage: see README.md or --help.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "validator.h"

namespace {

void Usage() {
  std::printf(
      "usage: kernel_validator --gpu CATALOG_NAME --output FILE [--budget-seconds S]\n"
      "                        [--only gemm|attention|memory]\n"
      "  --gpu             clustersim GPU catalog name, e.g. h200-sxm-141gb\n"
      "  --output          measurement file; resumed when it exists\n"
      "  --budget-seconds  stop starting new measurements after S seconds (default 420)\n"
      "  --only            measure one family only\n"
      "Never changes clocks or power limits.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string gpu, output, only;
  double budget_s = 420;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kernel_validator: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--gpu") {
      gpu = value();
    } else if (a == "--output") {
      output = value();
    } else if (a == "--budget-seconds") {
      budget_s = std::atof(value().c_str());
    } else if (a == "--only") {
      only = value();
    } else if (a == "--help" || a == "-h") {
      Usage();
      return 0;
    } else {
      std::fprintf(stderr, "kernel_validator: unknown argument %s\n", a.c_str());
      Usage();
      return 2;
    }
  }
  if (gpu.empty() || output.empty() || !(budget_s > 0) ||
      !(only.empty() || only == "gemm" || only == "attention" || only == "memory")) {
    Usage();
    return 2;
  }
  using namespace validator;
  Budget budget(budget_s);
  const double clock_start = CurrentSmClockMhz();
  int dev = 0, major = 0, minor = 0, l2 = 0;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  CUDA_OK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasLtHandle_t lt;
  CUBLAS_OK(cublasLtCreate(&lt));
  constexpr size_t kWorkspace = size_t{32} << 20;
  void* workspace = nullptr;
  CUDA_OK(cudaMalloc(&workspace, kWorkspace));
  Timer timer(stream, static_cast<size_t>(l2));
  Output out(output);
  std::printf("kernel_validator: %s (sm_%d%d), budget %.0f s, %zu measurements resumed from %s\n",
              gpu.c_str(), major, minor, budget_s, out.resumed(), output.c_str());
  Context ctx{&timer, &out, &budget, lt, workspace, kWorkspace, major * 10 + minor >= 89};

  // Cheap families first; GEMMs take what is left of the budget.
  if (only.empty() || only == "memory") {
    RunLaunchOverhead(ctx);
    RunMemoryBound(ctx, only.empty() ? 0.15 : 1.0);
  }
  if (only.empty() || only == "attention") RunAttention(ctx, only.empty() ? 0.35 : 1.0);
  if (only.empty() || only == "gemm") RunGemmGrid(ctx, 1.0);

  CUDA_OK(cudaStreamSynchronize(stream));
  std::ostringstream header;
  header << "# Measured by models/validator/kernel_validator; schema: models/proto/calibration.proto\n"
         << "# (MeasurementFile). Fit with: clustersim calibrate THIS_FILE --output CALIBRATION\n"
         << GpuBlock(gpu, clock_start, CurrentSmClockMhz())
         << "provenance: \"measured by models/validator/kernel_validator\"\n"
         << "method: \"CUDA events around each launch; warm-up of 2 launches plus ~20 ms; 5-50 "
            "timed launches (~60 ms); cold: L2 flushed by a cudaMemsetAsync of 2x L2 before each "
            "timed launch; warm: back to back; median, p10, p90\"\n";
  out.Finish(header.str());
  std::printf("kernel_validator: %zu measurements in %s after %.0f s\n", out.size(), output.c_str(),
              budget.ElapsedSeconds());
  cudaFree(workspace);
  cublasLtDestroy(lt);
  cudaStreamDestroy(stream);
  return 0;
}
