// File: models/pricing.h
//
// The price catalog: cloud rental prices per GPU-hour by provider and instance
// (on-demand, reserved, capacity blocks) and owned hardware (purchase price,
// amortisation, power, hosting), each with its date and source. Parsed once
// from models/data/prices.textproto (schema: models/proto/prices.proto), which is
// embedded in the binary; immutable and thread-safe.
//
// Owned hardware, per GPU-hour (8760 h a year, 730 h a month):
//   capital = purchase_usd_per_gpu / (amortisation_years x 8760)
//   power   = TDP x utilisation x PUE / 1000 x usd_per_kwh
//   hosting = hosting_usd_per_node_month / (730 x GPUs per node)
//
// Example:
//   const models::PriceCatalog& c = models::PriceCatalog::Default();
//   absl::StatusOr<const models::PriceEntry*> p = c.Find("aws-p5");   // 12.29 $/GPU-h
//   const models::PriceEntry* d = c.DefaultFor("h100-sxm5-80gb");       // aws-p5
#ifndef CLUSTERSIM_MODELS_PRICING_H_
#define CLUSTERSIM_MODELS_PRICING_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace clustersim::models {

inline constexpr double kHoursPerYear = 8760.0;
inline constexpr double kHoursPerMonth = kHoursPerYear / 12.0;  // 730

// Owned-hardware cost inputs (all per GPU except hosting, per node).
struct OwnedCosts {
  double purchase_usd_per_gpu = 0;
  double amortisation_years = 0;
  double utilisation = 1;  // average draw / TDP
  double pue = 1;
  double usd_per_kwh = 0;
  double hosting_usd_per_node_month = 0;
};

// InvalidArgument naming the pricing.* field when a value is out of range.
absl::Status ValidateOwnedCosts(const OwnedCosts& c);

// $/GPU-hour of owned hardware, split into its parts.
struct OwnedHourlyCost {
  double capital = 0;
  double power = 0;
  double hosting = 0;
  double Total() const { return capital + power + hosting; }
};
OwnedHourlyCost OwnedUsdPerGpuHour(const OwnedCosts& c, double tdp_w, int gpus_per_node);

struct PriceEntry {
  std::string name;       // "aws-p5"
  std::string provider;   // "AWS"
  std::string instance;   // "p5.48xlarge"; empty when owned
  std::string gpu;        // GPU catalog name
  int gpus_per_instance = 1;
  std::string kind;       // "on-demand" | "reserved" | "capacity-block" | "monthly" | "owned"
  double usd_per_gpu_hour = 0;  // rental; 0 when owned
  std::string date;
  std::string source;
  std::string confidence;
  bool default_for_gpu = false;
  bool owned = false;
  OwnedCosts owned_costs;  // meaningful when owned
  std::string assumptions;
};

// An immutable, name-sorted set of prices.
class PriceCatalog {
 public:
  // The shipped catalog; aborts if the embedded file is invalid (a build bug,
  // caught by the unit tests).
  static const PriceCatalog& Default();
  // Parses and validates a PriceCatalogFile in text format. Errors name the
  // entry and the field ("price[2] 'aws-p5': usd_per_gpu_hour must be > 0").
  static absl::StatusOr<PriceCatalog> Parse(std::string_view textproto);

  // NotFound listing the valid names when `name` is unknown.
  absl::StatusOr<const PriceEntry*> Find(std::string_view name) const;
  // The entry marked default_for_gpu for `gpu`, or null.
  const PriceEntry* DefaultFor(std::string_view gpu) const;
  const std::vector<PriceEntry>& entries() const { return entries_; }

 private:
  std::vector<PriceEntry> entries_;
};

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_PRICING_H_
