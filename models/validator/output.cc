// Record formatting, the resumable output file, the budget and device identity.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "validator.h"

namespace validator {

void CheckCuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "kernel_validator: %s failed at %s:%d: %s\n", what, file, line,
               cudaGetErrorString(e));
  std::exit(1);
}

void CheckCublas(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "kernel_validator: %s failed at %s:%d: cuBLAS status %d\n", what, file,
               line, static_cast<int>(s));
  std::exit(1);
}

std::string Record::Key() const {
  std::ostringstream o;
  o << "measurement { kind: " << kind << " op: \"" << op << "\"";
  if (!dtype.empty()) o << " dtype: \"" << dtype << "\"";
  if (m) o << " m: " << m << " n: " << n << " k: " << k;
  if (batch) o << " batch: " << batch;
  if (bytes) o << " bytes: " << bytes;
  o << " cold_l2: " << (cold_l2 ? "true" : "false");
  return o.str();
}

std::string Record::Line() const {
  char timing[160];
  std::snprintf(timing, sizeof timing, " median_us: %.3f p10_us: %.3f p90_us: %.3f iterations: %d",
                median_us, p10_us, p90_us, iterations);
  return Key() + timing + " implementation: \"" + implementation + "\" }";
}

Output::Output(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("measurement {", 0) != 0) continue;
    const size_t cut = line.find(" median_us:");
    if (cut == std::string::npos) continue;  // a line cut short by a kill: measured again
    keys_.insert(line.substr(0, cut));
    lines_.push_back(line);
  }
  resumed_ = lines_.size();
  if (lines_.empty()) {
    std::ofstream out(path_, std::ios::trunc);
    out << "# kernel_validator output (partial: the run has not finished)\n";
  }
}

void Output::Add(const Record& r) {
  const std::string line = r.Line();
  if (!keys_.insert(r.Key()).second) return;
  lines_.push_back(line);
  std::ofstream out(path_, std::ios::app);
  out << line << "\n";
  out.flush();
}

void Output::Finish(const std::string& header) {
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << header;
    for (const std::string& l : lines_) out << l << "\n";
    out.flush();
    if (!out) {
      std::fprintf(stderr, "kernel_validator: cannot write %s\n", tmp.c_str());
      std::exit(1);
    }
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::fprintf(stderr, "kernel_validator: cannot rename %s to %s\n", tmp.c_str(), path_.c_str());
    std::exit(1);
  }
}

Budget::Budget(double seconds) : start_(std::chrono::steady_clock::now()), seconds_(seconds) {}

double Budget::ElapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool Budget::Exhausted(double fraction) const { return ElapsedSeconds() >= seconds_ * fraction; }

namespace {

// The few NVML entry points used, resolved with dlopen so that the program
// needs no NVML headers or link-time library (libnvidia-ml ships with the
// driver). Only queries: nothing here changes clocks or power.
struct Nvml {
  using Device = void*;
  int (*init)() = nullptr;
  int (*by_pci)(const char*, Device*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
  bool ok = false;

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    by_pci = reinterpret_cast<int (*)(const char*, Device*)>(
        dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<int (*)(Device, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    driver = reinterpret_cast<int (*)(char*, unsigned)>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    ok = init && by_pci && clock && driver && init() == 0;
  }
  Device Current() const {
    int dev = 0;
    char bus[32] = {};
    if (!ok || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) {
      return nullptr;
    }
    Device d = nullptr;
    return by_pci(bus, &d) == 0 ? d : nullptr;
  }
};

const Nvml& GetNvml() {
  static const Nvml nvml;
  return nvml;
}

constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;

double NvmlClock(int which) {
  const Nvml& nvml = GetNvml();
  Nvml::Device d = nvml.Current();
  unsigned mhz = 0;
  return d && nvml.clock(d, which, &mhz) == 0 ? mhz : 0;
}

std::string Version(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

double CurrentSmClockMhz() { return NvmlClock(kNvmlClockSm); }

std::string GpuBlock(const std::string& catalog_name, double sm_clock_start, double sm_clock_end) {
  int dev = 0, runtime = 0, sms = 0, l2 = 0;
  CUDA_OK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, dev));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_OK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CUDA_OK(cudaRuntimeGetVersion(&runtime));
  const size_t lt = cublasLtGetVersion();  // e.g. 130000 -> 13.0.0
  char driver[96] = "unknown (NVML not available)";
  const Nvml& nvml = GetNvml();
  if (nvml.ok) nvml.driver(driver, sizeof driver);
  std::ostringstream o;
  o << "gpu {\n  name: \"" << catalog_name << "\"\n  device_name: \"" << prop.name
    << "\"\n  sm_count: " << sms << "\n  sm_clock_mhz_start: " << sm_clock_start
    << "\n  sm_clock_mhz_end: " << sm_clock_end
    << "\n  memory_clock_mhz: " << NvmlClock(kNvmlClockMem) << "\n  driver_version: \"" << driver
    << "\"\n  cuda_runtime_version: \"" << Version(runtime) << "\"\n  cublas_version: \""
    << lt / 10000 << "." << (lt % 10000) / 100 << "." << lt % 100 << "\"\n  l2_cache_bytes: " << l2
    << "\n}\n";
  return o.str();
}

}  // namespace validator
