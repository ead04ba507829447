// File: models/validator/validator.h
//
// The CUDA kernel validator: times GEMMs (cuBLASLt), the kernels of an
// unfused attention forward and backward, memory-bound kernels and launch
// overhead on one GPU, and writes a MeasurementFile (models/proto/calibration.proto)
// in protobuf text format, formatted by hand so that the program needs CUDA
// only. It reads clocks and never sets clocks or power limits.
//
// Resumable: every finished measurement is appended to the output as one line
// ("measurement { ... }"); a rerun skips lines already there (same kind, shape,
// dtype and L2 state) and rewrites the header with its own start/end clocks.
//
// Example (see README.md and run_on_device.sh):
//   kernel_validator --gpu h200-sxm-141gb --budget-seconds 420
//       --output h200.measurements.textproto
#ifndef CLUSTERSIM_MODELS_VALIDATOR_VALIDATOR_H_
#define CLUSTERSIM_MODELS_VALIDATOR_VALIDATOR_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime.h>

namespace validator {

// Aborts with the failing call and location on any CUDA / cuBLAS error.
void CheckCuda(cudaError_t e, const char* what, const char* file, int line);
void CheckCublas(cublasStatus_t s, const char* what, const char* file, int line);
#define CUDA_OK(x) ::validator::CheckCuda((x), #x, __FILE__, __LINE__)
#define CUBLAS_OK(x) ::validator::CheckCublas((x), #x, __FILE__, __LINE__)

// One measured kernel; field names follow KernelMeasurement in calibration.proto.
struct Record {
  std::string kind;  // "KERNEL_GEMM", "KERNEL_MEMORY_BOUND", "KERNEL_LAUNCH"
  std::string op;
  std::string dtype;
  int64_t m = 0, n = 0, k = 0, batch = 0, bytes = 0;
  bool cold_l2 = false;
  double median_us = 0, p10_us = 0, p90_us = 0;
  int iterations = 0;
  std::string implementation;

  // Everything before the timing: identifies the measurement for resuming.
  std::string Key() const;
  std::string Line() const;  // "measurement { ... }" on one line
};

struct Stats {
  double median_us = 0, p10_us = 0, p90_us = 0;
  int iterations = 0;
};

// Times a launch with CUDA events on one stream. Cold: before each timed
// launch the L2 is flushed by writing a buffer of twice its size (outside the
// timed region). Warm: the same launch repeated back to back, each timed.
class Timer {
 public:
  Timer(cudaStream_t stream, size_t l2_bytes);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Warm-up launches (at least 2, about 20 ms), then enough timed launches for
  // about `target_ms` (between 5 and 50).
  Stats Measure(const std::function<void()>& launch, bool cold, double target_ms = 60);
  cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  int flush_value_ = 0;
  std::vector<cudaEvent_t> start_, stop_;
};

// The output file: header + one line per measurement, resumable.
class Output {
 public:
  // Loads the measurement lines of an existing `path` (if any).
  explicit Output(std::string path);
  bool Has(const Record& r) const { return keys_.count(r.Key()) > 0; }
  // Appends the record's line to the file (flushed) and remembers it.
  void Add(const Record& r);
  // Rewrites the whole file (temp + rename): `header`, then every line.
  void Finish(const std::string& header);
  size_t size() const { return lines_.size(); }
  size_t resumed() const { return resumed_; }

 private:
  std::string path_;
  std::vector<std::string> lines_;
  std::set<std::string> keys_;
  size_t resumed_ = 0;
};

// A wall-clock budget for the whole run (the program's own run time, not the
// simulator's: this file is a benchmark).
class Budget {
 public:
  explicit Budget(double seconds);
  bool Exhausted(double fraction = 1.0) const;  // past `fraction` of the budget
  double ElapsedSeconds() const;

 private:
  std::chrono::steady_clock::time_point start_;
  double seconds_;
};

struct Context {
  Timer* timer;
  Output* out;
  Budget* budget;
  cublasLtHandle_t lt;
  void* workspace;
  size_t workspace_bytes;
  bool fp8;  // sm_89+: cuBLASLt FP8 (e4m3) GEMMs
};

// One GEMM D[m x n] = A·B over `batch` strided matrices in `dtype` ("bf16",
// "fp16", "fp8"); returns false when cuBLASLt has no algorithm for it.
bool MeasureGemm(Context& ctx, const std::string& op, const std::string& dtype, int64_t m,
                 int64_t n, int64_t k, int64_t batch);

// Row softmax over a rows x cols bf16 matrix in place (causal: row i keeps
// columns <= i % cols), or its backward dS = P * (dP - rowsum(dP * P)).
void MeasureSoftmax(Context& ctx, const std::string& op, int64_t rows, int64_t cols, bool causal,
                    bool backward);

void RunGemmGrid(Context& ctx, double budget_fraction);
void RunAttention(Context& ctx, double budget_fraction);
void RunMemoryBound(Context& ctx, double budget_fraction);
void RunLaunchOverhead(Context& ctx);

// Fills `n` elements of a device buffer with deterministic values in [-1, 1).
void FillBf16(void* p, int64_t n, cudaStream_t s);
void FillFp32(void* p, int64_t n, cudaStream_t s);
void FillFp8(void* p, int64_t n, cudaStream_t s);

// Device identity and clocks as the MeasurementFile's `gpu { ... }` block.
std::string GpuBlock(const std::string& catalog_name, double sm_clock_start, double sm_clock_end);
// Current SM clock in MHz via NVML loaded at run time (read-only); 0 if unavailable.
double CurrentSmClockMhz();

}  // namespace validator

#endif  // CLUSTERSIM_MODELS_VALIDATOR_VALIDATOR_H_
