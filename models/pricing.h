// File: models/pricing.h
//
// Default rental prices per GPU-hour, each with its source and date, used when
// a scenario gives no price (`pricing.usd_per_gpu_hour`). A fuller price
// catalog (providers, reserved rates, owned hardware) builds on this.
//
// Example:
//   std::optional<GpuHourPrice> p = DefaultGpuHourPrice("h100-sxm5-80gb");
//   double usd = p->usd_per_gpu_hour;   // 12.29, AWS p5.48xlarge on-demand
#ifndef CLUSTERSIM_MODELS_PRICING_H_
#define CLUSTERSIM_MODELS_PRICING_H_

#include <optional>
#include <string_view>

namespace clustersim::models {

struct GpuHourPrice {
  double usd_per_gpu_hour;
  std::string_view source;
};

// nullopt when the catalog has no default price for `gpu` (a canonical name).
std::optional<GpuHourPrice> DefaultGpuHourPrice(std::string_view gpu);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_PRICING_H_
