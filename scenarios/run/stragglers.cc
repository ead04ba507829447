#include "scenarios/run/stragglers.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/random.h"

namespace clustersim::scenarios {
namespace {

absl::Status InRange(const char* field, double v, double lo, double hi, bool open_low) {
  if ((open_low ? v > lo : v >= lo) && v <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("reliability.stragglers.", field, "=", v,
                                                 " must be in ", open_low ? "(" : "[", lo, ", ", hi,
                                                 "]"));
}

}  // namespace

absl::StatusOr<std::optional<StragglerSpec>> ResolveStragglers(const config::Scenario& s) {
  if (!s.reliability().has_stragglers()) return std::optional<StragglerSpec>();
  const config::StragglerConfig& c = s.reliability().stragglers();
  StragglerSpec spec;
  if (c.has_slow_gpu_fraction()) spec.slow_gpu_fraction = c.slow_gpu_fraction();
  if (c.has_slow_gpu_throughput()) spec.slow_gpu_throughput = c.slow_gpu_throughput();
  if (c.has_throughput_spread()) spec.throughput_spread = c.throughput_spread();
  if (c.has_seed()) spec.seed = c.seed();
  if (absl::Status st = InRange("slow_gpu_fraction", spec.slow_gpu_fraction, 0, 1, false);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = InRange("slow_gpu_throughput", spec.slow_gpu_throughput, 0, 1, true);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = InRange("throughput_spread", spec.throughput_spread, 0, 0.3, false);
      !st.ok()) {
    return st;
  }
  return std::optional<StragglerSpec>(spec);
}

GpuDraws DrawGpus(const StragglerSpec& s, int num_gpus) {
  GpuDraws d;
  d.throughput.assign(num_gpus, 1.0);
  for (int g = 0; g < num_gpus; ++g) {
    sim::SplitMix64 rng(sim::Mix(s.seed, static_cast<uint64_t>(g)));
    const bool slow = rng.Uniform() < s.slow_gpu_fraction;
    const double z = std::clamp(rng.StandardNormal(), -3.0, 3.0);
    d.throughput[g] = (1.0 + s.throughput_spread * z) * (slow ? s.slow_gpu_throughput : 1.0);
    d.slow_gpus += slow ? 1 : 0;
  }
  return d;
}

void DescribeDraws(const GpuDraws& d, config::Stragglers* out) {
  const auto slowest = std::min_element(d.throughput.begin(), d.throughput.end());
  double sum = 0;
  for (double t : d.throughput) sum += t;
  out->set_slow_gpus(d.slow_gpus);
  out->set_slowest_gpu(static_cast<int>(slowest - d.throughput.begin()));
  out->set_slowest_throughput(*slowest);
  out->set_mean_throughput(sum / static_cast<double>(d.throughput.size()));
}

std::string FormatStragglersText(const config::Result& r) {
  if (!r.has_stragglers()) return "";
  const config::Stragglers& s = r.stragglers();
  return absl::StrFormat(
      "  %-26s %+.1f%% over %.4f s with every GPU typical\n"
      "  %-26s %d slow GPUs; slowest gpu%d at %.1f%%, mean %.1f%% (%.0f tasks)\n",
      "straggler tax", 100 * s.tax(), s.nominal_step_time_s(), "  draws", s.slow_gpus(),
      s.slowest_gpu(), 100 * s.slowest_throughput(), 100 * s.mean_throughput(),
      s.simulated_tasks());
}

}  // namespace clustersim::scenarios
