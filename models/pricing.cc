#include "models/pricing.h"

namespace clustersim::models {
namespace {

struct Row {
  std::string_view gpu;
  double usd;
  std::string_view source;
};

// Secondary sources quoting provider list prices; see the project's
// docs/sources.md (copied from shared reference hardware-and-prices.md §5).
constexpr Row kPrices[] = {
    {"a100-sxm4-40gb", 4.10,
     "AWS p4d.24xlarge on-demand $32.77/8 GPUs, US East, Q2 2024 (xither.com, usage.ai)"},
    {"a100-sxm4-80gb", 2.49,
     "specialty-cloud A100 80GB SXM on-demand, top of $1.49-2.49 range, early 2026 (pricegpu)"},
    {"h100-sxm5-80gb", 12.29,
     "AWS p5.48xlarge on-demand $98.32/8 GPUs, list 2023-2025 (computespec, usage.ai)"},
    {"h200-sxm-141gb", 5.408,
     "AWS EC2 Capacity Block p5e.48xlarge $43.26/8 GPUs, valid until 2025-01-01 (aws.amazon.com)"},
};

}  // namespace

std::optional<GpuHourPrice> DefaultGpuHourPrice(std::string_view gpu) {
  for (const Row& r : kPrices) {
    if (r.gpu == gpu) return GpuHourPrice{r.usd, r.source};
  }
  return std::nullopt;
}

}  // namespace clustersim::models
